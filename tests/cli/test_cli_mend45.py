"""Usability findings of round 45 (break45, newuser45), each fixed with the message it asserts: a ``--set
chip.hbm_stacks`` of the base's own count, a variant ``base`` that names no system, ``validate -s h200,h200``,
``--stack SGLang``, the default-profile note under ``validate --json``, one spelling of the price unit, the
estimate mark on every $ figure of an estimated price, plan's J/token in significant figures, compare's
``unreachable`` tier cells and the ratio column at a frontier's end."""

from __future__ import annotations

from importlib import resources

from cli_runner import check_error, run


def test_hbm_stacks_at_the_base_count_says_it_changes_nothing(capsys):
    """Jalapeño has 6 HBM stacks (data/systems/jalapeno.toml): ``--set chip.hbm_stacks=6`` printed the
    'changes the stack count only' note of a real change."""
    from jalapeno.cli import system_opts

    system_opts._NOTED.discard("stacks-only")
    code, out, err = run(
        capsys, "step", "-s", "jalapeno", "--dp", "8", "--ep", "8", "--batch", "4", "--set", "chip.hbm_stacks=6"
    )
    assert code == 0, err
    text = " ".join(err.split())
    assert "note: --set chip.hbm_stacks=6 is jalapeno's own stack count: it changes nothing" in text
    assert "stack count only" not in text


def test_a_base_naming_a_json_file_says_what_base_takes(capsys, tmp_path):
    """``base = "x.json"`` (an existing file) said 'unknown system ... or a file path' of a file path."""
    (tmp_path / "x.json").write_text("{}")
    f = tmp_path / "v.toml"
    f.write_text('name = "v"\nbase = "x.json"\n')
    check_error(
        *run(capsys, "hardware", "show", str(f)),
        "v.toml: base: unknown system 'x.json', and not a system "
        "TOML path (a path ends in .toml or holds a folder, and is read relative to this file's folder)",
        "base takes a catalog name (",
        'or the path of a system TOML, e.g. base = "./my-system.toml"',
    )


def test_validate_refuses_a_system_given_twice(capsys):
    """``validate -s h200,h200`` was read as h200, where ``compare -s h200,h200`` and ``-c 4,4`` refuse."""
    check_error(
        *run(capsys, "validate", "-s", "h200,h200"), "--systems: 'h200' is given twice", "list each system once"
    )


def test_a_stack_in_another_case_gets_a_hint(capsys):
    """``--stack SGLang`` listed the profiles with no word that 'sglang' was meant."""
    check_error(
        *run(capsys, "step", "-s", "h200", "--tp", "8", "--batch", "4", "--stack", "SGLang"),
        "--stack: unknown software stack 'SGLang' (did you mean 'sglang'?)",
    )


def test_validate_json_notes_the_default_profile_on_stderr(capsys, tmp_path):
    """A framework no profile lists was named in validate's text output alone; ``--json`` said nothing."""
    lines = (resources.files("jalapeno") / "data" / "validation" / "inferencex_points.csv").read_text().splitlines()
    mi = next(x for x in lines if x.startswith("MI355X,gpt-oss-120b,")).replace(",atom,", ",nosuchfw,", 1)
    p = tmp_path / "fw.csv"
    p.write_text(f"{lines[0]}\n{mi}\n")
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--json")
    assert code == 0, err
    assert (
        "note: framework(s) 'nosuchfw': no software-stack profile lists them (data/stacks.toml engines): priced "
        "with the 'default' profile; --stack NAME to choose one"
    ) in " ".join(err.split())
    assert out.lstrip().startswith("{")
