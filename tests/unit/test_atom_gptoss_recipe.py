"""ATOM 0.1.1's gpt-oss-120b launch on MI355X (recipe ``atom-mi355x-gptoss-fp4``, shipped off; issue 18 round 42).

Expected values are the launch script's and ATOM's defaults as read at the rows' date (InferenceX @2be3de60f
``gptoss_fp4_mi355x_atom_slurm.sh``: ``--kv_cache_dtype fp8``; ROCm/ATOM @f969215aa ``arg_utils.py``: 16,384 tokens,
512 sequences, CUDA graphs up to 256, 0.9 of memory; ``scheduler.py``: prefill-only steps), and the KV bytes by hand.
"""

from __future__ import annotations

import pytest

import jalapeno.deploy.engines as engines
from jalapeno.deploy.engines import get_recipe, launch_limits, launch_recipe
from jalapeno.specs.kv_cache import get_kv_format

ROW = ("mi355x", "gpt-oss-120b", "atom", "mxfp4")


def test_recipe_reads_the_launch_and_atom_defaults():
    r = get_recipe("atom-mi355x-gptoss-fp4")
    assert (r.engine, r.model, r.precision, r.serving) == ("atom-rocm", "gpt-oss-120b", "mxfp4", "agg")
    assert (r.max_running, r.cuda_graph_max_batch, r.token_budget) == (512, 256, 16384)
    assert r.memory_fraction == 0.9
    assert r.kv_dtype == "fp8_e4m3"
    assert r.prefill_steps == "separate"
    assert "2be3de60f" in r.source and "f969215aa" in r.source


def test_shipped_off_matches_no_measured_run():
    assert "atom-mi355x-gptoss-fp4" in engines.RECIPES_OFF
    assert launch_recipe(*ROW, tp=1) is None
    assert launch_limits(*ROW, 1, 1024, 1024, 128) == ({}, "")


def test_switched_on_it_describes_rows_42_49(monkeypatch):
    monkeypatch.setattr(engines, "RECIPES_OFF", frozenset())
    assert launch_recipe(*ROW, tp=1).name == "atom-mi355x-gptoss-fp4"
    kw, note = launch_limits(*ROW, 1, 1024, 1024, 128)
    assert kw["kv_dtype"] == "fp8_e4m3" and kw["prefill_steps"] == "separate"
    assert (kw["max_running"], kw["token_budget"]) == (512, 16384)
    assert "atom-mi355x-gptoss-fp4" in note
    # the other ATOM recipes are DeepSeek-R1's: the switch does not hand them gpt-oss rows
    assert launch_recipe("mi355x", "gpt-oss-120b", "atom", "fp8", tp=1) is None


def test_fp8_cache_halves_the_decode_attention_bytes():
    # gpt-oss-120b: 8 KV heads x 64 dims, K and V; BF16 2 bytes an element, FP8 E4M3 1 (+ a per-tensor scale)
    bf16 = 2 * 8 * 64 * 2
    fp8 = get_kv_format("fp8_e4m3")
    assert fp8.bytes_per_elem == pytest.approx(1.0)
    assert 2 * 8 * 64 * fp8.bytes_per_elem == pytest.approx(bf16 / 2)
