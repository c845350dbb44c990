"""scripts/gb_decode_bias37.py: the held-out median's parts, the sharding split, the what-if's profile and its
acceptance loss, against hand-made frames and hand-computed step costs (docs/gap_gb200_fp4_8k1k.md, Update 12)."""

from __future__ import annotations

import math
import sys
import tomllib
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import gb_decode_bias37 as g  # noqa: E402

from jalapeno.cost.step import step_overhead  # noqa: E402
from jalapeno.deploy.layout import Layout  # noqa: E402
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY  # noqa: E402
from jalapeno.specs.stacks import build_stacks, get_stack  # noqa: E402

DEP32 = "disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) MTP3@0.8 [fp4]"
TEP8 = "disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 4x(attn TP8 DP1 · MoE TP1 EP8) [fp4]"


def test_median_parts_even_and_odd():
    p = g.median_parts(pd.Series([0.3, -0.1, 0.05, 0.2], index=list("abcd")))
    assert p["n"] == 4 and p["median"] == pytest.approx(0.125)  # (0.05 + 0.2) / 2
    assert (p["lo"], p["lo_id"], p["hi"], p["hi_id"]) == (0.05, "c", 0.2, "d")
    q = g.median_parts(pd.Series([1.0, 3.0, 2.0], index=list("xyz")))
    assert q["median"] == 2.0 and q["lo_id"] == q["hi_id"] == "z"


def test_judged_keeps_unflagged_rows_outside_the_fit_split():
    df = pd.DataFrame({"split": ["fit", "held_out", "none", "held_out", "held_out"],
                       "quality": [None, None, "", "rule 1", None], "error": [0.1, 0.2, 0.3, 0.4, None]})
    assert g.judged(df).error.tolist() == [0.2, 0.3]


def test_by_sharding_splits_the_decode_pools():
    rows = pd.DataFrame({"deployment": [DEP32, DEP32, TEP8, None], "framework": ["dynamo-trt"] * 3 + ["trt"],
                         "error": [0.10, 0.20, -0.04, 0.5]})
    out = g.by_sharding(rows)
    assert out.loc["ADP", "n"] == 2 and out.loc["ADP", "bias_pct"] == pytest.approx(15.0)
    assert out.loc["ATP", "bias_pct"] == pytest.approx(-4.0) and out.loc["none", "n"] == 1
    assert g.by_sharding(rows, engine=True).loc[("none", "trt"), "n"] == 1


def test_shipped_dynamo_profile_pays_no_per_rank_cost():
    """The claim the what-if starts from: the switch is on, the cost it multiplies is 0 (data/stacks.toml,
    data/stack_fits.toml), so a DEP32 step pays the default 0.5 ms (specs/efficiency.py) and a TEP8 one the same."""
    stack = get_stack("dynamo-trtllm")
    assert stack.tp_rank_step_dp is True and not stack.tp_rank_step_s
    eff = stack.apply(DEFAULT_EFFICIENCY)
    assert step_overhead(eff, Layout(dp=32, ep=32)) == pytest.approx(0.5e-3)
    assert step_overhead(eff, Layout(tp=8, ep=8)) == pytest.approx(0.5e-3)


def test_what_if_profile_carries_the_trtllm_rank_cost():
    with resources.files("jalapeno.data").joinpath("stack_fits.toml").open("rb") as f:
        shipped = tomllib.load(f)["fits"]
    rank = shipped["trtllm"]["values"]["tp_rank_step_s"]
    fits = g.fits_with_rank_cost(0.825)
    assert fits["dynamo-trtllm"]["values"]["tp_rank_step_s"] == rank
    assert fits["dynamo-trtllm"]["mtp_acceptance"]["deepseek-r1"] == {"single": 0.825, "chain": 0.825}
    assert fits["trtllm"] == shipped["trtllm"] and fits["sglang"] == shipped["sglang"]
    eff = build_stacks(fits)["dynamo-trtllm"].apply(DEFAULT_EFFICIENCY)
    # by hand: the default 0.5 ms step plus (32 − 1) ranks x the trtllm profile's per-rank cost; TEP8: 7 ranks
    assert step_overhead(eff, Layout(dp=32, ep=32)) == pytest.approx(0.5e-3 + 31 * rank)
    assert step_overhead(eff, Layout(tp=8, ep=8)) == pytest.approx(0.5e-3 + 7 * rank)


def test_acceptance_loss_reads_the_fit_split_mtp_tpot_only():
    base = {"framework": "dynamo-trt", "model": "deepseek-r1", "metric": "tpot_s", "split": "fit",
            "deployment": DEP32, "measured": 1.0}
    rows = pd.DataFrame([{**base, "predicted": 1.1}, {**base, "predicted": 1 / 1.1},
                         {**base, "predicted": 2.0, "split": "held_out"},            # held out: not fitted
                         {**base, "predicted": 2.0, "deployment": TEP8},             # no MTP
                         {**base, "predicted": 2.0, "framework": "trt"},             # another profile
                         {**base, "predicted": 2.0, "metric": "throughput_per_chip"}])
    assert g.acceptance_loss(rows) == pytest.approx(math.log(1.1))


def test_scaled_adp_moves_only_the_attention_dp_rows():
    rows = pd.DataFrame({"deployment": [DEP32, TEP8, None], "error": [0.10, 0.10, 0.10]})
    # by hand: (1 + 0.10) x 0.9 − 1 = −0.01 on the DEP32 row; the TEP8 row and the row without a deployment keep 0.10
    assert g.scaled_adp(rows, 0.9).tolist() == pytest.approx([-0.01, 0.10, 0.10])


def test_what_if_without_rank_cost_keeps_the_shipped_step_costs():
    with resources.files("jalapeno.data").joinpath("stack_fits.toml").open("rb") as f:
        shipped = tomllib.load(f)["fits"]
    fits = g.fits_with_rank_cost(0.8, rank=False)
    assert fits["dynamo-trtllm"]["values"] == shipped["dynamo-trtllm"].get("values", {})
    full = g.fits_with_rank_cost(0.8, full=True)["dynamo-trtllm"]["values"]
    assert {k: full[k] for k in shipped["trtllm"]["values"]} == shipped["trtllm"]["values"]


def test_a_missing_or_foreign_csv_is_refused_with_the_fix(tmp_path):
    with pytest.raises(SystemExit, match=r"nope\.csv: cannot read it \(FileNotFoundError\).*jalapeno validate --json"):
        g.read_validate(str(tmp_path / "nope.csv"))
    bad = tmp_path / "bad.csv"
    bad.write_text("id,error\nx,0.1\n")
    with pytest.raises(SystemExit, match=r"missing column\(s\) \['deployment', 'framework', 'metric'"):
        g.read_validate(str(bad))
