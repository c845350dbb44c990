"""Round 52's follow-up (followup52) to ux52: compare's chart closes with the report page's Reproduce section (the
command as typed and the data versions), the multi-workload compare prints each workload's per-rack line, and each
per-chip power figure compare prints points at its source, as the price basis lines do."""

from __future__ import annotations

import html
import json
import re
import shlex
from importlib.metadata import version

from cli_runner import run
from shipped_digest import shipped_digest

SMALL = ("compare", "-m", "llama-3.3-70b", "-w", "1k1k", "-s", "b200,h200")


def test_the_compare_chart_names_the_command_and_data_that_wrote_it(capsys, tmp_path):
    chart = tmp_path / "c.html"
    code, _, err = run(capsys, *SMALL, "--html", str(chart))
    assert code == 0, err
    text = chart.read_text()
    repro = [html.unescape(p) for p in re.findall(r'<p class="reproduce">(.*?)</p>', text)]
    assert "<h2>Reproduce</h2>" in text and len(repro) == 2
    assert repro[0] == "reproduce: jalapeno " + shlex.join([*SMALL, "--html", str(chart)])
    assert repro[1].startswith(
        f"versions: jalapeno {version('jalapeno')}; shipped data: systems {shipped_digest('systems')}, "
        f"calibration {shipped_digest('calibration')} "
    )
    assert text.index("<h2>Reproduce</h2>") < text.index("</body>")  # inside the page, under the chart


def test_the_multi_workload_compare_prints_each_workloads_rack_line(capsys):
    """compare -w 1k1k,8k1k printed no per-rack figures (the single-workload and agentic forms do). Each workload's
    line, by hand from that workload's tier record: a jalapeno rack is 128 chips (the catalog's rack level) x 1,150 W
    all-in = 147 kW; its tok/s at need = the tier's tok/s/chip x 128; the users it decodes at once = that x the
    output share OSL / (ISL + OSL) (1/2 at 1k1k, 1024/9216 at 8k1k) / 40 tok/s/user. b200 (8-GPU nodes) has no rack."""
    args = ("compare", "-m", "llama-3.3-70b", "-w", "1k1k,8k1k", "-s", "jalapeno,b200", "--tiers", "need=40")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    docs = json.loads(out)["workloads"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    lines = out.splitlines()
    assert sum(ln.startswith("per rack (") for ln in lines) == 1  # the words once, then a line a workload
    assert next(ln for ln in lines if ln.startswith("per rack (")).endswith(", by workload:")
    for w, (isl, osl) in {"1k1k": (1024, 1024), "8k1k": (8192, 1024)}.items():
        line = next(ln for ln in lines if ln.startswith(f"  {w} ({isl}/{osl}): "))
        need = docs[w]["comparisons"]["jalapeno"]["tiers"]["need"]
        rack_tps = need["throughput"] * 128
        users = rack_tps * osl / (isl + osl) / 40
        assert "jalapeno 128 chips x 1,150 W = 147 kW, " in line and "b200" not in line
        assert f"at need (>= 40 tok/s/user) {rack_tps / 1e6:,.2f} M tok/s, {users:,.0f} users at 40 tok/s/user" in line
        # compare --json carries the same figures (a field added): each system's text under per_rack
        assert docs[w]["per_rack"]["systems"] == {"jalapeno": line.split(": ", 1)[1]}


def test_each_power_figure_compare_prints_points_at_its_source(capsys):
    """compare printed jalapeno's 1,150 W all-in (the tables' power, the rack line) and its 700 W chip / 550 W
    sustained (the per-kW-by-convention line) with no source, unlike its $/chip-hour. Read off the system files by
    hand: jalapeno.toml's power.allin_kw_per_chip (estimate = true) opens "estimate from components:", its chip.tdp_w
    and chip.sustained_w open "assumption: taken as publicly reported for the chip (...)"; gb300-nvl72.toml's all-in
    2.10 kW is InferenceX constants.ts GPU_SPECS, its TDP "MLPerf v5.1 hw_notes 'GB300 TGP 1400W'", and it states no
    sustained figure (power_cost reads the TDP there)."""
    code, out, err = run(capsys, "compare", "-w", "8k1k", "--html", "")
    assert code == 0, err
    lines = {ln.split(": ", 1)[0]: ln.split(": ", 1)[1] for ln in out.splitlines() if ln.startswith("power basis of ")}
    assert list(lines) == [
        f"power basis of {n}" for n in ("jalapeno", "gb200-nvl72", "gb300-nvl72", "vera-rubin-nvl72")
    ]
    j = lines["power basis of jalapeno"]
    assert j.startswith("all-in 1,150 W (power.allin_kw_per_chip): estimated: estimate from components; ")
    assert "; chip TDP 700 W (chip.tdp_w): assumed: taken as publicly reported for the chip (" in j
    assert "; sustained 550 W (chip.sustained_w): assumed: taken as publicly reported for the chip (" in j
    assert j.endswith("; its sources in full: `jalapeno hardware show jalapeno`")
    assert lines["power basis of gb300-nvl72"] == (
        "all-in 2,100 W (power.allin_kw_per_chip): published: InferenceX constants.ts GPU_SPECS (all-in provisioned kW "
        "per GPU, SemiAnalysis Datacenter Industry Model); chip TDP 1,400 W (chip.tdp_w): published: MLPerf v5.1 "
        "hw_notes 'GB300 TGP 1400W'; sustained: the chip TDP (no sustained figure published); its sources in full: "
        "`jalapeno hardware show gb300-nvl72`"
    )
    # vera-rubin-nvl72.toml marks its ~1,800 W TDP estimate = true (third-party, not official): said as an estimate
    assert "chip TDP 1,800 W (chip.tdp_w): estimated: third-party (" in lines["power basis of vera-rubin-nvl72"]


def test_power_basis_in_json_and_of_a_variant_and_an_override(capsys):
    """compare --json gains each system's power_basis (a field added); a --set variant's watts follow its components
    (specs/power.follow_variant: derived, not published), an override is the user's own figure."""
    from jalapeno.analysis.price_reason import power_basis
    from jalapeno.specs.catalog import load_system

    code, out, err = run(capsys, *SMALL, "--json")
    assert code == 0, err
    d = json.loads(out)["systems"]
    assert d["h200"]["power_basis"].startswith(
        "all-in 1,730 W (power.allin_kw_per_chip): published: InferenceX constants.ts GPU_SPECS"
    )
    assert "price_basis" in d["h200"]  # the old field is still there
    v = power_basis(load_system("gb200-nvl72", (("chip.hbm_stacks", 6),)))
    assert "(power.allin_kw_per_chip): derived: the base's figure + chip power change x PUE" in v
    assert "(chip.tdp_w): derived: follows the variant's components" in v
    o = power_basis(load_system("gb200-nvl72", (("chip.tdp_w", 1000),)))
    assert "chip TDP 1,000 W (chip.tdp_w): given: override chip.tdp_w = 1000" in o
