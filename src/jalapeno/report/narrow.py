"""A wide rich table for a narrow terminal: the same cells, transposed, so no word is cut.

compare's headline has eleven columns; on an 80- or 100-column terminal rich folded every cell mid-word
("hbm_bandwid" / "th", "(7,04" / "3 -"). :func:`fit_width` keeps the table when every column holds its
longest word within ``width``; otherwise it turns it on its side — one row per column of the table (its
header as the row label), one column per row of the table (its first cell as the header) — split into as
many tables as it takes for each to fit. Every cell keeps its text: no figure is dropped or shortened.
"""

from __future__ import annotations

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

#: width of the console the tables are measured on: wide enough that no measurement is clamped (characters)
_MEASURE_WIDTH = 10_000


def min_width(table: Table) -> int:
    """Characters ``table`` needs for every cell's longest word to sit whole (borders and padding included)."""
    con = Console(width=_MEASURE_WIDTH, markup=False)  # as the CLI's console (cli/common): a name is text
    return Measurement.get(con, con.options, table).minimum


def fits(table: Table, width: int) -> bool:
    """Whether ``table`` prints in ``width`` characters without cutting a word."""
    return min_width(table) <= width


def _cell_text(cell) -> str:
    return cell.plain if hasattr(cell, "plain") else str(cell)


def _allot(table: Table, width: int) -> Table:
    """Fix each column's width so none is cut mid-word: its longest word, plus a share of the spare
    characters in proportion to what it would take on one line (rich's own collapse levels the widest columns
    down past their longest word: "hbm_bandwid" / "th" at 160 characters). ``table`` unchanged where it
    prints whole on one line per cell or cannot hold its longest words."""
    cols = table.columns
    texts = [[_cell_text(c.header), *(_cell_text(x) for x in c.cells)] for c in cols]
    lo = [max(max((len(w) for x in t for w in x.split()), default=0), c.min_width or 0) for t, c in zip(texts, cols)]
    hi = [
        max(lo[i], max(max(len(line) for line in t.splitlines() or [""]) for t in texts[i])) for i in range(len(cols))
    ]
    room = width - (3 * len(cols) + 1)  # a border and a space either side of each column
    if sum(hi) <= room or sum(lo) > room:
        return table
    spare, extra = room - sum(lo), [h - m for h, m in zip(hi, lo)]
    give = [int(spare * e / sum(extra)) for e in extra]
    for c, m, g in zip(cols, lo, give):
        c.width = m + g
    return table


def _side(table: Table, rows: list[int], title: str | None) -> Table:
    cols = table.columns
    cells = [list(c.cells) for c in cols]
    out = Table(title=title)
    out.add_column(str(cols[0].header), overflow="fold")
    for r in rows:
        out.add_column(str(cells[0][r]), overflow="fold")
    for j, c in enumerate(cols[1:], start=1):
        out.add_row(str(c.header), *(cells[j][r] for r in rows))
    return out


def fit_width(table: Table, width: int | None) -> list[Table]:
    """``table`` itself when it fits ``width`` (None: any width) without cutting a word; else its transposition,
    split over as few tables as fit (each holding at least one of its rows), the title on the first and the
    caption on the last.

    >>> t = Table(title="t"); _ = t.add_column("system"); _ = t.add_column("bound at peak")
    >>> t.add_row("gb200-nvl72", "hbm_bandwidth"); [len(x.columns) for x in fit_width(t, 80)]
    [2]
    >>> [[c.header for c in x.columns] for x in fit_width(t, 20)]
    [['system', 'gb200-nvl72']]
    """
    if width is None or table.row_count == 0:
        return [table]
    if fits(table, width):
        return [_allot(table, width)]
    out, start, n = [], 0, table.row_count
    while start < n:
        end = start + 1
        while end < n and fits(_side(table, list(range(start, end + 1)), None), width):
            end += 1
        out.append(_allot(_side(table, list(range(start, end)), table.title if not out else None), width))
        start = end
    out[-1].caption = table.caption
    return out
