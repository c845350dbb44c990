"""One colour per system, the same on every chart (compare, report, parity).

Catalog systems have fixed colours (a colour-blind-safe qualitative palette: Okabe & Ito, "Color
Universal Design", 2008, plus Plotly's D3 set for the rest); any other name (a user TOML, a
variant) gets one from the D3 palette by a stable hash of the name, so it too keeps its colour
from page to page. Traces are coloured by name, never by position.
"""

from __future__ import annotations

import zlib

#: catalog systems → colour (Okabe-Ito first, for the systems compared by default)
CATALOG = {
    "jalapeno": "#D55E00",  # vermillion
    "gb200-nvl72": "#0072B2",  # blue
    "gb300-nvl72": "#009E73",  # bluish green
    "vera-rubin-nvl72": "#CC79A7",  # reddish purple
    "b200": "#56B4E9",  # sky blue
    "b300": "#E69F00",  # orange
    "h100": "#7f7f7f",
    "h200": "#8c564b",
    "mi300x": "#9467bd",
    "mi325x": "#bcbd22",
    "mi355x": "#d62728",
}
#: D3 category10 (Plotly's default qualitative palette), for names outside the catalog
FALLBACK = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


def system_color(name: str) -> str:
    """The colour of system ``name`` (hex ``#rrggbb``): fixed for catalog systems, else hashed."""
    if name in CATALOG:
        return CATALOG[name]
    return FALLBACK[zlib.crc32(name.encode("utf-8")) % len(FALLBACK)]


def rgba(color: str, alpha: float) -> str:
    """``#rrggbb`` → ``rgba(r,g,b,alpha)`` (for shaded bands).

    >>> rgba("#0072B2", 0.2)
    'rgba(0,114,178,0.2)'
    """
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha:g})"
