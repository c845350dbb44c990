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


def _word_widths(table: Table) -> tuple[list[list[str]], list[int]]:
    """Each column's texts (header first) and the characters its longest unbreakable piece needs: a word, or
    the whole line of a ``no_wrap`` column ("14.8 G" cut to "14.…" once allotted 4 characters)."""
    cols = table.columns
    texts = [[_cell_text(c.header), *(_cell_text(x) for x in c.cells)] for c in cols]
    lo = [
        max(max((len(w) for x in t for w in (x.splitlines() if c.no_wrap else x.split())), default=0), c.min_width or 0)
        for t, c in zip(texts, cols)
    ]
    return texts, lo


def label_first(table: Table, width: int | None) -> Table:
    """``table`` with its first column (a row label: audit's ``efficiency.moe.w4a16.peak_fraction``) as wide as
    its longest label, or as the width leaves once every other column has its longest word, the rest shared as
    :func:`_allot` shares it; rich's collapse levelled it with the rest, folding a parameter name over four lines
    while the columns beside it had room. Unchanged where the other columns' words alone overfill ``width``.

    >>> t = Table(); _ = t.add_column("parameter", overflow="fold"); _ = t.add_column("band", overflow="fold")
    >>> t.add_row("efficiency.moe.w4a16.peak_fraction", "0.312 to 0.3699")
    >>> [c.width for c in label_first(t, 80).columns]  # one line each fits: rich's own widths
    [None, None]
    >>> [c.width for c in label_first(t, 30).columns]  # 30 - 7 borders - 6 (the band's "0.3699") = 17
    [17, 6]
    """
    if width is None or not table.columns:
        return table
    texts, lo = _word_widths(table)
    room = width - (3 * len(lo) + 1) - sum(lo[1:])
    header = max((len(w) for w in texts[0][0].split()), default=1)
    if room < header:
        return table
    longest = max(len(line) for x in texts[0] for line in (x.splitlines() or [""]))
    return _allot(table, width, [min(longest, room), *lo[1:]])


def _allot(table: Table, width: int, lo: list[int] | None = None) -> Table:
    """Fix each column's width so none is cut mid-word: the widest columns narrowed first, each to no less than its
    longest word (``lo``, else :func:`_word_widths`; a ``no_wrap`` column its longest line), the rest whole on one
    line (rich's own collapse levels the widest columns down past their longest word: "hbm_bandwid" / "th" at 160
    characters). ``table`` unchanged where it prints whole on one line per cell or cannot hold ``lo``."""
    cols = table.columns
    texts, words = _word_widths(table)
    lo = words if lo is None else lo
    hi = [
        max(lo[i], max(max(len(line) for line in t.splitlines() or [""]) for t in texts[i])) for i in range(len(cols))
    ]
    room = width - (3 * len(cols) + 1)  # a border and a space either side of each column
    if sum(hi) <= room or sum(lo) > room:
        return table
    # water-filling: the widest columns give way first, each down to its longest word at most, so a short cell
    # stays on one line (a proportional share wrapped compare's "unreachable (its fastest: 138.9 tok/s/user)"
    # beside a deployment cell that had a hundred characters)
    level = max(hi)
    while level > 0 and sum(max(m, min(h, level)) for m, h in zip(lo, hi)) > room:
        level -= 1
    for c, m, h in zip(cols, lo, hi):
        c.width = max(m, min(h, level))
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


def fit_columns(table: Table, width: int | None) -> Table:
    """``table`` with each column at least its longest word where that fits ``width`` (None: unchanged), a table
    that is read down its rows kept upright where it does not (a step's op table: rich then folds what it must).
    At 100 characters rich's own collapse folded step's ``attn.norm_rope_kv_w`` / ``rite`` while its bound column
    had room to spare.

    >>> t = Table(); _ = t.add_column("op", overflow="fold"); _ = t.add_column("bound")
    >>> t.add_row("moe.shared_expert.gate_up", "compute (few rows: 3.7% of peak)")
    >>> [c.width for c in fit_columns(t, 40).columns]
    [25, 8]
    """
    if width is None or not fits(table, width):
        return table
    return _allot(table, width)


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
