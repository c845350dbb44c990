"""Round 52 architect fixes (arch52): what the chip would need, priced and spelled one way.

Expected values are worked by hand in each test's comments (from the system files and the model's formulas), not
read off the code's printed text.
"""

from __future__ import annotations

import re
from pathlib import Path

from cli_runner import run

ROOT = Path(__file__).resolve().parents[2]


def test_a_ratio_at_x_claim_is_spelled_one_way_in_output_help_and_docs(capsys):
    """audit's title wrote throughput_per_chip_ratio@50 (analysis/claims.Claim.name) where README, docs/audit.md and
    compare's audit hint wrote throughput_per_chip@50_ratio (both parse). One spelling: METRIC_ratio@X, the one the
    output writes; the help names it, and says the other is read the same."""
    code, out, err = run(capsys, "audit", "--help")
    assert code == 0, err
    assert "throughput_per_chip_ratio@50=1.0" in re.sub(r"[\s│]+", "", out)  # rich wraps the help in a box
    at_then_ratio = re.compile(r"@[0-9X{][^\s=`]{0,14}_ratio\b")
    for doc in ("README.md", "docs/audit.md", "src/jalapeno/report/win_tables.py"):
        text = (ROOT / doc).read_text()
        hits = [m.group(0) for m in at_then_ratio.finditer(text)]
        assert hits == [], f"{doc} spells a ratio claim @X_ratio: {hits}"
    assert "throughput_per_chip_ratio@50=1.0" in (ROOT / "README.md").read_text()


def test_what_the_chip_would_need_searches_hbm_capacity_with_usable_hbm(capsys):
    """The headline table had no HBM capacity row and the usable-HBM search stopped at the nominal capacity. The
    nominal capacity is now a headline row, searched 0.5-4x (Jalapeño's 216 GiB: 108-864 GiB), and moving it moves the
    usable capacity the file states at the file's usable/nominal ratio: GB300 279 of 288 GB, so 576 GB nominal gives
    576 x 279 / 288 = 558 GB usable and 144 GB gives 139.5 GB (before: usable stayed 279 GB, and 144 GB was refused as
    below it). Its HBM capex follows: +288 GB x 15 $/GB x (2.21 / 46,500) $/h per $ = +0.2053 $/chip-hour."""
    from jalapeno.analysis.uncertain import apply, headline_parameters
    from jalapeno.cost.pricer import load_pricer

    jal = load_pricer("jalapeno")
    cap = next(p for p in headline_parameters(jal) if p.key == "chip.hbm_capacity_gib")
    assert (cap.current, cap.lo, cap.hi) == (216, 108, 864)
    gib = 2.0**30
    j2, _ = apply(jal, {"chip.hbm_capacity_gib": 432.0})
    assert (j2.system.chip.hbm_capacity_bytes, j2.system.chip.hbm_usable_bytes) == (432 * gib, 432 * gib)
    gb3 = load_pricer("gb300-nvl72")
    big, _ = apply(gb3, {"chip.hbm_capacity_gb": 576.0})
    assert abs(big.system.chip.hbm_usable_bytes - 558e9) < 1e3
    assert abs(big.system.usd_per_chip_hour - gb3.system.usd_per_chip_hour - 288 * 15 * 2.21 / 46_500) < 1e-6
    small, _ = apply(gb3, {"chip.hbm_capacity_gb": 144.0})
    assert abs(small.system.chip.hbm_usable_bytes - 139.5e9) < 1e3
    far = ("--model", "gpt-oss-120b", "--workload", "8k1k", "--serving", "agg", "--claim", "max_interactivity=100000")
    code, out, err = run(capsys, "audit", "--system", "jalapeno", *far)
    assert code == 0, err
    flat = " ".join(out.split())
    assert (
        "chip.hbm_capacity_gib: nominal HBM capacity in GiB, searched 108-864 GiB (0.5-4x); chip.hbm_usable_gib "
        "moves with it at the file's usable/nominal 216/216 GiB (usable never above nominal)"
    ) in flat
    # a rack faster than the tray's ports it shares moves those ports, their watts priced (test below)
    assert (
        "levels.rack.bandwidth_gb_per_s moves levels.tray.bandwidth_gb_per_s (the ports it is reached through)" in flat
    )


def test_the_spec_search_prices_a_shared_port_levels_link_power(tmp_path, capsys):
    """Jalapeño's rack is reached through the tray's ~600 GB/s ports (levels.rack.shares_ports_with_inner): audit's
    headline search and explore moved levels.rack alone, at no watts. A search now moves the tray's ports with it
    where faster (specs/variants.moved_together), priced by the one link-power formula: rack at 1,200 GB/s ->
    700 + 2 x (1,200 - 600) GB/s x 8 bit x 5 pJ/bit = 748 W TDP; all-in 1,150 + 48 x PUE 1.25 = 1,210 W. A rack
    below its ports (300) moves nothing: 700 W. An explore space searching levels.rack alone gets the same design
    and a note; the example space, which derives levels.tray from levels.rack itself, gets none."""
    from jalapeno.analysis.explore import Evaluator
    from jalapeno.analysis.uncertain import apply
    from jalapeno.cli.explore_lines import moved_together_note
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.design_space import load_design_space

    jal = load_pricer("jalapeno")
    fast, _ = apply(jal, {"levels.rack.bandwidth_gb_per_s": 1200.0})
    assert abs(fast.system.chip.tdp_w - 748) < 1e-6
    assert abs(fast.system.allin_power_w_per_chip - 1210) < 1e-6
    assert [lv.bandwidth_bytes_per_s for lv in fast.system.levels[:2]] == [1200e9, 1200e9]
    slow, _ = apply(jal, {"levels.rack.bandwidth_gb_per_s": 300.0})
    assert slow.system.chip.tdp_w == 700 and slow.system.levels[0].bandwidth_bytes_per_s == 600e9

    example = (ROOT / "examples" / "explore_700w.toml").read_text()
    alone = tmp_path / "rack_alone.toml"
    alone.write_text(example.replace('"levels.tray.bandwidth_gb_per_s" = "{levels.rack.bandwidth_gb_per_s}"\n', ""))
    space = load_design_space(str(alone))
    assert "levels.tray.bandwidth_gb_per_s" not in space.derived
    note = moved_together_note(space, "rack_alone.toml")
    assert note is not None and "each trial moves levels.tray.bandwidth_gb_per_s with the key it follows" in note
    assert moved_together_note(load_design_space(str(ROOT / "examples" / "explore_700w.toml")), "x") is None
    ev = Evaluator(space)  # design() alone: no base sweep needed
    params = {k: (p.choices[0] if p.choices is not None else p.low) for k, p in space.params.items()}
    params["chip.hbm_stacks"] = 6
    params["levels.rack.bandwidth_gb_per_s"] = 1200
    params["chip.peak_dense_tflops.fp8"] = 3400
    system, _ = ev.design(params)
    assert abs(system.chip.tdp_w - 748) < 1e-6  # fp8 and stacks at Jalapeño's: only the ports' 48 W move


def test_sensitivity_and_audit_take_the_chip_model_and_say_why_die_rows_do_not_move(capsys):
    """sensitivity listed Jalapeño's on-die rows (die.link_bandwidth_tb_per_s 0.28-4.4 TB/s, die.hop_latency_ns) with
    swing 0 and no word: the flat chip model never reads them, and sensitivity / audit had no --chip-model (step,
    compare and frontier do). Both now take --chip-model / --placement; under the flat model a line names the die.*
    rows and why they read 0. Under the sliced one (6 slices joined by the on-die network) a slower on-die link can
    only slow the fastest user: max_interactivity at 0.28 TB/s is below the value as priced, and the swing is not 0."""
    import json

    far = ("--model", "gpt-oss-120b", "--workload", "8k1k", "--serving", "agg")
    code, out, err = run(capsys, "sensitivity", "--system", "jalapeno", *far)
    assert code == 0, err
    assert (
        "die.link_bandwidth_tb_per_s, die.hop_latency_ns: read by the sliced chip model only, so they do not "
        "move the metric under the flat one"
    ) in " ".join(out.split())
    code, out, err = run(capsys, "sensitivity", "--system", "jalapeno", *far, "--chip-model", "sliced", "--json")
    assert code == 0, err
    d = json.loads(out)
    link = next(r for r in d["rows"] if r["parameter"] == "die.link_bandwidth_tb_per_s")
    assert link["metric_at_low"] < d["value"]  # 0.28 TB/s links, a quarter of 1.1: slower
    code, out, err = run(capsys, "sensitivity", "--system", "jalapeno", *far, "--chip-model", "sliced")
    assert code == 0, err
    assert "chip model: sliced (jalapeno 6 slices, local_first)" in out
    assert "read by the sliced chip model only" not in out
    for cmd in ("audit", "sensitivity"):
        code, out, err = run(capsys, cmd, "--help")
        assert code == 0 and "--chip-model" in out and "--placement" in out
    # a placement on chips of one slice places nothing: refused, as compare refuses it
    code, out, err = run(
        capsys, "sensitivity", "--system", "h200", *far, "--chip-model", "sliced", "--placement", "best"
    )
    assert code != 0 and "--placement" in err


def test_what_the_chip_would_need_says_when_it_rests_on_borrowed_gpu_kernel_fits(capsys):
    """Jalapeño publishes no kernel measurements: its efficiency set is GB300's (derived_from), so the specs the
    audit finds rest on GB300's kernel fits (newuser54: Kimi K2.5's "BF16 peak helps, HBM never does" follows from
    the borrowed few-row W4A16 expert rule). The table says so under it for Jalapeño, and not for a measured chip."""
    far = ("--model", "gpt-oss-120b", "--workload", "8k1k", "--serving", "agg", "--claim", "max_interactivity=100000")
    code, out, err = run(capsys, "audit", "--system", "jalapeno", *far)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "what the chip would need" in flat
    assert "jalapeno has no kernel measurements: the specs above are found with gb300-nvl72's GPU kernel fits" in flat
    code, out, err = run(capsys, "audit", "--system", "b200", *far)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "what the chip would need" in flat and "has no kernel measurements" not in flat
