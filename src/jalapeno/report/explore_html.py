"""HTML of a stored run, rendered from the store's files only (so ``results show --html`` gives the
same bytes as the run's own ``--html``): for an explore run the designs (Pareto set or best
score by trial), parallel coordinates of parameters and scores, and parameter importances; for a
stored compare/frontier run the frontiers. Plotly inlined (opens offline), fixed element ids.
"""

from __future__ import annotations

import html as _html
from pathlib import Path

from jalapeno.errors import SpecError


def _fig_html(fig, div_id: str) -> str:
    return fig.to_html(include_plotlyjs=False, full_html=False, div_id=div_id)


def _page(title: str, parts: list[str]) -> str:
    from plotly.offline import get_plotlyjs

    body = "\n".join(parts)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>'
        + _html.escape(title)
        + '</title>\n<script type="text/javascript">'
        + get_plotlyjs()
        + "</script>\n</head>\n<body>\n<h1>"
        + _html.escape(title)
        + "</h1>\n"
        + body
        + "\n</body></html>\n"
    )


def explore_page(meta: dict, rows: list[dict], importance: dict, basis: str = "") -> str:
    """The explore report (module docstring) from the run's meta, trial rows and importances; ``basis``: what the
    base's $/chip-hour rests on (analysis/price_reason, as ``price_basis`` in explore's JSON), a line when given."""
    import plotly.graph_objects as go

    metrics = meta["metrics"]
    done = [r for r in rows if r["state"] == "COMPLETE"]
    params = [k for k in (rows[0] if rows else {}) if k.startswith("param:")]
    parts = [
        f"<p>{_html.escape(meta['name'])}: base {_html.escape(meta['base'])}, {len(rows)} trials "
        f"({len(done)} feasible, {len(rows) - len(done)} pruned); scores are relative to the base "
        f"(1.0 = base). Versions: {_html.escape(str(meta['versions']))}</p>"
    ]
    if basis:  # the designs' $/chip-hour follow the base's: say what it rests on, as the terminal does
        parts.append(f"<p>price basis: {_html.escape(basis)}</p>")
    if done:
        s0 = f"score:{metrics[0]}"
        if len(metrics) >= 2:
            s1 = f"score:{metrics[1]}"
            pareto = set(meta.get("pareto", []))
            fig = go.Figure()
            for name, sel in (
                ("designs", [r for r in done if r["trial"] not in pareto]),
                ("Pareto set", [r for r in done if r["trial"] in pareto]),
            ):
                fig.add_trace(
                    go.Scatter(
                        x=[r[s0] for r in sel],
                        y=[r[s1] for r in sel],
                        mode="markers",
                        name=name,
                        text=[f"trial {r['trial']}" for r in sel],
                    )
                )
            fig.update_layout(
                title="designs (scores x base)",
                xaxis_title=f"{metrics[0]} (x base)",
                yaxis_title=f"{metrics[1]} (x base)",
            )
        else:
            best, run = [], float("-inf") if meta["directions"][0] == "maximize" else float("inf")
            for r in done:
                run = max(run, r[s0]) if meta["directions"][0] == "maximize" else min(run, r[s0])
                best.append(run)
            fig = go.Figure(
                [
                    go.Scatter(x=[r["trial"] for r in done], y=[r[s0] for r in done], mode="markers", name="designs"),
                    go.Scatter(x=[r["trial"] for r in done], y=best, mode="lines", name="best so far"),
                ]
            )
            fig.update_layout(
                title=f"{metrics[0]} (x base) by trial", xaxis_title="trial", yaxis_title=f"{metrics[0]} (x base)"
            )
        fig.update_layout(autosize=True, height=480)
        parts.append(_fig_html(fig, "designs"))
        dims = [
            dict(label=p[len("param:") :], values=[r[p] for r in done])
            for p in params
            if all(isinstance(r[p], (int, float)) for r in done)
        ]
        dims += [dict(label=f"{m} (x base)", values=[r[f"score:{m}"] for r in done]) for m in metrics]
        pc = go.Figure(go.Parcoords(dimensions=dims, line=dict(color=[r[s0] for r in done], showscale=True)))
        pc.update_layout(title="parallel coordinates (feasible designs)", height=480)
        parts.append(_fig_html(pc, "parcoords"))
    for m, imp in importance.items():
        if imp:
            keys = sorted(imp, key=imp.get)
            bar = go.Figure(go.Bar(x=[imp[k] for k in keys], y=keys, orientation="h"))
            bar.update_layout(title=f"parameter importance for {m} (PED-ANOVA)", height=120 + 30 * len(keys))
            parts.append(_fig_html(bar, f"importance-{m}"))
    return _page(f"jalapeno explore: {meta['name']}", parts)


def frontier_page(meta: dict, rows: list[dict]) -> str:
    """A stored compare/frontier run: throughput per chip vs interactivity, one trace per system."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for sysname in sorted({r["system"] for r in rows}):
        pts = [r for r in rows if r["system"] == sysname]
        fig.add_trace(
            go.Scatter(
                x=[r["interactivity_tok_per_s_per_user"] for r in pts],
                y=[r["throughput_per_chip_tok_per_s"] for r in pts],
                mode="lines+markers",
                name=sysname,
                text=[str(r.get("deployment", "")) for r in pts],
            )
        )
    fig.update_layout(
        title=f"{meta['kind']}: {meta['name']}",
        xaxis_title="interactivity (tok/s/user)",
        yaxis_title="throughput per chip (tok/s)",
        height=520,
    )
    return _page(f"jalapeno {meta['kind']}: {meta['name']}", [_fig_html(fig, "frontier")])


def write_page(text: str, path: str | Path) -> Path:
    """Write a rendered page.

    Raises:
        SpecError: not an .html path, or the file cannot be written.
    """
    p = Path(path)
    if p.suffix.lower() not in (".html", ".htm"):
        raise SpecError("--html", f"{str(p)!r} is not an .html file", "give a path ending in .html")
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as e:
        raise SpecError("--html", f"cannot write {p}: {e.strerror or e}", "give a writable file path") from None
    return p
