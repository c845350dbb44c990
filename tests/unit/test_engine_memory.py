"""Resident weights as engines lay them out, and the engine's memory fraction.

Expected values are derived by hand from the checkpoint's tensor shapes (gpt-oss-120b config:
36 layers, 128 experts, hidden 2880, expert intermediate 2880, vocab 201,088, 64 q heads and 8 KV
heads of 64, biases on every projection and expert, sinks) and the engines' layout rules
(docs/model.md §7), then compared with what vLLM reports.
"""

from __future__ import annotations

import pytest

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.engine_layout import LAYOUTS, expert_bytes, expert_layout
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.memory_fit import memory_fit, weight_bytes_per_chip
from jalapeno.deploy.kv_capacity import kv_capacity_seqs
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_efficiency, load_model, load_system
from jalapeno.specs.formats import FORMATS, get_precision

GIB = 2.0**30
TP1 = Layout(tp=1, dp=1, ep=1, pp=1)

# gpt-oss-120b, every tensor of the checkpoint except the routed experts (BF16, 2 B):
# attention per layer: q 2880x4096 + k, v 2880x512 + o 4096x2880, biases 4096 + 512 + 512 + 2880,
# sinks 64; router 2880x128 + 128 bias; embedding and head 201,088 x 2880 each.
_ATTN = 2880 * (4096 + 512 + 512) + 4096 * 2880 + (4096 + 512 + 512 + 2880) + 64
_ROUTER = 2880 * 128 + 128
_BF16_REST = 2 * (36 * (_ATTN + _ROUTER) + 2 * 201_088 * 2880)


def _oss_weights(expert: float) -> float:
    """gpt-oss-120b weights on one chip in GiB for ``expert`` bytes per routed expert."""
    return (36 * 128 * expert + _BF16_REST) / GIB


def test_checkpoint_expert_bytes_biases_bf16():
    # values 3·2880·2880/2 + E8M0 scales (5760 + 2880)·90 + bf16 biases (2·2880 + 2880)·2
    want = 3 * 2880 * 2880 / 2 + (5760 + 2880) * 2880 / 32 + (2 * 2880 + 2880) * 2
    assert want == 13_236_480
    got = expert_bytes(load_model("gpt-oss-120b"), FORMATS["mxfp4"], LAYOUTS["checkpoint"])
    assert got == pytest.approx(want)


def test_gpt_oss_h100_weights_match_vllm_triton():
    # Hopper triton_kernels MX layout: gate_up K 2880 -> 2944 (128), N 5760 -> 5888 (256);
    # down K 2880 -> 2944, N 2880 -> 3072; scales: rows to 256 (5888, 3072) x 90; fp32 biases.
    expert = (2944 * 5888 / 2 + 2944 * 3072 / 2 + (5888 + 3072) * 90 + (2 * 2880 + 2880) * 4)
    want = _oss_weights(expert)
    assert want == pytest.approx(64.17, abs=0.01)
    got = weight_bytes_per_chip(load_model("gpt-oss-120b"), TP1, get_precision("mxfp4"),
                                system=load_system("h100")) / GIB
    assert got == pytest.approx(want, rel=1e-4)          # RMSNorm weights (0.4 MB) left out
    # vLLM v0.14.1 on one H100, Triton backend: "Model loading took 64.38 GiB" (vLLM #33155)
    assert got == pytest.approx(64.38, rel=0.005)
    # the checkpoint layout alone gives the old 60.7 GiB: the padding is the missing 3.4 GiB
    plain = weight_bytes_per_chip(load_model("gpt-oss-120b"), TP1, get_precision("mxfp4")) / GIB
    assert plain == pytest.approx(_oss_weights(13_236_480), rel=1e-4)
    assert got - plain == pytest.approx(3.41, abs=0.02)


def test_marlin_rule_matches_vllm_marlin_measurement():
    # vLLM Marlin MXFP4 path: h -> 3072 (256), I -> 2944 (128); bf16 biases. vLLM #23278 measured
    # "Model loading took 65.9651 GiB" on an H100.
    expert = 3 * 3072 * 2944 / 2 + (2 * 2944 + 3072) * 3072 / 32 + (2 * 2944 + 3072) * 2
    assert _oss_weights(expert) == pytest.approx(65.97, rel=0.002)


@pytest.mark.parametrize("system,layout", [("h100", "hopper_triton"), ("h200", "hopper_triton"),
                                           ("b200", "blackwell_trtllm"), ("gb200-nvl72", "blackwell_trtllm"),
                                           ("mi300x", "cdna3"), ("mi355x", "cdna4"), ("jalapeno", "checkpoint")])
def test_layout_by_chip(system, layout):
    assert expert_layout(load_system(system), FORMATS["mxfp4"]).name == layout
    assert expert_layout(load_system(system), FORMATS["fp8"]).name == "checkpoint"


def test_fp8_deepseek_unchanged_and_still_fits_b200_tp4():
    # DeepSeek-R1 FP8 has no 1-D group-scaled experts: elements x 1.000244 B as before; TP4 on
    # B200 (InferenceX ran it) needs 169.1 GB of the 0.96 x 180 = 172.8 GB the engine fills.
    m, p, s = load_model("deepseek-r1"), get_precision("fp8"), load_system("b200")
    lay = Layout(tp=4, dp=1, ep=4, pp=1)
    assert weight_bytes_per_chip(m, lay, p, system=s) == weight_bytes_per_chip(m, lay, p)
    fit = memory_fit(m, s, lay, p, [8], [2048], [8], load_efficiency("b200"), [8])
    assert bool(fit.fits[0])


def test_memory_fraction_scales_capacity():
    m, s, p, eff = load_model("gpt-oss-120b"), load_system("h100"), get_precision("mxfp4"), load_efficiency("h100")
    w = weight_bytes_per_chip(m, TP1, p, system=s)
    kv_seq = 18 * 2 * 8 * 64 * 2 * 2048 + 18 * 2 * 8 * 64 * 2 * 128      # full + sliding layers at 2,048
    default = kv_capacity_seqs(m, s, TP1, p, [2048], [0], eff, [0])[0]
    assert default == pytest.approx((0.96 * 80e9 - w) / kv_seq, rel=1e-9)
    at90 = kv_capacity_seqs(m, s, TP1, p, [2048], [0], eff, [0], memory_fraction=0.9)[0]
    assert at90 == pytest.approx((0.9 * 80e9 - w) / kv_seq, rel=1e-9)
    # 0.85 of 80 GB (68 GB) cannot hold the 68.9 GB of weights
    fit = memory_fit(m, s, TP1, p, [1], [2048], [1], eff, [1], memory_fraction=0.85)
    assert not fit.fits[0] and "weights need 64.2 GiB" in fit.reason[0]


@pytest.mark.parametrize("bad", [0, 1.2, -0.5, True, "0.9"])
def test_bad_memory_fraction(bad):
    with pytest.raises(SpecError, match="memory-fraction.*must be in \\(0, 1\\]"):
        Deployment(get_precision("mxfp4"), Pool(TP1), memory_fraction=bad)


def test_deployment_memory_fraction_reaches_serving():
    # the aggregated KV cap falls with the engine's share: gpt-oss-120b on one H100, 1k1k
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.serve.agg_batch_cap import aggregated_batch_cap
    from jalapeno.specs.workload import get_workload

    m, pr, wl = load_model("gpt-oss-120b"), load_pricer("h100"), get_workload("1k1k")
    caps = {f: aggregated_batch_cap(m, pr, Deployment(get_precision("mxfp4"), Pool(TP1), memory_fraction=f), wl)
            for f in (None, 0.96, 0.9)}
    assert caps[None] == caps[0.96]
    assert caps[0.9][0] < caps[0.96][0]
    assert caps[0.9][1] == "kv_capacity"


def test_cli_memory_fraction_option(capsys):
    from cli_runner import check_error, run

    code, out, err = run(capsys, "step", "-s", "h100", "-m", "gpt-oss-120b", "--tp", "1", "--dp", "1",
                         "--ep", "1", "--batch", "1", "--context", "2048", "--memory-fraction", "0.85")
    check_error(code, out, err, "weights need 64.2 GiB")
    code, out, err = run(capsys, "predict", "-s", "h100", "-m", "gpt-oss-120b", "-c", "4",
                         "--memory-fraction", "1.5")
    check_error(code, out, err, "memory-fraction", "(0, 1]")
    code, out, err = run(capsys, "simulate", "-s", "h100", "-m", "gpt-oss-120b", "--requests", "20",
                         "--memory-fraction", "0")
    check_error(code, out, err, "memory-fraction")
