"""Line budget (STYLE.md §1: no module past ~500 lines, hard cap 550) and the import order of the stages."""

from pathlib import Path

import jalapeno

CAP = 550


def test_no_module_over_budget():
    root = Path(jalapeno.__file__).parent
    sizes = {str(p.relative_to(root)): sum(1 for _ in p.open()) for p in root.rglob("*.py")}
    over = {k: v for k, v in sizes.items() if v > CAP}
    assert not over, f"modules over {CAP} lines: {over}; split them by concept"


#: The stages of the data flow, in order (docs/architecture.md §3); a module may import only its
#: own stage and the ones before it.
STAGES = ("errors", "units", "specs", "deploy", "cost", "serve", "analysis", "fit", "report", "cli")


def _stage(mod: str) -> int:
    part = mod.split(".")[1] if mod.count(".") else ""
    return STAGES.index(part) if part in STAGES else -1


def test_no_stage_imports_a_later_one():
    """Every ``import jalapeno.X`` / ``from jalapeno.X import`` (function-local ones included)."""
    import re

    root = Path(jalapeno.__file__).parent
    bad = []
    for p in root.rglob("*.py"):
        rel = p.relative_to(root)
        if len(rel.parts) < 2:  # jalapeno/__init__.py resolves names lazily; errors/units import nothing
            continue
        own = STAGES.index(rel.parts[0])
        for m in re.finditer(r"^\s*(?:from|import) (jalapeno(?:\.[a-z_]+)+)", p.read_text(), re.M):
            if _stage(m.group(1)) > own:
                bad.append(f"{rel} imports {m.group(1)}")
    assert not bad, "imports against the data flow: " + "; ".join(bad)


def test_the_stage_check_can_fail():
    assert _stage("jalapeno.cli.app") > _stage("jalapeno.cost.step") > _stage("jalapeno.specs.model")
