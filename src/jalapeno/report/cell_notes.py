"""What a comparison table's cell rests on, said in the cell: the side of a ratio at its frontier's end
(``[at frontier end: baseline]``), the fastest speed a frontier reaches where a tier's floor is beyond it, and
whether a $ figure is priced at an estimated $/chip-hour (``est.``). Read from records and systems; computes
no figure (report/tables.py and report/page.py print them)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jalapeno.analysis.records import ComparisonRecord, Headline

#: appended to a $ figure priced at an estimated $/chip-hour (``estimate = true`` on the system file's
#: ``cost.usd_per_chip_hour``; analysis/capacity.is_price_estimate), explained by :func:`estimate_caption`
ESTIMATE_MARK = " est."


def end_flag(r: Mapping, peaks: tuple[float, float] | None = None, baseline_row: bool = False) -> str:
    """The end-of-frontier flag of a per-chip ratio row (analysis/compare.iso_interactivity_ratio, tails flagged by
    analysis/ratio_bands.flag_tails) naming the side at its end, as ``unreachable (who)`` does: ``at frontier end:
    this`` (the row's system), ``: baseline`` or ``: both`` (on the baseline's own row, ``baseline``); "" where the
    row is not flagged. A side is at its end where its status is ``at_frontier_end`` or its throughput lies below
    ratio_bands.TAIL_FRACTION of its frontier's peak (``peaks``: the row's system's and the baseline's peak
    tok/s/chip; None: by status alone). The bare flag left the reader to guess that ``@100`` on DeepSeek-R1 8k1k
    was flagged on every row for the baseline's (H200's) tail alone (newuser45).

    >>> r = {"status_a": "interpolated", "status_b": "interpolated", "y_a": 1730.0, "y_b": 278.0, "at_frontier_end": True}
    >>> end_flag(r, (14610.0, 4349.0)), end_flag(r, (14610.0, 4349.0), True), end_flag({**r, "status_a": "at_frontier_end"})
    ('at frontier end: baseline', 'at frontier end: baseline', 'at frontier end: this')
    """
    from jalapeno.analysis.ratio_bands import TAIL_FRACTION

    if not r["at_frontier_end"]:
        return ""

    def at_end(side: str, peak: float | None) -> bool:
        y = r.get(f"y_{side}")
        tail = peak is not None and y is not None and y == y and y < TAIL_FRACTION * peak
        return r[f"status_{side}"] == "at_frontier_end" or tail

    a, b = at_end("a", peaks[0] if peaks else None), at_end("b", peaks[1] if peaks else None)
    who = "baseline" if (b and baseline_row) else "both" if a and b else "this" if a else "baseline" if b else ""
    return "at frontier end" + (f": {who}" if who else "")


def below_start_flag(r: Mapping) -> str:
    """The flag of a ratio cell where a side's frontier starts above the speed asked (analysis/compare status
    ``below_frontier_start``: that side reads its peak), naming the side as :func:`end_flag` and ``unreachable
    (who)`` do: ``below frontier start: this`` (the row's system), ``: baseline`` or ``: both``; "" where neither
    side is. The bare ``below a frontier's start: its peak`` left the reader to guess whose (newuser49: gpt-oss-120b
    1k8k @35, where Jalapeño's frontier starts at 39 tok/s/user and GB300's at 21).

    >>> below_start_flag({"status_a": "below_frontier_start", "status_b": "interpolated"})
    'below frontier start: this'
    >>> below_start_flag({"status_a": "interpolated", "status_b": "below_frontier_start"})
    'below frontier start: baseline'
    >>> below_start_flag({"status_a": "below_frontier_start", "status_b": "below_frontier_start"})
    'below frontier start: both'
    """
    a, b = (r[f"status_{side}"] == "below_frontier_start" for side in ("a", "b"))
    if not (a or b):
        return ""
    return BELOW_START + ": " + ("both" if a and b else "this" if a else "baseline")


#: The flag of :func:`below_start_flag`, without its side.
BELOW_START = "below frontier start"
#: What a ratio table's caption says of :func:`below_start_flag` (the terminal's and the report page's).
BELOW_START_NOTE = (
    "[below frontier start: who]: slower than that frontier's first (slowest) point, where that side "
    "reads its peak throughput — at a lower per-user speed a system serves at least its peak's "
    "throughput (the best at or above the speed, as the tiers table reads it); who: this, baseline or "
    "both"
)


#: What each bound a table prints means (cost/step_bounds.BOUNDS and hbm_capacity; docs/metrics.md §4, ``bound``): the
#: largest share of the step's time. 'bound at max: overhead' on every row of compare's headline said nothing of
#: what overhead is, nor that a faster chip alone does not move it (newuser49).
BOUND_MEANING = {
    "compute": "compute-bound ops' FLOPs at a fraction of the format's peak FLOP/s",
    "hbm_bandwidth": "memory-bound ops' bytes at a fraction of the HBM bandwidth",
    "scale_up_link": "collectives' exposed time on the scale-up links (NVLink, Infinity Fabric, the torus)",
    "scale_out_link": "collectives' exposed time on the scale-out network (NICs)",
    "overhead": "kernel launches and the step's fixed cost (efficiency.kernel_launch_s, step_overhead_s: no FLOP/s or "
    "bandwidth figure moves it)",
    "on_die_network": "traffic between a chip's slices (--chip-model sliced, docs/chip.md)",
    "hbm_capacity": "weights + KV + activations do not fit the usable HBM",
}


def bound_caption(bounds: Collection[str]) -> str:
    """The line under a table that explains the bounds it prints (``bounds``: the bound names in its cells, in any
    order; unknown ones are skipped), "" for none: each name with what it means, in :data:`BOUND_MEANING`'s order.

    >>> bound_caption(["overhead", "compute", "compute"])
    "bound: the largest share of the step's time — compute: compute-bound ops' FLOPs at a fraction of the format's peak FLOP/s; overhead: kernel launches and the step's fixed cost (efficiency.kernel_launch_s, step_overhead_s: no FLOP/s or bandwidth figure moves it)"
    """
    named = [b for b in BOUND_MEANING if b in set(bounds)]
    if not named:
        return ""
    return "bound: the largest share of the step's time — " + "; ".join(f"{b}: {BOUND_MEANING[b]}" for b in named)


#: What each admission cap a table prints means (PointRecord.limit; docs/metrics.md §4, ``limit``): the limit that
#: stopped the decode batch growing to the load's. compare printed only the bound, which hid that the HBM's capacity
#: (not its bandwidth) set a peak (cap53).
CAP_MEANING = {
    "kv_capacity": "the HBM left after the weights holds the KV cache of no more sequences (deploy/memory_fit)",
    "max_running": "the engine's running-request limit (max_num_seqs, or the 4,096 backstop)",
    "max_tokens_per_step": "the engine's token budget per step (max_num_batched_tokens)",
    "prefill_budget": "the prefill chunks the step's token budget leaves room for",
    "prefill_capacity": "a disaggregated prefill pool at its 0.95 utilisation ceiling",
}


def cap_caption(limits: Collection[str]) -> str:
    """The line under a table that explains the caps it prints (``limits``: PointRecord.limit values in its cells,
    ``" (queueing)"`` suffixes and "" allowed; unknown ones are skipped), "" for none, in :data:`CAP_MEANING`'s order.

    >>> cap_caption(["kv_capacity", "", "kv_capacity (queueing)"])
    "capped by X: what stopped the decode batch growing to the load's (the bound then prices the capped batch; (queueing): the excess requests wait for admission; a disaggregated point's names the pool it binds, decode pool or prefill pool) — kv_capacity: the HBM left after the weights holds the KV cache of no more sequences (deploy/memory_fit)"
    """
    seen = {str(x).removesuffix(" (queueing)") for x in limits}
    named = [c for c in CAP_MEANING if c in seen]
    if not named:
        return ""
    return (
        "capped by X: what stopped the decode batch growing to the load's (the bound then prices the capped batch; "
        "(queueing): the excess requests wait for admission; a disaggregated point's names the pool it binds, "
        "decode pool or prefill pool) — " + "; ".join(f"{c}: {CAP_MEANING[c]}" for c in named)
    )


def frontier_peaks(d: ComparisonRecord, name: str) -> tuple[float, float]:
    """(peak tok/s/chip of ``name``'s frontier, of the baseline's), for :func:`end_flag`."""

    def peak(n: str) -> float:
        return max((p.throughput_per_chip for p in d.systems[n].frontier), default=math.nan)

    return peak(name), peak(d.baseline)


def unreachable_tier(headline: Headline | None) -> str:
    """A tiers cell whose floor the system's frontier never reaches, with the fastest per-user speed it does
    reach (``Headline.max_interactivity``, tok/s/user): a bare "unreachable" left the reader to find it in the
    headline table (newuser45).

    >>> from types import SimpleNamespace as H
    >>> unreachable_tier(H(max_interactivity=139.54)), unreachable_tier(None)
    ('unreachable (its fastest: 139.5 tok/s/user)', 'unreachable')
    """
    mx = getattr(headline, "max_interactivity", None)
    return unreachable_cell(f"{mx:.1f} tok/s/user" if mx is not None and math.isfinite(mx) else None)


def unreachable_cell(fastest: str | None) -> str:
    """A tiers cell no frontier point reaches, in every tiers table (compare's, the report page's, the agentic
    comparison's, which printed a bare "unreachable" where compare named the fastest; ux47): ``fastest`` is the
    fastest the system does reach, with its unit (``139.5 tok/s/user``, ``3.6 min/task``); None: unknown.

    >>> unreachable_cell("3.6 min/task"), unreachable_cell(None)
    ('unreachable (its fastest: 3.6 min/task)', 'unreachable')
    """
    return f"unreachable (its fastest: {fastest})" if fastest else "unreachable"


def estimated_prices(systems) -> frozenset[str]:
    """Names of ``systems`` (:class:`~jalapeno.specs.hardware.System`) whose $/chip-hour is a derived estimate
    (analysis/capacity.is_price_estimate: the catalog's ``estimate = true``), for :data:`ESTIMATE_MARK`."""
    from jalapeno.analysis.capacity import is_price_estimate

    return frozenset(s.name for s in systems if is_price_estimate(s))


def estimate_caption(names: Collection[str]) -> str:
    """The line under a table whose $ figures carry :data:`ESTIMATE_MARK`, "" for none: only ``plan`` said that
    Jalapeño's price is an estimate (newuser45).

    >>> estimate_caption(["jalapeno"])
    'est.: at an estimated $/chip-hour (jalapeno; the catalog marks it estimate = true: its basis in `jalapeno hardware show NAME`, cost.usd_per_chip_hour)'
    """
    if not names:
        return ""
    return (
        f"est.: at an estimated $/chip-hour ({', '.join(sorted(names))}; the catalog marks it estimate = true: "
        "its basis in `jalapeno hardware show NAME`, cost.usd_per_chip_hour)"
    )


def price_note(system) -> str:
    """What follows a $ figure of ``system`` (:class:`~jalapeno.specs.hardware.System`) in a two-column table
    (``predict``, ``simulate``): analysis/capacity.estimate_mark, as ``plan``'s cost line says it, for an
    estimated $/chip-hour; "" for a published one."""
    from jalapeno.analysis.capacity import estimate_mark, is_price_estimate
    from jalapeno.specs.catalog import hardware_show_command, hardware_show_name

    if not is_price_estimate(system):
        return ""
    source = system.sources.get("cost.usd_per_chip_hour", "")
    return estimate_mark(hardware_show_name(system), hardware_show_command(system), True, source)
