"""Rule F's campaign clause: a running cap that rule F finds in two or more rows of one campaign and
concurrency is the campaign's, and binds its other rows at that concurrency that decode the same number.

Rule F (fit/aic_quality.py) flags an aggregated row whose decoding requests per instance B (Little's law on its
measured TTFT and TPOT) fall under ``ADMIT_FACTOR`` of what its concurrency and KV cache admit, while its prefill
asks under ``PREFILL_SHARE`` of its chips' peak: its requests queued behind a cap the row does not record. A
cap of that kind is a setting of the run (a client or launch limit), not of a layout, so it binds every row of
the campaign launched with it. Rule F alone cannot see it in a row whose own memory or prefill could also have
held B down; the campaign can: when B is the same number in rows whose KV room and prefill load differ by
several times, neither memory nor prefill set it.

**The clause.** Rows of one campaign and concurrency — same system, catalog model, framework and release,
precision, mode and concurrency (every layout, ISL and OSL) — of which rule F flags at least
:data:`MIN_CAPPED_ROWS`, with B from ``b_lo`` to ``b_hi``: another row of the key is flagged too when

    b_lo / (1 + t) <= B <= b_hi · (1 + t)     and     B < admitted / (1 + t)

(t = :data:`SAME_B`: it decodes the capped rows' number within the noise, and below the room its memory and
concurrency give it by more than the noise, so the room did not set it). Every metric is flagged, as rule F's.
The model is never consulted: the clause reads rule F's figures (:func:`jalapeno.fit.aic_bounds.admission`).

**What it flags in aiconfigurator-core 0.12.0** (scripts/aic_admission_check.py prints the figures): one key,
H100 gpt-oss-120b vLLM 0.11.2 aggregated at concurrency 512, where rule F flags three rows (B 96, 102 and 106
at TP8 1k/8k, TP4 1k/8k, TP8 8k/1k) and the clause adds the other three: TP2 8k/1k (B 100 of a room of 182,
prefill 15% of peak), TP4 8k/1k (B 96 of 512, prefill 36%) and TP2 1k/8k (B 106 of 182). Six rows, three TP
degrees, two workloads, KV rooms of 182-1297 requests: B = 96-106 in all of them (and in the release-less rows
of the same campaign, 99-101 at 1k/1k, which rule F flags itself). vLLM allocates KV blocks as sequences grow,
so even the TP2 rows' room at their mean context exceeds 182; InferenceX's launch script for these runs sets
``--max-num-seqs`` to the concurrency (SemiAnalysisAI/InferenceX ``benchmarks/gptoss_fp4_h100_slurm.sh``
@029199755, 2025-12-09) and its client ``--max-concurrency`` to it too, so the cap is recorded nowhere the row
or its recipe shows. No other key has two rule-F rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

#: The relative noise of B (decoding requests per instance by Little's law): B is a ratio of the measured TTFT and
#: TPOT, whose repeats agree within 10% (fit/aic_quality.SAME_TPOT); the same figure is taken for B (named assumption).
SAME_B = 0.10
#: Rows rule F must flag in one campaign and concurrency before the clause reads a cap off them: one row is one
#: run, whose queue may be its own; two or more at one number are a setting (named assumption).
MIN_CAPPED_ROWS = 2


def campaign_key(p) -> tuple:
    """(system, model, framework, precision, mode, concurrency) of a point: rows that differ in layout, ISL and
    OSL only (a field the point lacks reads None)."""
    return tuple(getattr(p, k, None) for k in ("system", "model", "framework", "precision", "mode", "concurrency"))


def campaign_admission_flags(
    points: Sequence, flagged: dict[str, str], figures: Callable[[object], dict | None]
) -> dict[str, str]:
    """Point id → reason for every aiconfigurator point the clause adds to rule F's ``flagged`` (module docstring).

    ``points``: fit/validate.MeasuredPoint; ``flagged``: rule F's flags (id → reason); ``figures(p)``: rule F's
    figures of a point (``batch``, ``admitted``, ``ratio``: fit/aic_bounds.admission) or None. Points of other
    sources, and points ``figures`` cannot read, are passed over.

    >>> from types import SimpleNamespace as P
    >>> pts = [P(id=i, source="aiconfigurator", system="h100", model="m", framework="vllm 0.11.2", precision="x",
    ...          mode="agg", concurrency=512.0) for i in "abcd"]
    >>> fig = {"a": (102, 512), "b": (96, 512), "c": (100, 182), "d": (170, 182)}
    >>> f = lambda p: {"batch": fig[p.id][0], "admitted": fig[p.id][1]}
    >>> list(campaign_admission_flags(pts, {"a": "F", "b": "F"}, f))
    ['c']
    >>> campaign_admission_flags(pts, {"a": "F"}, f)
    {}
    """
    groups: dict[tuple, list] = {}
    for p in points:
        a = figures(p) if p.source == "aiconfigurator" else None
        if a is not None:
            groups.setdefault(campaign_key(p), []).append((p, a))
    out: dict[str, str] = {}
    for rows in groups.values():
        capped = [(p, a) for p, a in rows if p.id in flagged]
        if len(capped) < MIN_CAPPED_ROWS:
            continue
        lo, hi = min(a["batch"] for _, a in capped), max(a["batch"] for _, a in capped)
        names = ", ".join(sorted(p.id for p, _ in capped))
        for p, a in rows:
            b = a["batch"]
            if p.id not in flagged and lo / (1 + SAME_B) <= b <= hi * (1 + SAME_B) and b < a["admitted"] / (1 + SAME_B):
                out[p.id] = (
                    f"{b:.0f} requests decoding per instance (Little's law) of the {a['admitted']:.0f} its "
                    f"concurrency {p.concurrency:g} and KV cache admit: the {lo:.0f}-{hi:.0f} that rule F's "
                    f"{len(capped)} capped rows of the same campaign and concurrency decode ({names}), "
                    "within the noise: the campaign's cap, not this row's memory or prefill (aiconfigurator "
                    "rule F, campaign clause, fit/aic_admission_campaign.py)"
                )
    return out
