"""Engine start-up memory terms (deploy/engine_memory.py, docs/model.md §7.1) and vLLM's admission rule.

Expected values are computed by hand from the terms' definitions (vLLM v0.11.0 profiling run,
PyTorch's sort buffers, vLLM's per-layer page rule); the two gpt-oss-120b-on-one-H100 logs are
held out: no constant of the profile was derived from them.
"""

from __future__ import annotations

import pytest
from cli_runner import check_error, run

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.engine_memory import get_engine_memory
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.engine_pool import engine_memory_breakdown, vllm_kv_need_bytes, vllm_max_model_len
from jalapeno.deploy.memory_fit import kv_bytes_per_seq_per_chip, weight_bytes_per_chip
from jalapeno.deploy.kv_capacity import decode_batch_cap, kv_pool_bytes
from jalapeno.errors import UnknownNameError
from jalapeno.specs.catalog import load_efficiency, load_model, load_system
from jalapeno.specs.formats import get_precision

GIB = 2.0**30
TP1 = Layout(tp=1, dp=1, ep=1, pp=1)
V = 201_088                       # gpt-oss vocabulary
PAGE_TOK = 2 * 8 * 64 * 2         # K and V, 8 KV heads x 64, BF16: bytes per token per layer
# gpt-oss BF16 tensors besides the experts (see test_engine_memory.py): attention, router, emb + head
_ATTN = 2880 * (4096 + 512 + 512) + 4096 * 2880 + (4096 + 512 + 512 + 2880) + 64
_BF16_REST = 2 * (36 * (_ATTN + 2880 * 128 + 128) + 2 * V * 2880)
# Marlin layout of one expert (h 2880 -> 3072, I 2880 -> 2944, e2m1 values, E8M0 per 32 along K, bf16 biases)
_MARLIN_EXPERT = (3072 * 5888 + 2944 * 3072) // 2 + (5888 * 3072 + 3072 * 2944) // 32 + (5760 + 2880) * 2


@pytest.fixture(scope="module")
def oss():
    m = load_model("gpt-oss-120b")
    return m, load_system("h100"), get_precision(m.default_precision)


def test_sampler_peak_counts_38_bytes_per_logit_from_128_rows():
    p = get_engine_memory("vllm-0.11")
    assert p.sampler_rows() == 1024                            # min(1024 seqs, 8192 tokens)
    assert p.sampler_peak_bytes(V) == 1024 * V * (2 + 4 + 4 + 8 + 8 + 4 + 8)
    small = p.with_limits(max_num_seqs=100)
    assert small.sampler_peak_bytes(V) == 100 * V * 50          # full-sort path below 128 rows
    assert p.with_limits(max_num_batched_tokens=64).sampler_rows() == 64


def test_marlin_weights_by_hand(oss):
    m, s, prec = oss
    w = weight_bytes_per_chip(m, TP1, prec, 0, s, get_engine_memory("vllm-0.11"))
    assert w == pytest.approx(36 * 128 * _MARLIN_EXPERT + _BF16_REST, rel=1e-9)
    assert w / GIB == pytest.approx(65.97, abs=0.1)            # vLLM issue #23278: 65.9651 GiB (Marlin)


def test_vllm_admission_rule_by_hand(oss):
    m, _, prec = oss
    # 18 full layers x ceil(L/16) pages + 18 sliding layers x (ceil((128 - 1 + 1024)/16) + 1) = 73 pages
    need = vllm_kv_need_bytes(m, TP1, prec, 48_624, 1024)
    assert need == 18 * 3039 * 16 * PAGE_TOK + 18 * 73 * 16 * PAGE_TOK
    # the measured 1.71 GiB pool (vLLM issue #27508) admits 48,624 tokens: the next block does not fit
    assert vllm_max_model_len(m, TP1, prec, 1.71 * GIB, 1024) == 48_624
    assert vllm_max_model_len(m, TP1, prec, -1.0, 1024) == 0


def test_held_out_gpt_oss_h100_max_context(oss):
    """vLLM issue #27508: v0.11.0, one H100, gpu_memory_utilization 0.95, max_num_batched_tokens 1024:
    'Available KV cache memory: 1.71 GiB' -> about 48.6K tokens. Predicted from the terms alone."""
    m, s, prec = oss
    prof = get_engine_memory("vllm-0.11").with_limits(max_num_batched_tokens=1024)
    pool = kv_pool_bytes(m, s, TP1, prec, prof, 0.95)
    hand = 0.95 * 79.22 * GIB - (36 * 128 * _MARLIN_EXPERT + _BF16_REST) - 1024 * V * 38 - 0.16 * GIB
    assert pool == pytest.approx(hand, rel=1e-9)
    assert pool / GIB == pytest.approx(1.71, rel=0.15)          # 1.92 GiB: +12%
    b = engine_memory_breakdown(m, s, TP1, prec, prof, 0.95)
    assert b["max_model_len"] == pytest.approx(48_624, rel=0.15)
    assert b["max_model_len"] < 131_072 / 2                      # one 131K request no longer fits


def test_held_out_gpt_oss_h100_defaults_do_not_start(oss):
    """vLLM issue #23278: v0.10.1, one H100, Marlin, defaults: 'Available KV cache memory: -2.14 GiB'."""
    m, s, prec = oss
    pool = kv_pool_bytes(m, s, TP1, prec, get_engine_memory("vllm-0.11"))
    assert pool < 0
    assert pool / GIB == pytest.approx(-2.14, abs=0.25)


def test_engine_pool_reaches_serving_caps(oss):
    m, s, prec = oss
    prof = get_engine_memory("vllm-0.11").with_limits(max_num_batched_tokens=1024)
    eff = load_efficiency("h100")
    cap = decode_batch_cap(m, s, TP1, prec, 20_000.0, eff, memory_fraction=0.95, engine=prof)
    pool = kv_pool_bytes(m, s, TP1, prec, prof, 0.95)
    assert cap == pytest.approx(pool / float(kv_bytes_per_seq_per_chip(m, TP1, prec, 20_000.0)), rel=1e-6)
    dep = Deployment(prec, Pool(TP1), memory_fraction=0.95, max_tokens_per_step=1024,
                     engine_memory=get_engine_memory("vllm-0.11"))
    assert dep.memory_profile.max_num_batched_tokens == 1024 and dep.as_dict()["engine_memory"] == "vllm-0.11"
    no_engine = decode_batch_cap(m, s, TP1, prec, 20_000.0, eff, memory_fraction=0.95)
    assert no_engine > cap                                       # the engine-free fit ignores the sampler


def test_unknown_profile_named():
    with pytest.raises(UnknownNameError, match="use one of: none, vllm-0.11"):
        get_engine_memory("vllm-9")
    assert get_engine_memory("none") is None


def test_cli_step_shows_each_term(capsys):
    code, out, err = run(capsys, "step", "-m", "gpt-oss-120b", "-s", "h100", "--tp", "1", "--dp", "1", "--ep", "1",
                         "-b", "1", "-c", "20000", "--engine-memory", "vllm-0.11", "--memory-fraction", "0.95",
                         "--max-tokens-per-step", "1024")
    assert code == 0, err
    out = " ".join(out.split())
    for part in ("79.22 GiB driver-reported x 0.95", "sampler peak 7.29 GiB (1024 rows)", "non-torch 0.16 GiB",
                 "weights 65.89 GiB", "longest request admitted"):
        assert part in out


def test_cli_refusals(capsys):
    check_error(*run(capsys, "step", "-m", "gpt-oss-120b", "-s", "h100", "--tp", "1", "--dp", "1", "--ep", "1",
                     "--max-running", "8"), "--max-running", "no --engine-memory was given")
    check_error(*run(capsys, "step", "-m", "gpt-oss-120b", "-s", "h100", "--engine-memory", "vllm-9"),
                "--engine-memory", "use one of: none, vllm-0.11")
    check_error(*run(capsys, "predict", "-m", "gpt-oss-120b", "-s", "h100", "--tp", "1", "--ep", "1", "-c", "1",
                     "--isl", "1000", "--osl", "100", "--engine-memory", "vllm-0.11"),
                "the engine has no KV cache (-2.04 GiB)", "raise --memory-fraction")

