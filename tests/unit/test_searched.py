"""A "best configuration" row is bounded by the runs its benchmark's search space made (fit/searched.py).

Expected search spaces are transcribed by hand from SemiAnalysisAI/InferenceX
.github/configs/nvidia-master.yaml and amd-master.yaml @51e31df4ad46 (2026-04-06), not read from
the shipped TOML; the best-of-runs arithmetic is checked on a hand-computed throughput curve.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from csv_rows import write_rows

import jalapeno.serve.point as serve_point
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.fit.searched import best_searched, matching_spaces, parse_spaces, searched_mapping, searched_runs
from jalapeno.fit.validate import predict_points
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.specs.formats import get_precision


def _layouts(runs):
    """{(prefill (tp, dp, ep, workers) or None, decode (tp, dp, ep, workers)): concurrencies}."""
    def key(p):
        return None if p is None else (p.layout.tp, p.layout.dp, p.layout.ep, p.workers)
    out = {}
    for dep, concs in runs:
        out.setdefault((key(dep.prefill), key(dep.decode)), set()).update(concs)
    return out


def test_b200_fp4_trt_8k1k_space_as_the_config_states():
    """dsr1-fp4-b200-trt, isl 8192: { tp 4, conc 4-32 }, { tp 4, ep 4, conc 32 }, { tp 4, ep 4,
    dp-attn, conc 256 }, { tp 8, conc 4 }, { tp 8, ep 8, dp-attn, conc 128-256 } (x2 steps)."""
    (sp,) = matching_spaces("b200", "deepseek-r1", "FP4", "trt", 8192, 1024, "0", "2026-04-06")[:1] or [None]
    assert sp is not None and sp.key == "dsr1-fp4-b200-trt" and not sp.disagg
    runs = searched_runs("b200", "deepseek-r1", 8192, 1024, [sp], False, None)
    assert _layouts(runs) == {(None, (4, 1, 1, 1)): {4, 8, 16, 32}, (None, (4, 1, 4, 1)): {32},
                              (None, (1, 4, 4, 1)): {256}, (None, (8, 1, 1, 1)): {4},
                              (None, (1, 8, 8, 1)): {128, 256}}
    assert all(d.mtp is None for d, _ in runs)


def test_concurrency_selects_the_entries_that_ran_it():
    (sp,) = matching_spaces("b200", "deepseek-r1", "FP4", "trt", 8192, 1024, "0", "2026-04-06")[:1]
    runs = searched_runs("b200", "deepseek-r1", 8192, 1024, [sp], False, 32)
    assert _layouts(runs) == {(None, (4, 1, 1, 1)): {32}, (None, (4, 1, 4, 1)): {32}}
    assert searched_runs("b200", "deepseek-r1", 8192, 1024, [sp], False, 64) == ()


def test_matching_follows_framework_precision_mode_and_date():
    keys = {s.key for s in matching_spaces("mi355x", "deepseek-r1", "FP4", "mori-sglang", 8192, 1024, "1",
                                           "2026-03-13")}
    assert keys == {"dsr1-fp4-mi355x-sglang-disagg", "dsr1-fp4-mi355x-sglang-disagg-mtp"}  # the configs' name
    # "FP4?": no precision stated -> the FP4 and the FP8 SGLang configs of MI355X
    keys = {s.key for s in matching_spaces("mi355x", "deepseek-r1", "FP4?", "sglang (plain, single node)",
                                           8192, 1024, "", "<=2026-04-06")}
    assert keys == {"dsr1-fp4-mi355x-sglang", "dsr1-fp8-mi355x-sglang"}
    # no framework named: every B200 FP8 config, aggregated and disaggregated
    sp = matching_spaces("b200", "deepseek-r1", "FP8", "(best FP8)", 8192, 1024, "", "<=2026-04-06")
    assert {s.key for s in sp} >= {"dsr1-fp8-b200-sglang", "dsr1-fp8-b200-trt", "dsr1-fp8-b200-dynamo-trt"}
    assert {s.disagg for s in sp} == {True, False}
    # a dated row: each key's latest space on or before that day, one per key; "<=" rows every one
    dated = matching_spaces("b200", "deepseek-r1", "FP4", "trt", 8192, 1024, "0", "2026-04-06")
    assert len({s.key for s in dated}) == len(dated)
    assert all(s.date <= "2026-04-06" for s in dated)
    assert matching_spaces("b200", "deepseek-r1", "FP4", "trt", 8192, 1024, "0", "2025-01-01") == []


def test_mori_sglang_dep_runs_carry_their_launch_scripts_limits():
    """InferenceX amd_utils @5e2c705d3cbd: decode --max-running-requests = 160 x DECODE_TP_SIZE, --cuda-graph-bs
    1-160; prefill --chunked-prefill-size = MORI_MAX_DISPATCH_TOKENS_PREFILL x PREFILL_TP_SIZE, 16384 x 4: env.sh's
    12288 is for a MODEL_NAME matching the case-sensitive glob *mxfp4*, and the run's is DeepSeek-R1-0528-MXFP4;
    TP entries: none of these."""
    sp = matching_spaces("mi355x", "deepseek-r1", "FP4", "mori-sglang", 1024, 1024, "1", "2026-03-13")
    (dep, concs), = searched_runs("mi355x", "deepseek-r1", 1024, 1024, sp, False, 2048)
    assert concs == (2048.0,) and dep.prefill.layout.dp == 4 and dep.decode.layout.dp == 8
    assert dep.budget_per == "rank" and dep.cuda_graph_max_batch == 160
    assert dep.max_running * dep.rank_scale(dep.decode.layout) == 1280  # 160 x 8, the script's flag
    assert dep.prefill_budget(dep.prefill.layout) == 65536  # 16384 x 4
    # the TP8 entries of the same space (no attention DP) are not this recipe's
    for d, _ in searched_runs("mi355x", "deepseek-r1", 1024, 1024, sp, False, 64):
        assert d.decode.layout.dp == 1 and d.max_running is None and d.budget_per == "instance"


def test_unstated_mtp_takes_the_mtp_entries_only_when_no_other_ran_the_concurrency():
    row = {"precision": "FP8", "framework": "trt", "disagg": "0", "date": "2026-01-14",
           "spec": "unspecified (may be MTP)"}
    # H200 8k/1k: dsr1-fp8-h200-trt ran up to 64; only dsr1-fp8-h200-trt-mtp's DEP8 entry ran 256
    mapping, runs, note, mtp = searched_mapping(row, "h200", "deepseek-r1", 8192, 1024, 256.0)
    assert mapping == "searched_best@concurrency" and mtp and "predicted with MTP" in note
    assert _layouts(runs) == {(None, (1, 8, 8, 1)): {256.0}} and runs[0][0].mtp is not None
    mapping, runs, _, mtp = searched_mapping(row, "h200", "deepseek-r1", 8192, 1024, 32.0)
    assert not mtp and all(d.mtp is None for d, _ in runs)
    assert searched_mapping(dict(row, spec="none"), "h200", "deepseek-r1", 8192, 1024, 256.0) is None


def _fake_serve(monkeypatch, scale):
    """Throughput per chip = scale(dep) * 100 * c / (c + 32): by hand, 20.0 at c = 8 (scale 1)."""
    def serve(model, pricer, dep, wl, concurrency):
        c = np.asarray(concurrency, dtype=float)
        s = scale(dep)
        if s is None:
            raise InfeasibleDeployment("layout", "does not fit", "use more chips")
        return SimpleNamespace(throughput_per_chip=s * 100 * c / (c + 32), feasible=c < 1000)
    monkeypatch.setattr(serve_point, "serve_at_concurrency", serve)


def test_best_of_runs_is_the_highest_at_the_searched_concurrencies(monkeypatch):
    a = Deployment(get_precision("fp8"), Pool(Layout(tp=8)))
    b = Deployment(get_precision("fp8"), Pool(Layout(tp=4)))
    c = Deployment(get_precision("fp8"), Pool(Layout(tp=2)))
    _fake_serve(monkeypatch, lambda d: {8: 1.0, 4: 0.5, 2: None}[d.decode.layout.tp])
    # a at 4 and 8: 100*4/36 = 11.1, 100*8/40 = 20.0; b at 16: 50*16/48 = 16.7; c cannot run
    best = best_searched(None, None, ((a, (4.0, 8.0)), (b, (16.0,)), (c, (64.0,))), None)
    assert best["throughput_per_chip"] == pytest.approx(20.0) and best["entry"].endswith("@8")
    # b searched up to 64 instead: 50*64/96 = 33.3 beats a's 20.0 (the cap decides the winner)
    best = best_searched(None, None, ((a, (4.0, 8.0)), (b, (16.0, 32.0, 64.0))), None)
    assert best["throughput_per_chip"] == pytest.approx(100 / 3) and best["entry"].endswith("@64")
    # runs only at an infeasible load: no prediction, said so
    none = best_searched(None, None, ((a, (1000.0,)),), None)
    assert not none["feasible"] and "no searched run" in none["reason"]


@pytest.mark.parametrize("text, field, says", [
    ('[[space]]\nkey = "k"\n', "space[0]", "missing"),
    ('[[space]]\nkey="k"\nsystem="b200"\nmodel="m"\nprecision="fp8"\nframework="trt"\ndisagg=false\nisl=1\nosl=1\n'
     'date="2026-01-01"\nsource="s"\nentries=[{ agg = { tp = 0, dp = 1, ep = 1 }, conc = [4] }]\n',
     "space[0].entries[0].agg", "not a pool"),
    ('[[space]]\nkey="k"\nsystem="b200"\nmodel="m"\nprecision="fp8"\nframework="trt"\ndisagg=false\nisl=1\nosl=1\n'
     'date="2026-01-01"\nsource="s"\nentries=[{ agg = { tp = 8, dp = 1, ep = 1 }, conc = [] }]\n',
     "space[0].entries[0].conc", "[]"),
    ('[[space]]\nkey="k"\nsystem="b200"\nmodel="m"\nprecision="fp8"\nframework="trt"\ndisagg=true\nisl=1\nosl=1\n'
     'date="2026-01-01"\nsource="s"\nentries=[{ decode = { tp = 8, dp = 1, ep = 1, workers = 1 }, conc = [4] }]\n',
     "space[0].entries[0]", "prefill"),
    ("[[space\n", "x.toml", "not valid TOML"),
])
def test_bad_space_file_names_the_field(text, field, says):
    with pytest.raises(SpecError) as ei:
        parse_spaces(text, "x.toml")
    assert ei.value.field.endswith(field) and says in str(ei.value)


#: inferencex_points.csv line 37 (the InferenceX blog's best B200 FP4 result without disaggregation)
ROW_37 = {"hardware": "B200", "model": "DeepSeek-R1-0528", "precision": "FP4",
          "framework": "trt (single node, no disagg)", "spec": "unspecified", "disagg": "", "isl": "8192",
          "osl": "1024", "conc": "", "topology": "", "num_gpus": "", "tput_per_gpu": "10505.4",
          "output_tput_per_gpu": "", "tok_s_user": "", "tpot_ms": "", "tpot_stat": "", "ttft_ms": "", "ttft_stat": "",
          "e2el_s": "", "cost_per_mtok_usd": "", "date": "<=2026-04-06", "point_type": "throughput_only",
          "check_ratio": "", "notes": "no-disagg best", "source": "InferenceX-app best-gpu-for-dsr1-inference.mdx"}


def test_a_real_peak_row_is_the_best_of_its_searched_runs(tmp_path):
    (p,), skipped = load_inferencex(write_rows(tmp_path / "row37.csv", [ROW_37]))
    assert skipped == [] and p.mapping == "searched_best" and p.concurrency is None
    lay = _layouts(p.candidates)
    # the 2026-04-06 space (above) is among the runs; none with MTP (unstated), none above 256 users
    assert lay[(None, (1, 8, 8, 1))] >= {128.0, 256.0} and lay[(None, (1, 4, 4, 1))] >= {256.0}
    assert lay[(None, (4, 1, 1, 1))] >= {4.0, 8.0, 16.0, 32.0}
    assert all(d.mtp is None for d, _ in p.candidates)
    assert max(max(c) for c in lay.values()) <= 256
    bounded = predict_points([p])
    p.mapping = "frontier_peak"  # the model's own peak: every layout at every load
    unbounded = predict_points([p])
    b, u = bounded.predicted.iloc[0], unbounded.predicted.iloc[0]
    assert np.isfinite(b) and 0 < b < u


def test_b200_fp8_dynamo_sglang_8k1k_runs_are_its_recipes_benchmarks():
    """dsr1-fp8-b200-dynamo-sglang, isl 8192, nvidia-master.yaml @2767db504b61 (2026-02-07): the
    max-throughput entries' conc-lists say [128, 512, 1024] (1P1D DEP8) and [256, 512, 1024] (2P1D
    DEP8), but the runner ran their srt-slurm recipes unchanged, whose benchmarks run 128 and 256
    (NVIDIA/srt-slurm @5063eb43 recipes/b200-fp8/8k1k/stp/max-tpt-dep8-{1p1d,2p1d}.yaml
    ``concurrencies: "128"`` / ``"256"``); the low-latency TEP8 ones: 4x32x64 (1P1D), 64 (1P4D), 32 (1P6D)."""
    sp = [s for s in matching_spaces("b200", "deepseek-r1", "FP8", "dynamo-sglang", 8192, 1024, "1", "2026-03-01")
          if s.key == "dsr1-fp8-b200-dynamo-sglang"]
    assert [s.date for s in sp] == ["2026-02-07"]
    lay = _layouts(searched_runs("b200", "deepseek-r1", 8192, 1024, sp, False, None))
    assert lay == {((1, 8, 8, 1), (1, 8, 8, 1)): {128.0}, ((1, 8, 8, 2), (1, 8, 8, 1)): {256.0},
                   ((8, 1, 8, 1), (8, 1, 8, 1)): {4.0, 32.0, 64.0}, ((8, 1, 8, 1), (8, 1, 8, 4)): {64.0},
                   ((8, 1, 8, 1), (8, 1, 8, 6)): {32.0}}
