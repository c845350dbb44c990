"""Rich tables of an agentic comparison (analysis/agentic.py ``AgenticComparison.as_dict()``)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

from rich.table import Table

from jalapeno.analysis.bound_words import with_cap
from jalapeno.report.cell_notes import (
    ESTIMATE_MARK,
    below_start_flag,
    cap_caption,
    end_flag,
    estimate_caption,
    unreachable_cell,
)
from jalapeno.report.tables import usd_text


def _f(x, fmt: str = ".3g") -> str:
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "-"
    return format(x, fmt)


def _min(s) -> str:
    """Seconds as minutes to a tenth; a task under 3 s (a one-turn file) as two significant figures, not 0.0."""
    if s is None or math.isnan(s):
        return "-"
    return f"{s / 60:.1f}" if s / 60 >= 0.05 else f"{s / 60:.2g}"


def _pct(x: float) -> str:
    """A share as a percentage to a tenth, and a small non-zero one to two significant figures: a point
    whose returns reload from the host tier printed ``kv_capacity:hbm (0.0% of task)``, a zero that is not.

    >>> _pct(0.535), _pct(0.000356), _pct(0.0)
    ('53.5%', '0.036%', '0.0%')
    """
    return f"{x * 100:.2g}%" if 0 < abs(x) < 0.0005 else f"{x:.1%}"


def _tier(p: dict) -> str:
    """``kv_tier`` with the share of returning sessions it serves (``host 7%``): the label names
    the deepest tier serving >= 5%, so the share says how close a point is to the next label."""
    share = p.get("kv_tier_share")
    return p["kv_tier"] if share is None else f"{p['kv_tier']} {_pct(share)}"


def _kv(p: dict) -> str:
    """``kv_bound`` with the share of task time it costs, and the tier with its share of returns."""
    tier = f"KV in {_tier(p)} of returns"
    if not p["kv_bound"]:
        return f"none ({tier})"
    return f"{p['kv_bound']} ({_pct(p['kv_bound_share'])} of task; {tier})"


def _end(r: dict, d: dict, name: str) -> str:
    """The flag of one iso-task-time ratio cell of ``name`` naming its side, as compare's cells do
    (report/compare_cells._ratio): ``below frontier start: who`` where a side's slowest point finishes a task sooner
    than the ceiling asked (it reads its peak: report/cell_notes.below_start_flag), else the end-of-frontier flag
    (report/cell_notes.end_flag: ``this``, ``baseline`` or ``both``, by each side's status and its throughput
    against its frontier's peak tasks/h/chip), in brackets; "" where the cell is not flagged. A 20-minute ceiling
    past Vera Rubin's 17.1-minute peak printed a bare ``[at frontier end]``: the wrong end, and no side (newuser50)."""
    peak = {n: s["peak"].get("tasks_per_hour_per_chip") for n, s in d["systems"].items()}
    row = {
        "at_frontier_end": r["at_frontier_end"],
        "status_a": r.get("status", ""),
        "status_b": r.get("baseline_status", ""),
        "y_a": r.get("tasks_per_hour_per_chip"),
        "y_b": r.get("baseline_tasks_per_hour_per_chip"),
    }
    flag = below_start_flag(row) or end_flag(row, (peak.get(name), peak.get(d["baseline"])), name == d["baseline"])
    return f" [{flag}]" if flag else ""


def _unreachable(r: dict) -> str:
    """An iso-task-time cell no frontier point meets, naming whose frontier never finishes a task that fast, as
    compare's ``unreachable (who)`` (report/compare_cells._ratio): ``this``, ``baseline`` or ``both``."""
    a, b = r.get("status") == "unreachable", r.get("baseline_status") == "unreachable"
    return f"unreachable ({'both' if a and b else 'this' if a else 'baseline'})"


#: What the agentic ratios table's caption says of its flags (compare's, in task time: a longer ceiling is a
#: slower speed, so a ceiling past a frontier's slowest point is below its start, where that side reads its peak).
RATIO_FLAGS_CAPTION = (
    "[at frontier end: who]: within 10% of a frontier's last point or in its tail below 10% of its peak, where "
    "ratios swing; [below frontier start: who]: a task-time ceiling longer than that frontier's slowest point's "
    "task time, where that side reads its peak tasks/h (a looser ceiling serves at least its peak, as the tiers "
    "table reads it); who: this (the row's system), baseline or both; unreachable (who): that frontier never "
    "finishes a task within the ceiling (as compare's)"
)


def precision_label(precisions: Mapping[str, Sequence[str]]) -> str:
    """The title's precision phrase, as compare's fixed-length title words it (analysis/comparison.compare_systems):
    the presets swept, once where every system swept the same ones, else per system; "" for none. The agentic title
    named the model, the workload and the power, not the precision (newuser49).

    >>> precision_label({"jalapeno": ["int4"], "gb300-nvl72": ["int4"]})
    'int4 (each system)'
    >>> precision_label({"jalapeno": ["fp8", "fp4"], "h200": ["fp8"]})
    'per system: jalapeno fp8,fp4; h200 fp8'
    """
    labels = {n: ",".join(p) for n, p in precisions.items()}
    if not labels:
        return ""
    if len(set(labels.values())) == 1:
        return f"{next(iter(labels.values()))} (each system)"
    return "per system: " + "; ".join(f"{n} {p}" for n, p in labels.items())


def agentic_tables(
    d: dict, estimated: Collection[str] = (), precisions: Mapping[str, Sequence[str]] | None = None
) -> list[Table]:
    """Headline, per-turn breakdown, ratio and tier tables of an agentic comparison dict; the $/task figures of
    the systems named in ``estimated`` (report/cell_notes.estimated_prices) carry cell_notes.ESTIMATE_MARK,
    explained in a caption, as compare's fixed-length tables do; ``precisions``: the presets each system swept, named
    in the title (:func:`precision_label`)."""
    wl, conv = d["workload"], d["convention"]
    caption = "\n" + estimate_caption(estimated) if estimated else ""

    def est(name: str) -> str:
        return ESTIMATE_MARK if name in estimated else ""

    title = (
        f"{d['model']} · agentic:{wl['agentic']} ({wl['turns']} turns, context -> "
        f"{wl['final_context_tokens']:,} tokens, think {wl['think_s']:g} s) · "
        + (f"{prec} · " if (prec := precision_label(precisions or {})) else "")
        + f"power: {conv} · baseline {d['baseline']}"
    )
    head = Table(
        title=title,
        caption=(
            "KV bound at peak: kv_capacity:hbm (HBM holds the prefix of under 95% of returning sessions: the rest "
            "reload from a lower tier), reload_link:LINK (reloads take >= 5% of the task or load the link >= 50%) or prefill_recompute "
            "(evicted prefixes prefilled again), with the share of task time it costs; 'KV in T S of returns': the deepest "
            "tier T serving >= 5% of returning sessions, and its share S (serve/sessions.py, docs/agentic.md)" + caption
        ),
    )
    for col in (
        "system",
        "peak tasks/h/chip",
        f"tasks/h/kW ({conv})",
        "$/task at peak",
        "task min at peak (p90)",
        "fastest task min (p90)",
        "tasks/h/chip at fastest",
        "bound at peak",
        "KV bound at peak",
        "deployment at peak",
    ):
        head.add_column(col, overflow="fold", no_wrap=col == "system")
    for name, s in d["systems"].items():
        pk, fa = s["peak"], s["fastest"]
        head.add_row(
            name,
            _f(pk["tasks_per_hour_per_chip"], ",.1f"),
            _f(pk["tasks_per_hour_per_kw"], ",.1f"),
            usd_text(pk["usd_per_task"]) + est(name),
            f"{_min(pk['task_time_s'])} ({_min(pk['task_time_p90_s'])})",
            f"{_min(fa['task_time_s'])} ({_min(fa['task_time_p90_s'])})",
            _f(fa["tasks_per_hour_per_chip"], ",.2f"),
            with_cap(pk["bound"], pk.get("limit", "")),  # the cap on the decode batch where one binds (cap53)
            _kv(pk),
            pk["deployment"],
        )
    for name, why in d.get("infeasible", {}).items():  # compared without them, each with its reason
        head.add_row(name, "infeasible", *["-"] * 7, f"cannot run the model: {why}", style="dim")
    if cap_line := cap_caption({s["peak"].get("limit", "") for s in d["systems"].values()}):
        head.caption += "\n" + cap_line
    turns = Table(
        title="per turn at peak and at the fastest point: TTFT first / mean / last turn, TPOT, prefix-cache hit rate"
    )
    for col in (
        "system",
        "point",
        "TTFT first s",
        "TTFT mean s",
        "TTFT last s",
        "TPOT ms",
        "hit rate",
        "reload s/task",
        "KV tiers (catalog)",
    ):
        turns.add_column(col, overflow="fold")
    for name, s in d["systems"].items():
        tiers = "; ".join(f"{k}: {v}" for k, v in s["kv_tiers"].items())
        for label, p in (("peak", s["peak"]), ("fastest", s["fastest"])):
            turns.add_row(
                name if label == "peak" else "",
                label,
                _f(p["ttft_first_turn_s"], ".2f"),
                _f(p["ttft_mean_s"], ".2f"),
                _f(p["ttft_last_turn_s"], ".2f"),
                _f(p["tpot_s"] * 1e3, ".1f"),
                f"{p['hit_rate']:.1%}",
                _f(p["reload_s_per_task"], ".2f"),
                tiers if label == "peak" else "",
            )
    ratios = Table(
        title=f"ratios vs {d['baseline']} (tasks/h per chip; per kW and per $ in brackets)",
        caption="each ratio is the system's over the baseline's: above 1x serves more, except fastest "
        "task time, a time: below 1x finishes a task sooner (0.94x: 6% less time); "
        + RATIO_FLAGS_CAPTION
        + (
            f"\nper $ of {', '.join(sorted(estimated))}: at an estimated $/chip-hour (est. in the tables)"
            if estimated
            else ""
        ),
    )
    ratios.add_column("system", no_wrap=True)
    ratios.add_column("peak (kW, $)")
    ratios.add_column("fastest task time (lower: sooner)")
    first = next(iter(d["ratios"].values()))
    for r in first["iso_task_time"]:
        ratios.add_column(f"@ {r['task_time_min']:g} min/task (kW, $)", overflow="fold")
    for name, c in d["ratios"].items():
        peak = (
            f"{c['peak_tasks_per_hour_per_chip']:.2f}x ({c['peak_tasks_per_hour_per_kw']:.2f}x, "
            f"{c['peak_tasks_per_usd']:.2f}x)"
        )
        cells = [peak, f"{c['fastest_task_time']:.2f}x"]
        for r in c["iso_task_time"]:
            v = r["ratio"]
            end = _end(r, d, name)
            # per kW and per $ at the same task time in brackets, as compare's fixed-length cells and this peak's
            rest = f" ({r['ratio_per_kw']:.2f}x, {r['ratio_per_usd']:.2f}x)" if "ratio_per_kw" in r else ""
            cells.append(_unreachable(r) if math.isnan(v) else f"{v:.2f}x{rest}{end}")
        ratios.add_row(name, *cells)
    tiers = Table(
        title="operating tiers: best tasks/h per chip within a task-time ceiling, with its tasks/h/kW and $/task",
        caption=f"each cell: tasks per hour per chip @ task time (min) (the same point's tasks/h per kW, "
        f"{conv} power, and $ per task at the system's $/chip-hour): the deployment that runs it; "
        "interpolated: the ceiling falls between two frontier points, run by the deployments named" + caption,
    )
    tiers.add_column("system", no_wrap=True)
    names = list(next(iter(d["systems"].values()))["tiers"])
    for t in names:
        c = next(iter(d["systems"].values()))["tiers"][t]["ceiling_min"]
        tiers.add_column(t + (f" (<= {c:g} min)" if c else " (peak)"), overflow="fold")
    for name, s in d["systems"].items():
        cells = []
        for t in names:
            v = s["tiers"][t]
            if v["status"] == "unreachable":  # as compare's tiers cell: with the fastest it does reach
                cells.append(unreachable_cell(f"{_min(s['fastest']['task_time_s'])} min/task"))
                continue
            a, b = v.get("between") or [None, None]
            dep = v.get("deployment") or (
                f"interpolated between two points of {a}"
                if a == b and a
                else f"interpolated between {a} and {b}"
                if a
                else "interpolated"
            )
            cost = (
                f" ({_f(v['tasks_per_hour_per_kw'], ',.1f')} tasks/h/kW, ${usd_text(v['usd_per_task'])}/task{est(name)})"
                if "tasks_per_hour_per_kw" in v
                else ""
            )
            cells.append(f"{_f(v['tasks_per_hour_per_chip'], ',.1f')} @ {_min(v['task_time_s'])} min{cost}: {dep}")
        tiers.add_row(name, *cells)
    return [head, turns, ratios, tiers]


def agentic_frontier_table(points: list[dict], title: str) -> Table:
    """Every frontier point of one system on an agentic workload."""
    t = Table(title=title)
    for col in (
        "tasks/h/chip",
        "task min",
        "p90 min",
        "sessions",
        "TTFT mean s",
        "TPOT ms",
        "hit rate",
        "KV tier (share of returns)",
        "bound",
        "KV bound (share of task)",
        "deployment",
    ):
        t.add_column(col, overflow="fold")
    for p in points:
        t.add_row(
            _f(p["tasks_per_hour_per_chip"], ",.2f"),
            _min(p["task_time_s"]),
            _min(p["task_time_p90_s"]),
            _f(p["sessions"], ".0f"),
            _f(p["ttft_mean_s"], ".2f"),
            _f(p["tpot_s"] * 1e3, ".1f"),
            f"{p['hit_rate']:.1%}",
            _tier(p),
            p["bound"],
            f"{p['kv_bound']} {_pct(p['kv_bound_share'])}" if p["kv_bound"] else "-",
            p["deployment"],
        )
    return t


def agentic_rack_lines(systems, d: dict) -> list[str]:
    """The lines compare prints under an agentic comparison's tables that the fixed-length one already printed
    (ux52): each system's efficiency set (a derived one says whose kernels it borrows), the systems whose specs no
    vendor verified (report/win_tables.spec_line) and, for the systems with a
    rack level, a rack's all-in (facility) power and what its chips serve at the peak and at each task-time tier:
    tasks/h (the tier's tasks/h per chip x chips per rack) and the agents it runs at once, tasks/h x the task time
    (Little's law: sessions in the system = task rate x time a task takes). A capacity planner's racks for N agents
    at a tier: N / agents, rounded up. ``systems``: the compared :class:`~jalapeno.specs.hardware.System` objects;
    ``d``: ``AgenticComparison.as_dict()``.

    >>> from types import SimpleNamespace as N
    >>> s = N(name="x", levels=[N(name="rack", chips=10)], allin_power_w_per_chip=1000.0, vendor_verified=True)
    >>> t = {"tasks_per_hour_per_chip": 6.0, "task_time_s": 600.0, "ceiling_min": 10.0, "status": "interpolated"}
    >>> d = {"systems": {"x": {"efficiency_source": "spec (documented defaults)", "peak": {
    ...     "tasks_per_hour_per_chip": 12.0, "task_time_s": 1800.0}, "tiers": {"batch": {}, "fast": t}}}}
    >>> print(agentic_rack_lines([s], d)[1])  # doctest: +ELLIPSIS
    per rack (...): x 10 chips x 1,000 W = 10 kW, 120 tasks/h at peak, 60 agents at once (30.0 min a task), at fast (<= 10 min) 60 tasks/h, 10 agents at once
    """
    from jalapeno.report.tables import efficiency_sets_line
    from jalapeno.report.win_tables import rack_power, spec_line

    out = [efficiency_sets_line({n: s["efficiency_source"] for n, s in d["systems"].items()})]
    if (spec := spec_line(systems)) is not None:
        out.append(spec)
    parts = []
    for s in systems:
        rack = rack_power(s)
        r = d["systems"].get(s.name)
        if rack is None or r is None:
            continue
        (n, head), pk = rack, r["peak"]
        rate = pk["tasks_per_hour_per_chip"] * n
        text = (
            f"{head}, {rate:,.0f} tasks/h at peak, "
            f"{rate * pk['task_time_s'] / 3600:,.0f} agents at once ({_min(pk['task_time_s'])} min a task)"
        )
        for t, v in r["tiers"].items():
            if t == "batch":
                continue
            text += f", at {t} (<= {v['ceiling_min']:g} min)"
            if v["status"] == "unreachable":
                text += " unreachable"
            else:
                rate = v["tasks_per_hour_per_chip"] * n
                text += f" {rate:,.0f} tasks/h, {rate * v['task_time_s'] / 3600:,.0f} agents at once"
        parts.append(text)
    if parts:
        out.append(
            "per rack (a whole rack bought: every chip of it, idle or not, at the all-in provisioned power, the "
            "facility's; a rack's chips at the peak's tasks/h per chip and "
            "at each tier's; agents at once: tasks/h x the task time, Little's law: racks for N agents at a tier "
            "= N / agents, rounded up): " + "; ".join(parts)
        )
    return out
