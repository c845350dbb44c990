"""Line budget (STYLE.md §1): no module of the package grows past ~500 lines (hard cap 550)."""

from pathlib import Path

import jalapeno

CAP = 550


def test_no_module_over_budget():
    root = Path(jalapeno.__file__).parent
    sizes = {str(p.relative_to(root)): sum(1 for _ in p.open()) for p in root.rglob("*.py")}
    over = {k: v for k, v in sizes.items() if v > CAP}
    assert not over, f"modules over {CAP} lines: {over}; split them by concept"
