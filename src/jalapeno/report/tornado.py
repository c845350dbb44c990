"""Tornado chart (offline Plotly HTML) of a sensitivity (analysis/sensitivity.py)."""

from __future__ import annotations

import math


def write_tornado(sens: dict, path: str, top: int = 20) -> None:
    """Write the tornado of ``sens`` (``Sensitivity.as_dict()``) to ``path``: one horizontal bar per
    parameter from the metric at its low band end to the metric at its high end, largest swing on
    top, around a line at the value as priced.

    Raises:
        SpecError: ``path`` cannot be written (report/html.write_figure).
    """
    import plotly.graph_objects as go

    rows = [r for r in sens["rows"] if r["swing"] is not None and math.isfinite(r["swing"]) and r["swing"] > 0][:top]
    rows = rows[::-1]
    base = sens["value"]
    fig = go.Figure()
    for end, color in (("low", "#4c78a8"), ("high", "#f58518")):
        vals = [r[f"metric_at_{end}"] for r in rows]
        fig.add_trace(
            go.Bar(
                y=[r["parameter"] for r in rows],
                x=[v - base for v in vals],
                base=base,
                orientation="h",
                name=f"parameter at its {end} band end",
                marker_color=color,
                customdata=[[r[end], r["current"], r["band_source"]] for r in rows],
                hovertemplate="%{y} = %{customdata[0]:.4g} (now %{customdata[1]:.4g})<br>"
                + sens["metric"]
                + " = %{x:.4g}<br>band: %{customdata[2]}<extra></extra>",
            )
        )
    fig.add_vline(x=base, line_dash="dot", annotation_text=f"as priced: {base:.4g}")
    ctx = sens.get("context", {})
    # the precision and power the metric is priced at, as the terminal's title and audit's say them
    where = [
        sens["system"],
        ctx.get("model"),
        ctx.get("workload"),
        ctx.get("precision"),
        ctx.get("power") and f"power {ctx['power']}",
    ]
    fig.update_layout(
        barmode="overlay",
        height=200 + 28 * len(rows),
        title=" · ".join(x for x in where if x) + ": "
        f"{sens['metric']} ({sens['unit']}), one parameter at a time across its band",
        xaxis_title=f"{sens['metric']} ({sens['unit']})",
    )
    from jalapeno.report.html import write_figure

    write_figure(fig, path)
