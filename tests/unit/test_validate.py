"""Validation (fit/validate.py, fit/validation_run.py) on small committed fixtures.

Fixtures: tests/fixtures/inferencex_points_sample.csv (11 rows copied from the shared InferenceX
points, see tests/fixtures/README.md) and tests/fixtures/aiconfigurator/silicon_sample_subset.csv
(aiconfigurator's end-to-end rows, Apache-2.0, see ATTRIBUTION.md). Nothing here needs the
``aiconfigurator-core`` package: where it matters, its import is blocked.
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from csv_rows import write_rows

from jalapeno.deploy.deployment import MTP
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.validate import (
    METRICS,
    load_aiconfigurator,
    parse_topology,
    predict_points,
)
from jalapeno.fit.ix_points import VALIDATION_MTP, load_inferencex, recipe_mtp
from jalapeno.fit.validation_run import calibrated_systems, error_summary, run_validation
from jalapeno.specs.calibration import load_calibration
from jalapeno.specs.stacks import get_stack

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
POINTS = FIXTURES / "inferencex_points_sample.csv"
SILICON = FIXTURES / "aiconfigurator" / "silicon_sample_subset.csv"

#: fixture line → (system, mapping, concurrency); by hand from the CSV and InferenceX's search spaces
#: (fit/searched.py, fit/run_identity.py): line 4 ran concurrency 256, which only dsr1-fp8-h200-trt-mtp's
#: { tp: 8, ep: 8, dp-attn: true, conc 256 } ran, so that run is the row's (matched); line 6 is a best over B200
#: FP8 runs; line 5's 1024 is what two H200 Dynamo + TRT-LLM MTP entries ran (conc-list labels 256 and 512; their
#: srt-slurm recipes c256_ctx1_gen4_dep8_batch128_eplb0_mtp3.yaml (40 GPUs) and
#: c512_ctx1_gen2_dep8_batch256_eplb0_mtp1.yaml (24 GPUs) run concurrencies "1024", NVIDIA/srt-slurm @5063eb43),
#: and the row's cells imply 26.1 GPUs: the 24-GPU run (matched); no GB200 entry without MTP ran line 12's 512, so
#: line 12 (throughput only, with its concurrency) is the predicted sweep's best at concurrency <= 512
EXPECTED = {2: ("gb200-nvl72", "matched", 4.0), 3: ("gb200-nvl72", "matched", 8.0),
            4: ("h200", "matched", 256.0), 5: ("h200", "matched", 1024.0),
            6: ("b200", "searched_best", None), 7: ("h200", "matched", 4.0), 8: ("h200", "matched", 8.0),
            9: ("b200", "matched", 1.0), 10: ("b200", "matched", 4.0), 11: ("mi355x", "matched", 4.0),
            12: ("gb200-nvl72", "frontier_peak@concurrency", 512.0)}
#: concurrency in each silicon fixture row id (..._c<N>_...), read by hand, in file order
SILICON_CONC = [4, 32, 8, 4, 8, 32, 8, 16]


@pytest.fixture(scope="module")
def ix():
    return load_inferencex(POINTS)


@pytest.fixture(scope="module")
def silicon() -> pd.DataFrame:
    return pd.read_csv(SILICON)


@pytest.fixture
def no_package(monkeypatch):
    """Make ``aiconfigurator_core`` unimportable, as in CI without the [calibrate] extra."""
    monkeypatch.setitem(sys.modules, "aiconfigurator_core", None)


def _by_line(points):
    return {int(p.id.rsplit(":", 1)[1]): p for p in points}


# ---- InferenceX -------------------------------------------------------------------------------

def test_load_inferencex_maps_every_fixture_row(ix):
    points, skipped = ix
    assert skipped == []
    pts = _by_line(points)
    assert set(pts) == set(EXPECTED)
    for line, (system, mapping, conc) in EXPECTED.items():
        p = pts[line]
        assert (p.source, p.system, p.mapping, p.concurrency) == ("inferencex", system, mapping, conc), line
        assert p.id == f"inferencex_points_sample:{line}"
        assert p.model == "deepseek-r1" and not p.fixed_lengths
        assert (p.deployment is not None) == (mapping == "matched")


def test_load_inferencex_measured_values_and_deployments(ix):
    pts = _by_line(ix[0])
    # line 2: GB200 FP4 disagg, MTP; tput 60.7/GPU, 286.4 tok/s/user, TPOT 3.49 ms, no TTFT
    p = pts[2]
    assert p.measured == {"throughput_per_chip": 60.7, "interactivity": 286.4, "tpot_s": pytest.approx(3.49e-3),
                          "ttft_s": None}
    assert (p.isl, p.osl, p.precision) == (1024, 1024, "fp4")
    d = p.deployment
    # concurrency 4 of the GB200 1k1k MTP search space ran ctx1_gen4_tep8_batch8_eplb0_mtp3 (nvidia-master.yaml
    # @298d8f94c; data/engines.toml): 1 DEP4 prefill worker, 4 TEP8 decode workers of 8 slots, MTP3 at the
    # engine profile's chain acceptance; the topology's 36 GPUs agree
    assert d.prefill.layout == Layout(tp=1, dp=4, ep=4) and d.prefill.workers == 1
    assert d.decode.layout == Layout(tp=8, ep=8) and d.decode.workers == 4 and d.max_running == 8
    assert d.mtp == MTP(3, get_stack("dynamo-trtllm").acceptance("deepseek-r1", 3)) and any("MTP assumed k=3" in n for n in p.notes)
    assert any("ctx1_gen4_tep8_batch8_eplb0_mtp3" in n for n in p.notes)
    # without the entry, the topology reading gives the same pools (prefill read as DEP4, decode as TEP8)
    pre, dec, note = parse_topology("prefill 4 GPU TP=4; decode 32 GPU EP=8", moe=True, concurrency=4,
                                    prefill_dp_attention=True)
    assert (pre.layout, dec.layout, dec.workers) == (d.prefill.layout, d.decode.layout, 4)
    assert "read as DEP4" in note and "read as TEP8" in note
    # line 7: H200 FP8 sglang TP8 EP1 at conc 4, TTFT 157.77 ms
    p = pts[7]
    assert p.deployment.decode.layout == Layout(tp=8, ep=1) and p.deployment.prefill is None
    assert p.deployment.mtp is None and p.precision == "fp8"
    assert p.measured["ttft_s"] == pytest.approx(0.15777) and p.measured["tpot_s"] == pytest.approx(9.7e-3)
    # line 10: B200 "FP4 (NVFP4)" TP8 EP8, no TPOT and no tok/s/user
    p = pts[10]
    assert p.precision == "fp4" and p.deployment.decode.layout == Layout(tp=8, ep=8)
    assert p.measured["interactivity"] is None and p.measured["tpot_s"] is None
    # line 11: MI355X ATOM FP8 with MTP, throughput only: its launch recipe's MTP (the script's
    # --num-speculative-tokens 3, accepted at ~0 by that image: ROCm/ATOM #755), not VALIDATION_MTP
    assert pts[11].deployment.mtp == MTP(3, 0.0) != VALIDATION_MTP
    assert any("MTP assumed k=3, acceptance 0.0" in n for n in pts[11].notes)
    # line 4: best config (max_throughput_per_gpu): interactivity derived from TPOT
    assert pts[4].measured["interactivity"] == 9.43 and "MTP use unspecified" in pts[4].notes[0]
    # line 12: a topology the parser cannot read: noted, mapped to the frontier's peak
    assert any("not interpretable" in n for n in pts[12].notes)


@pytest.mark.parametrize("topology, conc, layout, workers, k", [
    # InferenceX B200 FP4 Dynamo-TRT 1k1k recipes (nvidia-master.yaml): conc 45 on 5 workers is
    # ctx1_gen5_tep8_batch32_mtp3; conc 875 ctx1_gen5_dep8_batch16_mtp3 (21.9 per rank);
    # conc 1214 ctx1_gen2_dep8_batch64_mtp2 (75.9 per rank); conc 4968 ctx3_gen4_dep8_batch128_mtp1
    ("prefill 4 GPU TP=4; decode 40 GPU EP=8", 45, Layout(tp=8, ep=8), 5, 3),
    ("prefill 4 GPU TP=4; decode 40 GPU EP=8", 875, Layout(tp=1, dp=8, ep=8), 5, 3),
    ("prefill 4 GPU TP=4; decode 16 GPU EP=8", 1214, Layout(tp=1, dp=8, ep=8), 2, 2),
    ("prefill 12 GPU TP=12; decode 32 GPU EP=8", 4968, Layout(tp=1, dp=8, ep=8), 4, 1),
    # one worker across 32 GPUs is data-parallel whatever the load (GB300 dep32_batch4_mtp3 at 180)
    ("prefill 4 GPU TP=4; decode 32 GPU EP=32", 180, Layout(tp=1, dp=32, ep=32), 1, 3),
])
def test_dynamo_trt_recipe_layout_and_draft_length(topology, conc, layout, workers, k):
    _, dec, _ = parse_topology(topology, moe=True, concurrency=conc)
    assert (dec.layout, dec.workers) == (layout, workers)
    m = recipe_mtp(dec, conc)
    assert m.draft_tokens == k and m.acceptance == get_stack("dynamo-trtllm").acceptance("deepseek-r1", k)
    # without the concurrency the attention split is unknown: DEP, as before
    assert parse_topology(topology, moe=True)[1].layout.dp == layout.ep


def _write_variant(tmp_path: Path, edit) -> Path:
    with POINTS.open(newline="") as f:
        rows = list(csv.DictReader(f))
    edit(rows)
    out = tmp_path / "variant.csv"
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return out


def test_load_inferencex_skips_with_reasons(tmp_path):
    def edit(rows):
        rows[0]["hardware"] = "TPU v7"  # line 2: not in the catalog
        for k in ("tput_per_gpu", "tok_s_user", "tpot_ms", "ttft_ms"):  # line 6: nothing measured
            rows[4][k] = ""
        rows[6]["topology"] = ""  # line 8: no topology, but throughput and interactivity
        rows[5]["topology"], rows[5]["tput_per_gpu"] = "", ""  # line 7: TPOT/TTFT, but no deployment, no throughput

    points, skipped = load_inferencex(_write_variant(tmp_path, edit))
    reasons = dict(skipped)
    assert set(reasons) == {"variant:2", "variant:6", "variant:7"}
    assert "not in the catalog" in reasons["variant:2"] and "TPU v7" in reasons["variant:2"]
    # the reason names what the loader reads (a lower-case 'h200' or 'DeepSeek-R1' was skipped without it)
    assert reasons["variant:2"].endswith("(InferenceX names read: hardware GB200 NVL72, GB300 NVL72, B200, B300, "
                                         "H200, H100, MI300X, MI325X, MI355X; model DeepSeek-R1-0528, gpt-oss-120b)")
    assert reasons["variant:6"] == "no measured metric"
    assert "no deployment" in reasons["variant:7"]
    assert _by_line(points)[8].mapping == "frontier@interactivity"
    assert len(points) + len(skipped) == 11


def test_load_inferencex_skips_a_gpu_count_or_output_throughput_it_cannot_read(tmp_path):
    """num_gpus and output_tput_per_gpu feed the data-quality rule (fit/data_quality.py): a zero,
    negative or fractional GPU count left the row unchecked by that rule and counted as clean, silently."""
    def edit(rows):
        rows[0]["num_gpus"] = "0"  # line 2
        rows[1]["num_gpus"] = "-8"  # line 3
        rows[2]["num_gpus"] = "36.5"  # line 4
        rows[3]["output_tput_per_gpu"] = "-1"  # line 5
        rows[4]["num_gpus"] = ""  # line 6: not stated, so not checked by the rule, and still predicted

    _, skipped = load_inferencex(_write_variant(tmp_path, edit))
    reasons = dict(skipped)
    assert reasons["variant:2"] == "num_gpus '0' is not a whole number of GPUs >= 1"
    assert reasons["variant:3"] == "num_gpus '-8' is not a whole number of GPUs >= 1"
    assert reasons["variant:4"] == "num_gpus '36.5' is not a whole number of GPUs >= 1"
    assert reasons["variant:5"] == "output_tput_per_gpu '-1' is not a positive finite number"
    assert "variant:6" not in reasons


def test_load_inferencex_skips_cells_it_cannot_read(tmp_path):
    """A cell the loader cannot read skips its row with the column, the value and what it must hold:
    before, BF16 was priced as FP8, ``MTP`` as no MTP, ``yes`` as either mode, a garbled date as none, and an ISL of 1e12
    (past DeepSeek-R1's 163,840-token context, its config.json max_position_embeddings) ran out of memory."""
    def edit(rows):
        rows[0]["precision"] = "BF16"  # line 2
        rows[1]["spec"] = "MTP"  # line 3
        rows[2]["disagg"] = "yes"  # line 4
        rows[3]["isl"] = "1e12"  # line 5
        rows[4]["conc"] = "2e6"  # line 6
        rows[5]["date"] = "last spring"  # line 7
        rows[6]["date"] = "2026-02-30"  # line 8

    _, skipped = load_inferencex(_write_variant(tmp_path, edit))
    reasons = dict(skipped)
    assert reasons["variant:2"] == ("precision 'BF16' is not FP4 or FP8 (the formats the InferenceX rows of "
                                    "the catalog's models use)")
    assert reasons["variant:3"] == "spec 'MTP' is not mtp, none, unspecified or blank"
    assert reasons["variant:4"] == "disagg 'yes' is not 1 (disaggregated), 0 (aggregated) or blank"
    assert reasons["variant:5"].startswith("isl + osl = 1000000001024 tokens exceed deepseek-r1's context of "
                                           "163840 tokens")
    assert reasons["variant:6"] == "conc '2e6' is not a closed-loop concurrency in [1, 1,000,000] (specs/workload.py)"
    for line, date in ((7, "last spring"), (8, "2026-02-30")):  # once read as "no date": every space up to the latest
        assert reasons[f"variant:{line}"] == (f"date {date!r} is not YYYY-MM-DD, <=YYYY-MM-DD or blank (it selects "
                                              "the benchmark's search space)")


def test_load_inferencex_refuses_a_column_named_twice(tmp_path):
    """csv.DictReader keeps the last of two ``hardware`` cells: the row was priced on the second system, silently."""
    header, row = POINTS.read_text().splitlines()[:2]
    p = tmp_path / "dup.csv"
    p.write_text(f"hardware,{header}\nB200,{row}\n")
    with pytest.raises(SpecError) as ei:
        load_inferencex(p)
    assert str(ei.value) == "dup.csv: header: column 'hardware' appears twice. Fix: give each column once"


def test_load_inferencex_bad_files(tmp_path):
    with pytest.raises(SpecError, match="file not found"):
        load_inferencex(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("hardware,model\nH200,DeepSeek-R1-0528\n")
    with pytest.raises(SpecError, match="missing"):
        load_inferencex(bad)


def test_parse_topology_by_hand():
    assert parse_topology("TP8 EP1", moe=True) == (None, parse_topology("TP8", True)[1], "")
    pre, dec, note = parse_topology("TP8 EP1", moe=True)
    assert pre is None and dec.layout == Layout(tp=8, ep=1) and dec.workers == 1 and note == ""
    _, dec, _ = parse_topology("TP4 EP4", moe=False)  # a dense model has no expert parallelism
    assert dec.layout == Layout(tp=4, ep=1)
    pre, dec, note = parse_topology("prefill 4 GPU TP=4; decode 32 GPU EP=8", moe=True)
    assert pre.workers == 1 and pre.layout == Layout(tp=4, ep=4)
    assert dec.workers == 4 and dec.layout == Layout(tp=1, dp=8, ep=8)
    assert note == ""
    pre, dec, note = parse_topology("prefill 12 GPU TP=12; decode 32 GPU EP=32", moe=True)
    assert pre.workers == 3 and pre.layout == Layout(tp=1, dp=4, ep=4) and "3 DEP4 workers" in note
    assert dec.workers == 1 and dec.layout == Layout(tp=1, dp=32, ep=32)
    pre, dec, note = parse_topology("prefill 2 workers TP4 EP4 DPA (8 GPUs); decode 1 workers TP16 EP16 DPA", True)
    assert (pre.workers, pre.layout, dec.workers, dec.layout) == (2, Layout(dp=4, ep=4), 1, Layout(dp=16, ep=16))
    assert parse_topology("four racks, mostly", moe=True) == (None, None,
                                                              "topology 'four racks, mostly' not interpretable")


# ---- aiconfigurator end-to-end rows -----------------------------------------------------------------

def test_load_aiconfigurator_rows_are_matched_with_the_id_concurrency(silicon, no_package):
    points, skipped = load_aiconfigurator(silicon)
    assert skipped == [] and len(points) == len(silicon) == len(SILICON_CONC)
    for p, r, conc in zip(points, silicon.itertuples(), SILICON_CONC):
        assert f"_c{conc}_" in r.id
        assert p.id == f"aic:{r.id}" and p.mapping == "matched" and p.source == "aiconfigurator"
        assert p.concurrency == float(conc) and p.fixed_lengths
        assert p.system == {"b200_sxm": "b200", "h200_sxm": "h200"}[r.system]
        assert p.model == "deepseek-r1"
        assert p.measured["ttft_s"] == pytest.approx(r.silicon_ttft_ms / 1e3)
        assert p.measured["tpot_s"] == pytest.approx(r.silicon_tpot_ms / 1e3)
        assert p.measured["interactivity"] == pytest.approx(1e3 / r.silicon_tpot_ms)
        assert p.measured["throughput_per_chip"] is None
        # the layout's TP is the row's tp_size, except where the id names another one (rows whose
        # fields are inflated against their id: the id wins)
        m = re.search(r"_tp(\d+)", r.id)
        tp = int(m.group(1)) if m and int(r.tp_size) * (1 if r.attention_dp_size != r.attention_dp_size
                                                          else int(r.attention_dp_size)) != int(m.group(1)) \
            else int(r.tp_size)
        assert p.deployment.prefill is None and p.deployment.decode.layout.tp == tp
    assert [p.precision for p in points] == ["fp4", "fp4", "fp8", "fp4", "fp8", "fp8", "fp8", "fp4"]


def test_load_aiconfigurator_concurrency_from_id_beats_batch_size(silicon):
    f = silicon.iloc[:3].copy()
    f["batch_size"] = 999.0
    f.loc[f.index[2], "id"] = "no_concurrency_in_this_id"  # falls back to the agg batch size
    f.loc[f.index[1], "system"] = "tpu_v7"
    points, skipped = load_aiconfigurator(f)
    assert [p.concurrency for p in points] == [4.0, 999.0]
    assert skipped == [(f"aic:{f.id.iloc[1]}", "tpu_v7/deepseek-ai/DeepSeek-R1 not in the catalog")]


def _disagg_row(base: pd.Series, **fields) -> dict:
    row = {**base.to_dict(), "mode": "disagg", "tp_size": float("nan"), "batch_size": float("nan"),
           "prefill_tp_size": 4.0, "prefill_attention_dp_size": 1.0, "prefill_moe_ep_size": 4.0,
           "decode_tp_size": 8.0, "decode_attention_dp_size": 1.0, "decode_moe_ep_size": 8.0}
    row.update(fields)
    return row


def test_load_aiconfigurator_disagg_rows_need_worker_counts(silicon):
    """Without worker counts the batch per decode worker (hence TPOT) is unknown: skipped, said why."""
    base = silicon.iloc[0]
    f = pd.DataFrame([
        _disagg_row(base, id="x_disagg_8192x1024_c52_a", prefill_num_workers=float("nan"),
                    decode_num_workers=float("nan")),
        _disagg_row(base, id="x_disagg_8192x1024_c52_b", prefill_num_workers=2.0, decode_num_workers=4.0)])
    points, skipped = load_aiconfigurator(f)
    assert skipped == [("aic:x_disagg_8192x1024_c52_a", "disaggregated row without prefill/decode worker counts")]
    (p,) = points
    dep = p.deployment
    assert (dep.prefill.workers, dep.decode.workers) == (2, 4) and p.concurrency == 52.0
    assert dep.chips == 2 * 4 + 4 * 8


def test_load_aiconfigurator_kimi_precision_follows_the_row(silicon):
    base = silicon.iloc[0].to_dict()
    f = pd.DataFrame([{**base, "model_path": "moonshotai/Kimi-K2.5", "precision": prec, "id": f"k_{prec}_c4_tp8"}
                      for prec in ("fp4", "int4")]
                     + [{**base, "model_path": "openai/gpt-oss-120b", "precision": "fp4", "id": "g_c4_tp8"}])
    points, skipped = load_aiconfigurator(f)
    assert skipped == []
    assert [(p.model, p.precision) for p in points] == [("kimi-k2.5", "fp4"), ("kimi-k2.5", "int4"),
                                                         ("gpt-oss-120b", "mxfp4")]


def test_load_aiconfigurator_without_package_or_frame(no_package):
    with pytest.raises(SpecError, match=r"\.\[calibrate\]"):
        load_aiconfigurator()


def test_load_aiconfigurator_deployment_agrees_with_the_row_id(silicon):
    points, _ = load_aiconfigurator(silicon)
    p = next(p for p in points if "_tp8_ep8_" in p.id)
    assert p.deployment.chips == 8


def test_load_aiconfigurator_counts_one_run_once(silicon):
    """Copies of one run (a database-dump id, a DeepSeek-V3 twin, a copy rounded to 0.01 ms) are one
    measurement; a second run of the same configuration (TPOT 0.05 ms apart) and the same figures at
    another concurrency are not (fit/aic_duplicates.py)."""
    base = silicon.iloc[2].to_dict()  # H200 SGLang 0.5.9 FP8, 1k/1k, c8, TP8: 244.861... / 12.472... ms
    named = base["id"]
    rows = [base,
            {**base, "id": "dsr1_h200_sglang_fp8_agg_1024x1024_c8_cfg81", "model_path": "deepseek-ai/DeepSeek-V3"},
            {**base, "id": "gap_h200_sxm_sglang_fp8_agg_1024x1024_c8_tp8_ep1_1", "silicon_ttft_ms": 244.86,
             "silicon_tpot_ms": 12.47},
            {**base, "id": "rerun_h200_sxm_sglang_fp8_agg_1024x1024_c8_tp8_ep1_2", "silicon_tpot_ms": 12.52},
            {**base, "id": "other_h200_sxm_sglang_fp8_agg_1024x1024_c16_tp8_ep1_3"}]
    points, skipped = load_aiconfigurator(pd.DataFrame(rows))
    assert [p.id for p in points] == [f"aic:{named}", "aic:rerun_h200_sxm_sglang_fp8_agg_1024x1024_c8_tp8_ep1_2",
                                      "aic:other_h200_sxm_sglang_fp8_agg_1024x1024_c16_tp8_ep1_3"]
    why = f"repeat of aic:{named} (same run: same configuration, TTFT and TPOT within 0.0051 ms)"
    assert skipped == [("aic:dsr1_h200_sglang_fp8_agg_1024x1024_c8_cfg81", why),
                       ("aic:gap_h200_sxm_sglang_fp8_agg_1024x1024_c8_tp8_ep1_1", why)]


def test_repeated_run_read_as_another_layout_keeps_the_named_one(silicon):
    """A database-dump copy whose fields read as another layout loses to the copy whose id names its run
    (B200 Kimi K2.5 vLLM 0.17.0 cfg635 and ..._tp4_ep4_1294 in the 0.12.0 sample: tp 4, dp 4, moe_ep 16
    against tp 4, moe_ep 4; read as 16 chips until fit/aic_layout's rule 3 read the squared fields as the
    4-chip TP4 / EP4 run, so both copies now read alike and the named one is kept without a layout note)."""
    base = silicon.iloc[3].to_dict()  # B200 TRT-LLM FP4 TP4, c4
    squared = {**base, "id": "x_b200_agg_1024x8192_c4_cfg635", "tp_size": 4.0, "attention_dp_size": 4.0,
               "moe_tp_size": 1.0, "moe_ep_size": 16.0}
    named = {**base, "id": "x_b200_sxm_agg_1024x8192_c4_tp4_ep4_1294", "tp_size": 4.0, "attention_dp_size": 1.0,
             "moe_tp_size": 1.0, "moe_ep_size": 4.0}
    (p,), skipped = load_aiconfigurator(pd.DataFrame([squared, named]))
    assert p.id == "aic:x_b200_sxm_agg_1024x8192_c4_tp4_ep4_1294" and p.deployment.chips == 4
    assert [i for i, _ in skipped] == ["aic:x_b200_agg_1024x8192_c4_cfg635"]
    # a copy that still reads as another layout is named on the kept one (tp 4 x dp 2, EP8: 8 chips as written)
    wide = {**squared, "moe_ep_size": 8.0, "attention_dp_size": 2.0}
    (q,), _ = load_aiconfigurator(pd.DataFrame([wide, named]))
    assert q.id == p.id and "1 repeat(s) of this run dropped, 1 read as agg attn TP4 DP2" in q.notes[-1]


# ---- predictions and errors -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def few_rows(ix):
    pts = _by_line(ix[0])
    return predict_points([pts[7], pts[8], pts[9], pts[11]], frozenset({"h200", "b200"}))


def test_throughput_only_row_is_bounded_by_its_concurrency(ix, tmp_path):
    # fixture line 12: GB200 Dynamo-TRT, throughput only, concurrency 512, no search-space run
    p = _by_line(ix[0])[12]
    assert p.mapping == "frontier_peak@concurrency" and p.concurrency == 512.0
    bounded = predict_points([p])
    p.mapping = "frontier_peak"
    try:
        unbounded = predict_points([p])
    finally:
        p.mapping = "frontier_peak@concurrency"
    b, u = bounded.predicted.iloc[0], unbounded.predicted.iloc[0]
    # 512 users cannot reach the frontier's peak, which needs thousands of sequences per decode pool
    assert np.isfinite(b) and 0 < b < u / 2
    # without a concurrency the concurrency bound does not apply: the row is the best of every run the
    # GB200 search space made (fit/searched.py), another bound
    with POINTS.open() as f:
        rows = list(csv.DictReader(f))
    row = dict(rows[12 - 2], conc="")
    (q,), _ = load_inferencex(write_rows(tmp_path / "noconc.csv", [row]))
    assert q.mapping == "searched_best" and q.concurrency is None


def test_points_that_differ_only_in_their_moe_backend_are_priced_apart():
    # two matched points of one system, model, workload and stack, one naming vLLM's flashinfer_trtllm MoE (a
    # sweep's launch script: data/validation/aic_sweeps.toml), one not: each is priced with its own deployment,
    # as if predicted alone (the solve groups points by every deployment field, the pools' backends included)
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.fit.validate import MeasuredPoint
    from jalapeno.specs.formats import get_precision

    st = get_stack("vllm")

    def pt(rid, backend):
        dep = Deployment(get_precision("fp4"), Pool(Layout(tp=8), 1, backend))
        return MeasuredPoint("aiconfigurator", rid, "b300", "kimi-k2.5", "fp4", "vllm 0.19.0", 1024, 1024, 4.0, dep,
                             {"tpot_s": 0.01}, "matched")

    def tpot(points):
        df = predict_points(points, stack_of=lambda p: st)
        return df.set_index("id").predicted.to_dict()

    both = tpot([pt("calibrated", None), pt("measured", "flashinfer_trtllm")])
    alone = {**tpot([pt("calibrated", None)]), **tpot([pt("measured", "flashinfer_trtllm")])}
    assert both == alone and both["calibrated"] != both["measured"]


def test_predict_points_error_is_predicted_over_measured_minus_one(few_rows):
    df = few_rows
    assert set(df.id) == {f"inferencex_points_sample:{i}" for i in (7, 8, 9, 11)}
    assert set(df.metric) <= set(METRICS)
    ok = df.dropna(subset=["error"])
    assert len(ok) >= 9
    assert (ok.error == ok.predicted / ok.measured - 1).all()  # exactly
    assert (ok.predicted > 0).all()
    # one row per measured metric: line 7 has all four, line 11 only throughput
    assert sorted(df[df.id.str.endswith(":7")].metric) == sorted(METRICS)
    assert list(df[df.id.str.endswith(":11")].metric) == ["throughput_per_chip"]
    assert df.set_index("id").loc["inferencex_points_sample:7"].measured.tolist() == pytest.approx(
        [98.83, 103.09, 0.15777, 9.7e-3])
    assert df.groupby("system").kernels_calibrated.first().to_dict() == {"b200": True, "h200": True, "mi355x": False}
    assert set(df["mode"]) == {"agg"} and set(df.mapping) == {"matched"}


def test_error_summary_by_hand(few_rows):
    s = error_summary(few_rows)
    ok = few_rows.dropna(subset=["error"])
    row = s[(s.system == "h200") & (s.metric == "throughput_per_chip")].iloc[0]
    e = ok[(ok.system == "h200") & (ok.metric == "throughput_per_chip")].error.to_numpy()
    assert row.n == 2 == len(e)
    assert row.median_ape == pytest.approx((abs(e[0]) + abs(e[1])) / 2, rel=1e-12)
    assert row.bias == pytest.approx((e[0] + e[1]) / 2, rel=1e-12)
    assert row.p90_ape == pytest.approx(min(abs(e)) + 0.9 * abs(abs(e[0]) - abs(e[1])), rel=1e-12)
    assert int(s.n.sum()) == len(ok)
    assert set(s.columns) == {"source", "system", "model", "mode", "metric", "n", "median_ape", "p90_ape", "bias"}
    assert error_summary(few_rows.assign(error=np.nan)).empty


# ---- the run ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def run(silicon):
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "aiconfigurator_core", None)
        return run_validation(points_path=str(POINTS), use_aiconfigurator=False, aic_frame=silicon)


def test_run_validation_without_the_package(run, silicon):
    assert run["sources"] == {"inferencex": str(POINTS), "aiconfigurator": "fixture"}
    rows = run["rows"]
    assert set(rows.source) == {"inferencex", "aiconfigurator"}
    assert run["skipped"] == []
    assert rows[rows.source == "aiconfigurator"].id.nunique() == len(silicon)
    assert rows[rows.source == "inferencex"].id.nunique() == len(EXPECTED)
    assert set(rows.mapping) == {"matched", "searched_best", "frontier_peak@concurrency"}
    # the unmatched mappings are judged on throughput only
    assert set(rows[rows.mapping != "matched"].metric) == {"throughput_per_chip"}


def test_run_validation_marks_kernel_calibrated_systems(run):
    measured = set(calibrated_systems())
    # AMD sets are partly fitted on AMD's own tuned-kernel tables: their points are marked too
    assert {"h200", "b200", "mi355x"} <= measured and "jalapeno" not in measured
    assert all(load_calibration(n)["kind"] in ("measured", "partial") for n in measured)
    assert calibrated_systems(("measured",)) == {n for n in measured if load_calibration(n)["kind"] == "measured"}
    rows = run["rows"]
    assert rows[rows.system.isin(["h200", "b200", "mi355x"])].kernels_calibrated.all()
    assert (rows.kernels_calibrated == rows.system.isin(measured)).all()


def test_run_validation_overall_by_hand(run):
    ok = run["rows"].dropna(subset=["error"])
    assert set(run["overall"]) == set(ok.source)
    for src, per_metric in run["overall"].items():
        for m, d in per_metric.items():
            e = ok[(ok.source == src) & (ok.metric == m)].error.to_numpy()
            assert d["n"] == len(e) > 0
            assert d["median_ape"] == pytest.approx(float(np.median(np.abs(e))))
            assert d["bias"] == pytest.approx(float(np.median(e)))
    assert set(run["overall"]["aiconfigurator"]) == {"ttft_s", "tpot_s", "interactivity"}
    assert len(run["summary"]) > 0


def test_run_validation_skips_aiconfigurator_when_absent_and_says_so(no_package):
    """The base install (README's first command) has no aiconfigurator-core: the run goes on with the
    InferenceX points and names the source it left out and the extra that brings it (it was silent:
    a new user read InferenceX-only figures as docs/validation.md's)."""
    res = run_validation(points_path=str(POINTS), use_aiconfigurator=True)
    assert res["sources"] == {"inferencex": str(POINTS)}
    assert set(res["rows"].source) == {"inferencex"}
    assert list(res["left_out"]) == ["aiconfigurator"]
    assert "not installed" in res["left_out"]["aiconfigurator"]
    assert '.[calibrate]' in res["left_out"]["aiconfigurator"]
    # not asked for: nothing is left out
    assert run_validation(points_path=str(POINTS), use_aiconfigurator=False)["left_out"] == {}


def test_run_validation_with_a_frame_leaves_nothing_out(run):
    assert run["left_out"] == {}


def test_run_validation_missing_points_file(tmp_path):
    with pytest.raises(SpecError, match="not found"):
        run_validation(points_path=str(tmp_path / "nope.csv"), use_aiconfigurator=False)


def test_the_default_points_ship_with_the_package_each_with_its_source():
    """`jalapeno validate` works on a fresh clone: its InferenceX points are package data, and every
    row names the public source it was transcribed from."""
    import csv

    import jalapeno
    from jalapeno.fit.validation_run import DEFAULT_POINTS

    assert DEFAULT_POINTS.is_file()
    assert Path(jalapeno.__file__).parent in DEFAULT_POINTS.resolve().parents
    with DEFAULT_POINTS.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) > 100
    assert all(r["source"].strip() and r["date"].strip() for r in rows)
