"""The engine fixed-cost fits as a markdown section (docs/validation.md; scripts/gen_validation_doc.py).

Reads the shipped profiles (specs/stacks.py) and their fit reports (``data/stack_fits.toml``,
written by scripts/fit_stacks.py); computes nothing.
"""

from __future__ import annotations

from jalapeno.serve.queueing import REQUESTS_PER_USER
from jalapeno.specs.stacks import CLIENT_FIELDS, stacks

_VALUE_COLS = (
    ("kernel_launch_s", 1e6, "{:.2f} µs"),
    ("step_overhead_s", 1e3, "{:.2f} ms"),
    ("request_overhead_s", 1.0, "{:.3f} s"),
    ("prompt_overhead_s_per_token", 1e6, "{:.2f} µs"),
)


def _cell(d: dict | None) -> str:
    if not d:
        return "-"
    return f"{d['median_ape']:.1%} / {d['bias']:+.1%} (n {d['n']})"


def _value(s, field: str, scale: float, fmt: str) -> str:
    v = getattr(s, field)
    if v is None:
        return "set's"
    mark = "" if field in s.fit.get("fitted", ()) or s.sources.get(field, "").startswith("fitted") else " (stated)"
    return fmt.format(v * scale) + mark


def _with_clients(s, field: str, scale: float, fmt: str) -> str:
    """The profile's value of a front-end field, then each benchmark client's own (``clients``)."""
    cell = _value(s, field, scale, fmt)
    extra = [f"{c}'s client {fmt.format(f[field] * scale)}" for c, f in s.clients.items() if field in f]
    return "; ".join([cell, *extra])


def _burst(s) -> str:
    """The burst shares, disaggregated / aggregated (a client entry's; the profile's own runs keep one
    wave in REQUESTS_PER_USER)."""
    one = 1 / REQUESTS_PER_USER
    extra = [
        f"{c}'s client {f.get('prefill_burst_fraction', one):.2f} / {f.get('agg_burst_fraction', one):.2f}"
        for c, f in s.clients.items()
        if {"prefill_burst_fraction", "agg_burst_fraction"} & set(f)
    ]
    return "; ".join([f"1/{REQUESTS_PER_USER}", *extra])


def markdown() -> list[str]:
    """Lines of the section: the split, each profile's values and its fit / held-out errors before
    (the ``default`` profile: 4 µs per kernel, 0.5 ms per step, 0.15 s + 6.4 µs per prompt token,
    MTP acceptance as the profile states it) and after the fit."""
    lines = [
        "## Engine fixed costs (software stacks), fitted on a declared split",
        "",
        (
            "Each measured point is priced with its framework's software-stack profile "
            "(`data/stacks.toml`, `specs/stacks.py`; `--stack NAME` on every pricing command, `jalapeno validate "
            "--stack default` reproduces the single global constant). The profiles' fixed costs are fitted by "
            "`python scripts/fit_stacks.py` (fit/stack_fit.py) on the *fit* half of a declared split of the matched "
            "end-to-end points (InferenceX and aiconfigurator rows): per (stack, source, system, model, ISL, OSL, "
            "mode) group sorted by concurrency, points alternate fit / held out. Step costs (per-kernel and per-step) "
            "are fitted on TPOT (throughput where a point has none); the front end (per request and per prompt "
            "token) on the TTFT of fit points at concurrency <= 4, where a profile has at least 4, once per benchmark "
            "client: InferenceX's points give the profile's own front end, aiconfigurator's rows (timed by another "
            "client) the profile's `aiconfigurator's client` entry, each on its own points only (docs/stacks.md); "
            "Dynamo-TRT's MTP acceptance on the TPOT of its MTP rows; a client's burst shares (the share of its "
            "disaggregated / aggregated runs' counted requests that meet the idle-start prefill burst, "
            "docs/model.md §8.7 (7)) on the TTFT of its fit points of each mode; the loss is the mean "
            "|log(pred/meas)|. "
            "The errors below are median |error| / bias on the **held-out** half, before (the global defaults) and "
            "after; `set's` = the efficiency set's own value (AMD: amd-aiter's kernel floor)."
        ),
        "",
        (
            "| stack | per kernel | per step | front end / request | front end / prompt token | burst share disagg / agg "
            "| MTP acceptance "
            "(single / chain) | fit / held out | held-out TPOT before → after | held-out throughput before → after "
            "| held-out TTFT before → after |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in stacks().values():
        if not s.fit:
            continue
        r = s.fit
        b, a = r.get("before", {}).get("held_out", {}), r.get("after", {}).get("held_out", {})
        acc = (
            "; ".join(f"{m}: {v.get('single', '-')} / {v.get('chain', '-')}" for m, v in s.mtp_acceptance.items())
            or "-"
        )
        cells = [(_with_clients if f in CLIENT_FIELDS else _value)(s, f, k, fmt) for f, k, fmt in _VALUE_COLS]
        lines.append(
            f"| {s.name} | "
            + " | ".join(cells)
            + f" | {_burst(s)} | {acc} | {r.get('n_fit', 0)} / {r.get('n_held_out', 0)} | "
            + " | ".join(f"{_cell(b.get(m))} → {_cell(a.get(m))}" for m in ("tpot_s", "throughput_per_chip", "ttft_s"))
            + " |"
        )
    notes = [f"- {s.name}: " + "; ".join(s.fit["notes"]) for s in stacks().values() if s.fit.get("notes")]
    others = [s.name for s in stacks().values() if not s.fit]
    lines += [
        "",
        *notes,
        (
            f"- Not fitted (stated values with their sources in data/stacks.toml): {', '.join(others)}. "
            "`compiled` is anchored on a published per-token latency (docs/stacks.md); `jalapeno` spans GPU-like "
            "(value) to compiled (fast band)."
        ),
        "",
    ]
    return lines
