"""Round 37 leftovers of newuser37 (newuser37b): options and file keys that were ignored or misread without a word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import error_line, run


def test_requests_past_a_short_trace_is_said(capsys, tmp_path):
    """simulate -n 5 on a 1-request trace replayed 1 and said nothing: a note names --requests and the trace's count."""
    f = tmp_path / "one.csv"
    f.write_text("arrival_s,input_tokens,output_tokens\n0,512,64\n")
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-w", str(f), "-n", "5",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["summary"]["requests"] == 1
    assert ("note: --requests 5 asks for more than the trace holds (1 request); the run replays the trace once: "
            "1 request, not 5") in err
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-w", str(f), "-n", "1",
                         "--json")
    assert code == 0, err
    assert "--requests" not in err  # exactly the trace's count: nothing to say


SYSTEMS = Path(__file__).resolve().parents[2] / "src" / "jalapeno" / "data" / "systems"
IGNORED = ("are not read: torus_dims applies to a torus3d level, links_per_chip to a torus3d or full_mesh one; the "
           "level is priced as its topology says (docs/catalog.md, [[levels]])")


def test_a_torus_key_on_a_switched_level_is_said_once(capsys, tmp_path, monkeypatch):
    """torus_dims / links_per_chip on a level whose topology is switched were dropped without a word (only torus3d
    reads the shape, torus3d and full_mesh the link count: cost/collectives.py). Not refused: the Jalapeño what-if
    --set levels.global.topology=switched runs, with one note."""
    from jalapeno.cli import system_notes

    monkeypatch.setattr(system_notes, "_NOTED", set())
    base = ("predict", "-m", "gpt-oss-120b", "-w", "1k1k", "-c", "64", "--tp", "8", "--json")
    code, out, err = run(capsys, *base, "-s", "jalapeno", "--set", "levels.global.topology=switched")
    assert code == 0, err
    assert err.count("note: jalapeno+levels.global.topology=switched: levels.global.torus_dims (switched), "
                     f"levels.global.links_per_chip (switched) {IGNORED}") == 1, err
    text = (SYSTEMS / "h200.toml").read_text().replace('topology = "switched"',
                                                      'topology = "switched"\ntorus_dims = [2, 2, 2]', 1)
    f = tmp_path / "mine.toml"
    f.write_text(text.replace('name = "h200"', 'name = "mine"', 1))
    code, out, err = run(capsys, *base, "-s", str(f))
    assert code == 0, err
    assert err.count(f"note: mine: levels.node.torus_dims (switched) {IGNORED}") == 1, err
    for system in ("mi300x", "jalapeno"):  # full_mesh reads links_per_chip; torus3d reads both
        code, out, err = run(capsys, *base, "-s", system)
        assert code == 0, err
        assert "not read" not in err


@pytest.mark.parametrize("line, variant, words", [
    ('name = "lab:h200"', False, "name: 'lab:h200' holds a colon: --set NAME:KEY=VALUE splits at the first ':', so the "
     'name cannot be targeted. Fix: write name = "lab-h200" (no colon)'),
    ("", True, "name: 'my:v' holds a colon: --set NAME:KEY=VALUE splits at the first ':', so the name cannot be "
     'targeted. Fix: add name = "my-v" to the file'),
])
def test_a_system_name_with_a_colon_is_refused(capsys, tmp_path, line, variant, words):
    """compare --set NAME:KEY=V parses NAME up to the first ':': a file named "lab:h200" could not be targeted.
    Refused at load, naming the field and a name that works; a variant file without a name takes its file's stem, so
    "my:v.toml" is told to add one."""
    if variant:
        f = tmp_path / "my:v.toml"
        f.write_text('base = "h200"\n')
    else:
        f = tmp_path / "mine.toml"
        f.write_text((SYSTEMS / "h200.toml").read_text().replace('name = "h200"', line, 1))
    code, out, err = run(capsys, "predict", "-s", str(f), "-m", "gpt-oss-120b", "-w", "1k1k", "-c", "8", "--tp", "8")
    assert code != 0 and error_line(code, out, err) == f"error: {f.name}: {words}"


def test_a_system_name_with_a_space_runs(capsys, tmp_path):
    """A space only needs shell quotes (the HTML-escaping browser test names a system with spaces): accepted."""
    f = tmp_path / "mine.toml"
    f.write_text((SYSTEMS / "h200.toml").read_text().replace('name = "h200"', 'name = "my rack"', 1))
    code, out, err = run(capsys, "predict", "-s", str(f), "-m", "gpt-oss-120b", "-w", "1k1k", "-c", "8", "--tp", "8")
    assert code == 0, err


def test_catalog_system_names_are_one_word():
    """The catalog's own names (shipped files skip the user-file check) hold no space or colon."""
    from jalapeno.specs.catalog import list_systems

    assert list_systems() and not [n for n in list_systems() if " " in n or ":" in n]


def test_html_on_an_agentic_comparison_says_what_is_not_supported(capsys):
    """compare -w agentic:… --html x.html read "does not apply to --workload agentic:… (sessions, not fixed lengths)",
    as if the chart were about the comparison's lengths: it says the agentic comparison writes no chart, and what
    keeps or charts the results instead."""
    # plan49: said once on stderr, not refused (the default wrote no chart without a word; agentic_cmd.html_note)
    code, out, err = run(capsys, "compare", "-w", "agentic:chat-agent", "--systems", "h200", "--html", "x.html")
    assert code == 0, err
    assert err.count("note: --html: compare -w agentic:… draws no chart, so x.html is not written") == 1, err
    line = error_line(*run(capsys, "compare", "-w", "agentic:chat-agent", "--systems", "h200", "--html", "",
                           "--isl", "1000"))
    assert "--isl: does not apply to --workload agentic:… (sessions, not fixed lengths)" in line  # the others: as before


@pytest.mark.parametrize("example", ["explore_700w.toml", "explore_700w_gpu_stack.toml"])
def test_the_700w_example_derives_jalapenos_memory_exactly_at_its_six_stacks(example):
    """examples/explore_700w.toml derived HBM bandwidth as 2.5667 TB/s x stacks: 15.4002 TB/s at 6 stacks, not the
    catalogued 15.4. Now 15.4 x stacks / 6: at Jalapeño's 6 stacks its memory is the catalog's (15.4 TB/s, 216 GiB,
    data/systems/jalapeno.toml), and 4 stacks give 15.4 x 4 / 6 = 10.2667 TB/s by hand."""
    import tomllib

    from jalapeno.specs.design_space import load_design_space

    chip = tomllib.loads((SYSTEMS / "jalapeno.toml").read_text())["chip"]
    space = load_design_space(Path(__file__).resolve().parents[2] / "examples" / example)
    values = {"chip.peak_dense_tflops.fp8": 3400, "levels.rack.bandwidth_gb_per_s": 600,
              "efficiency.kernel_launch_s": 4e-6, "efficiency.step_overhead_s": 5e-4}
    six = dict(space.overrides({**values, "chip.hbm_stacks": 6}))
    assert six["chip.hbm_bandwidth_tb_per_s"] == chip["hbm_bandwidth_tb_per_s"]["value"] == 15.4
    assert six["chip.hbm_capacity_gib"] == chip["hbm_capacity_gib"]["value"] == 216
    four = dict(space.overrides({**values, "chip.hbm_stacks": 4}))
    assert four["chip.hbm_bandwidth_tb_per_s"] == pytest.approx(10.266666666666667, rel=1e-12)


def test_hardware_show_prints_a_torus_shape_only_on_a_torus(capsys, monkeypatch):
    """hardware show jalapeno --set levels.global.topology=switched printed 'switched [8, 16, 16]', a shape the
    switch does not use (cost/collectives.py reads torus_dims on torus3d only); the note says it is not read."""
    from jalapeno.cli import system_notes

    monkeypatch.setattr(system_notes, "_NOTED", set())
    code, out, err = run(capsys, "hardware", "show", "jalapeno", "--set", "levels.global.topology=switched")
    assert code == 0, err
    assert "[8, 16, 16]" not in out and "levels.global.torus_dims (switched)" in err
    code, out, err = run(capsys, "hardware", "show", "jalapeno")
    assert code == 0, err
    assert "torus3d [8, 16, 16]" in out
