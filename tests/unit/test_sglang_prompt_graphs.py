"""SGLang's prompt steps by release (fit/sglang_prompt_graphs.py; docs/gap_aic_itl.md round 32, sglrel32): the rule
read from the 0.5.9 / 0.5.10 / 0.5.12 wheels, its scope, the context-only host floor, the InferenceX rows it reaches,
and scripts/sglang_pcg_release.py's release steps on a hand-made frame."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from jalapeno.deploy.deployment import MTP, Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.fit.sglang_prompt_graphs import prompt_steps_eager, with_sglang_prompt_graphs
from jalapeno.serve.limits import prompt_floor_s
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import sglang_pcg_release as s  # noqa: E402

TP8 = Deployment(get_precision("fp8"), Pool(Layout(tp=8)))


@pytest.mark.parametrize("release, isl, eager", [
    ("0.5.7", 1024, True), ("0.5.9", 1024, True), ("0.5.9", 8192, True),  # enable_piecewise_cuda_graph = False
    ("0.5.10", 1024, False), ("0.5.10.post1", 2048, False),  # on by default; MLA cap 2048 tokens
    ("0.5.12", 2049, True), ("0.5.12", 8192, True),  # above the cap: eager in every release
    ("", 1024, None), ("unstated", 1024, None),  # no release: not priced either way
])
def test_prompt_steps_eager(release, isl, eager):
    assert prompt_steps_eager(release, isl) is eager


def test_scope():
    assert with_sglang_prompt_graphs(TP8, "deepseek-r1", "0.5.9", 1024)[0].eager_prompt_call_s == 24e-6
    assert with_sglang_prompt_graphs(TP8, "deepseek-r1", "0.5.9", 1024)[0].eager_prompt_alone
    out = [with_sglang_prompt_graphs(TP8, "deepseek-r1", "0.5.9", 1024, rocm=True),  # ROCm: never graphed, not priced
           with_sglang_prompt_graphs(TP8, "gpt-oss-120b", "0.5.9", 1024),  # not an MLA model
           with_sglang_prompt_graphs(replace(TP8, mtp=MTP(1, 0.8)), "deepseek-r1", "0.5.9", 1024),
           with_sglang_prompt_graphs(Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8))), "deepseek-r1",
                                     "0.5.9", 1024),
           with_sglang_prompt_graphs(TP8, "deepseek-r1", "0.5.12", 1024)]  # graphed
    assert all(d.eager_prompt_call_s == 0.0 and why == "" for d, why in out)


def test_context_only_floor():
    # cost/host_calls.py hand count for DeepSeek-R1 (3 dense + 58 MoE layers), context only: 3·(37+6) + 58·(37+23)
    calls = 3 * (37 + 6) + 58 * (37 + 23)
    assert calls == 3609
    alone = replace(TP8, eager_prompt_call_s=24e-6, eager_prompt_alone=True)
    ctx, mixed = prompt_floor_s(load_model("deepseek-r1"), alone)
    assert ctx == pytest.approx(calls * 24e-6) and mixed == ctx  # a prompt step alone: no decode calls
    ctx2, mixed2 = prompt_floor_s(load_model("deepseek-r1"), replace(alone, eager_prompt_alone=False))
    assert ctx2 == pytest.approx(ctx) and mixed2 > ctx2  # TensorRT-LLM's mixed step carries the decodes' calls


def test_what_if_reaches():
    # scripts/sglang_pcg_release._reached on the shipped InferenceX rows (not wired into validate: a what-if):
    # H200 DeepSeek-R1 FP8 SGLang v0.5.7 rows (81-84) eager, v0.5.12 1k/1k (56-60) graphed, v0.5.12 8k/1k (61-65)
    # eager (8192 > 2048 tokens); MI325X (row 34, ROCm) and the disaggregated rows not reached
    from jalapeno.fit.ix_points import load_inferencex

    pairs = {p.id: q for p, q in s._reached(load_inferencex(s.POINTS)[0])}
    call = {i: pairs[f"inferencex_points:{i}"].deployment.eager_prompt_call_s for i in (81, 84, 56, 60, 61, 65)}
    assert call == {81: 24e-6, 84: 24e-6, 56: 0.0, 60: 0.0, 61: 24e-6, 65: 24e-6}
    assert any("before SGLang 0.5.10" in n for n in pairs["inferencex_points:81"].notes)
    assert "inferencex_points:34" not in pairs
    assert all(q.deployment.prefill is None for q in pairs.values())


def test_row_release():
    class P:  # the fields row_release reads
        def __init__(self, source, framework):
            self.source, self.framework, self.engine_version = source, framework, "0.5.12"

    assert s.row_release(P("aiconfigurator", "sglang 0.5.9")) == "0.5.9"  # the label, not the recipe's
    assert s.row_release(P("inferencex", "sglang")) == "0.5.12"  # validate.point_release: the stated release


def test_group_table():
    b = pd.DataFrame([_row("x:1", "inferencex", "sglang", "ttft_s", 0.2, 0.1),
                      _row("x:2", "inferencex", "sglang", "ttft_s", 0.2, 0.3)]).assign(rel="0.5.7")
    a = b.assign(predicted=[0.15, 0.3], error=[-0.25, 0.5])
    g = s.group_table(b, a).iloc[0]
    assert g["n"] == 2 and g["med |e| before"] == pytest.approx(50.0) and g["med |e| rule"] == pytest.approx(37.5)
    assert g["med e before"] == pytest.approx(0.0) and g["med e rule"] == pytest.approx(12.5)


def _row(rid, source, framework, metric, measured, predicted, isl=1024, conc=16, split="fit"):
    return {"source": source, "id": rid, "system": "h200", "model": "deepseek-r1", "framework": framework,
            "mode": "agg", "isl": isl, "osl": 1024, "concurrency": conc, "quality": None, "split": split,
            "deployment": "agg attn TP8 DP1 · MoE TP8 EP1 [fp8,kv=bf16]", "metric": metric, "measured": measured,
            "predicted": predicted, "error": predicted / measured - 1}


def test_release_steps():
    rel = {"ix:1": "0.5.7", "ix:2": "0.5.12"}
    d = pd.DataFrame([_row("ix:1", "inferencex", "sglang", "tpot_s", 0.0172, 0.0180),
                      _row("ix:1", "inferencex", "sglang", "ttft_s", 0.356, 0.230),
                      _row("ix:1", "inferencex", "sglang", "interactivity", 58.0, 55.0),
                      _row("ix:2", "inferencex", "sglang", "tpot_s", 0.0153, 0.0175),
                      _row("ix:2", "inferencex", "sglang", "ttft_s", 0.198, 0.200),
                      _row("a:1", "aiconfigurator", "sglang 0.5.9", "tpot_s", 0.0166, 0.0178),
                      _row("a:1", "aiconfigurator", "sglang 0.5.9", "ttft_s", 0.245, 0.300)])
    out = s.release_steps(s.h200_rows(d, rel)).iloc[0]
    assert out["tpot step 0.5.7 meas"] == pytest.approx(1.9)  # 17.2 - 15.3 ms
    assert out["tpot step 0.5.7 model"] == pytest.approx(0.5)  # 18.0 - 17.5 ms
    assert out["tpot step 0.5.9 meas"] == pytest.approx(1.3)  # 16.6 - 15.3 ms
    assert out["ttft step 0.5.7 model"] == pytest.approx(30.0)  # 230 - 200 ms
    assert out["int err 0.5.7"] == pytest.approx(100 * (55 / 58 - 1)) and out["split 0.5.7"] == "fit"
