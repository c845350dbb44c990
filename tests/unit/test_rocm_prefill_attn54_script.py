"""scripts/rocm_prefill_attn54.py: the gpt-oss-120b vLLM-ROCm prompt's attention kernel against the MI300X TTFT miss
(docs/gap_large_batch_decode.md, round 54 amd54). Expected values are arithmetic by hand from aiter's
select_2d_config and the published timings, not the script's output."""

from __future__ import annotations

import tomllib

import pytest

from jalapeno.errors import SpecError
from script_module import load_script

s = load_script("rocm_prefill_attn54")


def test_flop_per_kv_byte_by_hand():
    # a program does 2 dots (QK, PV) of 2·M·T·D FLOP per K and V tiles of T·D·b bytes each: 4·M·T·D / (2·T·D·b) = 2M/b
    assert s.flop_per_kv_byte(128, 2) == pytest.approx(128.0)  # BLOCK_M 128, BF16 KV
    assert s.flop_per_kv_byte(16, 1) == pytest.approx(32.0)  # BLOCK_M 16, FP8 KV (aiter PR #5664's rows)
    with pytest.raises(SpecError, match="block_m"):
        s.flop_per_kv_byte(0, 2)
    with pytest.raises(SpecError, match="kv_bytes"):
        s.flop_per_kv_byte(16, 0)


def test_prompt_block_m_follows_select_2d_config():
    # gpt-oss: 64 query / 8 KV heads = 8 per KV head <= 16 -> 16; a query of 256+ tokens -> 128
    assert s.prompt_block_m(8, 8192) == 128
    assert s.prompt_block_m(8, 256) == 128
    assert s.prompt_block_m(8, 255) == 16
    assert s.prompt_block_m(8, 1) == 16
    # more than 16 queries per KV head: the next power of two (20 -> 32), still 128 for a long query
    assert s.prompt_block_m(20, 100) == 32
    assert s.prompt_block_m(20, 300) == 128
    with pytest.raises(SpecError, match="num_queries_per_kv"):
        s.prompt_block_m(0, 100)


def test_published_fractions_by_hand():
    frac = {(src, shape): tf / peak for src, _, shape, tf, peak in s.PUBLISHED}
    # 159.5 / 1,307.4 = 0.12200; 79.3 / 1,307.4 = 0.06065; 490.3 / 2,307.2 = 0.21251
    assert frac[("aiter PR #5664 before (BLOCK_M 16)", "head 256, window 1024, 8k/32k, FP8 KV")] == pytest.approx(
        0.12200, abs=5e-5
    )
    assert frac[("aiter PR #5664 before (BLOCK_M 16)", "head 512, full, 2k-32k, FP8 KV")] == pytest.approx(
        0.06065, abs=5e-5
    )
    assert frac[("aiter PR #1336", "head 128, 64/16 heads, 32k, BF16")] == pytest.approx(0.21251, abs=5e-5)
    # the priced span lies inside what the gfx942 timings reach (0.061 ... 0.203) or is the shipped value
    assert s.FRACTIONS[0] is None and all(0.06 <= f <= 0.203 for f in s.FRACTIONS[1:])


def test_with_attention_fraction_sets_only_the_parameters_value():
    text = (s.CALIBRATION / "mi300x.toml").read_text()
    old = tomllib.loads(text)
    new = tomllib.loads(s.with_attention_fraction(text, 0.2))
    assert new["parameters"]["attention_peak_fraction"] == 0.2
    assert new["low"]["attention_peak_fraction"] == old["low"]["attention_peak_fraction"]
    assert new["high"]["attention_peak_fraction"] == old["high"]["attention_peak_fraction"]
    assert {k: v for k, v in new["parameters"].items() if k != "attention_peak_fraction"} == {
        k: v for k, v in old["parameters"].items() if k != "attention_peak_fraction"
    }
    with pytest.raises(SpecError, match="no attention_peak_fraction"):
        s.with_attention_fraction("[parameters]\nhbm_fraction = 0.8\n", 0.2)
    with pytest.raises(SpecError, match=r"\(0, 1\]"):
        s.with_attention_fraction(text, 0.0)


def test_the_rows_recipe_names_the_backend():
    with open(s.ROOT / "src" / "jalapeno" / "data" / "engines.toml", "rb") as f:
        recipes = {r["name"]: r for r in tomllib.load(f)["recipe"]}
    r = recipes["vllm-mi300x-gptoss-fp4"]
    assert r["attention_backend"] == "rocm_aiter_unified_attn"
    assert set(r["systems"]) == set(s.SYSTEMS)


def _row(system, metric, error, split="none", source="inferencex", quality=""):
    return {
        "source": source,
        "system": system,
        "metric": metric,
        "error": str(error),
        "split": split,
        "quality": quality,
    }


def test_goal_groups_by_hand():
    # round 35's four MI300X TTFT rows: |e| 0.078, 0.107, 0.294, 0.358 -> median (0.107 + 0.294) / 2 = 0.2005;
    # p90 at position 0.9 x 3 = 2.7: 0.294 + 0.7 x (0.358 - 0.294) = 0.3388; signed median (-0.294 - 0.107) / 2
    rows = [_row("mi300x", "ttft_s", e) for e in (-0.358, -0.294, -0.107, 0.078)]
    rows += [
        _row("mi300x", "ttft_s", 0.9, split="fit"),  # a fit row: not held out
        _row("mi300x", "ttft_s", 0.9, quality="flagged"),  # a flagged row
        _row("mi300x", "ttft_s", 0.9, source="aiconfigurator"),  # another source
        _row("mi325x", "interactivity", -0.05, split="held_out"),
    ]
    g = s.goal_groups(rows)
    n, med, p90, bias = g[("mi300x", "ttft_s")]
    assert n == 4
    assert med == pytest.approx(0.2005)
    assert p90 == pytest.approx(0.3388)
    assert bias == pytest.approx(-0.2005)
    assert g[("mi325x", "interactivity")] == (1, pytest.approx(0.05), pytest.approx(0.05), pytest.approx(-0.05))
    assert ("mi300x", "interactivity") not in g
