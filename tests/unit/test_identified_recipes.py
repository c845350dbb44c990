"""Measured disaggregated rows read as the recipe entries they ran (data/engines.toml [[identified]]).

Expected values by hand from InferenceX's .github/configs/nvidia-master.yaml (@298d8f94c,
2026-05-22) and the recipe files it names (@792d8aa4b858): the GB200 FP4 1k1k MTP entry
``ctx1_gen4_tep8_batch8_eplb0_mtp3`` runs concurrencies 4, 8, 12, 24, 48 on 4 TEP8 decode workers
with ``max_batch_size: 8`` each, i.e. 32 decode slots; its non-MTP sibling
``ctx1_gen4_tep8_batch32_eplb0_mtp0`` runs 12, 24, 48, 96, 192.
"""

from __future__ import annotations

import pytest

from jalapeno.deploy.engines import identified_config, recipes
from jalapeno.deploy.identified import _identified
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import predict_points
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.stacks import get_stack
from jalapeno.specs.workload import Workload

HEADER = ("hardware,model,precision,framework,spec,disagg,isl,osl,conc,topology,num_gpus,tput_per_gpu,"
          "output_tput_per_gpu,tok_s_user,tpot_ms,tpot_stat,ttft_ms,ttft_stat,e2el_s,cost_per_mtok_usd,date,"
          "point_type,check_ratio,notes,source")
#: InferenceX-app blog gb200-nvl72-vs-b200-disagg-deepseek-r1-fp4-dynamo-trt.mdx @0e0425cb (public measured rows)
GB200_48 = ("GB200 NVL72,DeepSeek-R1-0528,FP4,dynamo-trt,mtp,1,1024,1024,48,prefill 4 GPU TP=4; decode 32 GPU EP=8,"
            "36,363.3,,207.3,4.82,median (dashboard),,,,1.69,2026-05-22,frontier,0.657,,blog")
B200_6 = ("B200,DeepSeek-R1-0528,FP4,dynamo-trt,mtp,1,1024,1024,6,prefill 4 GPU TP=4; decode 40 GPU EP=8,44,49.3,,"
          "309.17,3.23,median (dashboard),,,,10.99,2026-05-22,frontier,0.585,,blog")
B200_10 = ("B200,DeepSeek-R1-0528,FP4,dynamo-trt,mtp,1,1024,1024,10,prefill 4 GPU TP=4; decode 40 GPU EP=8,44,118.7,,"
           "277.39,3.61,median (dashboard),,,,4.56,2026-05-22,frontier,0.941,,blog")


def _points(tmp_path, *rows):
    path = tmp_path / "pts.csv"
    path.write_text("\n".join((HEADER, *rows)) + "\n")
    pts, skipped = load_inferencex(path)
    assert skipped == []
    return pts


def test_a_concurrency_list_identifies_one_entry_and_mtp_use_disambiguates():
    e = identified_config("gb200-nvl72", "deepseek-r1", "dynamo-trt", "fp4", 1024, 1024, 48, mtp=True)
    assert e.name == "ctx1_gen4_tep8_batch8_eplb0_mtp3" and e.concurrency == (4, 8, 12, 24, 48)
    assert (e.decode.workers, e.decode.layout, e.decode_max_batch, e.mtp_draft) == (4, Layout(tp=8, ep=8), 8, 3)
    assert identified_config("gb200-nvl72", "deepseek-r1", "dynamo-trt", "fp4", 1024, 1024, 48,
                             mtp=False).name == "ctx1_gen4_tep8_batch32_eplb0_mtp0"
    # a point silent on MTP at a concurrency both entries ran is not identified
    assert identified_config("gb200-nvl72", "deepseek-r1", "dynamo-trt", "fp4", 1024, 1024, 48) is None
    # 4 runs only in the MTP entry: identified whatever the point says about MTP
    assert identified_config("gb200-nvl72", "deepseek-r1", "dynamo-trt", "fp4", 1024, 1024, 4).mtp_draft == 3
    # three entries ran 4301 at 1k1k (one MTP, two not): only the MTP one is unique
    assert identified_config("gb200-nvl72", "deepseek-r1", "dynamo-trt", "fp4", 1024, 1024, 4301) is None
    e = identified_config("gb200-nvl72", "deepseek-r1", "dynamo-trt", "fp4", 1024, 1024, 4301, mtp=True)
    assert (e.prefill.workers, e.decode.layout, e.decode_max_batch) == (2, Layout(tp=1, dp=16, ep=16, eplb=0), 256)


def test_the_entry_deployment_caps_the_decode_batch_at_its_slots():
    """48 users on 4 workers x 8 slots: 32 decode, 16 queue; below 32 users the cap is not reached."""
    dep = identified_config("gb200-nvl72", "deepseek-r1", "dynamo-trt", "fp4", 1024, 1024, 48, mtp=True).deployment()
    assert dep.max_running == 8 and dep.budget_per == "rank" and dep.token_budget == 16384
    pricer = load_any_pricer("gb200-nvl72", "calibrated", pricer="roofline", stack=get_stack("dynamo-trtllm"))
    wl = Workload("1k1k", 1024, 1024, 0.8)
    r = serve_at_concurrency(load_model("deepseek-r1"), pricer, dep, wl, [24.0, 48.0], idle_start=False)
    # decode_batch is per decode worker: 8 on each of the 4 (32 in all); 24 users fit below it
    assert r.decode_batch[1] == pytest.approx(8.0) and r.decode_batch[0] < 8.0
    assert str(r.limit[1]).startswith("max_running") and str(r.limit[0]) == ""
    # Little's law: all 48 users are in the loop, 32 of them decoding (E2E - TTFT), the rest waiting
    lam = r.request_rate_per_s[1]
    assert lam * r.e2e_s[1] == pytest.approx(48.0, rel=1e-3)
    assert lam * (r.e2e_s[1] - r.ttft_s[1]) == pytest.approx(32.0, rel=1e-3) and r.queue_s[1] > 0


def test_a_measured_row_is_read_as_its_entry_when_the_gpu_counts_agree(tmp_path):
    p = _points(tmp_path, GB200_48)[0]
    d = p.deployment
    assert p.mapping == "matched" and d.max_running == 8 and d.chips == 36
    assert any("ctx1_gen4_tep8_batch8_eplb0_mtp3" in n and "decode max_batch 8" in n for n in p.notes)
    # a topology whose GPU count disagrees with the entry keeps the topology's reading
    p = _points(tmp_path, GB200_48.replace("decode 32 GPU EP=8", "decode 40 GPU EP=8"))[0]
    assert p.deployment.max_running is None and p.deployment.decode.workers == 5
    assert any("not used: its GPU count differs" in n for n in p.notes)


def test_points_with_one_label_but_different_limits_are_predicted_apart(tmp_path):
    """B200 conc 6 ran ctx1_gen5_tep8_batch1 (5 slots), conc 10 ctx1_gen5_tep8_batch32: same pools and
    MTP, so the same label; each must be served with its own max_batch."""
    pts = _points(tmp_path, B200_6, B200_10)
    assert pts[0].deployment.label == pts[1].deployment.label
    assert (pts[0].deployment.max_running, pts[1].deployment.max_running) == (1, 32)
    rows = predict_points(pts)
    got = rows[(rows.id == pts[0].id) & (rows.metric == "throughput_per_chip")].predicted.iloc[0]
    from jalapeno.fit.validate import with_stack_mtp

    st = get_stack("dynamo-trtllm")
    own = serve_at_concurrency(load_model("deepseek-r1"),
                               load_any_pricer("b200", "calibrated", pricer="roofline", stack=st),
                               with_stack_mtp(pts[0].deployment, st, "deepseek-r1"),
                               Workload("1024/1024", 1024, 1024, 0.8), [6.0])
    assert got == pytest.approx(float(own.throughput_per_chip[0]), rel=1e-9)
    assert own.decode_batch[0] == pytest.approx(1.0)  # per worker: max_batch 1 on each of the 5


def test_bad_identified_entries_are_refused_with_the_field():
    rec = next(iter(recipes()))
    base = {"name": "x", "recipe": rec, "system": "b200", "model": "deepseek-r1", "framework": "dynamo-trt",
            "precision": "fp4", "isl": 1024, "osl": 1024, "decode": {"tp": 8, "ep": 8}, "source": "s"}
    with pytest.raises(SpecError, match="concurrency.*positive integer or a list"):
        _identified({**base, "concurrency": [4, 0]}, 0, recipes())
    with pytest.raises(SpecError, match="max_batch.*positive integer"):
        _identified({**base, "concurrency": [4], "decode": {"tp": 8, "ep": 8, "max_batch": 0}}, 0, recipes())
    with pytest.raises(SpecError, match="unknown keys"):
        _identified({**base, "concurrency": 4, "prefill": {"tp": 4, "max_batch": 2}}, 0, recipes())


#: InferenceX-app blog best-gpu-for-dsr1-inference.mdx @2d1d3d65 (public measured row: H100 FP8 Dynamo-TRT 1k1k)
H100_4916 = ("H100,DeepSeek-R1-0528,FP8,dynamo-trt,unspecified (may be MTP),1,1024,1024,4916,,,1375.9,,8.37,119.5,"
             "median,20175.8,median,,,2026-02-08,max_throughput_per_gpu,,,blog")


def test_h100_best_row_is_its_entry_and_its_slots_make_the_wait(tmp_path):
    """nvidia-master.yaml @2767db504, dsr1-fp8-h100-dynamo-trt: 4916 ran only in
    ctx2_gen1_dep16_batch256_eplb0_mtp0 (2 DEP16 prefill workers + 1 DEP16 decode worker, 256 slots
    per rank): 48 GPUs, 16 x 256 = 4096 decoding, the other 820 users wait (TTFT 20 s measured)."""
    p = _points(tmp_path, H100_4916)[0]
    d = p.deployment
    assert p.mapping == "matched" and d.chips == 48 and d.mtp is None and d.precision.name == "fp8"
    assert (d.prefill.workers, d.prefill.layout) == (2, Layout(tp=1, dp=16, ep=16))
    assert d.decode.layout == Layout(tp=1, dp=16, ep=16) and d.max_running == 256 and d.budget_per == "rank"
    pricer = load_any_pricer("h100", "calibrated", pricer="roofline", stack=get_stack("dynamo-trtllm"))
    r = serve_at_concurrency(load_model("deepseek-r1"), pricer, d, Workload("1k1k", 1024, 1024, 0.8), [4916.0],
                             idle_start=False)
    lam = r.request_rate_per_s[0]
    assert r.decode_batch[0] == pytest.approx(4096.0) and str(r.limit[0]).startswith("max_running")
    assert lam * (r.e2e_s[0] - r.ttft_s[0]) == pytest.approx(4096.0, rel=1e-3)
    assert lam * r.e2e_s[0] == pytest.approx(4916.0, rel=1e-3)
    # the 8k1k row at 154 ran an MTP and a non-MTP entry; silent on MTP, it is not identified
    assert identified_config("h100", "deepseek-r1", "dynamo-trt", "fp8", 8192, 1024, 154) is None


#: InferenceX-app blog best-gpu-for-dsr1-inference.mdx @2d1d3d65 (public measured row; silent on MTP)
H100_154 = ("H100,DeepSeek-R1-0528,FP8,dynamo-trt,unspecified (may be MTP),1,8192,1024,154,,,850.1,,39.84,25.1,"
            "median,8036.0,median,,0.42,2026-02-08,max_throughput_per_gpu,,,blog")


def test_a_best_row_silent_on_mtp_takes_the_entries_without_mtp(tmp_path):
    """nvidia-master.yaml @2767db504, dsr1-fp8-h100-dynamo-trt 8k1k: 154 ran in two 48-GPU entries,
    ctx2_gen1_dep16_batch8_eplb0_mtp3 (2 DEP16 prefill + 1 DEP16 decode worker, MTP3) and
    ctx1_gen2_tep16_batch64_eplb0_mtp0 (1 DEP16 prefill + 2 TEP16 decode workers, no MTP). The row does
    not say which; as the search-space rule reads a silent row (the entries without MTP where any ran
    its concurrency), it is the best of the entry without MTP alone, and the note says so. A row that
    states MTP is the MTP entry, identified (one entry left)."""
    p = _points(tmp_path, H100_154)[0]
    assert p.mapping == "best_entry@concurrency" and p.deployment is None
    (d,) = p.candidates
    assert d.mtp is None and d.chips == 48 and d.max_running == 64
    assert (d.prefill.workers, d.prefill.layout) == (1, Layout(tp=1, dp=16, ep=16))
    assert (d.decode.workers, d.decode.layout) == (2, Layout(tp=16, ep=16))
    assert any("of 2: silent on MTP, the entries without MTP" in n for n in p.notes)
    q = _points(tmp_path, H100_154.replace("unspecified (may be MTP)", "mtp"))[0]
    assert q.mapping == "matched" and q.deployment.mtp.draft_tokens == 3
    assert q.deployment.decode.layout == Layout(tp=1, dp=16, ep=16) and q.deployment.max_running == 8


#: InferenceX-app blog best-gpu-for-gptoss120b-inference.mdx @2d1d3d65 (public measured row)
GPTOSS_2048 = ("GB200 NVL72,gpt-oss-120b,FP4 (MXFP4),dynamo-trt,none,1,1024,1024,2048,,,52495.8,,40.65,24.6,median,"
               "215.6,median,,,2026-01-07,max_throughput_per_gpu,,,blog")


def test_a_best_row_that_several_entries_ran_is_the_best_of_them(tmp_path):
    """nvidia-master.yaml @645b97aa4, gptoss-fp4-gb200-dynamo-trt 1k1k: 2048 ran in two entries (1 TP1
    prefill worker + 1 or 2 DEP2 decode workers, 1536 slots per rank); the row is InferenceX's highest
    throughput per GPU at 2048, so its prediction is the higher of the two entries' predictions. The row as
    shipped gives its TTFT and TPOT, whose implied GPU count (3.15) names the 3-GPU entry (fit/run_identity.py:
    matched); without them nothing tells the two apart, the case tested here."""
    from jalapeno.fit.entries import best_entry

    assert _points(tmp_path, GPTOSS_2048)[0].deployment.chips == 3
    p = _points(tmp_path, GPTOSS_2048.replace("40.65,24.6,median,215.6,median", ",,,,"))[0]
    assert p.mapping == "best_entry@concurrency" and p.deployment is None and p.mode == "disagg"
    assert sorted(d.chips for d in p.candidates) == [3, 5]
    assert all(d.max_running == 1536 and d.token_budget == 20000 for d in p.candidates)
    pricer = load_any_pricer("gb200-nvl72", "calibrated", pricer="roofline", stack=get_stack("dynamo-trtllm"))
    model, wl = load_model("gpt-oss-120b"), Workload("1024/1024", 1024, 1024, 0.8)
    each = [float(serve_at_concurrency(model, pricer, d, wl, [2048.0]).throughput_per_chip[0]) for d in p.candidates]
    got = best_entry(model, pricer, p.candidates, wl, 2048.0)
    assert got["feasible"] and got["throughput_per_chip"] == pytest.approx(max(each), rel=1e-12)
    rows = predict_points([p])
    assert rows.predicted.iloc[0] == pytest.approx(max(each), rel=1e-9) and list(rows.metric) == ["throughput_per_chip"]


def test_h100_entries_carry_their_recipe_files_prefill_budget():
    """NVIDIA/srt-slurm @5063eb43 (the sa-submission-q1-2026 recipes InferenceX's runners ran):
    recipes/trtllm/h100-fp8/1k1k/stp/ctx2_gen1_dep16_batch256_eplb0_mtp0.yaml prefill max_num_tokens
    2048 per rank; the two 8k1k entries 8224 (not TensorRT-LLM's default 8192)."""
    from jalapeno.deploy.engines import _data

    got = {i.name: (i.deployment().token_budget, i.deployment().budget_per) for i in _data()[2] if i.system == "h100"}
    assert got == {"ctx2_gen1_dep16_batch256_eplb0_mtp0": (2048, "rank"),
                   "ctx2_gen1_dep16_batch8_eplb0_mtp3": (8224, "rank"),
                   "ctx1_gen2_tep16_batch64_eplb0_mtp0": (8224, "rank")}
