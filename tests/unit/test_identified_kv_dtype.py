"""A published entry's deployment takes its recipe's KV-cache dtype (round 37 review of pfq37's finding).

pfq37 (docs/gap_disagg_overprediction.md, round 37) found that ``IdentifiedConfig.deployment`` never read the
recipe's ``kv_dtype``, so an entry priced its precision preset's KV format whatever its recipe stated, while
deploy/engines.launch_limits applies a launch recipe's. Expected values by hand: ``fp8_e4m3`` is an 8-bit element
(e4m3: 1 + 4 + 3 bits), the gpt-oss ``mxfp4`` preset keeps the engines' default BF16 KV (16 bits); the shipped
DeepSeek-R1 dynamo-trt recipes state ``fp8_e4m3``, which their ``fp4`` / ``fp8`` presets already store (nvidia/
DeepSeek-R1-FP4 hf_quant_config kv_cache_quant_algo FP8), so their deployments are unchanged.
"""

from __future__ import annotations

import dataclasses

import pytest

import jalapeno.deploy.engines as engines
from jalapeno.deploy.engines import identified_candidates
from jalapeno.deploy.recipe import _recipe
from jalapeno.errors import UnknownNameError
from jalapeno.specs.formats import get_precision


def _entry(recipe: str):
    return next(e for e in engines._data()[2] if e.recipe == recipe)


def test_a_recipe_kv_dtype_reaches_the_entry_deployment(monkeypatch):
    entry = _entry("dynamo-trt-gptoss-fp4")
    before = entry.deployment()
    assert before.precision == get_precision("mxfp4") and before.precision.kv_cache.element_bits == 16
    rec = dataclasses.replace(engines.get_recipe(entry.recipe), kv_dtype="fp8_e4m3")
    monkeypatch.setattr(engines, "get_recipe", lambda name: rec)
    after = entry.deployment()
    assert after.precision.kv_cache.element_bits == 8
    assert after.precision.name == "mxfp4,kv=fp8"  # the override is named (Precision.with_options)
    assert (after.decode, after.prefill, after.token_budget, after.max_running) == (
        before.decode, before.prefill, before.token_budget, before.max_running)


def test_shipped_entries_are_unchanged():
    """No shipped identified entry's recipe states a KV dtype other than its preset's: predictions do not move."""
    for entry in engines._data()[2]:
        rec = engines.get_recipe(entry.recipe)
        assert entry.deployment().precision == get_precision(entry.precision), (entry.name, rec.kv_dtype)
    gb200 = identified_candidates("gb200-nvl72", "deepseek-r1", "dynamo-trt", "fp4", 1024, 1024, 48, True)
    assert gb200 and all(e.deployment().precision.kv_cache.element_bits == 8 for e in gb200)


def test_a_bad_recipe_kv_dtype_is_refused_naming_the_field():
    raw = {"name": "x", "engine": "trtllm", "version": "1.2.0rc6", "systems": ["gb200-nvl72"], "model": "gpt-oss-120b",
           "source": "s", "precision": "mxfp4", "serving": "disagg", "kv_dtype": "fp9"}
    with pytest.raises(UnknownNameError, match=r"recipe x\.kv_dtype: unknown KV-cache dtype 'fp9'.*Fix: use one of"):
        _recipe(raw, 0)
    assert _recipe({**raw, "kv_dtype": "fp8_e4m3"}, 0).kv_dtype == "fp8_e4m3"
