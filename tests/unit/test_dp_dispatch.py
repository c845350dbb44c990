"""Random attention-DP dispatch of a disaggregated decode server (cost/adp_rank.busiest_rank_decode,
Layout.dp_dispatch, fit/aic_sweep_layouts.with_sweep_dp_dispatch).

Expected values by hand, not from the code:
- E[max of n standard normals]: n = 2, 1/sqrt(pi) = 0.56419 (closed form); n = 8, 1.4236 and n = 32, 2.0697
  (Tippett 1925 / Harter 1961 tables of expected normal order statistics, as tabulated in Harter & Balakrishnan,
  "CRC Handbook of Tables for the Use of Order Statistics in Estimation", 1996, Table C1.1).
- The ranks' counts of B requests each drawn uniformly over dp ranks are Multinomial(B; 1/dp, ...): independent
  Poisson(B/dp) counts conditioned on their total, N_i ≈ B/dp + sqrt(B/dp)·(Z_i − mean Z), so the fullest is
  B/dp + e_dp·sqrt(B/dp) on average; 4096 on 32 ranks: 128 + 2.0697 · sqrt(128) = 151.42. Checked against the exact
  dp = 2 value (a sum over the binomial, math.comb) and a seeded multinomial draw at dp = 8.
- The dispatch rule: SGLang 0.5.5.post2's wheel (sglang/srt/managers/data_parallel_controller.py,
  round_robin_scheduler) sends a disaggregated request to ``workers[bootstrap_room % len(workers)]``; Dynamo 0.7.0
  (dynamo/sglang/request_handlers/handler_base.py) draws ``random.randint(0, 2**63 - 1)`` rooms; SGLang 0.5.8's
  wheel resolves ``load_balance_method`` "auto" to round_robin on a decode server, a real round robin (PR #16110).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from jalapeno.cost.adp_rank import busiest_rank_decode, expected_max_std_normal
from jalapeno.cost.ops import build_step_ops
from jalapeno.cost.step import Batch
from jalapeno.deploy.layout import Layout, validate_layout
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.fit.aic_sweeps import load_sweeps
from jalapeno.fit.validate import load_aiconfigurator
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
from jalapeno.specs.formats import get_precision


def test_expected_maximum_of_normals_matches_the_tables():
    assert expected_max_std_normal(1) == 0.0
    assert expected_max_std_normal(2) == pytest.approx(1 / math.sqrt(math.pi), abs=1e-4)
    assert expected_max_std_normal(8) == pytest.approx(1.4236, abs=2e-4)
    assert expected_max_std_normal(32) == pytest.approx(2.0697, abs=2e-4)


def test_busiest_decode_rank_by_hand():
    assert busiest_rank_decode([4096.0, 64.0], 32).tolist() == [128.0, 2.0]  # round robin: B / dp
    got = busiest_rank_decode([4096.0, 2.0], 32, "random")
    assert got[0] == pytest.approx(128 + 2.0697 * math.sqrt(128), rel=1e-4)  # 151.42
    # 2 on 32 ranks: 2/32 + 2.0697·sqrt(2/32) = 0.58 < 1: the fullest rank holds one whole request
    assert got[1] == 1.0
    assert busiest_rank_decode([3.0], 1, "random").tolist() == [3.0]  # one rank holds them all
    assert busiest_rank_decode([0.5], 4, "random").tolist() == [0.5]  # never more than the instance's
    # 256 on 8 ranks: 32 + 1.4236·sqrt(32) = 40.05
    assert busiest_rank_decode([256.0], 8, "random")[0] == pytest.approx(32 + 1.4236 * math.sqrt(32), rel=1e-4)


def test_fullest_rank_against_the_exact_two_rank_value_and_a_multinomial_draw():
    # dp = 2: the fullest of X and B − X, X ~ Binomial(B, 1/2), summed exactly: 512.62 for B = 1000 (the
    # independent-binomial spread sqrt(B/dp·(1 − 1/dp)) gives 508.92, 0.7% low)
    b = 1000
    exact = sum(math.comb(b, x) * max(x, b - x) for x in range(b + 1)) / 2**b
    assert busiest_rank_decode([float(b)], 2, "random")[0] == pytest.approx(exact, rel=5e-4)
    # dp = 8, 512 requests: a seeded draw of 20,000 multinomial dispatches averages 75.6 for the fullest rank (the
    # normal approximation 75.39 leans low by the binomial's skew; the independent-binomial spread gives 74.65)
    draw = np.random.default_rng(0).multinomial(512, [1 / 8] * 8, size=20000).max(axis=1).mean()
    assert busiest_rank_decode([512.0], 8, "random")[0] == pytest.approx(draw, rel=6e-3)


def test_random_dispatch_prices_rank_local_work_at_the_fullest_rank_and_experts_at_the_instance():
    model, system = load_model("deepseek-r1"), load_system("gb200-nvl72")
    prec = get_precision("fp4")

    def ops(layout, b):
        o, _ = build_step_ops(model, system.chip, layout, prec, Batch.make(decode_seqs=b, decode_ctx=1536.0),
                              DEFAULT_EFFICIENCY)
        return {name: (o.flop[i, 0], o.kv_bytes[i, 0]) for i, name in enumerate(o.name)}

    rnd = ops(Layout(dp=32, ep=32, dp_dispatch="random"), 4096.0)
    even = ops(Layout(dp=32, ep=32), 4096.0)
    busy = ops(Layout(dp=32, ep=32), 32 * (128 + 2.069669 * math.sqrt(128)))  # every rank at the fullest one's count
    assert rnd["attn.mla_decode"][1] == pytest.approx(busy["attn.mla_decode"][1], rel=1e-5)
    assert rnd["attn.mla_decode"][1] == pytest.approx(even["attn.mla_decode"][1] * 151.416 / 128, rel=1e-4)
    assert rnd["moe.experts"][0] == pytest.approx(even["moe.experts"][0], rel=1e-12)  # the instance's tokens


def test_an_unknown_dispatch_is_refused_naming_the_field():
    with pytest.raises(InfeasibleDeployment, match="dp_dispatch") as e:
        validate_layout(Layout(dp=8, ep=8, dp_dispatch="least_loaded"), load_model("deepseek-r1"),
                        load_system("gb200-nvl72"))
    assert "balanced" in e.value.fix
    assert Layout(dp=8, ep=8, dp_dispatch="random").label == "attn TP1 DP8 · MoE TP1 EP8 · DP dispatch random"
    assert Layout(dp=8, ep=8).label == "attn TP1 DP8 · MoE TP1 EP8"


def _row(cfg: int, version: str, measured: str, d_dp: int) -> dict:
    return {"id": f"dsr1_gb200_sglang_fp8_disagg_8192x1024_c1024_cfg{cfg}", "backend": "sglang",
            "silicon_data_source": f"db-dump/2026-04-27; config_id={cfg}; measured={measured}T00:00:00.000Z",
            "backend_version": version, "model_path": "deepseek-ai/DeepSeek-V3", "system": "gb200", "precision": "fp8",
            "mode": "disagg", "isl": 8192, "osl": 1024, "gemm_quant_mode": "fp8_block", "moe_quant_mode": "fp8_block",
            "prefill_batch_size": 1.0, "prefill_num_workers": 5.0, "prefill_tp_size": 1.0, "prefill_pp_size": 1.0,
            "prefill_attention_dp_size": 8.0, "prefill_moe_tp_size": 8.0, "prefill_moe_ep_size": 1.0,
            "decode_batch_size": 32.0, "decode_num_workers": 1.0, "decode_tp_size": 1.0, "decode_pp_size": 1.0,
            "decode_attention_dp_size": float(d_dp), "decode_moe_tp_size": float(d_dp), "decode_moe_ep_size": 1.0,
            "silicon_ttft_ms": 4000.0, "silicon_tpot_ms": 20.0 + cfg / 100}


def test_v055_dep32_decode_rows_dispatch_at_random_and_v058_rows_do_not():
    rows = [_row(253, "0.5.5.post2", "2025-12-21", 32), _row(533, "0.5.8.post1", "2026-02-09", 32)]
    old, new = load_aiconfigurator(pd.DataFrame(rows))[0]
    assert old.deployment.decode.layout.dp_dispatch == "random"
    assert old.deployment.prefill.layout.dp_dispatch == "balanced"  # prefill follows the room, then hands over
    assert "decode DP dispatch random" in "; ".join(old.notes)
    assert new.deployment.decode.layout.dp_dispatch == "balanced"
    got = {(s.system, s.version, s.precision) for s in load_sweeps() if s.decode_dp_dispatch == "random"}
    assert got == {("gb200-nvl72", "0.5.5.post2", "fp4"), ("gb200-nvl72", "0.5.5.post2", "fp8")}


@pytest.mark.parametrize("line", ['decode_dp_dispatch = "round_robin"', "decode_dp_dispatch = true"])
def test_a_malformed_dispatch_field_is_named(tmp_path, line):
    f = tmp_path / "sweeps.toml"
    f.write_text('[[sweep]]\nsystem = "gb200-nvl72"\nmodel = "deepseek-r1"\nengine = "sglang"\nversion = "0.5.5.post2"\n'
                 'precision = "fp8"\nmeasured = "2025-12-21"\nconfig_key = "k"\nsource = "s"\nspec = "none"\n'
                 f'{line}\n')
    with pytest.raises(SpecError, match=r"sweep\[0\]\.decode_dp_dispatch") as e:
        load_sweeps(f)
    assert "random" in e.value.fix


def test_balanced_layouts_price_as_before():
    # the default path divides the instance's rows by dp exactly as before the field existed
    got = busiest_rank_decode(np.array([96.0, 7.0]), 8)
    assert got.tolist() == [12.0, 0.875]


def test_step_and_pool_options_take_the_dispatch(capsys):
    from cli_runner import check_error, run

    from jalapeno.cli.pool_opts import parse_pool

    assert parse_pool("dp=32,ep=32,dp_dispatch=random", "--decode").layout.dp_dispatch == "random"
    assert parse_pool("dp=32,ep=32", "--decode").layout.dp_dispatch == "balanced"
    code, out, _ = run(capsys, "step", "-s", "gb200-nvl72", "-p", "fp8", "--dp", "32", "--ep", "32", "-b", "4096",
                       "-c", "1536", "--dp-dispatch", "random", "--json")
    assert code == 0 and '"dp_dispatch": "random"' in out
    check_error(*run(capsys, "step", "-s", "gb200-nvl72", "--dp-dispatch", "rr"), "--dp-dispatch", "balanced")
    check_error(*run(capsys, "predict", "-s", "gb200-nvl72", "-p", "fp8", "--isl", "1024", "--osl", "1024",
                     "--prefill", "dp=8,ep=8", "--decode", "dp=32,ep=32,dp_dispatch=least", "-c", "64"),
                "dp_dispatch", "random")


def test_dispatch_on_a_prefill_pool_is_refused_and_one_rank_records_none(capsys):
    # a prefill pool's prompts are priced at the balanced busiest rank (cost/adp_rank.busiest_rank_prefill):
    # random there changed no figure while the label and JSON named it, so it is refused naming the key
    from cli_runner import check_error, run

    from jalapeno.cli.pool_opts import parse_pool

    with pytest.raises(SpecError, match="dp_dispatch") as e:
        parse_pool("dp=8,ep=8,dp_dispatch=random", "--prefill")
    assert e.value.field == "--prefill dp_dispatch" and "--decode" in e.value.fix
    assert parse_pool("dp=8,ep=8,dp_dispatch=balanced", "--prefill").layout.dp_dispatch == "balanced"
    check_error(*run(capsys, "predict", "-s", "gb200-nvl72", "-p", "fp8", "--isl", "1024", "--osl", "1024",
                     "--prefill", "dp=8,ep=8,dp_dispatch=random", "--decode", "dp=32,ep=32", "-c", "64"),
                "--prefill dp_dispatch", "--decode")
    # one attention rank has no dispatch: neither the label nor the record names one
    one = Layout(tp=8, ep=8, dp_dispatch="random")
    assert "dispatch" not in one.label and "dp_dispatch" not in one.as_dict()
    assert Layout(dp=8, ep=8, dp_dispatch="random").as_dict()["dp_dispatch"] == "random"


def test_step_reads_the_dispatch_name_as_pools_do(capsys):
    from cli_runner import run

    args = ("step", "-s", "gb200-nvl72", "-p", "fp8", "--dp", "32", "--ep", "32", "-b", "4096", "-c", "1536", "--json")
    code, upper, _ = run(capsys, *args, "--dp-dispatch", "Random")
    assert code == 0 and '"dp_dispatch": "random"' in upper
    assert upper == run(capsys, *args, "--dp-dispatch", "random")[1]


def test_dispatch_on_one_attention_rank_is_refused_naming_the_option(capsys):
    # one rank has nothing to choose: random there changed no figure and was silently ignored
    from cli_runner import check_error, run

    from jalapeno.cli.pool_opts import parse_pool

    with pytest.raises(SpecError, match="one attention-DP rank") as e:
        parse_pool("tp=4,dp_dispatch=random", "--decode")
    assert e.value.field == "--decode dp_dispatch" and "dp=" in e.value.fix
    check_error(*run(capsys, "step", "-s", "gb200-nvl72", "--tp", "4", "--dp-dispatch", "random"),
                "--dp-dispatch", "--dp above 1")
    check_error(*run(capsys, "step", "-s", "gb200-nvl72", "--tp", "4", "--dp-dispatch", "rr"), "--dp-dispatch", "balanced")
    assert parse_pool("tp=4,dp_dispatch=balanced", "--decode").layout.dp_dispatch == "balanced"
