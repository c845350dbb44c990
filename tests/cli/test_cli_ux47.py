"""ux47: plan on agentic workloads, compare's headline at 80 columns, one band format, tier labels."""

from __future__ import annotations

import json
import math

from cli_runner import check_error, run

AGENT = ("plan", "-s", "gb300-nvl72", "-w", "agentic:coding-agent")


def test_plan_takes_an_agentic_workload_and_sizes_it_as_agentic_compare(capsys):
    """plan -w agentic:… refused every agentic preset; it now sizes on compare -w agentic:…'s frontier."""
    code, out, err = run(capsys, "compare", "-w", "agentic:coding-agent", "--systems", "gb300-nvl72", "--json")
    assert code == 0, err
    peak = json.loads(out)["systems"]["gb300-nvl72"]["peak"]
    # 1e5 output tok/s at 40 turns x 350 reply tokens per task: 1e5 x 3600 / 14,000 = 25,714.3 tasks/h
    code, out, err = run(capsys, *AGENT, "--target", "1e5", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["target_tasks_per_hour"] == 1e5 * 3600 / 14_000
    assert d["deployment"] == peak["deployment"]
    assert d["tasks_per_hour_per_chip"] == peak["tasks_per_hour_per_chip"]
    n = math.ceil(d["target_tasks_per_hour"] / (peak["tasks_per_hour_per_chip"] * d["chips_per_instance"]))
    assert d["instances"] == n and d["chips"] == n * d["chips_per_instance"]
    assert d["price_basis"] and d["arithmetic"][0].startswith("target: 100,000 output tok/s")
    code, out, err = run(capsys, *AGENT, "--racks", "1", "--max-task-min", "10")
    assert code == 0, err
    assert "chips: 1 rack x 72 chips per rack = 72" in out and "mean task time <= 10 min" in out
    assert "sessions in flight" in out and "tasks/h" in out


def test_plan_agentic_refusals_name_the_alternative(capsys):
    check_error(
        *run(capsys, *AGENT, "--target", "1e5", "--min-interactivity", "20"), "--min-interactivity", "--max-task-min"
    )
    check_error(*run(capsys, *AGENT, "--target", "1e5", "--target-kind", "total"), "--target-kind", "tasks")
    check_error(*run(capsys, *AGENT, "--target", "1e5", "--serving", "disagg"), "--serving", "aggregated")
    check_error(*run(capsys, *AGENT, "--target", "1e5", "--max-task-min", "0.5"), "--max-task-min", "fastest")
    check_error(
        *run(capsys, "plan", "-s", "gb300-nvl72", "-w", "8k1k", "--target", "1e5", "--max-task-min", "5"),
        "--max-task-min",
        "agentic",
    )


def test_compare_headline_reads_whole_at_80_columns(capsys, monkeypatch):
    """At 80 columns rich folded every headline cell mid-word ("hbm_bandwid" / "th"); it now prints on its side,
    one column per system, each cell's words whole, no figure lost."""
    from jalapeno.cli import common

    args = ("compare", "--systems", "gb200-nvl72,gb300-nvl72", "-c", "64", "--bands")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    monkeypatch.setattr(common.console, "width", 80)
    code, out, err = run(capsys, *args)
    assert code == 0, err
    head = out.split("ratios vs")[0]
    assert max(len(line) for line in head.splitlines()) <= 80
    words = set(head.replace("│", " ").replace("┃", " ").split())
    for name, s in d["systems"].items():
        h = s["headline"]
        assert name in words and h["bound_at_peak"] in words and h["bound_at_max_interactivity"] in words
        assert f"{h['peak_throughput_per_chip']:,.0f}" in words and f"{h['min_e2e_s']:.2f}" in words
        assert f"{h['max_interactivity']:.1f}" in words


def test_one_band_format_in_every_command(capsys):
    """audit printed `126.8-500.1` and `3.2e-07-4e-06` (the range dash read as an exponent's minus), compare
    `(7,043 - 9,852)`, the measured bands `-12.3%..+8.2%`: all now `low to high` (analysis/bound_words.band_span)."""
    import re

    from jalapeno.analysis.measured_bands import load_measured_bands
    from jalapeno.analysis.bound_words import band_span
    from jalapeno.report.compare_cells import band_range, band_text

    assert band_span("-12.3%", "+8.2%") == "-12.3% to +8.2%"
    assert band_text(7043.0, 9852.0, ",.0f") == " (7,043 to 9,852)"
    assert band_range(1.68, 0.97) == "0.97 to 1.68x"
    gb300 = load_measured_bands()["gb300-nvl72"].describe()
    assert re.search(r"throughput_per_chip [+-]\d+\.\d% to [+-]\d+\.\d% \(n \d+", gb300) and "%.." not in gb300
    code, out, err = run(capsys, "audit", "-s", "jalapeno", "--claim", "max_interactivity=700")
    assert code == 0, err
    assert "band (low to high)" in out
    assert re.search(r"│ [\d.]+ to [\d.]+ tok/s/user \[wide band", out)  # the claim's band: 126.8 to 500.1 (docs/audit.md §5)
    assert re.search(r"│ 3\.2e-07 to 4e-06 +│", out)  # kernel launch's compiled-to-GPU-like band, no dash
    assert not re.search(r"\de-\d+-\d", out) and not re.search(r"│ [\d.,]+-[\d.,]+ +│", out)


def test_a_tier_no_point_reaches_reads_alike_in_compare_and_agentic_compare(capsys):
    """compare's tiers cell named the fastest speed a system reaches ('unreachable (its fastest: 76.1
    tok/s/user)'); the agentic comparison's said a bare 'unreachable'. Both now name it, each in its unit."""
    code, out, err = run(
        capsys, "compare", "-w", "agentic:coding-agent", "--systems", "gb300-nvl72", "--tiers", "quick=1", "--json"
    )
    assert code == 0, err
    fastest_min = json.loads(out)["systems"]["gb300-nvl72"]["fastest"]["task_time_s"] / 60  # 3.59 min > 1 min
    code, out, err = run(
        capsys, "compare", "-w", "agentic:coding-agent", "--systems", "gb300-nvl72", "--tiers", "quick=1"
    )
    assert code == 0, err
    assert f"unreachable (its fastest: {fastest_min:.1f} min/task)" in " ".join(out.split())


def test_a_zero_tier_is_refused_alike_before_the_sweep(capsys):
    """--tiers fast=0 minutes passed the option's check ('>= 0') and was refused later by the agentic comparison
    ('> 0'), in other words; a negative one got the first wording. One rule and one message for both."""
    for v in ("0", "-1"):
        check_error(
            *run(capsys, "compare", "-w", "agentic:coding-agent", "--tiers", f"fast={v}"),
            f"fast={v}: a task-time ceiling must be a finite number of minutes > 0",
        )


def test_plan_agentic_bad_ceiling_is_refused_before_the_sweep(capsys, monkeypatch):
    import jalapeno.analysis.agentic as agentic

    def no_sweep(*a, **k):
        raise AssertionError("swept before refusing the input")

    monkeypatch.setattr(agentic, "agentic_frontier", no_sweep)
    check_error(*run(capsys, *AGENT, "--target", "100", "--max-task-min", "-1"), "--max-task-min", "positive")
    check_error(*run(capsys, *AGENT, "--target", "100", "--target-kind", "total"), "--target-kind")
