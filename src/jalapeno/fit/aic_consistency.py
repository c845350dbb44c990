"""Data quality of aiconfigurator's measured rows within one deployment's sweep: its TPOT does not fall as the
load rises (rule G) and a repeat reproduces it (rule H). Rules A-F are in fit/aic_quality.py, whose deployment
key (:func:`jalapeno.fit.aic_quality.deployment_key`: system, catalog model, framework and release, precision,
mode, ISL, OSL and the deployment, less the fields a launch script sets by load) this module shares. As there,
the model is never consulted: a rule reads only the rows' measured TPOT, their concurrency and the deployment
they name.

**Rule G — a decode step does not get faster with more sequences in it.** Raising a closed loop's concurrency
puts more sequences in each decode step (or, behind a running cap, as many), and more prefills between the
steps: every term of the step's cost (weights read once, KV and FLOPs per sequence, the prefill stalls) is
non-decreasing in the load. So within one deployment a row at a higher concurrency cannot have a TPOT
materially below a row at a lower one; "materially" is the repeat noise of a TPOT,
:data:`REPEAT_TPOT_FACTOR`. Rows X (concurrency C_X) and Y (C_Y > C_X) conflict when

    TPOT_X > REPEAT_TPOT_FACTOR · TPOT_Y.

The fields a launch script sets by load (fit/aic_quality.LAUNCH_FIELDS) are not part of the deployment: a running
cap holds the batch rather than shrinking the step, and a scheduler poll interval or a CUDA-graph capture size is
taken to move a step by less than the tolerance (named assumption).

**Rule H — a repeated measurement reproduces its TPOT.** Two rows of one deployment at one concurrency are one
configuration run twice (copies of one run are already merged: fit/aic_duplicates.py); they conflict when their
TPOTs differ by more than :data:`REPEAT_TPOT_FACTOR`. Whether the cause is the run or a setting the row does not
record (a speculative-decoding setting, say), the row's stated deployment does not determine its TPOT. This
extends rule B (fit/aic_quality.py: a repeat reproduces its TTFT) to TPOT; rule B's premise, TPOT within
``SAME_TPOT``, is unchanged.

**Which rows are flagged.** A conflict names two rows and the rows alone cannot say which is wrong; the rest of
the sweep can. Of the rows in conflicts, the flagged ones are the fewest whose removal leaves the deployment
without a conflict (a minimum vertex cover of the conflict graph, per connected part); where several such sets
exist, every row of any of them is flagged (no row is preferred by anything but the measurements). A lone
conflict flags both rows; a row below three lower-load rows of a rising sweep is flagged alone; of a repeat
whose one row continues the sweep and the other breaks it, only the breaking row. A connected part of more
than :data:`MAX_COVER_ROWS` rows is flagged whole (aiconfigurator-core 0.12.0's largest has 6). Rows
whose framework states no release (fit/aic_sweeps.release_stated) are passed over: they may be different
builds. Only a flagged row's TPOT and interactivity are flagged (its TTFT is rules A and B's); ``jalapeno
validate`` leaves them out of its figures (stated both ways) and the stack fits (fit/stack_fit.py) out of the
step-cost fits, through fit/aic_quality.aic_decode_flags.

**The tolerance.** aiconfigurator-core 0.12.0's mapped rows hold 125 groups of repeats (177 pairs; the same
deployment and concurrency, after the copies of one run are merged). Their |ln(TPOT_1 / TPOT_2)| has quartiles
0.26%, 0.67% and 3.50% (the widest three-row group that agrees with itself, B200 MiniMax-M2.5 vLLM 0.19.0
8k/1k at C = 256, spans 51.6-56.9 ms, 1.10x). :data:`REPEAT_TPOT_FACTOR` is Tukey's "far out" fence on that distribution, exp(Q3 + 3·IQR) = 1.141
(J. W. Tukey, Exploratory Data Analysis, 1977, ch. 2: a value beyond Q3 + 3·IQR is "far out"), rounded up to
two decimals (a rounding that passes more rows). ``python scripts/aic_tpot_consistency.py`` recomputes it and
prints every flagged row.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

#: Two TPOTs of one configuration (rule H), or of a lower and a higher load (rule G), differ by at most this
#: factor: Tukey's far-out fence (Q3 + 3·IQR) on the |ln ratio| of aiconfigurator-core 0.12.0's 177 repeat pairs,
#: 1.141, rounded up (module docstring; scripts/aic_tpot_consistency.py).
REPEAT_TPOT_FACTOR = 1.15
#: A connected part of the conflict graph with more rows than this is flagged whole rather than searched
#: (the search is exponential in it; aiconfigurator-core 0.12.0's largest part has 6 rows).
MAX_COVER_ROWS = 16


def tpot_conflicts(points: Sequence) -> list[tuple]:
    """Every conflict of rules G and H (module docstring) among aiconfigurator ``points``: (X, Y, rule) with
    rule "G" (X at the lower concurrency, TPOT_X > :data:`REPEAT_TPOT_FACTOR` · TPOT_Y) or "H" (one
    concurrency, TPOTs apart by more than the factor). Points of other sources, without a TPOT or a
    concurrency, or whose framework states no release are passed over. ``points``: fit/validate.MeasuredPoint.
    """
    from jalapeno.fit.aic_quality import deployment_key
    from jalapeno.fit.aic_sweeps import release_stated

    groups: dict[tuple, list] = {}
    for p in points:
        if p.source == "aiconfigurator" and p.measured.get("tpot_s") and p.concurrency and release_stated(p.framework):
            groups.setdefault(deployment_key(p), []).append(p)
    out = []
    for ps in groups.values():
        for a, b in itertools.combinations(sorted(ps, key=lambda q: q.concurrency), 2):
            ta, tb = a.measured["tpot_s"], b.measured["tpot_s"]
            if a.concurrency == b.concurrency:
                if max(ta, tb) > REPEAT_TPOT_FACTOR * min(ta, tb):
                    out.append((a, b, "H"))
            elif ta > REPEAT_TPOT_FACTOR * tb:
                out.append((a, b, "G"))
    return out


def fewest_removals(edges: Sequence[tuple[str, str]]) -> set[str]:
    """The rows of every smallest set that touches each conflict (module docstring), per connected part;
    a part of more than :data:`MAX_COVER_ROWS` rows whole. ``edges``: pairs of row ids.

    >>> sorted(fewest_removals([("a", "b")])), sorted(fewest_removals([("a", "x"), ("b", "x"), ("c", "x")]))
    (['a', 'b'], ['x'])
    """
    adj: dict[str, set[str]] = {}
    for a, b in edges:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    out: set[str] = set()
    seen: set[str] = set()
    for start in sorted(adj):
        if start in seen:
            continue
        part, todo = set(), [start]
        while todo:
            v = todo.pop()
            if v not in part:
                part.add(v)
                todo.extend(adj[v] - part)
        seen |= part
        if len(part) > MAX_COVER_ROWS:
            out |= part
            continue
        inner = [(a, b) for a, b in edges if a in part]
        nodes = sorted(part)
        for k in range(1, len(nodes) + 1):
            covers = [set(s) for s in itertools.combinations(nodes, k) if all(a in s or b in s for a, b in inner)]
            if covers:
                out |= set().union(*covers)
                break
    return out


def aic_consistency_flags(points: Sequence) -> dict[str, str]:
    """Point id → reason for every aiconfigurator point rule G or H flags (module docstring); its TPOT and
    interactivity are flagged. ``points``: fit/validate.MeasuredPoint (``measured`` TPOT in s, ``concurrency``,
    ``deployment``, ``framework``).

    >>> from types import SimpleNamespace as P
    >>> def pt(i, c, tpot_ms):  # Qwen3-32B GB200 TRT-LLM 1.3.0rc1 TP2 4000/1000 (aiconfigurator-core 0.12.0)
    ...     return P(id=i, source="aiconfigurator", system="gb200", model="qwen3-32b", framework="trtllm 1.3.0rc1",
    ...              precision="bf16", mode="agg", isl=4000, osl=1000, deployment=None, concurrency=c,
    ...              measured={"tpot_s": tpot_ms / 1e3})
    >>> sorted(aic_consistency_flags([pt("c32", 32, 103.22), pt("c64", 64, 133.32), pt("c128", 128, 71.82)]))
    ['c128']
    """
    conflicts = tpot_conflicts(points)
    flagged = fewest_removals([(a.id, b.id) for a, b, _ in conflicts])
    why: dict[str, list[str]] = {}
    for a, b, rule in conflicts:
        ta, tb = a.measured["tpot_s"] * 1e3, b.measured["tpot_s"] * 1e3
        for x, y, tx, ty in ((a, b, ta, tb), (b, a, tb, ta)):
            if x.id not in flagged:
                continue
            if rule == "H":
                text = (
                    f"TPOT {tx:.2f} ms against {ty:.2f} ms ({max(tx, ty) / min(tx, ty):.2f}x) in a repeat of the same "
                    f"deployment at concurrency {x.concurrency:g} ({y.id}): beyond the repeat noise "
                    f"({REPEAT_TPOT_FACTOR:g}x), the measurement does not reproduce (aiconfigurator rule H"
                )
            else:
                text = (
                    f"TPOT {tx:.2f} ms at concurrency {x.concurrency:g} against {ty:.2f} ms at concurrency "
                    f"{y.concurrency:g} of the same deployment ({y.id}; {ta / tb:.2f}x): a higher load does not "
                    f"decode faster beyond the repeat noise ({REPEAT_TPOT_FACTOR:g}x) (aiconfigurator rule G"
                )
            why.setdefault(x.id, []).append(text + ", fit/aic_consistency.py)")
    return {
        i: "; ".join(w) + "; it is of the fewest rows whose removal leaves the sweep consistent" for i, w in why.items()
    }
