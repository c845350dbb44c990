"""Round 54's UX leftovers (ux54): the capacity planner's consistency between compare and plan, a --set figure's
basis line that points at a command showing that figure, a disaggregated point's cap named with its pool."""

from __future__ import annotations

import json
import shlex

from cli_runner import run

#: one small case: llama-3.3-70b on h200 at 1k1k (as tests/cli/test_ux53.py)
CASE = ("-m", "llama-3.3-70b", "-w", "1k1k", "-s", "h200")


# ---- 2. a --set power figure: the basis line names the set value and the command that shows it ----------------------


def test_set_tdp_basis_line_points_at_a_hardware_show_that_shows_the_set_value(capsys):
    """main: after --set chip.tdp_w=500 the power basis line ended '`jalapeno hardware show h200`', which shows the
    catalog's 700 W (h200.toml, MLPerf v5.1 hw_notes 'H200 TGP 700W'), not the 500 W priced. The line now names the
    set value and ends with the command that reproduces it, --set included; that command, run, shows 500 W."""
    code, out, err = run(capsys, "predict", "-c", "16", *CASE, "--set", "chip.tdp_w=500", "--json")
    assert code == 0, err
    basis = json.loads(out)["power_basis"]
    assert "chip TDP 500 W (chip.tdp_w): given: override chip.tdp_w = 500" in basis
    cmd = "jalapeno hardware show h200 --set chip.tdp_w=500"
    assert basis.endswith(f"; its sources in full: `{cmd}`")
    code, out, err = run(capsys, *shlex.split(cmd)[1:], "--json")
    assert code == 0, err
    shown = json.dumps(json.loads(out))
    assert '"tdp_w": 500' in shown and '"tdp_w": 700' not in shown
    # a boolean reads as typed, as the variant's name does (test_cli_newuser30), so the command runs as printed
    from jalapeno.specs.catalog import hardware_show_command, load_system

    got = hardware_show_command(load_system("jalapeno", (("vendor_verified", False),)))
    assert got == "jalapeno hardware show jalapeno --set vendor_verified=false"
    # without a --set the pointer is unchanged (every golden basis line)
    code, out, err = run(capsys, "predict", "-c", "16", *CASE, "--json")
    assert json.loads(out)["power_basis"].endswith("; its sources in full: `jalapeno hardware show h200`")


def test_set_price_basis_line_points_at_the_same_command(capsys):
    """The price basis line after --set cost.usd_per_chip_hour=3 (mend53 said 'hardware show h200 shows the catalog's
    figure this replaces') now names the command that shows the 3 $/h, as the power line does."""
    code, out, err = run(capsys, "predict", "-c", "16", *CASE, "--set", "cost.usd_per_chip_hour=3", "--json")
    assert code == 0, err
    d = json.loads(out)
    cmd = "`jalapeno hardware show h200 --set cost.usd_per_chip_hour=3`"
    assert d["price_basis"].startswith("given: override cost.usd_per_chip_hour = 3;")
    assert d["price_basis"].endswith(f"its source in full: {cmd}, cost.usd_per_chip_hour")
    assert d["power_basis"].endswith(f"its sources in full: {cmd}")


# ---- 4. a disaggregated point's cap names the pool whose cap binds ----------------------------------------------------


def test_cap_words_name_the_pool_of_a_disaggregated_point():
    """An aggregated cell keeps cap53's words; a disaggregated cell ('decode X; prefill Y (S of chips)') said
    '; capped by kv_capacity' after the prefill pool's bound, as if that pool were capped. The cap now names its
    pool: the decode batch caps (kv_capacity, max_running, ...) the decode pool, prefill_capacity the prefill pool
    (serve/point.py, the pool at its 0.95 utilisation ceiling)."""
    from types import SimpleNamespace

    from jalapeno.analysis.bound_words import point_bound_capped, with_cap

    assert with_cap("compute", "kv_capacity") == "compute; capped by kv_capacity"
    cell = "decode hbm_bandwidth; prefill compute (33% of chips)"
    assert with_cap(cell, "kv_capacity") == f"{cell}; decode pool capped by kv_capacity"
    assert (
        with_cap(cell, "prefill_capacity (queueing)") == f"{cell}; prefill pool capped by prefill_capacity (queueing)"
    )
    p = SimpleNamespace(bound="compute", prefill_bound="compute", prefill_chip_share=0.5, limit="max_running")
    assert point_bound_capped(p) == "decode compute; prefill compute (50% of chips); decode pool capped by max_running"


def test_report_page_names_the_decode_pool_cap(capsys, tmp_path):
    """DeepSeek-R1 8k/1k: jalapeno's peak is disaggregated and capped by its decode pool's KV capacity (cap53's
    hand check), gb200-nvl72's aggregated one by its KV capacity: the page prints each in its own words."""
    path = tmp_path / "r.html"
    code, out, err = run(
        capsys, "report", "-m", "deepseek-r1", "-w", "8k1k", "-s", "jalapeno,gb200-nvl72", "--html", str(path)
    )
    assert code == 0, err
    page = path.read_text()
    assert "of chips); decode pool capped by kv_capacity" in page
    assert "prefill pool capped" not in page
    assert "decode pool or prefill pool" in page  # the caption says what the pool word means


# ---- 1. a fleet smaller than a rack: compare's per-rack figures and plan's agree, each saying its basis -------------


def test_sub_rack_fleet_plan_and_compare_count_a_rack_alike(capsys):
    """200 DeepSeek-R1 users at >= 100 tok/s/user on Jalapeño fit in one rack. plan counted its power and cost lines
    on the chips in use and its provisioned line on the whole rack, compare's per-rack line on a whole rack, and
    neither said which. Both now count a rack through analysis/power_cost.whole_boxes, and each says its basis.

    By hand (hardware_specs.md §0: 16 trays = 128 chips a rack; jalapeno.toml: 917 W IT x PUE 1.25 = 1.15 kW all-in
    per chip): one whole rack 128 x 1,150 W = 147.2 kW, compare's '147 kW'; the chips in use x 1.15 kW is plan's
    all-in power line."""
    code, out, err = run(capsys, "plan", "-s", "jalapeno", "--users", "200", "--min-interactivity", "100", "--json")
    assert code == 0, err
    d = json.loads(out)
    chips = d["chips"]
    assert chips < 128 and d["packaging"]["rack"] == 1  # a sub-rack fleet
    assert abs(d["power_kw"]["all-in"] - chips * 1.15) < 1e-6  # chips in use
    prov = d["provisioned"]
    assert prov["chips"] == 128 and prov["idle_chips"] == 128 - chips
    assert abs(prov["all_in_power_kw"] - 147.2) < 1e-6  # the whole rack bought, by hand
    assert d["count_basis"] == (
        f"basis: the power, cost and per-kW lines count the {chips} chips in use; whole racks bought: the "
        "provisioned line's 1 rack x 128 = 128 chips (compare's per-rack basis)"
    )
    code, out, err = run(capsys, "compare", "-s", "jalapeno,gb200-nvl72", "--json")
    assert code == 0, err
    rack = json.loads(out)["per_rack"]
    assert rack["systems"]["jalapeno"].startswith("jalapeno 128 chips x 1,150 W = 147 kW,")  # 147.2 kW, as plan's
    assert rack["caption"].startswith("per rack (a whole rack bought: every chip of it, idle or not,")
    assert "prints both bases: the chips in use and the whole racks bought" in rack["caption"]
    code, out, err = run(capsys, "plan", "-s", "jalapeno", "--users", "200", "--min-interactivity", "100")
    assert code == 0, err
    assert sum(ln.strip().startswith("basis: ") for ln in out.splitlines()) == 1


# ---- 5. the capacity planner's pass (plan vs compare, three claim models on GB200/GB300/Jalapeño at 8k/1k) ---------


def test_rack_tier_names_an_instance_larger_than_the_rack(capsys):
    """compare read '3,289 users at 50 tok/s/user' a Jalapeño rack (DeepSeek-R1 8k/1k) where plan sized 5,000
    users on 290 chips (3 racks, not 2): the tier's tok/s/chip comes from a deployment whose instances span several
    racks, which a smaller fleet cannot run. The rack line now says the instance size where it exceeds the rack;
    it is the chips of the frontier point(s) the tier reads (here checked against the frontier's own points)."""
    code, out, err = run(capsys, "compare", "-s", "jalapeno,gb200-nvl72", "--tiers", "need=50", "--json")
    assert code == 0, err
    d = json.loads(out)
    part = d["per_rack"]["systems"]["jalapeno"]
    tier = part.split(", at need ")[1]  # the need tier's figures (the peak's may carry its own instance size)
    got = int(tier.split("(instances of ")[1].split(" chips")[0].replace(",", ""))
    assert got > 128  # more than a rack of 16 trays x 8 (hardware_specs.md §0)
    pts = sorted(d["systems"]["jalapeno"]["frontier"], key=lambda q: q["interactivity"])
    first = next(q for q in pts if q["interactivity"] >= 50)
    below = [q for q in pts if q["interactivity"] < 50][-1:]
    assert got == max(q["deployment"]["chips"] for q in [first, *below])
    assert (
        "(instances of N chips): the deployment behind that figure runs instances larger than a rack"
        in (d["per_rack"]["caption"])
    )
    peak = max(d["systems"]["jalapeno"]["frontier"], key=lambda q: q["throughput_per_chip"])
    assert (f"at peak (instances of {peak['deployment']['chips']:,} chips)" in part) == (
        peak["deployment"]["chips"] > 128
    )


def test_one_box_is_singular():
    """plan printed 'this plan's point needs 40 chips in 1 racks' (gpt-oss-120b on gb200-nvl72, 5,000 users)."""
    from types import SimpleNamespace

    from jalapeno.analysis.capacity import Footprint

    f = Footprint(SimpleNamespace(), 1.0, 40, (("rack", 72, 1),))
    assert f.text() == "40 chips in 1 rack"
    assert Footprint(SimpleNamespace(), 1.0, 290, (("tray", 8, 37), ("rack", 128, 3))).text() == (
        "290 chips in 37 trays, 3 racks"
    )
