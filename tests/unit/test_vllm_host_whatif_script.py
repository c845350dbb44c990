"""scripts/vllm_host_whatif.py: the two overlap rules of a per-request host cost, the profile match, and the
two checks of --bound (TP bound under max(), context ratio), each computed by hand."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pytest
from script_module import load_script

from jalapeno.cost.step import Batch
from jalapeno.deploy.layout import Layout
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY

w = load_script("vllm_host_whatif")


@dataclass(frozen=True)
class _Step:  # the three StepCost fields with_host reads and replaces
    step_time_s: np.ndarray
    interval_s: np.ndarray
    attribution_s: dict


def _step(t):
    t = np.asarray(t, dtype=float)
    return _Step(t, t.copy(), {"overhead": np.zeros_like(t), "compute": t.copy()})


def test_add_rule_by_hand(monkeypatch):
    monkeypatch.setattr(w, "RULE", "add")
    monkeypatch.setattr(w, "H_S", 20e-6)
    # 256 decoding + 2 prefilling sequences on one engine core: 258 x 20 µs = 5.16 ms; at DP2 half each
    b = Batch.make(decode_seqs=[256.0, 256.0], decode_ctx=1024.0, prefill_tokens=[1024.0, 1024.0], prefill_seqs=[2.0, 2.0])
    out = w.with_host(_step([0.020, 0.020]), DEFAULT_EFFICIENCY, Layout(tp=4), b)
    assert out.step_time_s.tolist() == pytest.approx([0.02516, 0.02516])
    assert out.interval_s.tolist() == pytest.approx([0.02516, 0.02516])
    assert out.attribution_s["overhead"].tolist() == pytest.approx([0.00516, 0.00516])
    dp2 = w.with_host(_step([0.020]), DEFAULT_EFFICIENCY, Layout(dp=2, ep=2), Batch.make(decode_seqs=256.0, decode_ctx=1024.0))
    assert dp2.step_time_s.tolist() == pytest.approx([0.02256])


def test_max_rule_by_hand(monkeypatch):
    monkeypatch.setattr(w, "RULE", "max")
    monkeypatch.setattr(w, "H_S", 80e-6)
    eff = replace(DEFAULT_EFFICIENCY, step_overhead_s=0.5e-3, tp_rank_step_s=0.1e-3)
    # host = 0.5 ms + 3 x 0.1 ms (TP4) + n x 80 µs: n = 64 -> 5.92 ms (under a 10 ms GPU step: unchanged);
    # n = 256 -> 21.28 ms (over it: the step waits for the host)
    b = Batch.make(decode_seqs=[64.0, 256.0], decode_ctx=1024.0)
    out = w.with_host(_step([0.010, 0.010]), eff, Layout(tp=4), b)
    assert out.step_time_s.tolist() == pytest.approx([0.010, 0.02128])
    assert out.attribution_s["overhead"].tolist() == pytest.approx([0.0, 0.01128])


def test_profile_match():
    hit = ["jalapeno defaults + stack vllm", "x + stack vllm@0.19.0", "x + stack vllm+ar_rms@0.17.0"]
    miss = ["x + stack vllm-rocm", "x + stack sglang", "x + stack trtllm@1.2.0"]
    assert all(w.VLLM.search(s) for s in hit)
    assert not any(w.VLLM.search(s) for s in miss)


COLS = ["source", "id", "system", "model", "precision", "framework", "mapping", "deployment", "isl", "osl",
        "concurrency", "metric", "measured", "predicted"]


def _row(rid, tp, isl, conc, meas, pred, model="minimax-m2.5", metric="tpot_s"):
    dep = f"agg attn TP{tp} DP1 · MoE TP{tp} EP1 [fp4]"
    return ("aiconfigurator", rid, "b200", model, "fp4", "vllm 0.19.0", "matched", dep, isl, 1024, conc, metric,
            meas, pred)


def _csv(tmp_path, rows):
    p = tmp_path / "v.csv"
    pd.DataFrame(rows, columns=COLS).to_csv(p, index=False)
    return str(p)


def test_tp_bound_by_hand(tmp_path):
    rows = [_row("a", 2, 1024, 512, 0.038, 0.028), _row("b", 4, 1024, 512, 0.030, 0.021),
            _row("c", 4, 1024, 64, 0.012, 0.011),  # below C 128: left out
            _row("d", 2, 1024, 256, 0.026, 0.021),  # C 256 has one TP size only: left out
            _row("e", 4, 1024, 512, 0.5, 0.1, metric="ttft_s"), _row("f", 4, 1024, 512, 0.5, 0.1, model="qwen3")]
    t = w.tp_bound(_csv(tmp_path, rows)).sort_values("tp")
    # H <= 30 ms (TP4 measured). TP2: deficit 10 ms, explained max(0, min(30, 38) - 28) = 2 ms; TP4: 9 of 9 ms
    assert t.host_max_ms.tolist() == pytest.approx([30.0, 30.0])
    assert t.deficit_ms.tolist() == pytest.approx([10.0, 9.0])
    assert t.explained_ms.tolist() == pytest.approx([2.0, 9.0])


def test_context_ratio_by_hand(tmp_path):
    rows = [_row("a", 4, 1024, 256, 0.021, 0.0156), _row("b", 4, 8192, 256, 0.0442, 0.0341),
            _row("c", 4, 1024, 512, 0.030, 0.021)]  # no 8k/1k partner: left out
    c = w.context(_csv(tmp_path, rows))
    # deficits 5.4 and 10.1 ms: ratio 10.1 / 5.4 = 1.87
    assert c["1024/1024"].tolist() == pytest.approx([5.4])
    assert c["8192/1024"].tolist() == pytest.approx([10.1])
    assert c.ratio.tolist() == pytest.approx([1.87], abs=0.005)
