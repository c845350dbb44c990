"""``jalapeno sensitivity`` sweeps the system's stated specs too (ux55): a hardware architect asks d(metric)/d(spec) of
HBM bandwidth, each FP4/FP8/BF16 peak, scale-up bandwidth, HBM capacity and power, stated or estimated. The tornado
moved only the uncertain parameters (fixed costs, efficiencies, specs marked estimate), so a stated spec such as
GB300's 8 TB/s never appeared. Each stated spec is now moved ±10% (analysis/sensitivity.STATED_STEP) with its unit,
and every row carries its elasticity d ln(metric) / d ln(parameter)."""

import json
import math
from dataclasses import replace

from cli_runner import run

from jalapeno.analysis.sensitivity import SensitivityRow, parse_metric, sensitivity, stated_parameters
from jalapeno.analysis.uncertain import apply, physical_limit, uncertain_parameters
from jalapeno.cli.audit_cmds import _context
from jalapeno.cli.system_opts import system_pricer


def test_a_purely_hbm_bound_decode_step_has_elasticity_one_in_hbm_bandwidth():
    """Qwen3-32B (BF16) on one H200 at the physical limit (every fixed cost 0, every fraction 1, half rows 0), its
    fastest user: a batch-1 decode step, every op HBM-bound, so TPOT = bytes read / HBM bandwidth and
    d ln(TPOT) / d ln(BW) = -1: interactivity (1 / TPOT) has elasticity +1 in HBM bandwidth and ~0 in the peaks.

    By hand (qwen3-32b config.json: hidden 5120, 64 layers, 64 q / 8 kv heads of 128, MLP 25,600, vocab 151,936):
    per layer q 5120 x 8192 + k, v 5120 x 1024 each + o 8192 x 5120 = 94.4 M, MLP 3 x 5120 x 25,600 = 393.2 M ->
    487.6 M x 64 = 31.21 B, lm_head 151,936 x 5120 = 0.78 B: 31.99 B x 2 bytes = 63.97 GB; KV 64 x 2 x 8 x 128 x 2 B
    = 262 kB per token x ~1,536 (1k1k mid-decode) = 0.40 GB; 4.8 TB/s / 64.4 GB = 74.5 tok/s/user.
    """
    ctx = _context("qwen3-32b", "1k1k", None, None, None, "all-in", "agg")
    ctx = replace(ctx, instance_chips=1)  # one chip: no collective, no link in the step
    pr = system_pricer("h200", "calibrated", [])
    lim, _ = apply(pr, physical_limit(uncertain_parameters(pr, ctx.model, ctx.precision, ctx.convention)))
    res = sensitivity(ctx, lim, parse_metric("max_interactivity"))
    assert abs(res.value / 74.5 - 1) < 0.02, res.value
    rows = {r.parameter: r for r in res.stated}
    bw = rows["chip.hbm_bandwidth_tb_per_s"]
    assert (bw.unit, bw.current, bw.kind) == ("TB/s", 4.8, "stated")
    assert math.isclose(bw.low, 4.32) and math.isclose(bw.high, 5.28)  # 4.8 x 0.9 and x 1.1
    assert abs(bw.elasticity - 1.0) < 0.01, bw.elasticity
    assert abs(rows["chip.peak_dense_tflops.bf16"].elasticity) < 0.01  # no op compute-bound at one row
    assert rows["chip.hbm_capacity_gb"].elasticity == 0.0  # 64 GB of 141: capacity does not bind batch 1
    assert res.stated[0].parameter == "chip.hbm_bandwidth_tb_per_s"  # largest |elasticity| first


def test_elasticity_is_the_log_ratio_of_the_ends_over_the_log_ratio_of_the_band():
    """ln(110 / 90) / ln(8.8 / 7.2) = 1 (the metric in proportion); a metric halving over a doubling: -1; an end
    that is not a positive figure, or a band of one value: undefined (NaN), not 0."""
    assert math.isclose(SensitivityRow("x", "stated", 8, 7.2, 8.8, 90.0, 110.0, "").elasticity, 1.0)
    assert math.isclose(SensitivityRow("x", "spec", 2, 1, 4, 20.0, 5.0, "").elasticity, -1.0)  # ln(1/4) / ln(4)
    assert math.isnan(SensitivityRow("x", "spec", 2, 1, 4, math.nan, 5.0, "").elasticity)
    assert math.isnan(SensitivityRow("x", "spec", 2, 2, 2, 4.0, 4.0, "").elasticity)


def test_stated_specs_are_the_files_headline_specs_not_its_estimates():
    """Jalapeño's file states FP8 3,400 and FP4 13,400 TFLOP/s, 15.4 TB/s, 216 GiB, rack 600 and global 200 GB/s; its
    BF16 peak and tray bandwidth are marked estimate (in the tornado with their ±20% band, so not listed twice).
    The power figure is listed for a per-kW metric only: all-in for the all-in convention, the TDP for chip."""
    pr = system_pricer("jalapeno", "calibrated", [])
    skip = {"chip.peak_dense_tflops.bf16", "levels.tray.bandwidth_gb_per_s", "power.allin_kw_per_chip"}
    got = {p.key: p for p in stated_parameters(pr, None, skip)}
    assert set(got) == {
        "chip.peak_dense_tflops.fp8",
        "chip.peak_dense_tflops.fp4",
        "chip.hbm_bandwidth_tb_per_s",
        "chip.hbm_capacity_gib",
        "levels.rack.bandwidth_gb_per_s",
        "levels.global.bandwidth_gb_per_s",
    }
    bw = got["chip.hbm_bandwidth_tb_per_s"]
    assert math.isclose(bw.low, 13.86) and math.isclose(bw.high, 16.94)  # 15.4 x 0.9, x 1.1
    assert "power.allin_kw_per_chip" not in {p.key for p in stated_parameters(pr, "all-in", skip)}  # estimated
    chip = {p.key: p for p in stated_parameters(pr, "chip", skip)}
    assert chip["chip.tdp_w"].current == 700 and math.isclose(chip["chip.tdp_w"].high, 770)


def test_sensitivity_prints_the_stated_specs_with_unit_and_elasticity(capsys):
    """tok/s per kW (all-in) of an H200 is throughput / 1.73 kW: the all-in figure moves no throughput, so its
    elasticity is exactly -1 (ln((1/1.1) / (1/0.9)) / ln(1.1 / 0.9)); the terminal names each spec, its unit and
    the elasticity under the tornado."""
    args = ("sensitivity", "-s", "h200", "-m", "qwen3-32b", "-w", "1k1k", "--serving", "agg")
    code, out, err = run(capsys, *args, "--metric", "peak_tok_s_per_kw", "--json")
    assert code == 0, err
    d = json.loads(out)
    rows = {r["parameter"]: r for r in d["stated"]}
    p = rows["power.allin_kw_per_chip"]
    assert (p["unit"], p["current"]) == ("kW", 1.73)
    assert math.isclose(p["elasticity"], -1.0, abs_tol=1e-9)
    assert rows["chip.hbm_bandwidth_tb_per_s"]["unit"] == "TB/s"
    assert all("elasticity" in r and "unit" in r for r in d["rows"])
    code, out, err = run(capsys, *args, "--metric", "peak_tok_s_per_kw", "--html", "")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "h200 stated specs: peak_tok_s_per_kw with each moved ±10%" in flat
    assert "elasticity: d ln(metric) / d ln(parameter)" in flat
    assert "-1.00" in flat
