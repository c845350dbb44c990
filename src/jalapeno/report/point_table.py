"""The point table: one predicted or simulated point as ``jalapeno predict`` prints it (a two-column rich table).

:func:`point_table` rows: feasibility, throughput per chip (in+out, output, per decode chip when disaggregated),
interactivity, the request lengths (:func:`lengths_text`), TTFT mean / p99 and its parts (:func:`ttft_parts_text`),
TPOT, E2E, the admission queue, the concurrency cap and the requests in flight (:func:`load_rows`), the decode
batch, chips, power, tok/s per kW, J and $ per token, the efficiency set, the bound and the KV hand-off.
Cells print as the other tables' (report/compare_cells._f, _small). Moved from report/tables.py (round 46, module
budget). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rich.table import Table

from jalapeno.analysis.power_cost import usd_text
from jalapeno.analysis.bound_words import point_bound, pool_cap_text
from jalapeno.report.compare_cells import _f, _small

if TYPE_CHECKING:
    from jalapeno.analysis.records import PointRecord


def point_table(p: PointRecord, title: str, open_loop: bool = False, price_note: str = "") -> Table:
    """Two-column table of one point (with its efficiency set when it is a prediction); ``open_loop``:
    the point was solved at a request rate, so its concurrency is λ·E2E, not a cap; ``price_note`` follows the
    $ figure (analysis/capacity.price_basis: an estimated $/chip-hour)."""
    t = Table(title=title, show_header=False)
    t.add_column("metric")
    t.add_column("value", overflow="fold")
    rows = [
        ("feasible", str(p.feasible) + (f" — {p.reason}" if p.reason else "")),
        ("throughput per chip (in+out)", f"{_f(p.throughput_per_chip, ',.1f')} tok/s"),
        ("output throughput per chip", f"{_f(p.output_throughput_per_chip, ',.1f')} tok/s"),
        *(
            [
                (
                    "output throughput per decode chip",
                    (
                        f"{_f(p.output_throughput_per_decode_chip, ',.1f')} tok/s "
                        "(InferenceX's output_tput_per_gpu when disaggregated)"
                    ),
                )
            ]
            if p.deployment.prefill is not None
            else []
        ),
        ("interactivity", f"{_f(p.interactivity, '.1f')} tok/s/user"),
        *([("lengths (ISL / OSL)", lengths_text(p.workload))] if getattr(p, "workload", None) is not None else []),
        (
            "TTFT mean / p99" + ("" if open_loop else " (whole run: the idle start's first wave included)"),
            f"{_f(p.ttft_s * 1e3, ',.0f')} / {_f(p.ttft_p99_s * 1e3, ',.0f')} ms"
            + (
                ""
                if open_loop
                else " (p99: the larger of the steady tail and the first wave's p90, serve/queueing.py "
                "effect 3; simulate, with its default 2·C warm-up, gives the steady state)"
            ),
        ),
        *([("TTFT mean, by part", ttft_parts_text(p.ttft_parts))] if getattr(p, "ttft_parts", None) else []),
        ("TPOT", f"{_f(p.tpot_s * 1e3, ',.2f')} ms"),
        # thousands separated as the TTFT row beside them ('1721.29 s' read beside '1,693,831 ms')
        (
            "E2E mean / p50 / p90 / p99",
            " / ".join(_f(v, ",.2f") for v in (p.e2e_s, p.e2e_p50_s, p.e2e_p90_s, p.e2e_p99_s)) + " s",
        ),
        ("admission queue (beyond capacity)", f"{_f(p.queue_s, ',.2f')} s"),
        *load_rows(p, open_loop),
        ("decode batch per instance", _small(p.decode_batch, ",.1f")),  # 0.04 (-c 4 on 100 workers) read "0.0"; 1,004.7
        ("chips", _f(p.chips, ",.0f")),  # 1,200 as the frontier's chips column
        (f"power per chip ({p.power_label})", f"{_f(p.power_w_per_chip, ',.0f')} W"),
        # all three count input + output tokens, as the throughput row (analysis/power_cost.energy_and_cost)
        ("tok/s per kW (in+out)", _small(p.tok_s_per_kw, ",.0f")),
        ("J per token (in+out)", _f(p.j_per_token, ".3f")),
        ("$ per M tokens (in+out)", usd_text(p.usd_per_mtok) + price_note),
        ("efficiency set", str(getattr(p, "efficiency_source", ""))),
        (  # compare's words for the point (analysis/bound_words.point_bound), then the decode step's margin (ux53)
            "bound",
            (
                f"{point_bound(p)}; the decode step {_f(p.bound_margin, '.2f')}x the next"
                if p.prefill_bound
                else f"{p.bound} ({_f(p.bound_margin, '.2f')}x the next)"
            )
            + (f"; {pool_cap_text(p.limit, bool(p.prefill_bound))}" if p.limit else ""),
        ),
        *(
            [
                (
                    "prefill pool's bound",
                    f"{p.prefill_bound} (its full token-budget step), on {p.prefill_chip_share:.0%} of the chips",
                )
            ]
            if p.prefill_bound
            else []
        ),
        *(
            [("KV transfer (prefill to decode)", f"{_f(p.kv_transfer_s * 1e3, '.2f')} ms")]
            if p.deployment.prefill is not None
            else []
        ),  # aggregated: no hand-off (printed "0.00 ms")
    ]
    for k, v in rows:
        t.add_row(k, v)
    return t


#: how the point table names serve/ttft_parts.PARTS
_TTFT_PART_LABELS = {
    "frontend_s": "front end",
    "prefill_s": "prefill",
    "kv_transfer_s": "KV transfer",
    "first_step_s": "half a decode step",
    "queue_and_waits_s": "queue, batch and wave waits",
}


def ttft_parts_text(parts: Mapping[str, float]) -> str:
    """``front end 202 + prefill 244 + half a decode step 4 + queue, batch and wave waits 0 ms`` (a zero
    KV transfer, i.e. aggregated serving, left out); thousands separated as the TTFT row above it
    (``287,285`` ms there, ``286,918`` here)."""
    shown = [(k, v) for k, v in parts.items() if not (k == "kv_transfer_s" and v == 0)]

    def ms(v: float) -> str:  # a part under 10 ms keeps a decimal (a KV hand-off of 0.6 ms read as "0")
        return "0" if abs(v) < 5e-5 else f"{v * 1e3:.1f}" if abs(v) < 1e-2 else f"{v * 1e3:,.0f}"

    return " + ".join(f"{_TTFT_PART_LABELS.get(k, k)} {ms(v)}" for k, v in shown) + " ms"


def lengths_text(wl) -> str:
    """How a point's requests are sized: E2E = TTFT + (OSL − 1)·TPOT holds at the mean lengths, not the
    title's nominal ones (``predict -w 8k1k`` draws InferenceX's uniform range, mean 0.9 x nominal)."""
    if wl.spread is not None:
        return f"a dataset's pairs, means {wl.mean_isl:,.0f} / {wl.mean_osl:,.0f}"
    if wl.range_ratio >= 1:
        return f"fixed {wl.isl:,} / {wl.osl:,}"
    r = wl.range_ratio
    return (
        f"uniform {r * wl.isl:,.0f}-{wl.isl:,} / {r * wl.osl:,.0f}-{wl.osl:,}, means {wl.mean_isl:,.0f} / "
        f"{wl.mean_osl:,.0f} (InferenceX --random-range-ratio {r:g}; --fixed-lengths for exact)"
    )


def load_rows(p: PointRecord, open_loop: bool = False) -> list[tuple[str, str]]:
    """The point table's concurrency rows: the cap (closed loop) and the requests in flight, labelled.
    An open-loop point (``predict --rate``) has no cap: its first row says what the number is."""
    if open_loop:
        first = ("requests in the system (open loop, λ·E2E)", _f(p.concurrency, ",.1f"))
    else:
        first = ("concurrency cap (closed loop, InferenceX conc)", _f(p.concurrency, ",.0f"))  # whole: was "256.0"
    return [first, ("in flight (admitted; Little's law λ·(E2E − queue))", _f(p.in_flight, ",.1f"))]
