"""Round 28 new-user pass and break-it (newuser28): what a newcomer typed and what it did."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from cli_runner import error_line, run

from jalapeno.cli.app import app

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.parametrize(("claim", "fix"), [
    ("max_interactivity_ratio_ratio=1", "--claim max_interactivity_ratio=1"),
    ("tok_s_per_kw_ratio@50_ratio=1.5", "--claim tok_s_per_kw_ratio@50=1.5"),
])
def test_a_claim_saying_ratio_twice_is_refused(capsys, claim, fix):
    """`--claim max_interactivity_ratio_ratio=1 --baseline gb300-nvl72` ran as max_interactivity_ratio
    (the parser took a _ratio before and another after @X, and a doubled one without @X, as one)."""
    line = error_line(*run(capsys, "audit", "--system", "jalapeno", "--baseline", "gb300-nvl72",
                           "--claim", claim))
    assert line == f"error: --claim: {claim!r} says _ratio twice. Fix: write it once, e.g. {fix}"


def test_a_claim_with_ratio_once_still_parses():
    """Either place of the one _ratio (before or after @X) is the same claim."""
    from jalapeno.analysis.claims import parse_claim

    assert parse_claim("tok_s_per_kw@50_ratio=1.5") == parse_claim("tok_s_per_kw_ratio@50=1.5")
    assert parse_claim("tok_s_per_kw@50_ratio=1.5").ratio


def _options(command: str) -> set[str]:
    from jalapeno.cli.app import _register

    _register()
    cmd = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    return {o for p in cmd.params for o in getattr(p, "opts", [])}


def test_readme_names_the_commands_that_take_a_recipe():
    """The README said '--engine on compare/frontier/report/plan/audit' refuses another --serving:
    report, plan and audit take no --engine ('No such option: --engine'). Each command it names now
    takes the options it is named with, and the ones it says take no recipe take neither."""
    text = " ".join(line.lstrip("# ") for line in README.read_text(encoding="utf-8").splitlines())
    m = re.search(r"with --engine \(([^)]*)\) or --as-deployed \(([^)]*)\), a --serving mode other than the "
                  r"recipe's is refused; ([a-z ]+) take --engine and no --serving; ([a-z, ]+) take no recipe", text)
    assert m, "README's recipe sentence changed: update this test with it"
    engine, deployed, engine_only, none = (re.split(r",\s*|\s+and\s+", g.strip()) for g in m.groups())
    assert (engine, deployed, engine_only, none) == (["compare", "frontier"], ["compare", "report"],
                                                      ["predict", "simulate"], ["plan", "audit", "sensitivity"])
    for c in engine:
        assert {"--engine", "--serving"} <= _options(c), c
    for c in deployed:
        assert {"--as-deployed", "--serving"} <= _options(c), c
    for c in engine_only:
        assert "--engine" in _options(c) and "--serving" not in _options(c), c
    for c in none:
        assert not {"--engine", "--as-deployed"} & _options(c), c


def test_frontier_names_its_power_convention(capsys):
    """`frontier` printed a bare 'tok/s/kW' column; compare's headline says '(all-in)' and which power
    each system divides by. Jalapeño's sustained power is 550 W (data/systems/jalapeno.toml)."""
    code, out, err = run(capsys, "frontier", "--system", "jalapeno", "--model", "gpt-oss-120b", "-w", "1k1k",
                         "--power", "sustained", "--serving", "agg")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "(sustained)" in flat
    assert "power (sustained): chip sustained, 550 W per chip;" in flat
    # the per-kW column is throughput per chip over 0.550 kW, by hand from the printed rows
    head = " ".join(ln for ln in out.splitlines() if ln.startswith("┃"))  # the header, folded over lines
    assert "tok/s/kW" in head and "(sustained)" in head
    row = next(ln for ln in out.splitlines() if re.match(r"│ \d", ln))
    cells = [c.strip().replace(",", "") for c in row.strip("│").split("│")]
    assert float(cells[3]) == pytest.approx(float(cells[1]) / 0.550, rel=2e-3, abs=1)


def test_predict_power_has_the_thousands_separator_plan_uses(capsys):
    """predict printed 'power per chip (all-in provisioned) 2100 W' where plan prints '2,100 W' for the
    same figure (GB200 NVL72 all-in 2.10 kW per GPU, InferenceX's figure in data/systems)."""
    code, out, err = run(capsys, "predict", "--system", "gb200-nvl72", "-w", "1k1k", "-c", "8", "--dp", "8",
                         "--ep", "8")
    assert code == 0, err
    assert "power per chip (all-in provisioned) │ 2,100 W" in " ".join(out.split())


@pytest.mark.parametrize(("body", "field", "got"), [
    ('vendor_verified = "yes"', "vendor_verified", "'yes'"),
    ('chip.tdp_w = { value = 700, source = "my guess", estimate = "yes" }', "chip.tdp_w.estimate", "'yes'"),
    ('levels.rack.shares_ports_with_inner = "no"', "levels.rack.shares_ports_with_inner", "'no'"),
    ("levels.rack.in_network_reduction = 1", "levels.rack.in_network_reduction", "1"),
])
def test_a_system_file_flag_must_be_a_toml_boolean(capsys, tmp_path, body, field, got):
    """pydantic's lax bool read 'yes', 'no', 1 and 0 as true/false: a user variant of Jalapeno with
    vendor_verified = "yes" printed as vendor-verified, and the audit gives a vendor-verified system
    the measured stack's fixed-cost band (docs/audit.md §2)."""
    f = tmp_path / "v.toml"
    f.write_text(f'base = "jalapeno"\nname = "v"\n{body}\n', encoding="utf-8")
    line = error_line(*run(capsys, "hardware", "show", str(f)))
    assert line == (f"error: v.toml: {field}: must be true or false, got {got}. "
                    f"Fix: write {field} = true or {field} = false")


@pytest.mark.parametrize("value", ["yes", "0"])
def test_a_set_flag_must_be_a_boolean(capsys, value):
    """`--set vendor_verified=yes` ran the variant as vendor-verified."""
    line = error_line(*run(capsys, "frontier", "--system", "jalapeno", "--set", f"vendor_verified={value}"))
    shown = f"'{value}'" if value == "yes" else value
    assert line == (f"error: --set: vendor_verified: must be true or false, got {shown}. "
                    "Fix: write vendor_verified = true or vendor_verified = false")


def test_a_design_space_flag_must_be_a_boolean(capsys, tmp_path):
    """A design space's `log = "yes"` searched the range on a log scale without a word."""
    pytest.importorskip("optuna")
    src = (README.parent / "examples" / "explore_700w.toml").read_text(encoding="utf-8")
    f = tmp_path / "space.toml"
    f.write_text(src.replace("log = true", 'log = "yes"', 1), encoding="utf-8")
    line = error_line(*run(capsys, "explore", str(f), "--trials", "1", "--store", str(tmp_path / "st")))
    assert "params.efficiency.kernel_launch_s.log: must be true or false, got 'yes'" in line


@pytest.mark.parametrize(("cells", "reason"), [
    (("1024", "1024", "4.5"), "conc '4.5' is not a whole number of requests in flight (a closed loop holds whole "
                              "requests)"),
    (("1024.5", "1024", "4"), "isl/osl '1024.5'/'1024' missing or invalid (whole tokens, isl >= 1, osl >= 2)"),
    (("1024", "1", "4"), "isl/osl '1024'/'1' missing or invalid (whole tokens, isl >= 1, osl >= 2)"),
])
def test_validate_points_refuse_fractional_requests_and_tokens(capsys, tmp_path, cells, reason):
    """`validate --points` priced conc 4.5 (predict -c 4.5 is refused: a closed loop holds whole requests)
    and read isl 1024.5 as 1024, silently; each row is now skipped with its reason."""
    src = (README.parent / "src/jalapeno/data/validation/inferencex_points.csv").read_text(encoding="utf-8")
    header, row = src.splitlines()[:2]
    assert ",1024,1024,4," in row  # the shipped first row: GB200 NVL72 DeepSeek-R1 FP4 1k1k conc 4
    p = tmp_path / "pts.csv"
    p.write_text(f"{header}\n{row.replace(',1024,1024,4,', ',' + ','.join(cells) + ',')}\n", encoding="utf-8")
    line = error_line(*run(capsys, "validate", "--points", str(p), "--no-aiconfigurator"))
    assert f"1 row(s) skipped (first: pts:2: {reason})" in line


def test_an_ascii_terminal_gets_one_line_not_a_traceback(tmp_path):
    """`PYTHONIOENCODING=ascii jalapeno hardware show jalapeno` (or a legacy code page) raised
    UnicodeEncodeError on 'ñ' as a traceback. Now one line (stderr escapes what it cannot show), exit
    2; --json (ASCII-escaped JSON) still works there."""
    import os
    import subprocess
    import sys

    src = str(README.parent / "src")
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    argv = [sys.executable, "-m", "jalapeno", "hardware", "show", "jalapeno"]
    r = subprocess.run(argv, capture_output=True, env=env, cwd=tmp_path, timeout=120)
    err = r.stderr.decode("ascii")
    assert r.returncode == 2 and "Traceback" not in err, err
    assert err.strip().splitlines() == [
        "error: stdout: its encoding (ascii) cannot show '\\xf1' (tables print Unicode: names such as "
        "Jalape\\xf1o, '\\xb7', box lines). Fix: set PYTHONIOENCODING=utf-8 or a UTF-8 locale (LANG=C.UTF-8), "
        "or pass --json where the command has it (its JSON is ASCII)"]
    j = subprocess.run([*argv, "--json"], capture_output=True, env=env, cwd=tmp_path, timeout=120)
    assert j.returncode == 0 and b'"Jalape\\u00f1o' in j.stdout
