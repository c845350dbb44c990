"""scripts/trt_tp_host_calls.py: the TP/EP-dependent calls of one eager gpt-oss layer, counted by hand from the
sources the script names, and why they cannot carry the rows' growth from TP2 to TP8."""

from __future__ import annotations

from script_module import load_script

tp = load_script("trt_tp_host_calls")


def test_tp_part_by_hand():
    # TP1 (forward_normal): two RMSNorm calls with a residual, one flashinfer_fused_add_rmsnorm each = 2
    assert tp.tp_part(1, 1) == 2
    # TP > 1 (forward_tp), 2025 AllReduce.forward: one fused all-reduce + norm op per norm = 2, so the all-reduce
    # replaces the norm call one for one; the 2026 AllReduce.forward adds input.contiguous() to each = 4
    assert tp.tp_part(2, 1, ar_2026=False) == 2 and tp.tp_part(2, 1) == 4
    # EP > 1 (TritonEPRouter.prune_routing_ep): two Triton launches + compaction's two empty_like and its launch = 5
    assert tp.tp_part(8, 8, ar_2026=False) == 2 + 5 and tp.tp_part(8, 8) == 4 + 5


def test_layer_counts_by_hand():
    # shipped TRITON layer 65 holds eager26's all-reduce + norm as 2 + 2 at every TP; replace that part
    assert tp.layer_calls(1, 1) == 65 - 4 + 2 == 63
    assert tp.layer_calls(8, 8) == 65 - 4 + 9 == 70
    assert tp.layer_calls(8, 8, ar_2026=False) == 65 - 4 + 7 == 68


def test_the_count_is_flat_from_tp2_where_the_rows_grow():
    # The count is the same at TP2, TP4 and TP8 (every TP > 1 row ran EP = TP): no call depends on the TP size.
    counts = {t: tp.layer_calls(t, tp.script_ep(t)) for t in (2, 4, 8)}
    assert len(set(counts.values())) == 1
    # The rows' implied 1k steps (round 27, h200ttft27: 47 ms at TP2, 80 ms at TP8) need 55 and 93 calls a layer at
    # 24 µs over 36 layers; the count's TP2 -> TP8 change (0 calls) is far from the 38 needed.
    need = {t: s / 24e-6 / 36 for t, s in ((2, 0.047), (8, 0.080))}
    assert round(need[2]) == 54 and round(need[8]) == 93
    assert counts[8] - counts[2] < (need[8] - need[2]) / 10
