"""Round 55 new-user fixes (newuser55, a capacity planner): plan's capex, electricity slope, measured chip-count band
and a 'how sure' audit command that runs as printed.

Expected values are worked by hand in each test's comments from the catalog's published figures (InferenceX costh
2.21 $/GPU-hour over ~$46.5k a GPU; GB200 all-in 2.10 kW a GPU) and the shipped measured-band quantiles, not read off
the code's printed text.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path

from cli_runner import run

import jalapeno

#: the shipped measured-band file (scripts/gen_measured_bands.py writes it from a validate run)
BANDS = Path(jalapeno.__file__).parent / "data" / "validation" / "measured_bands.toml"
GB300_PLAN = ("plan", "-s", "gb300-nvl72", "-m", "deepseek-r1", "-w", "8k1k", "--target", "2e6",
              "--min-interactivity", "50", "--max-ttft-ms", "2000")  # fmt: skip


def test_plan_prints_the_fleets_capex(capsys):
    """A planner asked "what does it cost to buy?" and got $/hour only. 10 GB200 NVL72 racks = 720 GPUs; the capex
    per GPU is costh over InferenceX's TCO/capex ratio: 2.21 $/h x 46,500 / 2.21 = $46,500 (the third-party rack price
    the ratio came from), x 720 = $33,480,000 = $33.5M; the ratio's band 1.6-2.8 $/h per $46.5k gives
    720 x 46,500 x 2.21 / 2.8 = $26.4M to 720 x 46,500 x 2.21 / 1.6 = $46.2M."""
    code, out, err = run(capsys, "plan", "-s", "gb200-nvl72", "--racks", "10", "--min-interactivity", "50", "--json")
    assert code == 0, err
    c = json.loads(out)["capex"]
    assert c["chips"] == 720 and c["estimate"] is True
    assert math.isclose(c["usd_per_chip"], 46_500, rel_tol=1e-9)
    assert math.isclose(c["usd"], 33_480_000, rel_tol=1e-9)
    assert math.isclose(c["usd_low"], 720 * 46_500 * 2.21 / 2.8, rel_tol=1e-9)
    assert math.isclose(c["usd_high"], 720 * 46_500 * 2.21 / 1.6, rel_tol=1e-9)
    code, out, err = run(capsys, "plan", "-s", "gb200-nvl72", "--racks", "10", "--min-interactivity", "50")
    flat = " ".join(out.split())
    assert "= $46.5k per chip x 720 chips in the fleet = $33.5M" in flat and "$26.4M to $46.2M" in flat


def test_plan_prints_how_its_cost_moves_with_the_electricity_price(capsys):
    """Nothing said how $/hour moves with the price of power. GB200's all-in 2,100 W: each +$0.01/kWh adds
    2.1 kW x $0.01 = $0.021 per chip-hour, 0.021 / 2.21 = +0.95% on $/hour; at the assumed $0.08/kWh energy is
    2.1 x 0.08 = $0.168 of the $2.21 (7.6%)."""
    code, out, err = run(capsys, "plan", "-s", "gb200-nvl72", "--racks", "10", "--min-interactivity", "50", "--json")
    assert code == 0, err
    e = json.loads(out)["electricity"]
    assert math.isclose(e["usd_per_chip_hour_per_cent_kwh"], 0.021, rel_tol=1e-9)
    assert math.isclose(e["share_per_cent_kwh"], 0.021 / 2.21, rel_tol=1e-9)
    assert math.isclose(e["energy_usd_per_chip_hour"], 0.168, rel_tol=1e-9)
    code, out, err = run(capsys, "plan", "-s", "gb200-nvl72", "--racks", "10", "--min-interactivity", "50")
    flat = " ".join(out.split())
    assert "each +$0.01/kWh adds 2.1 kW all-in x $0.01 = $0.021/chip-hour (+0.95% on $/hour" in flat
    assert "energy is $0.168 of the $2.21/chip-hour (7.6%)" in flat


def test_plan_on_a_measured_system_gives_its_chip_count_band(capsys):
    """'how sure' named an audit command and no figure. On a system validate measured (GB300, DeepSeek-R1), the
    throughput error's p10/p90 q (predicted/measured - 1) says the true instance rate is rate / (1 + q), so
    instances = ceil(target (1 + q) / rate): recomputed here from the plan's own instance rate and the shipped q."""
    code, out, err = run(capsys, *GB300_PLAN, "--json")
    assert code == 0, err
    d = json.loads(out)
    rate = d["tok_per_s_per_chip"] * d["deployment"]["chips"]
    q = tomllib.loads(BANDS.read_text())["systems"]["gb300-nvl72"]["throughput_per_chip"]
    lo = math.ceil(2e6 * (1 + q["q_lo"]) / rate) * d["deployment"]["chips"]
    hi = math.ceil(2e6 * (1 + q["q_hi"]) / rate) * d["deployment"]["chips"]
    assert lo < d["chips"] < hi  # q_lo < 0 < q_hi on GB300 (p10 -12%, p90 +8%)
    b = d["chips_band"]
    assert (b["low"]["chips"], b["high"]["chips"]) == (lo, hi)
    # racks: at least ceil(chips / 72) (a worker group is never split across two racks)
    assert b["low"]["boxes"] >= math.ceil(lo / 72) and b["high"]["boxes"] >= math.ceil(hi / 72)
    code, out, err = run(capsys, *GB300_PLAN)
    flat = " ".join(out.split())
    assert f"serves the target with {lo:,} chips, {b['low']['boxes']} racks to {hi:,} chips" in flat
    # a derived system (no measured points) gets no such line: its band is the audit's efficiency band
    code, out, err = run(capsys, "plan", "-s", "jalapeno", "--racks", "2", "--min-interactivity", "50")
    assert code == 0 and "how sure (measured)" not in out


def test_plan_how_sure_audit_command_runs_as_printed(capsys):
    """The 'how sure' line's audit command ended '--claim throughput_per_chip@X=VALUE'; pasted, audit answered
    "not a number". It now claims the point's own predicted in+out tok/s/chip, so the pasted command prints the
    band and exits 0."""
    code, out, err = run(
        capsys, "plan", "-s", "h200", "-m", "llama-3.3-70b", "--chips", "8", "--min-interactivity", "30"
    )
    assert code == 0, err
    m = re.search(r"how sure: .*?`jalapeno (audit [^`]*)`", " ".join(out.split()))
    assert m, out
    code, out, err = run(capsys, *m.group(1).split())
    assert code == 0, err
    assert "band (low to high)" in out


def test_an_agentic_plan_prints_capex_and_electricity_too(capsys):
    """The agentic plan (tasks/hour) gets the same capex and electricity lines. 3 GB300 racks = 216 GPUs; GB300's
    price is InferenceX's 1.2 x GB200 (2.652 $/h), so capex per GPU = 2.652 x 46,500 / 2.21 = 1.2 x 46,500 = $55,800,
    x 216 = $12,052,800; all-in 2.1 kW: +$0.021 a chip-hour per +$0.01/kWh."""
    args = ("plan", "-s", "gb300-nvl72", "-w", "agentic:coding-agent", "--racks", "3", "--max-task-min", "10")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert math.isclose(d["capex"]["usd"], 12_052_800, rel_tol=1e-9) and d["capex"]["chips"] == 216
    assert math.isclose(d["electricity"]["usd_per_chip_hour_per_cent_kwh"], 0.021, rel_tol=1e-9)
    code, out, err = run(capsys, *args)
    assert "= $55.8k per chip x 216 chips in the fleet = $12.1M" in " ".join(out.split())


MANY = ("plan", "-s", "gb200-nvl72,jalapeno", "-m", "gpt-oss-120b", "-w", "8k1k", "--target", "2e6",
        "--min-interactivity", "50")  # fmt: skip


def test_plan_sizes_one_target_on_several_systems(capsys):
    """`plan -s A,B` was refused ("a comma-separated list where one system is taken"), so a planner ran one plan a
    system and read three long outputs side by side. Each row is that system's single plan: the same chips, and by
    hand bought racks x chips per rack (GB200 NVL72 72, Jalapeño 128) >= the chips in use, all-in kW of the racks
    bought = bought chips x 2.1 (GB200) / 1.15 (Jalapeño) kW, capex of GB200's bought racks = chips x $46,500."""
    code, out, err = run(capsys, *MANY, "--json")
    assert code == 0, err
    rows = {r["system"]: r for r in json.loads(out)["systems"]}
    assert list(rows) == ["gb200-nvl72", "jalapeno"]
    for name, per_rack, kw in (("gb200-nvl72", 72, 2.1), ("jalapeno", 128, 1.15)):
        code, one, err = run(capsys, "plan", "-s", name, *MANY[3:], "--json")
        one = json.loads(one)
        r = rows[name]
        assert (r["chips"], r["instances"], r["packaging"]) == (one["chips"], one["instances"], one["packaging"])
        bought = r["packaging"]["rack"] * per_rack
        assert bought >= r["chips"] > bought - per_rack * 2  # whole racks, less than two racks' slack
        assert r["capex"]["chips"] == bought
    gb = rows["gb200-nvl72"]
    assert math.isclose(gb["capex"]["usd"], gb["capex"]["chips"] * 46_500, rel_tol=1e-9)
    code, out, err = run(capsys, *MANY)
    assert code == 0, err
    flat = " ".join(out.replace("│", " ").split())
    racks = gb["packaging"]["rack"]
    assert f"{racks} racks" in flat and f"{racks * 72 * 2.1:,.0f}" in flat  # GB200's bought racks and their kW
    assert "each row is `jalapeno plan -s NAME`" in flat


def test_plan_on_several_systems_refuses_what_it_cannot_size(capsys):
    """A fleet you have is one system's; an agentic plan takes one system; an empty or repeated entry is a typo."""
    base = ("plan", "-m", "gpt-oss-120b", "--min-interactivity", "50")
    check = [
        (("-s", "gb200-nvl72,jalapeno", "--racks", "4"), "a fleet you have (--chips, --racks, --power-mw)"),
        (("-s", "gb200-nvl72,jalapeno", "-w", "agentic:coding-agent", "--target", "1e4"), "an agentic plan takes one"),
        (("-s", "gb200-nvl72,", "--target", "1e6"), "has an empty entry"),
        (("-s", "jalapeno,jalapeno", "--target", "1e6"), "names a system twice"),
    ]
    for args, msg in check:
        code, out, err = run(capsys, *base, *args)
        assert code != 0 and msg in err and "Traceback" not in err, (args, err)
