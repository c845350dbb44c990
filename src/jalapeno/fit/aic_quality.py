"""Data quality of aiconfigurator's measured rows: two stated rules on their TTFT (A, B), the sources'
own corrections (C), two physical bounds on their TPOT (D, E) and one on their admission (F; E and F are
fit/aic_bounds.py's), applied to every mapped row. Two more rules on a deployment's TPOT sweep (G: it does not fall as the load rises; H: a repeat
reproduces it) are in fit/aic_consistency.py; :func:`aic_decode_flags` joins them.

aiconfigurator-core's ``silicon_sample.csv`` gives no throughput, so InferenceX's closed-loop
identity (fit/data_quality.py, rule 1) cannot be written for its rows; what each row does give is
the exact deployment it ran (layout, worker counts, MTP: fit/aic_rows.py) and its concurrency. Two
identities of one deployment follow from that alone. The model is never consulted: a rule reads only
the rows' measured TTFT and TPOT, their concurrency and the deployment they name (C: the fields its
source's correction names).

**Rule A — the queue only grows with load.** For one deployment (same system, catalog model,
framework and release, precision, mode, ISL, OSL and deployment), a request's TTFT is its front end,
its own prefill and the wait for the prefills and decode steps of the other requests in flight; raising
the concurrency adds requests to wait on and tokens to every step, and takes nothing away. A row is
flagged when its TTFT exceeds :data:`LOAD_TTFT_FACTOR` × the TTFT of a row of the same deployment at a
higher concurrency whose TPOT is no lower (within :data:`SAME_TPOT`): that row carries at least the
same load, so the fall cannot be the deployment's (InferenceX's sweep test, fit/data_quality.py, with
the deployment known instead of a frontier's). A row above the decode running cap its recipe set for its load
(fit/aic_decode_caps.py) is not tested: its users beyond the cap wait for decode slots, which a higher load
launched with a larger cap need not.

**Rule B — a repeated measurement must reproduce.** Two rows of one deployment at the same
concurrency whose TPOT agrees within :data:`SAME_TPOT` (the same configuration, run twice: the
copies of one run are already merged, fit/aic_duplicates.py) but whose TTFT differs by more than
:data:`REPEAT_TTFT_FACTOR` do not measure one quantity; both are flagged (the rows cannot say which
is right). Pairs whose TPOT differs more ran something the row does not record (e.g. a different
speculative-decoding setting), and are not compared.

Only the TTFT of a row flagged by A or B is flagged (its TPOT passes both rules' premise): ``jalapeno
validate`` leaves the flagged TTFT out of its figures and states them both ways (fit/validation_run.py), and
the aiconfigurator client's front-end and burst fits (fit/stack_fit.py) leave it out.

**Rule C — the source's own correction.** aiconfigurator republishes InferenceX runs; a row of a run whose
producer states that its benchmark harness mis-measured it (and re-ran the configuration) measures the
harness fault, not the deployment. data/validation/aic_source_flags.toml lists each such correction with
the fields of the rows it names, the reason in the source's words and where it says so (InferenceX's rule 2,
fit/data_quality.py, for republished rows). Every metric of such a row is flagged: a prompt the server
saw ~5x longer than stated moves TTFT and, through the prefill between decode steps, TPOT.

**Rule D — a chip no slower in any resource does not decode slower.** Two rows of one model, framework and
release, precision and speculative-decoding setting on two chips of one compute (the same peak FLOP/s in
every format: H100 and H200 are one GH100 die at one clock, the catalog's data/systems) whose decode
instances have one attention layout (TP, DP; MoE EP where both rows state it), the first (X) on the chip
with no less HBM bandwidth and at no more context (ISL and ISL + OSL no larger): X's decode step costs
no more than Y's at the same batch (weights, KV and compute are read and done at no lower rates), and a
decode step's cost grows at most in proportion to its batch (the experts a step touches,
E·(1 − (1 − k/E)^B), are concave in B; per-sequence KV and FLOPs are linear). From measured values only:

    B = C_inst · (OSL − 1)·TPOT / (TTFT + (OSL − 1)·TPOT)       (decoding requests per instance, Little's law)
    stall_X = C_inst · TTFT / (OSL − 1)   (aggregated X; 0 disaggregated)

(each request's prefill stalls the decode steps it shares for at most its own TTFT, and one prefill per
request in flight falls in a request's decode phase), X is flagged when

    (TPOT_X − stall_X) / (TPOT_Y · max(1, B_X / B_Y)) > :data:`SIBLING_TPOT_FACTOR`.

Only a flagged row's TPOT and interactivity are flagged (TTFT is not tested). **Its campaign**: when rule D
flags a row and every row of the same (system, model, framework and release, precision, mode) that has a
sibling (a pair whose stall bound leaves a positive decode time) is slower than its sibling's bound
(ratio > 1), the cause is a setting of the campaign, not one run: every row of the campaign is flagged,
those without a sibling too. ``jalapeno validate`` leaves the flagged TPOT out of its figures (stated both
ways), and the stack fits (fit/stack_fit.py) leave it out of the step-cost fits.

**Rules E and F** — the physical bounds on a row's decode step (its bytes over its chips' bandwidth) and on its
admission (a closed loop with room for its requests runs them) — are fit/aic_bounds.py's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from jalapeno.fit.aic_bounds import _catalog_chip, _decoding_batch, aic_admission_flags, aic_floor_flags
from jalapeno.fit.aic_decode_caps import above_decode_cap

#: A row's TTFT may exceed that of the same deployment at a higher concurrency by at most this factor
#: (InferenceX's sweep factor, fit/data_quality.SWEEP_TTFT_FACTOR: the run-to-run noise of a serving
#: benchmark's mean TTFT is tens of percent at low load, not 2x).
LOAD_TTFT_FACTOR = 2.0
#: Two measurements of one configuration at one concurrency may differ in TTFT by at most this factor.
REPEAT_TTFT_FACTOR = 2.0
#: TPOTs within this relative tolerance are "the same" (rule B) or "no lower" (rule A): run-to-run
#: noise of a decode step is a few percent, a changed setting (MTP, a kernel) moves it by tens.
SAME_TPOT = 0.10
#: Rule D: a row's decode (TPOT less its most prefill stall) may exceed its sibling's bound by at most this
#: factor. The same configuration's TPOT repeats within 10% (:data:`SAME_TPOT`); launch settings a row does not
#: record (CUDA-graph capture sizes, a scheduler cap) move one release's TPOT by tens of percent, not by half
#: again on a chip no slower. Of aiconfigurator-core 0.12.0's 399 pairs (all H200 against H100) the ratio is at
#: most 0.98 but for one campaign's five rows (1.06-2.05: scripts/aic_sibling_check.py).
SIBLING_TPOT_FACTOR = 1.5
#: The sources' own corrections of aiconfigurator rows (package data, rule C).
AIC_SOURCE_FLAGS = Path(__file__).resolve().parents[1] / "data" / "validation" / "aic_source_flags.toml"
#: The measured-point fields a rule-C entry may name (fit/validate.MeasuredPoint).
FLAG_FIELDS = ("system", "model", "framework", "precision", "isl", "osl")


#: Deployment fields an engine's launch script sets by load (deploy/engines.launch_limits: a scheduler poll,
#: running cap or chunk that the script picks by concurrency; fit/aic_sweep_launch.with_sweep_launch's per-rank cap):
#: not part of the deployment a row names (its layout, workers, MTP), so rows of one deployment stay comparable
LAUNCH_FIELDS = (
    "token_budget",
    "max_running",
    "recv_interval",
    "cuda_graph_max_batch",
    "cuda_graph_batch_sizes",
    "memory_fraction",
    "engine_memory",
    "batch_wait_timeout_iters",
    "batch_wait_max_tokens_ratio",
)


def deployment_key(p) -> tuple:
    """The deployment a row names, less the fields its launch script sets by load (:data:`LAUNCH_FIELDS`): rows
    of one key differ only in concurrency (rules A, B; rules G, H of fit/aic_consistency.py)."""
    dep = (
        repr({k: v for k, v in p.deployment.as_dict().items() if k not in LAUNCH_FIELDS})
        if p.deployment is not None
        else ""
    )
    return (p.system, p.model, p.framework, p.precision, p.mode, p.isl, p.osl, dep)


def aic_ttft_flags(points: Sequence) -> dict[str, str]:
    """Point id → reason for every aiconfigurator point whose TTFT breaks rule A, B or F (module docstring).

    ``points``: fit/validate.MeasuredPoint (``measured`` TTFT and TPOT in s, ``concurrency``,
    ``deployment``); points of other sources and points without both measurements are passed over.

    >>> from types import SimpleNamespace as P
    >>> def pt(i, c, ttft, tpot):
    ...     return P(id=i, source="aiconfigurator", system="h100", model="deepseek-r1", framework="trtllm 1.0",
    ...              precision="fp8", mode="disagg", isl=1024, osl=1024, deployment=None, concurrency=c,
    ...              measured={"ttft_s": ttft, "tpot_s": tpot})
    >>> f = aic_ttft_flags([pt("a", 6, 12.3, 0.014), pt("b", 9, 7.1, 0.015), pt("c", 30, 5.1, 0.020)])
    >>> sorted(f), f["a"].split(" (TPOT")[0]
    (['a'], 'TTFT 12.30 s at concurrency 6 is 2.4x the 5.10 s of the same deployment at concurrency 30')
    """
    groups: dict[tuple, list] = {}
    for p in points:
        m = p.measured
        if p.source == "aiconfigurator" and m.get("ttft_s") and m.get("tpot_s") and p.concurrency:
            groups.setdefault(deployment_key(p), []).append(p)
    why: dict[str, list[str]] = {}
    for ps in groups.values():
        for a in ps:
            ta, pa = a.measured["ttft_s"], a.measured["tpot_s"]
            loaded = [
                b
                for b in ps
                if b.concurrency > a.concurrency
                and b.measured["tpot_s"] >= pa * (1 - SAME_TPOT)
                and not above_decode_cap(a.deployment, a.concurrency)
            ]
            if loaded:
                b = min(loaded, key=lambda q: q.measured["ttft_s"])
                tb = b.measured["ttft_s"]
                if ta > LOAD_TTFT_FACTOR * tb:
                    why.setdefault(a.id, []).append(
                        f"TTFT {ta:.2f} s at concurrency {a.concurrency:g} is {ta / tb:.1f}x the {tb:.2f} s of the "
                        f"same deployment at concurrency {b.concurrency:g} (TPOT {pa * 1e3:.1f} -> "
                        f"{b.measured['tpot_s'] * 1e3:.1f} ms): the queue only grows with load (aiconfigurator "
                        "rule A, fit/aic_quality.py)"
                    )
            for b in ps:
                tb, pb = b.measured["ttft_s"], b.measured["tpot_s"]
                if (
                    b is not a
                    and b.concurrency == a.concurrency
                    and abs(pb / pa - 1) <= SAME_TPOT
                    and max(ta, tb) > REPEAT_TTFT_FACTOR * min(ta, tb)
                ):
                    why.setdefault(a.id, []).append(
                        f"TTFT {ta:.2f} s against {tb:.2f} s ({max(ta, tb) / min(ta, tb):.1f}x) in a repeat of the "
                        f"same deployment at concurrency {a.concurrency:g} with TPOT within {SAME_TPOT:.0%} ({b.id}): "
                        "the measurement does not reproduce (aiconfigurator rule B, fit/aic_quality.py)"
                    )
    for i, w in aic_admission_flags(points).items():
        why.setdefault(i, []).append(w)
    return {i: "; ".join(w) for i, w in why.items()}


def load_aic_source_flags(path: str | Path | None = None) -> list[dict]:
    """Rule C's entries: ``[{"match": {field: value}, "reason", "source"}, ...]`` (module docstring).

    Raises:
        SpecError: the file is missing or not TOML, or an entry lacks ``match``, ``reason`` or ``source``,
            has an empty ``match``, names a field other than :data:`FLAG_FIELDS`, or a value that is not
            a string or a number.
    """
    from jalapeno.fit.data_quality import read_flag_entries

    return read_flag_entries(
        Path(path) if path else AIC_SOURCE_FLAGS,
        "aiconfigurator source-flag file",
        FLAG_FIELDS,
        "field",
        f"use the fields {', '.join(FLAG_FIELDS)}",
        'match = { system = "b300", framework = "sglang 0.5.10" }',
        "1024",
    )


def aic_source_flags(points: Sequence, flags_path: str | Path | None = None) -> dict[str, str]:
    """Point id → reason for every aiconfigurator point a rule-C entry names (module docstring); every
    metric of such a point is flagged. Points of other sources are passed over.

    >>> from types import SimpleNamespace as P
    >>> pts = [P(id=f"r{v}", source="aiconfigurator", system="b300", model="deepseek-r1", framework=f"sglang {v}",
    ...          precision="fp4", isl=8192, osl=1024) for v in ("0.5.9", "0.5.10.post1")]
    >>> list(aic_source_flags(pts))
    ['r0.5.10.post1']

    Raises:
        SpecError: an invalid flag file (:func:`load_aic_source_flags`).
    """
    flags = load_aic_source_flags(flags_path)
    out: dict[str, str] = {}
    for p in points:
        if p.source != "aiconfigurator":
            continue
        why = [
            f"source correction: {f['reason']} ({f['source']}) (aiconfigurator rule C, fit/aic_quality.py)"
            for f in flags
            if all(_same(getattr(p, k), v) for k, v in f["match"].items())
        ]
        if why:
            out[p.id] = "; ".join(why)
    return out


def _same(value, want) -> bool:
    if isinstance(want, (int, float)):
        try:
            return float(value) == float(want)
        except (TypeError, ValueError):
            return False
    return str(value).strip() == want


def _decode_layout(p):
    """(tp, dp, ep, instances) of the pool that decodes a point's requests, or None."""
    d = p.deployment
    pool = getattr(d, "decode", None) if d is not None else None
    if pool is None:
        return None
    lay = pool.layout
    return lay.tp, lay.dp, lay.ep, max(int(getattr(pool, "workers", 1) or 1), 1)


def _release_stated(framework: str) -> bool:
    """Whether a point's framework names its release (fit/aic_sweeps.release_stated)."""
    from jalapeno.fit.aic_sweeps import release_stated

    return release_stated(framework)


def sibling_pairs(points: Sequence, chip_of=_catalog_chip) -> list[dict]:
    """Every (X, Y) pair rule D compares (module docstring) with its figures: ``x``, ``y`` (the points),
    ``batch_x``, ``batch_y`` (decoding requests per instance), ``stall_x_s``, ``decode_x_s`` (TPOT_X less
    the stall), ``bound_y_s`` (TPOT_Y · max(1, B_X / B_Y)) and ``ratio`` (decode_x_s / bound_y_s).

    ``points``: fit/validate.MeasuredPoint (aiconfigurator rows with ``measured`` TTFT and TPOT in s, a
    concurrency, an OSL above 1, a deployment and a stated release; others are passed over). A pair whose
    stall bound is no less than X's TPOT tests nothing and is left out. ``chip_of(system)``: the chip
    (``peak_flop_per_s``, ``hbm_bandwidth_bytes_per_s``) or None for a system the catalog lacks.
    """
    chips: dict[str, object] = {}
    groups: dict[tuple, list] = {}
    for p in points:
        m = p.measured
        if (
            p.source == "aiconfigurator"
            and m.get("ttft_s")
            and m.get("tpot_s")
            and p.concurrency
            and p.osl > 1
            and _decode_layout(p) is not None
            and _release_stated(p.framework)
        ):
            if p.system not in chips:
                chips[p.system] = chip_of(p.system)
            if chips[p.system] is not None:
                spec = getattr(p.deployment, "mtp", None) is not None or p.spec == "mtp"
                groups.setdefault((p.model, p.framework, p.precision, spec), []).append(p)

    out = []
    for ps in groups.values():
        for x in ps:
            cx, lx = chips[x.system], _decode_layout(x)
            stall = 0.0 if x.mode == "disagg" else x.concurrency / lx[3] * x.measured["ttft_s"] / (x.osl - 1)
            for y in ps:
                cy, ly = chips[y.system], _decode_layout(y)
                if (
                    y.system == x.system
                    or dict(cx.peak_flop_per_s) != dict(cy.peak_flop_per_s)
                    or cx.hbm_bandwidth_bytes_per_s < cy.hbm_bandwidth_bytes_per_s
                    or lx[:2] != ly[:2]
                    or (lx[2] and ly[2] and lx[2] != ly[2])
                    or x.isl > y.isl
                    or x.isl + x.osl > y.isl + y.osl
                ):
                    continue
                dx = x.measured["tpot_s"] - stall
                if dx <= 0:  # the stall bound exceeds the TPOT: the pair tests nothing
                    continue
                bx, by = _decoding_batch(x, lx[3]), _decoding_batch(y, ly[3])
                bound = y.measured["tpot_s"] * max(1.0, bx / by)
                out.append(
                    {
                        "x": x,
                        "y": y,
                        "batch_x": bx,
                        "batch_y": by,
                        "stall_x_s": stall,
                        "decode_x_s": dx,
                        "bound_y_s": bound,
                        "ratio": dx / bound,
                    }
                )
    return out


def aic_sibling_flags(points: Sequence, chip_of=_catalog_chip) -> dict[str, str]:
    """Point id → reason for every aiconfigurator point whose TPOT breaks rule D, or whose campaign does
    (module docstring); its TPOT and interactivity are flagged. Arguments: :func:`sibling_pairs`.

    >>> from types import SimpleNamespace as P
    >>> chip = {"h100": P(peak_flop_per_s={"fp8": 1979e12}, hbm_bandwidth_bytes_per_s=3.35e12),
    ...         "h200": P(peak_flop_per_s={"fp8": 1979e12}, hbm_bandwidth_bytes_per_s=4.8e12)}
    >>> def pt(i, system, c, ttft, tpot):
    ...     dep = P(decode=P(layout=P(tp=4, dp=1, ep=1), workers=1), mtp=None)
    ...     return P(id=i, source="aiconfigurator", system=system, model="m", framework="vllm 0.12.0", spec="",
    ...              precision="fp8", mode="agg", isl=1000, osl=1000, concurrency=c, deployment=dep,
    ...              measured={"ttft_s": ttft, "tpot_s": tpot})
    >>> list(aic_sibling_flags([pt("x", "h200", 8, 0.2, 0.030), pt("y", "h100", 8, 0.2, 0.012)], chip.get))
    ['x']
    """
    pairs = sibling_pairs(points, chip_of)
    worst: dict[str, dict] = {}
    for q in pairs:
        i = q["x"].id
        if i not in worst or q["ratio"] > worst[i]["ratio"]:
            worst[i] = q
    out: dict[str, str] = {}
    for i, q in worst.items():
        if q["ratio"] > SIBLING_TPOT_FACTOR:
            x, y = q["x"], q["y"]
            out[i] = (
                f"decode {q['decode_x_s'] * 1e3:.1f} ms (TPOT {x.measured['tpot_s'] * 1e3:.1f} ms less at most "
                f"{q['stall_x_s'] * 1e3:.1f} ms of prefill stall) is {q['ratio']:.1f}x the "
                f"{y.measured['tpot_s'] * 1e3:.1f} ms TPOT of the same release and decode layout on {y.system} "
                f"({y.id}; batch {q['batch_y']:.1f} against {q['batch_x']:.1f} per instance), a chip of the same "
                "compute and no more HBM bandwidth: a chip no slower in any resource does not decode slower "
                "(aiconfigurator rule D, fit/aic_quality.py)"
            )
    camp = lambda p: (p.system, p.model, p.framework, p.precision, p.mode)  # noqa: E731
    bad = {camp(worst[i]["x"]) for i in out}
    for c in bad:
        matched = [q for q in worst.values() if camp(q["x"]) == c]
        if all(q["ratio"] > 1.0 for q in matched):
            ids = sorted(i for i in out if camp(worst[i]["x"]) == c)
            for p in points:
                if p.source == "aiconfigurator" and camp(p) == c and p.id not in out:
                    out[p.id] = (
                        f"campaign {' '.join(str(v) for v in c)}: rule D flags {', '.join(ids)} and every "
                        f"one of its {len(matched)} rows with a sibling decodes slower than its sibling's "
                        "bound (ratios "
                        + ", ".join(f"{q['ratio']:.2f}" for q in sorted(matched, key=lambda q: q["ratio"]))
                        + "): a setting of the campaign, not one run (aiconfigurator rule D, fit/aic_quality.py)"
                    )
    return out


def aic_decode_flags(points: Sequence) -> dict[str, str]:
    """Point id → reason for every aiconfigurator point whose TPOT (and interactivity) a rule flags: rule D
    (:func:`aic_sibling_flags`), rule E (:func:`aic_floor_flags`), rule F (:func:`aic_admission_flags`) and
    rules G, H (fit/aic_consistency.py: TPOT falls as the load rises, a repeat does not reproduce), reasons joined."""
    from jalapeno.fit.aic_consistency import aic_consistency_flags

    out = dict(aic_sibling_flags(points))
    for i, why in (
        *aic_floor_flags(points).items(),
        *aic_admission_flags(points).items(),
        *aic_consistency_flags(points).items(),
    ):
        out[i] = f"{out[i]}; {why}" if i in out else why
    return out
