"""``compare -w 1k1k,8k1k,1k8k``: one comparison per workload and how each system's standing moves with it (ux51).

An analyst asks how a lead holds across workloads (short prompts and answers, long prompts, long answers); compare
answered one workload a run. Here each listed workload runs as its own ``compare --json`` with every other option as
given (the same code path, so each workload's document is byte for byte what a single run prints), and the terminal
gets three tables across them: the ratios against the baseline at peak and at each ``--at`` speed, where each system
wins per chip and per kW (report/win_tables.segments_text of ``where_wins``), and the bound at each system's peak.
Each workload's per-rack line follows them (compare's rack line from each document's ``per_rack``: followup52).
``--json`` prints ``{"workloads": {name: that workload's compare document}}``.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from collections.abc import Callable, Mapping

from rich.table import Table

from jalapeno.errors import SpecError


def _check(args: Mapping) -> list[str]:
    """The workloads listed, after refusing what a multi-workload run cannot do (each with the fix)."""
    from jalapeno.cli.common import list_items

    names = list_items(args["workload"], "--workload", "1k1k,8k1k,1k8k")
    if any(w.startswith("agentic:") for w in names):
        raise SpecError(
            "--workload",
            "mixes an agentic workload into a list (its figures are tasks/h, not tok/s)",
            "compare the agentic workload on its own: -w agentic:PRESET",
        )
    if len(set(names)) != len(names):
        raise SpecError("--workload", f"names a workload twice ({args['workload']})", "list each workload once")
    for opt, key in (("--isl", "isl"), ("--osl", "osl"), ("--store", "store")):
        if args.get(key) is not None:
            raise SpecError(opt, "cannot go with several workloads", f"drop {opt} or compare one workload")
    if args.get("html"):
        raise SpecError(
            "--html",
            "writes one workload's chart; several workloads write none",
            "drop --html, or compare one workload to chart it",
        )
    return names


def across(one: Callable[..., None], args: Mapping) -> None:
    """Run ``one`` (the compare command) with ``args`` once per workload of ``args["workload"]`` as JSON, then print
    the documents (``--json``) or the tables across them.

    Raises:
        SpecError: an agentic workload in the list, a workload twice, or --isl/--osl/--store/--html given.
    """
    from jalapeno.cli.common import console, print_json

    docs = {}
    for w in _check(args):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            one(**{**args, "workload": w, "json_out": True, "html": ""})
        docs[w] = json.loads(buf.getvalue())
    if args.get("json_out"):
        print_json({"workloads": docs})
        return
    for t in workload_tables(docs):
        console.print(t)
    for line in rack_lines(docs):  # each workload's per-rack line (followup52)
        console.print(line, markup=False, soft_wrap=True)


def rack_lines(docs: Mapping[str, Mapping]) -> list[str]:
    """The per-rack line of each workload (compare's, report/win_tables.rack_line) from each document's
    ``per_rack``, its words once: ``per rack (...), by workload:``, then one line a workload, ``1k1k (1024/1024):
    jalapeno 128 chips x 1,150 W = 147 kW, ... at peak, ...; gb300-nvl72 72 chips x ...``; [] when no workload has
    one (no system with a rack level).

    >>> d = {"workload": {"isl": 8, "osl": 1}, "per_rack": {"caption": "per rack (x)", "systems": {"a": "a 2 chips"}}}
    >>> rack_lines({"w1": d, "w2": {**d, "per_rack": None}})
    ['per rack (x), by workload:', '  w1 (8/1): a 2 chips', '  w2 (8/1): no system with a rack level']
    """
    racks = {w: d.get("per_rack") for w, d in docs.items()}
    first = next((r for r in racks.values() if r), None)
    if first is None:
        return []
    return [f"{first['caption']}, by workload:"] + [
        f"  {w} ({docs[w]['workload']['isl']}/{docs[w]['workload']['osl']}): "
        + ("; ".join(r["systems"].values()) if r else "no system with a rack level")
        for w, r in racks.items()
    ]


def _x(r) -> str:
    v = r.get("ratio")
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.2f}x"


def _ratio_cell(c: Mapping) -> str:
    """Peak ratio per chip (per kW, per $), then per chip at each --at speed, ``(end)`` where a frontier's end or
    tail makes it swing (the ratios table's flags)."""
    pk = c["peak_ratio"]
    out = [f"peak {pk['throughput_per_chip']:.2f}x ({pk['tok_s_per_kw']:.2f}x, {pk['tokens_per_usd']:.2f}x)"]
    for r in c["iso_interactivity"]["throughput_per_chip"]:
        out.append(f"@{r['x']:g} {_x(r)}" + (" (end)" if r.get("at_frontier_end") else ""))
    return "; ".join(out)


def workload_tables(docs: Mapping[str, Mapping]) -> list[Table]:
    """The tables across workloads from each workload's compare document: ratios, where it wins, bound at peak."""
    from jalapeno.analysis.ratio_bands import END_RTOL, TAIL_FRACTION
    from jalapeno.analysis.bound_words import bound_cell, with_cap
    from jalapeno.analysis.win_ranges import EVEN_BAND
    from jalapeno.report.win_tables import segments_text

    first = next(iter(docs.values()))
    base, conv = first["baseline"], first["power_convention"]
    systems = list(dict.fromkeys(n for d in docs.values() for n in d["systems"]))

    def table(title: str, caption: str) -> Table:
        t = Table(title=title, caption=caption)
        t.add_column("system", no_wrap=True, min_width=16)
        for w, d in docs.items():
            t.add_column(f"{w} ({d['workload']['isl']}/{d['workload']['osl']})", overflow="fold")
        return t

    ratios = table(
        f"how it moves with the workload: ratios vs {base} (per chip; per kW ({conv}) and per $ at peak)",
        "each cell: the peak ratio per chip (per kW, per $), then per chip at each --at speed (tok/s/user); "
        f"(end): within {END_RTOL:.0%} of a frontier's end or in its tail, where ratios swing; each workload's full "
        "tables: jalapeno compare -w NAME with the same options",
    )
    wins = table(
        f"where it wins vs {base} by workload (tok/s/user ranges; per chip, then per kW)",
        f"as compare's 'where it wins' table: wins above {1 + EVEN_BAND:.2f}x, loses below 1/{1 + EVEN_BAND:.2f}, even "
        f"between; in the tail: a frontier within {END_RTOL:.0%} of its end or below {TAIL_FRACTION:.0%} of its peak",
    )
    bounds = table(
        "bound at peak by workload",
        "the bound of each system's peak point, then what capped its decode batch where a cap binds (capped by "
        "kv_capacity: the HBM holds the KV of no more sequences; docs/metrics.md §4)",
    )
    for n in systems:
        rc, wc, bc = [n], [n], [n]
        for d in docs.values():
            c, s = d["comparisons"].get(n), d["systems"].get(n)
            if c is None or s is None:  # this system cannot run the model there
                rc.append(f"infeasible: {d.get('infeasible', {}).get(n, '')}")
                wc.append("-")
                bc.append("-")
                continue
            rc.append(_ratio_cell(c))
            w = c.get("where_wins")
            wc.append(
                "baseline"
                if w is None
                else f"per chip: {segments_text(w['throughput_per_chip'])}; per kW: {segments_text(w['tok_s_per_kw'])}"
            )
            h = s["headline"]
            bc.append(
                with_cap(
                    bound_cell(
                        h["bound_at_peak"], h.get("prefill_bound_at_peak", ""), h.get("prefill_chip_share_at_peak", 0.0)
                    ),
                    h.get("limit_at_peak", ""),  # its cap, as compare's headline (cap53)
                )
            )
        ratios.add_row(*rc)
        wins.add_row(*wc)
        bounds.add_row(*bc)
    return [ratios, wins, bounds]
