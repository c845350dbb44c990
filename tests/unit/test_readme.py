"""The README says what the code and the generated docs say (a new user's first page).

A brand-new user reads README.md first and trusts its numbers; each check here fails when the
README drifts from what the package ships or from the generated docs/validation.md:
- the catalog counts ("14 systems ... and 11 models") against the catalog folders;
- the "Docs" index names every docs/*.md, and the benchmark list names every benchmarks/bench_*.py;
- the "How far to trust it" error figures equal docs/validation.md's (which
  `python scripts/gen_validation_doc.py` writes from `jalapeno validate`);
- the Python-API walk-through's StepCost repr comment shows the step time the call prints;
- every ``jalapeno ...`` command of its bash blocks parses as written (each subcommand, option and choice exists:
  docs54; running them all is minutes, so the check is the parse), and its opening links the docs index.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
FIX = "update README.md to match"


def _section(text: str, heading: str) -> str:
    """The body of the ``## heading`` section of ``text`` (up to the next ``## ``)."""
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"README.md has no '## {heading}' section"
    return m.group(1)


def test_catalog_counts_match_the_catalog():
    from jalapeno.specs.catalog import list_models, list_systems

    m = re.search(r"the catalog: (\d+) systems .*? and (\d+) models", README)
    assert m, "README.md lost its catalog line ('the catalog: N systems ... and M models')"
    assert int(m.group(1)) == len(list_systems()), f"{len(list_systems())} systems ship; {FIX}"
    assert int(m.group(2)) == len(list_models()), f"{len(list_models())} models ship; {FIX}"


def test_docs_index_names_every_doc():
    docs = _section(README, "Docs")
    missing = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if f"docs/{p.name}" not in docs]
    assert not missing, f"README.md's Docs section does not name {missing}; add each with a line"


def test_benchmark_list_names_every_benchmark():
    missing = [p.name for p in sorted((ROOT / "benchmarks").glob("bench_*.py")) if f"benchmarks/{p.name}" not in README]
    assert not missing, f"README.md does not list {missing} among the benchmarks"


def _pct(text: str, pattern: str, where: str) -> float:
    m = re.search(pattern, text, re.S)
    assert m, f"{where}: no match for {pattern!r}"
    return float(m.group(1))


def test_trust_figures_match_validation_doc():
    """README's headline errors are docs/validation.md's, to the printed digit."""
    val = (ROOT / "docs" / "validation.md").read_text()
    trust = _section(README, "How far to trust it").replace("\n", " ")
    pairs = {
        "InferenceX throughput per chip": (
            r"InferenceX throughput_per_chip \(n \d+\): median ([\d.]+)%",
            r"throughput per chip ([\d.]+)% median error",
        ),
        "kernel-calibrated NVIDIA": (
            r"Kernel-calibrated NVIDIA systems\*\* land at ([\d.]+)% median",
            r"\(([\d.]+)% on the kernel-calibrated NVIDIA systems",
        ),
        "AMD": (r"\*\*AMD\*\* .*? at ([\d.]+)% /", r"([\d.]+)% on AMD\)"),
        "InferenceX interactivity": (
            r"InferenceX interactivity \(n \d+\): median ([\d.]+)%",
            r"per-user speed ([\d.]+)%",
        ),
        "aiconfigurator TPOT": (
            r"aiconfigurator end-to-end TPOT: median abs\. error ([\d.]+)%",
            r"TPOT on aiconfigurator's rows ([\d.]+)%",
        ),
    }
    for name, (in_doc, in_readme) in pairs.items():
        doc = _pct(val, in_doc, "docs/validation.md")
        readme = _pct(trust, in_readme, "README.md 'How far to trust it'")
        assert readme == doc, f"{name}: README says {readme}%, docs/validation.md {doc}%; {FIX}"


@pytest.mark.filterwarnings("ignore")
def test_api_walkthrough_step_time_is_what_the_call_prints():
    import jalapeno as jp

    m = re.search(r"# StepCost\(deepseek-r1 on jalapeno, .*?: step ([\d.]+) ms", README)
    assert m, "README.md lost the StepCost repr comment of its Python-API walk-through"
    sc = jp.step_cost(
        jp.load_model("deepseek-r1"),
        jp.load_pricer("jalapeno"),
        jp.Layout(dp=8, ep=8),
        jp.get_precision("fp8"),
        jp.Batch.make(decode_seqs=64, decode_ctx=8192),
    )
    assert f"step {m.group(1)} ms" in repr(sc), f"the call prints {sc!r}; {FIX}"


def readme_commands(text: str) -> list[list[str]]:
    """The ``jalapeno ...`` command lines of the README's ```bash blocks, as argument lists: continuation lines
    joined, comments (whole-line and trailing `` # ...``) dropped, each ``a && b`` part on its own."""
    import shlex

    cmds = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0].strip()
            if line.startswith("#"):
                continue
            cmds += [shlex.split(part)[1:] for part in line.split("&&") if part.strip().startswith("jalapeno")]
    return cmds


def parse_error(args: list[str]) -> str:
    """The empty string where ``jalapeno ARGS`` parses (its callback not run), else the usage error jalapeno would print. Typer
    ships its own copy of click (``typer._click`` in recent releases), so groups and errors are told by what they
    do, not by click's classes."""
    from jalapeno.cli import app

    app._register()  # the commands load on the first run (cli/app.py)
    cmd = app._click_app()
    try:
        ctx = cmd.make_context("jalapeno", list(args))
        while hasattr(cmd, "resolve_command"):  # a group: descend into the subcommand the words name
            left = [*getattr(ctx, "_protected_args", getattr(ctx, "protected_args", [])), *ctx.args]
            name, cmd, rest = cmd.resolve_command(ctx, left)
            ctx = cmd.make_context(name, rest, parent=ctx)
    except Exception as e:  # noqa: BLE001 - click's UsageError family, from whichever click typer uses
        if not hasattr(e, "format_message"):
            raise
        return e.format_message()
    return ""


def test_every_readme_command_parses_as_written():
    cmds = readme_commands(README)
    assert len(cmds) >= 30 and ["compare"] in cmds and ["hardware", "list"] in cmds
    bad = {" ".join(c): err for c in cmds if (err := parse_error(c))}
    assert not bad, f"README.md commands that jalapeno refuses: {bad}; {FIX}"


def test_the_parse_check_catches_a_renamed_option_and_command():
    assert parse_error(["step", "--system", "jalapeno", "--batch", "64"]) == ""
    assert "--batchsize" in parse_error(["step", "--system", "jalapeno", "--batchsize", "64"])
    assert parse_error(["hardware", "lst"]) and parse_error(["compar"])
    assert readme_commands("```bash\n# c\njalapeno a --x 1 \\\n    --y 2  # note\npip i && jalapeno b\n```") == [
        ["a", "--x", "1", "--y", "2"],
        ["b"],
    ]


def test_the_opening_links_the_docs_index():
    """A new user finds docs/README.md (which page answers which question) before the first command."""
    opening = README.split("## ", 1)[0]
    assert "[docs/README.md](docs/README.md)" in opening, "link the docs index in README.md's opening paragraph"


def test_the_readme_points_to_the_claim_audit_and_its_file_exists():
    """analyst55: an analyst holding the vendor's claim found compare's tables at the top and no word of the one command
    that answers the claim statement by statement (``audit --claims``, docs/audit.md §7). The README names it near the
    top and in its command list, and the file it names ships."""
    opening = _section(README, "Set-up: two commands")
    cmd = "jalapeno audit --claims examples/claims_jalapeno.toml"
    assert cmd in opening, f"name `{cmd}` in README.md's set-up section; {FIX}"
    assert ["audit", "--claims", "examples/claims_jalapeno.toml"] in readme_commands(README), FIX
    assert (ROOT / "examples" / "claims_jalapeno.toml").is_file()
