"""Round 44 new-user leftovers (ux44): what each energy and cost figure counts, per-$ ratios at each speed, and
explore's column headers.

Expected values come from the published constants (InferenceX constants.ts: B200 all-in 2.17 kW per GPU and
1.95 $/GPU-hour; DESIGN.md §3) and the formulas of docs/metrics.md §3, not from the code's output:
tok/s/kW = tok/s/chip / kW, J/token = W / (tok/s/chip), $/M tok = $/chip-hour / (tok/s/chip x 3600 / 10^6).
"""

from __future__ import annotations

import re

import pytest
from cli_runner import run

#: InferenceX constants.ts: B200 all-in provisioned kW per GPU, hyperscaler-owner $/GPU-hour
B200_KW, B200_USD_H = 2.17, 1.95


def _cells(out: str) -> dict[str, str]:
    """predict's two-column table: label -> value text."""
    return {m[1].strip(): m[2].strip() for m in re.finditer(r"^[│|] (.+?)\s*[│|] (.+?)\s*[│|]$", out, re.M)}


def _num(text: str) -> float:
    return float(text.split()[0].replace(",", ""))


def test_predict_says_its_energy_and_cost_figures_count_input_and_output_tokens(capsys):
    """predict printed 'tok/s per kW', 'J per token' and '$ per M tokens' with no word of which tokens; compare's tiers
    say in+out and plan counts output tokens only. The three rows say (in+out), and their values are the in+out
    throughput's (at 8K/1K output tokens are about a ninth of them)."""
    code, out, err = run(capsys, "predict", "-s", "b200", "-m", "gpt-oss-120b", "-c", "32")
    assert code == 0, err
    c = _cells(out)
    tput = _num(c["throughput per chip (in+out)"])
    assert _num(c["output throughput per chip"]) < 0.9 * tput  # the two counts differ: the label matters
    assert _num(c["tok/s per kW (in+out)"]) == pytest.approx(tput / B200_KW, abs=1.0)  # rounded to whole tok/s/kW
    assert _num(c["J per token (in+out)"]) == pytest.approx(B200_KW * 1e3 / tput, abs=6e-4)  # three decimals
    assert _num(c["$ per M tokens (in+out)"]) == pytest.approx(B200_USD_H / (tput * 3600 / 1e6), rel=6e-3)
    assert not any(k in c for k in ("tok/s per kW", "J per token", "$ per M tokens"))  # no unlabelled row left


#: InferenceX constants.ts: H200 $/GPU-hour (the baseline below)
H200_USD_H = 1.41


def test_compare_ratios_give_tokens_per_usd_at_each_speed_as_the_tiers_do():
    """The ratios table gave tokens per $ only at the peak (Kimi K2.5, Jalapeño vs GB300: 1.25x), while at 50
    tok/s/user the tiers' $/M tok made it 1.48x. Each --at cell now carries it after the per-kW ratio: the per-chip
    ratio x the baseline's $/chip-hour over the system's (1.41 / 1.95 for B200 over H200), which is the ratio of the
    tiers' $/M tok at the same speed (the baseline's over the system's)."""
    from rich.console import Console

    from jalapeno.analysis.comparison import compare_systems
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.report.tables import comparison_tables
    from jalapeno.report.compare_cells import tier_usd_per_mtok
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    res = compare_systems(
        load_model("deepseek-r1"),
        [load_pricer("b200"), load_pricer("h200")],
        get_workload("1k1k"),
        get_precision("fp8"),
        floors={"need": 20.0},
        iso_interactivity=(20.0,),
        options=SweepOptions(serving="agg", concurrency=(8.0, 64.0)),
    )
    rec = res.record()
    c = rec.comparisons["b200"]
    per_chip, per_usd = c.iso_interactivity["throughput_per_chip"][0], c.iso_interactivity["tokens_per_usd"][0]
    assert per_usd["ratio"] == pytest.approx(per_chip["ratio"] * H200_USD_H / B200_USD_H, rel=1e-9)
    usd = {
        n: tier_usd_per_mtok(rec.comparisons[n].tiers["need"]["throughput"], rec.systems[n].frontier)
        for n in ("b200", "h200")
    }
    assert per_usd["ratio"] == pytest.approx(usd["h200"] / usd["b200"], rel=1e-9)  # the tiers cells' $/M tok
    con = Console(width=600, record=True)
    con.print(comparison_tables(rec)[1])
    lines = con.export_text().splitlines()
    header = [h.strip() for h in next(ln for ln in lines if "@20" in ln).split("┃")[1:-1]]
    assert header == ["system", "peak (kW, $)", "max tok/s/user", "@20 tok/s/user (kW, $)"]
    row = [x.strip() for x in next(ln for ln in lines if ln.startswith("│ b200 ")).split("│")[1:-1]]
    kw = c.iso_interactivity["tok_s_per_kw"][0]["ratio"]
    assert row[3].startswith(f"{per_chip['ratio']:.2f}x ({kw:.2f}x, {per_usd['ratio']:.2f}x)"), row


def test_a_band_row_gives_the_per_usd_band_at_each_speed():
    """By hand: a band of 0.60-0.90x per chip, 0.70-1.05x per kW and 0.80-1.20x per $ at the peak and at one
    speed reads so in both cells, per $ after per kW (the band row had per $ at the peak only, in a last column)."""
    from jalapeno.report.compare_cells import band_cells

    def row(r: float) -> dict:
        return {"x": 50.0, "ratio": r, "status_a": "interpolated", "status_b": "interpolated", "at_frontier_end": False}

    ends = {"throughput_per_chip": (0.6, 0.9), "tok_s_per_kw": (0.7, 1.05), "tokens_per_usd": (0.8, 1.2)}
    b = {
        "peak_ratio": {k: {"low": lo, "high": hi} for k, (lo, hi) in ends.items()},
        "max_interactivity_ratio": {"low": 0.9, "high": 1.1},
        "iso_interactivity": {k: {"low": [row(lo)], "high": [row(hi)]} for k, (lo, hi) in ends.items()},
    }
    assert band_cells(b) == [
        "0.60 to 0.90x (0.70 to 1.05x, 0.80 to 1.20x)",
        "0.90 to 1.10x",
        "0.60 to 0.90x (0.70 to 1.05x, 0.80 to 1.20x)",
    ]


def test_explore_headers_are_the_keys_without_their_section_with_a_legend(capsys):
    """explore's table headed each parameter with its whole dotted key, which wrapped mid-word at 160 columns
    (``chip.peak_dense_tflo`` over ``ps.fp8``) for the example space's five parameters. Each header is now the key
    without its section, whole on one line, and a legend line gives the full keys."""
    from jalapeno.cli.explore_cmd import _print_summary

    keys = [
        "chip.peak_dense_tflops.fp8",
        "chip.hbm_stacks",
        "levels.rack.bandwidth_gb_per_s",
        "efficiency.kernel_launch_s",
        "efficiency.step_overhead_s",
    ]  # examples/explore_700w.toml's [params]
    design = {
        "trial": 17,
        **{f"param:{k}": v for k, v in zip(keys, (5900, 8, 1150, 3.1e-07, 5.2e-05))},
        "score:tok_s_per_kw": 1.874,
        "chip_power_w": 698.0,
        "usd_per_chip_hour": 1.62,
    }
    _print_summary(
        {
            "name": "n",
            "trials": 1,
            "feasible": 1,
            "base": "jalapeno",
            "pruned_by": {},
            "importance": {},
            "designs": [design],
        }
    )
    out = capsys.readouterr().out
    header = next(ln for ln in out.splitlines() if ln.startswith("┃") and "trial" in ln)
    cols = [c.strip() for c in header.split("┃")[1:-1]]
    assert cols[:6] == [
        "trial",
        "peak_dense_tflops.fp8",
        "hbm_stacks",
        "rack.bandwidth_gb_per_s",
        "kernel_launch_s",
        "step_overhead_s",
    ]
    legend = " ".join(out[out.index("columns: ") :].split())
    for k in keys:
        assert f"{k.split('.', 1)[1]} = {k}" in legend
