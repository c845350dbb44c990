"""report/narrow.fit_width: a wide table kept, or turned on its side and split, no cell lost or cut."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from jalapeno.report.narrow import fit_width, min_width


def _table(n: int) -> Table:
    t = Table(title="T", caption="C")
    for h in ("system", "peak tok/s/chip (in+out)", "bound at peak", "deployment at peak"):
        t.add_column(h, overflow="fold")
    for i in range(n):
        t.add_row(
            f"system-number-{i:02d}",
            f"{1000 + i:,} (900 to 1,100)",
            "scale_out_link",
            "agg attn TP2 DP1 · MoE TP1 EP2 [fp4]",
        )
    return t


def test_a_table_that_fits_is_kept():
    t = _table(2)
    assert fit_width(t, 400) == [t] and fit_width(t, None) == [t]


def test_a_narrow_width_transposes_and_splits_without_cutting_a_word():
    out = fit_width(_table(5), 60)
    assert len(out) > 1  # five 17-character names do not sit side by side in 60 characters
    assert out[0].title == "T" and out[-1].caption == "C" and all(t.title is None for t in out[1:])
    names = [c.header for t in out for c in t.columns[1:]]
    assert names == [f"system-number-{i:02d}" for i in range(5)]  # every row, in order, once
    for t in out:
        assert min_width(t) <= 60
        assert [str(c) for c in t.columns[0].cells] == [
            "peak tok/s/chip (in+out)",
            "bound at peak",
            "deployment at peak",
        ]
        con = Console(width=60, record=True)
        con.print(t)
        text = con.export_text()
        assert max(len(line) for line in text.splitlines()) <= 60
        assert text.count("scale_out_link") == len(t.columns) - 1  # whole, once per system
