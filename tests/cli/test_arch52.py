"""Round 52 architect fixes (arch52): what the chip would need, priced and spelled one way.

Expected values are worked by hand in each test's comments (from the system files and the model's formulas), not
read off the code's printed text.
"""

from __future__ import annotations

import re
from pathlib import Path

from cli_runner import run

ROOT = Path(__file__).resolve().parents[2]


def test_a_ratio_at_x_claim_is_spelled_one_way_in_output_help_and_docs(capsys):
    """audit's title wrote throughput_per_chip_ratio@50 (analysis/claims.Claim.name) where README, docs/audit.md and
    compare's audit hint wrote throughput_per_chip@50_ratio (both parse). One spelling: METRIC_ratio@X, the one the
    output writes; the help names it, and says the other is read the same."""
    code, out, err = run(capsys, "audit", "--help")
    assert code == 0, err
    assert "throughput_per_chip_ratio@50=1.0" in re.sub(r"[\s│]+", "", out)  # rich wraps the help in a box
    at_then_ratio = re.compile(r"@[0-9X{][^\s=`]{0,14}_ratio\b")
    for doc in ("README.md", "docs/audit.md", "src/jalapeno/report/win_tables.py"):
        text = (ROOT / doc).read_text()
        hits = [m.group(0) for m in at_then_ratio.finditer(text)]
        assert hits == [], f"{doc} spells a ratio claim @X_ratio: {hits}"
    assert "throughput_per_chip_ratio@50=1.0" in (ROOT / "README.md").read_text()


def test_what_the_chip_would_need_searches_hbm_capacity_with_usable_hbm(capsys):
    """The headline table had no HBM capacity row and the usable-HBM search stopped at the nominal capacity. The
    nominal capacity is now a headline row, searched 0.5-4x (Jalapeño's 216 GiB: 108-864 GiB), and moving it moves the
    usable capacity the file states at the file's usable/nominal ratio: GB300 279 of 288 GB, so 576 GB nominal gives
    576 x 279 / 288 = 558 GB usable and 144 GB gives 139.5 GB (before: usable stayed 279 GB, and 144 GB was refused as
    below it). Its HBM capex follows: +288 GB x 15 $/GB x (2.21 / 46,500) $/h per $ = +0.2053 $/chip-hour."""
    from jalapeno.analysis.uncertain import apply, headline_parameters
    from jalapeno.cost.pricer import load_pricer

    jal = load_pricer("jalapeno")
    cap = next(p for p in headline_parameters(jal) if p.key == "chip.hbm_capacity_gib")
    assert (cap.current, cap.lo, cap.hi) == (216, 108, 864)
    gib = 2.0**30
    j2, _ = apply(jal, {"chip.hbm_capacity_gib": 432.0})
    assert (j2.system.chip.hbm_capacity_bytes, j2.system.chip.hbm_usable_bytes) == (432 * gib, 432 * gib)
    gb3 = load_pricer("gb300-nvl72")
    big, _ = apply(gb3, {"chip.hbm_capacity_gb": 576.0})
    assert abs(big.system.chip.hbm_usable_bytes - 558e9) < 1e3
    assert abs(big.system.usd_per_chip_hour - gb3.system.usd_per_chip_hour - 288 * 15 * 2.21 / 46_500) < 1e-6
    small, _ = apply(gb3, {"chip.hbm_capacity_gb": 144.0})
    assert abs(small.system.chip.hbm_usable_bytes - 139.5e9) < 1e3
    far = ("--model", "gpt-oss-120b", "--workload", "8k1k", "--serving", "agg", "--claim", "max_interactivity=100000")
    code, out, err = run(capsys, "audit", "--system", "jalapeno", *far)
    assert code == 0, err
    flat = " ".join(out.split())
    assert (
        "chip.hbm_capacity_gib: nominal HBM capacity in GiB, searched 108-864 GiB (0.5-4x); chip.hbm_usable_gib "
        "moves with it at the file's usable/nominal 216/216 GiB (usable never above nominal)"
    ) in flat
