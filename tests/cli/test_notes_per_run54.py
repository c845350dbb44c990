"""The once-per-run stderr notes (cli/system_notes._NOTED) are per invocation (round 54, code54): cli/app's root
callback empties them, so a second in-process run (tests' ``main``, a notebook) says its notes again. Before, the set
lived for the process and six test files reset it by hand; a second run said nothing."""

from importlib import resources

from cli_runner import run

from jalapeno.cli import system_notes


def _notes(tmp_path, capsys) -> list[list[str]]:
    """The efficiency-set notes of two runs of ``collective`` on a byte-identical copy of jalapeno.toml without a base
    (its efficiency set is the documented defaults: cli/system_notes.note_efficiency says so)."""
    path = tmp_path / "mine.toml"
    path.write_text((resources.files("jalapeno") / "data" / "systems" / "jalapeno.toml").read_text())
    said = []
    for _ in range(2):
        code, _out, err = run(capsys, "collective", "--system", str(path), "--group", "8", "--json")
        assert code == 0, err
        said.append([ln for ln in err.splitlines() if ln.startswith("note:") and "base =" in ln])
    return said


def test_a_second_in_process_run_says_its_note_again(tmp_path, capsys):
    first, second = _notes(tmp_path, capsys)
    assert len(first) == 1 and second == first


def test_without_the_reset_the_second_run_is_silent(tmp_path, capsys, monkeypatch):
    """The check above can fail: with forget_notes a no-op (the set kept for the process, as before round 54)."""
    monkeypatch.setattr(system_notes, "forget_notes", lambda: None)
    monkeypatch.setattr(system_notes, "_NOTED", set())
    first, second = _notes(tmp_path, capsys)
    assert len(first) == 1 and second == []
