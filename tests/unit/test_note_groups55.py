"""report's price and power basis notes, one line each with the systems named on each clause (ux55,
report/note_groups.py): every fact of compare's per-system lines is kept, each written once."""

from cli_runner import run

from jalapeno.analysis.price_reason import basis_lines, power_basis_lines
from jalapeno.fit.ix_cells import SHIPPED_POINTS, has_rows
from jalapeno.report.note_groups import grouped_basis_lines
from jalapeno.specs.catalog import load_system

FOUR = ("jalapeno", "gb200-nvl72", "gb300-nvl72", "vera-rubin-nvl72")


def test_four_systems_take_two_lines_and_every_clause_of_the_eight_is_in_them():
    """The four default systems wrote 4 price and 4 power lines (each with its own `hardware show` pointer). Now two;
    GB200 and GB300 share InferenceX's all-in 2,100 W (gb200-nvl72.toml and gb300-nvl72.toml: the same source), and
    GB200, GB300 and Vera Rubin state no sustained figure: each of those clauses is written once, naming the systems;
    Jalapeño's TDP and sustained power share one assumption, written once for both figures."""
    systems = [load_system(n) for n in FOUR]
    price, power = grouped_basis_lines(systems)
    assert price.startswith("price basis ($/chip-hour, cost.usd_per_chip_hour; each source in full: ")
    assert power.count("InferenceX constants.ts GPU_SPECS") == 1
    assert "gb200-nvl72, gb300-nvl72: all-in 2,100 W (power.allin_kw_per_chip): published: InferenceX" in power
    assert power.count("no sustained figure published") == 1
    assert (
        "gb200-nvl72, gb300-nvl72, vera-rubin-nvl72: sustained: the chip TDP (no sustained figure published)" in power
    )
    assert "chip TDP 700 W (chip.tdp_w) and sustained 550 W (chip.sustained_w): assumed: taken as publicly" in power
    assert "hardware show jalapeno`" not in price + power  # the pointer once, in the head, with NAME
    # every fact of the old lines (less the per-system pointer, now the head's) is in the new ones
    for n in FOUR:
        old_price = basis_lines([load_system(n)])[0].removeprefix("price basis: ")
        assert old_price.split("; its source in full")[0] in price, n
        for c in power_basis_lines([load_system(n)])[0].removeprefix("power basis: ").split("; "):
            if not c.startswith("its sources in full"):
                what, _, why = c.partition(": ")
                assert what in power and why in power, c


def test_one_system_keeps_its_lines_and_a_set_variant_its_own_pointer():
    """One system: the lines as compare prints them. A ``--set`` variant's pointer carries its set (ux54), so it is not
    the head's plain `jalapeno hardware show NAME`: kept beside its clauses."""
    j = load_system("jalapeno")
    assert grouped_basis_lines([j]) == basis_lines([j]) + power_basis_lines([j])
    v = load_system("h200", (("chip.tdp_w", 900),))
    price, power = grouped_basis_lines([v, load_system("h100")])
    assert "`jalapeno hardware show h200 --set chip.tdp_w=900`" in price
    assert "`jalapeno hardware show h200 --set chip.tdp_w=900`" in power
    assert "chip TDP 900 W (chip.tdp_w): given: override chip.tdp_w = 900" in power


def test_report_notes_are_shorter_with_every_system_named(capsys):
    """report -s jalapeno,gb300-nvl72 on Kimi K2.5: 10 notes (3,437 characters) at round 54's end, now 8, the price
    and power basis two lines instead of four."""
    import json

    code, out, err = run(capsys, "report", "-s", "jalapeno,gb300-nvl72", "-m", "kimi-k2.5", "--json")
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert len(notes) == 8
    basis = [n for n in notes if n.startswith(("price basis", "power basis"))]
    assert len(basis) == 2 and all("jalapeno: " in n and "gb300-nvl72: " in n for n in basis)
    assert not any(n.startswith(("price basis of", "power basis of")) for n in notes)


def test_the_shipped_points_precheck_agrees_with_the_full_load():
    """report skips the full InferenceX load (fit/ix_points.load_inferencex, ~1 s with its imports) where no shipped
    row has the model at the workload's lengths; that must be exactly where the full load keeps none. The shipped
    CSV measures DeepSeek-R1-0528 and gpt-oss-120b (fit/ix_cells.IX_MODELS) only."""
    from jalapeno.fit.data_quality import DEFAULT_POINTS
    from jalapeno.fit.ix_points import load_inferencex

    assert SHIPPED_POINTS == DEFAULT_POINTS
    pts, _ = load_inferencex(DEFAULT_POINTS, "--measured")
    seen = {(p.model, p.isl, p.osl) for p in pts}
    for model in ("deepseek-r1", "gpt-oss-120b", "kimi-k2.5", "llama-3.3-70b"):
        for isl, osl in ((1024, 1024), (8192, 1024), (1024, 8192), (32768, 1024)):
            assert has_rows(SHIPPED_POINTS, model, isl, osl) == ((model, isl, osl) in seen), (model, isl, osl)
    assert has_rows(SHIPPED_POINTS, "deepseek-r1", 8192, 1024) and not has_rows(SHIPPED_POINTS, "kimi-k2.5", 8192, 1024)
