"""One measurement counted once: the repeated runs of aiconfigurator's ``silicon_sample.csv``.

aiconfigurator-core 0.12.0's sample holds several copies of many runs: the same benchmark run
appears under its dated source file's id (``2026_03_25_..._tp8_0_ep1_0_N`` and
``2026_04_06_..._tp8_ep1_N``), under the database dump's ``..._cfgNNN`` id, under a gap-analysis
file's id (values rounded to 0.01 ms), and for DeepSeek once as ``deepseek-ai/DeepSeek-R1`` and once
as ``deepseek-ai/DeepSeek-V3`` (one architecture, one catalog model). Counted as they stand, a run
with three copies weighs three times in every median, and the stack fit's alternating split
(fit/stack_split.split) can put one copy in the fit half and its twin in the held-out half.

Rule (:func:`drop_repeated_runs`): two mapped rows are one measurement when they agree on the
system, catalog model, framework (engine and release), precision, mode, ISL, OSL and concurrency,
and their measured TTFT and TPOT both agree within :data:`SAME_VALUE_MS` (the coarsest rounding in
the file, the gap-analysis rows' 0.01 ms). Two separate runs of one configuration do not agree on
both to that precision: run-to-run noise of a serving benchmark is of the order of a percent, a
hundred times the tolerance on a 10 ms TPOT. One row of each measurement is kept, in this order:
the one whose id names its layout (``_tp{n}``: the writer's fields are checked against it,
fit/aic_layout.py), then the one with the most digits (not a rounded copy), then the first in file
order. The others are reported as skipped with the kept id; when copies were read as different
deployments, the kept point's notes say so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Measured TTFT and TPOT agreeing within this (ms) are one measurement: half the coarsest
#: rounding step in silicon_sample.csv (the gap-analysis rows give 0.01 ms), plus float slack.
SAME_VALUE_MS = 0.0051


def _key(p) -> tuple:
    return (p.system, p.model, p.framework, p.precision, p.mode, p.isl, p.osl, p.concurrency)


def _digits(x_ms: float) -> int:
    """Decimals of a value as written (``7.42`` → 2, ``7.423260`` → 6)."""
    s = repr(float(x_ms))
    return len(s.split(".")[1].rstrip("0")) if "." in s and "e" not in s else 16


def _rank(p, order: int) -> tuple:
    named = bool(re.search(r"_tp\d+", p.id))
    ms = (p.measured["ttft_s"] * 1e3, p.measured["tpot_s"] * 1e3)
    return (not named, -min(_digits(round(v, 9)) for v in ms), order)


def _same(a, b) -> bool:
    return all(abs(a.measured[m] - b.measured[m]) * 1e3 <= SAME_VALUE_MS for m in ("ttft_s", "tpot_s"))


def drop_repeated_runs(points: Sequence) -> tuple[list, list[tuple[str, str]]]:
    """(kept points, dropped (id, reason)) of aiconfigurator points (fit/validate.MeasuredPoint with
    ``measured`` TTFT and TPOT in s): one point per measurement, by the module's rule. The kept
    points keep their file order.

    >>> from types import SimpleNamespace as P
    >>> def pt(i, tpot):
    ...     return P(id=i, system="h200", model="deepseek-r1", framework="sglang 0.5.9", precision="fp8",
    ...              mode="agg", isl=1024, osl=1024, concurrency=4.0, notes=[], deployment=None,
    ...              measured={"ttft_s": 0.2599114, "tpot_s": tpot})
    >>> kept, dropped = drop_repeated_runs([pt("aic:x_c4_cfg81", 0.010292254), pt("aic:x_c4_tp8_ep1_37", 0.010292254),
    ...                                     pt("aic:y_c4_tp8_ep1_9", 0.0103)])
    >>> [p.id for p in kept], dropped
    (['aic:x_c4_tp8_ep1_37', 'aic:y_c4_tp8_ep1_9'], [('aic:x_c4_cfg81', 'repeat of aic:x_c4_tp8_ep1_37 (same run: same configuration, TTFT and TPOT within 0.0051 ms)')])
    """
    groups: dict[tuple, list[list[int]]] = {}
    for i, p in enumerate(points):
        clusters = groups.setdefault(_key(p), [])
        home = next((c for c in clusters if _same(points[c[0]], p)), None)
        if home is None:
            clusters.append([i])
        else:
            home.append(i)
    keep, dropped = set(), []
    for clusters in groups.values():
        for c in clusters:
            best = min(c, key=lambda i: _rank(points[i], i))
            keep.add(best)
            kept = points[best]
            others = [points[i] for i in c if i != best]
            for o in others:
                dropped.append(
                    (
                        o.id,
                        f"repeat of {kept.id} (same run: same configuration, TTFT and TPOT within {SAME_VALUE_MS} ms)",
                    )
                )
            other = [
                o.deployment.label
                for o in others
                if kept.deployment is not None
                and o.deployment is not None
                and o.deployment.label != kept.deployment.label
            ]
            if other:
                kept.notes.append(
                    f"{len(others)} repeat(s) of this run dropped, {len(other)} read as "
                    f"{'; '.join(sorted(set(other)))}: this row's layout kept"
                )
    return [p for i, p in enumerate(points) if i in keep], dropped


def repeats_per_group(skipped: Sequence[tuple[str, str]], kept: Sequence) -> list[tuple[str, str, str, int, int]]:
    """(system, model, mode, repeats dropped, measurements kept) per group of the kept points, from the
    loader's skipped list (:func:`drop_repeated_runs`' reasons name the kept id); groups without a
    repeat included, sorted.

    >>> from types import SimpleNamespace as P
    >>> kept = [P(id="aic:a", system="h200", model="deepseek-r1", mode="agg"),
    ...         P(id="aic:b", system="b200", model="kimi-k2.5", mode="agg")]
    >>> repeats_per_group([("aic:x", "repeat of aic:a (same run: ...)"), ("aic:y", "not in the catalog")], kept)
    [('b200', 'kimi-k2.5', 'agg', 0, 1), ('h200', 'deepseek-r1', 'agg', 1, 1)]
    """
    group = {p.id: (p.system, p.model, p.mode) for p in kept}
    n_kept: dict[tuple, int] = {}
    for g in group.values():
        n_kept[g] = n_kept.get(g, 0) + 1
    n_rep = dict.fromkeys(n_kept, 0)
    for _, reason in skipped:
        m = re.match(r"repeat of (\S+) ", reason)
        if m and m.group(1) in group:
            n_rep[group[m.group(1)]] += 1
    return sorted((*g, n_rep[g], n_kept[g]) for g in n_kept)
