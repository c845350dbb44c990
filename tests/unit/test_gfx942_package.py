"""gfx942's DeepSeek package (round 39): the block-scale fused-MoE entry (``moe[fp8_block]``) and which ops take it,
its own floor, and the padded 16-head MLA decode (cost/attention.mla_decode_padding, fit/amd.py).

Expected values by hand:
- padding: aiter's gfx942 BF16-query FP8-KV 16-head kernel ``mla_a16w8_qh16_m16x4`` computes 16 heads x 4 query rows
  = 64 rows per sequence; a decode token has 16 x 1 valid rows at TP8 (DeepSeek-R1's 128 heads / 8): 64 / 16 = 4;
  two MTP rows fill 32 of the 64 (x2); 128 heads per rank (attention DP) fill two tiles (x1).
- the MoE prices: memory time = op bytes / (HBM bytes/s x the entry's HBM fraction), MI325X 6.0 TB/s (AMD datasheet),
  the package's fraction (fit/amd.gfx942_package_params, put in by ``--set``: the tests hold whether or not
  ``fit/amd.GFX942_PACKAGE`` writes it into the shipped sets) and the borrowed one read from the calibration file;
  one MoE layer's floor spread over its three kernels.
- the gfx942 rows: 33 experts x 3 x 7168 x 2048 FP8 bytes read in 354.3 us at 16 tokens = 4.10 TB/s, 0.68 of 6.0.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from script_module import load_script

from jalapeno.cli.common import resolve_precision
from jalapeno.cli.system_opts import system_pricer
from jalapeno.cost.attention import mla_decode_padding
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.roofline import op_times
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.errors import SpecError
from jalapeno.fit import amd
from jalapeno.fit.amd import GFX942_FMOE_TABLE, GFX942_MLA_DECODE_TILE_ROWS, gfx942_block_moe, gfx942_package_params
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.efficiency import Efficiency

CAL = Path(__file__).resolve().parents[2] / "src" / "jalapeno" / "data" / "calibration"
MI325X_HBM = 6.0e12


def _cal(system: str) -> dict:
    return tomllib.loads((CAL / f"{system}.toml").read_text())["parameters"]


#: the package as overrides (what calibrate writes into the gfx942 sets when fit/amd.GFX942_PACKAGE is on)
PACKAGE, _ = gfx942_package_params()
PACKAGE_SETS = [f"efficiency.{k}={v!r}" for k, v in PACKAGE.items()]


def _op(
    system: str, model: str, wq: str, attn: str, op: str, sets=(), b: int = 16, tp: int = 8, kv: str = "fp8"
) -> dict:
    m = load_model(model)
    pr = system_pricer(system, "calibrated", list(sets), None, "roofline")
    sc = step_cost(
        m,
        pr,
        for_model(Layout(tp=tp), m),
        resolve_precision(m, wq, kv, attn),
        Batch.make(decode_seqs=b, decode_ctx=8704, prefill_tokens=0, prefill_ctx=0),
    )
    return next(r for r in sc.op_rows(0) if r["op"] == op)


def test_padding_factor_by_hand():
    assert GFX942_MLA_DECODE_TILE_ROWS == 16 * 4
    assert mla_decode_padding(16, 1, 64) == 4.0
    assert mla_decode_padding(16, 2, 64) == 2.0  # MTP verify: 32 valid rows
    assert mla_decode_padding(16, 4, 64) == 1.0
    assert mla_decode_padding(32, 1, 64) == 2.0
    assert mla_decode_padding(128, 1, 64) == 1.0  # attention DP: 128 heads fill two tiles
    assert mla_decode_padding(16, 1, None) == 1.0


def test_shipped_sets_follow_the_switch_and_gfx950_never_pads():
    assert PACKAGE["mla_decode_tile_rows"] == 64
    for chip in ("mi300x", "mi325x"):
        eff = system_pricer(chip, "calibrated", [], None, "roofline").efficiency
        if amd.GFX942_PACKAGE:
            assert _cal(chip)["mla_decode_tile_rows"] == 64 and eff.mla_decode_tile_rows == 64
            assert {f"moe.fp8_block.{k}": v for k, v in _cal(chip)["moe"]["fp8_block"].items()} == pytest.approx(
                {k: v for k, v in PACKAGE.items() if k.startswith("moe.")}, rel=1e-6
            )
        elif amd.GFX942_TABLE_CLOCK:  # round 43: the clocked sets carry the padded decode too
            assert _cal(chip)["mla_decode_tile_rows"] == 64 and eff.mla_decode_tile_rows == 64
        else:
            assert "mla_decode_tile_rows" not in _cal(chip) and eff.mla_decode_tile_rows is None
            assert "fp8_block" not in _cal(chip)["moe"]
    assert "mla_decode_tile_rows" not in _cal("mi355x")  # gfx950 runs the FP8-query qh16_qseqlen1 kernel
    assert system_pricer("h200", "calibrated", [], None, "roofline").efficiency.mla_decode_tile_rows is None


def test_bf16_query_over_fp8_kv_pays_four_times_the_mfma_work_and_reads_the_latent_once():
    args = ("mi325x", "deepseek-r1", "fp8", "bf16", "attn.mla_decode")
    padded = _op(*args, sets=PACKAGE_SETS)
    plain = _op(*args, sets=[*PACKAGE_SETS[:-1], "efficiency.mla_decode_tile_rows=16"])  # 16-row tile: no padding
    assert padded["flop"] == pytest.approx(4 * plain["flop"], rel=1e-12)
    assert padded["compute_s"] == pytest.approx(4 * plain["compute_s"], rel=1e-12)
    assert padded["kv_bytes"] == plain["kv_bytes"] and padded["memory_s"] == pytest.approx(plain["memory_s"])
    # attention DP (TP1): 128 heads per rank fill two 64-row tiles, nothing padded
    dp = _op("mi325x", "deepseek-r1", "fp8", "bf16", "attn.mla_decode", sets=PACKAGE_SETS, tp=1)
    dp0 = _op(
        "mi325x", "deepseek-r1", "fp8", "bf16", "attn.mla_decode", sets=["efficiency.mla_decode_tile_rows=1"], tp=1
    )
    assert dp["flop"] == dp0["flop"]


def test_fp8_queries_and_bf16_caches_are_not_padded():
    # the FP8-query path (gfx950's, ATOM's): aiter has a native qh16_qseqlen1 kernel; a BF16 cache is left unpadded
    # (its split-KV qh16 kernel has no padding; the persistent one is padded, which the model does not tell apart)
    for attn, kv in (("fp8", "fp8"), ("bf16", "bf16")):
        a = _op("mi325x", "deepseek-r1", "fp8", attn, "attn.mla_decode", kv=kv, sets=PACKAGE_SETS)
        b = _op(
            "mi325x", "deepseek-r1", "fp8", attn, "attn.mla_decode", kv=kv, sets=["efficiency.mla_decode_tile_rows=16"]
        )
        assert a["flop"] == b["flop"]


def test_moe_entry_by_op():
    e = Efficiency().with_overrides({"moe": {"fp8_block": {"hbm_fraction": 0.7}}})
    assert e.moe_entry("fp8", "fp8") == "fp8_block"  # FP8 experts naming no kernels of their own
    assert e.moe_entry("fp8", "mxfp4") == "fp8"  # gpt-oss MXFP4 experts run in FP8 compute: not aiter's kernel
    assert e.moe_entry("bf16", "bf16") == "bf16"
    assert Efficiency().moe_entry("fp8", "fp8") == "fp8"  # a set without the entry: as before
    assert e.moe_hbm("fp8_block") == 0.7 and e.moe_hbm("fp8") == Efficiency().moe_hbm("fp8")


def test_deepseek_fp8_experts_take_gfx942s_own_fit_and_gpt_oss_keeps_the_borrowed_one():
    p = _cal("mi325x")
    ds = _op("mi325x", "deepseek-r1", "fp8", "bf16", "moe.experts", sets=PACKAGE_SETS)
    gpt = _op("mi325x", "gpt-oss-120b", "mxfp4", "bf16", "moe.experts", sets=PACKAGE_SETS, tp=1)
    for r, eta in ((ds, PACKAGE["moe.fp8_block.hbm_fraction"]), (gpt, p["moe"]["fp8"]["hbm_fraction"])):
        byte = r["weight_bytes"] + r["kv_bytes"] + r["act_bytes"]
        assert r["memory_s"] == pytest.approx(byte / (MI325X_HBM * eta), rel=1e-9)
    assert PACKAGE["moe.fp8_block.hbm_fraction"] > 0.68 > p["moe"]["fp8"]["hbm_fraction"]
    # floors: DeepSeek's 58 MoE layers at gfx942's own floor, gpt-oss's 36 at the borrowed moe_floor_s
    assert ds["overhead_s"] == pytest.approx(58 * PACKAGE["moe.fp8_block.floor_s"], rel=1e-9)
    assert gpt["overhead_s"] == pytest.approx(36 * p["moe_floor_s"], rel=1e-9)


def test_nvidia_sets_price_fp8_experts_as_before():
    e = system_pricer("h200", "calibrated", [], None, "roofline").efficiency
    assert "fp8_block" not in e.moe and e.moe_entry("fp8", "fp8") == "fp8"


def test_entry_floor_replaces_the_set_floor_only_for_its_ops():
    e = Efficiency().with_overrides({"moe": {"fp8_block": {"floor_s": 6e-6}}, "moe_floor_s": 2e-5})
    ob = OpBuilder(1)
    ob.op("a", "moe", "fp8", flop=1.0, weight=1.0, rows=1.0, kernels=3)
    ob.op("b", "moe", "fp8", flop=1.0, weight=1.0, rows=1.0, kernels=3, key="mxfp4")
    t = op_times(ob.build()[0], load_system("mi325x").chip, e)
    assert t.overhead_s[0, 0] == pytest.approx(6e-6) and t.overhead_s[1, 0] == pytest.approx(2e-5)


def test_bad_tile_is_refused_naming_the_field():
    with pytest.raises(SpecError) as err:
        Efficiency().with_overrides({"mla_decode_tile_rows": 0.5})
    assert err.value.field == "efficiency.mla_decode_tile_rows"
    with pytest.raises(SpecError, match="unknown compute format or kernel key"):
        Efficiency().with_overrides({"moe": {"fp8_blok": {"hbm_fraction": 0.5}}})


def test_vendored_rows_are_the_quoted_commit_and_stream_near_two_thirds_of_hbm():
    rows = pd.read_csv(GFX942_FMOE_TABLE)
    quoted = load_script("gfx942_fmoe_rows38").GFX942_FMOE_US
    assert dict(zip(rows.token, rows.us)) == pytest.approx(quoted)
    assert set(rows.cu_num) == {304} and set(rows.q_type) == {"QuantType.per_1x128"}
    raw = 33 * 3 * 7168 * 2048 / (float(rows.us[rows.token == 16].iloc[0]) * 1e-6) / MI325X_HBM
    assert raw == pytest.approx(0.684, abs=0.005)
    fit, rep = gfx942_block_moe()
    # the fitted floor takes part of each row's time, so the streaming fraction sits above the raw one, below 1
    assert raw < fit["moe.fp8_block.hbm_fraction"] < 0.85
    assert 0 < fit["moe.fp8_block.floor_s"] < float(rows.us.min()) * 1e-6
    assert rep["formats"]["fp8"]["held_out_tokens"]["median_ape"] < 0.10
    assert {k: v for k, v in PACKAGE.items() if k.startswith("moe.")} == fit


def test_empty_rows_are_refused():
    with pytest.raises(SpecError, match="no FP8 per_1x128"):
        gfx942_block_moe(pd.read_csv(GFX942_FMOE_TABLE).assign(cu_num=256))
    assert np.isfinite(gfx942_block_moe()[0]["moe.fp8_block.half_rows"])


def test_block_entry_token_passes_are_read_for_its_ops():
    # review39: moe.fp8_block.token_passes was accepted and ignored (cost/ops.py read moe[fp8]'s): the op's activation
    # bytes now carry the entry's passes; unset, moe[fp8]'s as before (Efficiency._lookup)
    base = _op("mi325x", "deepseek-r1", "fp8", "bf16", "moe.experts", sets=PACKAGE_SETS)
    more = _op(
        "mi325x",
        "deepseek-r1",
        "fp8",
        "bf16",
        "moe.experts",
        sets=[*PACKAGE_SETS, "efficiency.moe.fp8_block.token_passes=50"],
    )
    fp8 = _op(
        "mi325x",
        "deepseek-r1",
        "fp8",
        "bf16",
        "moe.experts",
        sets=[*PACKAGE_SETS, "efficiency.moe.fp8.token_passes=50"],
    )
    # by hand: the passes scan every token of the TP8 group once per pass: 16 decode tokens x 7168 x 2 B x 50 passes
    # per MoE layer, 58 layers (the fitted sets have no passes: 0 before)
    assert more["act_bytes"] - base["act_bytes"] == pytest.approx(16 * 7168 * 2 * 50 * 58, rel=1e-9)
    gpt = _op(
        "mi325x",
        "gpt-oss-120b",
        "mxfp4",
        "bf16",
        "moe.experts",
        tp=1,
        sets=[*PACKAGE_SETS, "efficiency.moe.fp8_block.token_passes=50"],
    )
    gpt0 = _op("mi325x", "gpt-oss-120b", "mxfp4", "bf16", "moe.experts", tp=1, sets=PACKAGE_SETS)
    assert gpt["act_bytes"] == gpt0["act_bytes"]  # MXFP4 experts: moe[fp8]'s entry, not the block one
    assert fp8["act_bytes"] == more["act_bytes"]  # the block entry sets no passes of its own: moe[fp8]'s
