"""Data quality of aiconfigurator's measured rows: two stated rules on their TTFT (A, B), the sources'
own corrections (C), two physical bounds on their TPOT (D, E) and one on their admission (F), applied to every
mapped row. Two more rules on a deployment's TPOT sweep (G: it does not fall as the load rises; H: a repeat
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

**Rule E — a decode step is no faster than its bytes over the chips' bandwidth.** A decode step reads every
weight it multiplies and the KV cache of every sequence it decodes; however the row's ``n`` decode chips
(one decode instance, :attr:`Layout.chips`) share them, the busiest chip reads at least the average, so
for the row's decoding requests per instance B (Little's law, as rule D, at most C_inst):

    floor = [W_dense + W_experts · (1 − (1 − k/E)^B) + B · KV(r · ISL)] / (n · BW_peak · (1 + d))

W_dense: every weight but the routed experts and the embedding (a gather of B rows), counted once (replicas
only add) in the row's precision; W_experts: the routed experts at their checkpoint layout (no engine
padding), touched in the fraction uniform top-k routing of B tokens over E experts touches (rule D's form;
routing skew touches fewer: :data:`FLOOR_FACTOR` allows for it); KV(r · ISL): one sequence's KV cache at the
shortest prompt either client sends (r = INFERENCEX_RANGE_RATIO, the decoded tokens' KV left out) in the
row's KV format; BW_peak: the catalog chip's datasheet HBM bandwidth (achieved is lower); d: the draft tokens
of the row's MTP (each step yields at most 1 + d tokens). The row's layout is not used, only its chip count,
so a mis-stated TP/DP cannot raise the floor. A row is flagged when TPOT < :data:`FLOOR_FACTOR` · floor; only
its TPOT and interactivity are flagged, as rule D's.

**Rule F — a closed loop with room for its requests runs them.** An aggregated engine admits every request
of a closed loop at concurrency C up to its running cap (the recipe's, at least C where the recipe sets it to
C) or its KV cache, whichever binds first; a request waits only for that. Little's law on the measured
times gives the requests past their first token per instance, B (rule D's form), and the KV cache holds

    K = (n · HBM · u − W) / KV(ISL + OSL)

requests (n chips of HBM capacity each, u = :data:`ADMIT_MEMORY_FRACTION`, W every weight once, KV of one
sequence at its longest context in the row's KV format; a sliding window holds its window only). Admitted
requests may still wait for prefill compute when the engine is saturated; the prefill the row's own request
rate λ = C_inst / (TTFT + (OSL − 1)·TPOT) asks for is λ · 2 · N_active · ISL FLOP/s (N_active: the weights
one token multiplies, experts at k/E; attention left out), against the n chips' dense peak in their slowest
listed format. A row is flagged when B < :data:`ADMIT_FACTOR` · min(C_inst, K) and that prefill takes under
:data:`PREFILL_SHARE` of the peak: its requests queued behind a cap the row does not record (neither its
memory, nor its prefill compute, nor its stated recipe), so its TTFT measures that queue and its TPOT the
smaller batch. Every metric of such a row is flagged (its TTFT with rules A and B, its TPOT and interactivity with
D and E). Of aiconfigurator-core 0.12.0's aggregated rows the cap shows in one campaign alone (gpt-oss-120b,
H100, vLLM 0.11.2 and its release-less rows of 2025-12-05/08, concurrency 512): B = 96-106 at TP2, TP4 and
TP8 and at 1k/1k, 1k/8k and 8k/1k, whose KV room differs by 9x, while every other campaign at concurrency
256 and above decodes 0.86-1.0 of C; the two other rows below the factor are GB200 DeepSeek-R1 SGLang rows
stated as TP72 at concurrency 2048 and 4096 (scripts/aic_admission_check.py). A cap that rule F finds in two
rows of one campaign and concurrency binds its other rows there that decode as many (fit/aic_admission_campaign.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from jalapeno.fit.aic_admission_campaign import campaign_admission_flags
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
#: Rule E: a row is flagged when its TPOT is below this fraction of its decode-step floor. The floor takes the
#: datasheet bandwidth (achieved HBM reads run at ~80-90% of it) and uniform routing; a row passes unless its
#: batch touched under ~70% of the experts uniform routing touches AND its chips read at full peak, so only a
#: clearly impossible TPOT is flagged. Of aiconfigurator-core 0.12.0's rows (scripts/aic_floor_check.py) one
#: falls below it (0.58 of its floor); the next are at 0.81 and 0.86.
FLOOR_FACTOR = 0.7
#: Rule F: a row is flagged when its decoding requests are below this fraction of what its memory and
#: concurrency admit. An engine with room decodes nearly all of them (0.86-1.0 of C at concurrency >= 256 in
#: every campaign but one, scripts/aic_admission_check.py); prefill-heavy rows near saturation reach 0.44-0.6
#: (8k/1k at concurrency 512), so the factor sits below them: only a queue no prefill explains is flagged.
ADMIT_FACTOR = 0.35
#: Rule F: a row's prefill demand (module docstring) under this share of its chips' dense peak cannot be what its
#: requests waited for (a prefill runs at tens of percent of peak; an engine that needs a quarter of it for
#: prefill alone is near saturation, where admitted requests do queue for compute).
PREFILL_SHARE = 0.25
#: Rule F: the share of HBM the KV cache and weights may fill: vLLM's default and InferenceX's
#: ``--gpu-memory-utilization`` 0.9, less 0.1 of HBM for activations, CUDA graphs and the runtime (named
#: assumption; a lower share only admits fewer, so flags fewer rows).
ADMIT_MEMORY_FRACTION = 0.8
#: The sources' own corrections of aiconfigurator rows (package data, rule C).
AIC_SOURCE_FLAGS = Path(__file__).resolve().parents[1] / "data" / "validation" / "aic_source_flags.toml"
#: The measured-point fields a rule-C entry may name (fit/validate.MeasuredPoint).
FLAG_FIELDS = ("system", "model", "framework", "precision", "isl", "osl")


#: Deployment fields an engine's launch script sets by load (deploy/engines.launch_limits: a scheduler poll,
#: running cap or chunk that the script picks by concurrency; fit/aic_sweep_launch.with_sweep_launch's per-rank cap):
#: not part of the deployment a row names (its layout, workers, MTP), so rows of one deployment stay comparable
LAUNCH_FIELDS = ("token_budget", "max_running", "recv_interval", "cuda_graph_max_batch", "cuda_graph_batch_sizes",
                 "memory_fraction", "engine_memory", "batch_wait_timeout_iters", "batch_wait_max_tokens_ratio")


def deployment_key(p) -> tuple:
    """The deployment a row names, less the fields its launch script sets by load (:data:`LAUNCH_FIELDS`): rows
    of one key differ only in concurrency (rules A, B; rules G, H of fit/aic_consistency.py)."""
    dep = (repr({k: v for k, v in p.deployment.as_dict().items() if k not in LAUNCH_FIELDS})
           if p.deployment is not None else "")
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
            loaded = [b for b in ps if b.concurrency > a.concurrency and b.measured["tpot_s"] >= pa * (1 - SAME_TPOT)
                      and not above_decode_cap(a.deployment, a.concurrency)]
            if loaded:
                b = min(loaded, key=lambda q: q.measured["ttft_s"])
                tb = b.measured["ttft_s"]
                if ta > LOAD_TTFT_FACTOR * tb:
                    why.setdefault(a.id, []).append(
                        f"TTFT {ta:.2f} s at concurrency {a.concurrency:g} is {ta / tb:.1f}x the {tb:.2f} s of the "
                        f"same deployment at concurrency {b.concurrency:g} (TPOT {pa * 1e3:.1f} -> "
                        f"{b.measured['tpot_s'] * 1e3:.1f} ms): the queue only grows with load (aiconfigurator "
                        "rule A, fit/aic_quality.py)")
            for b in ps:
                tb, pb = b.measured["ttft_s"], b.measured["tpot_s"]
                if (b is not a and b.concurrency == a.concurrency and abs(pb / pa - 1) <= SAME_TPOT
                        and max(ta, tb) > REPEAT_TTFT_FACTOR * min(ta, tb)):
                    why.setdefault(a.id, []).append(
                        f"TTFT {ta:.2f} s against {tb:.2f} s ({max(ta, tb) / min(ta, tb):.1f}x) in a repeat of the "
                        f"same deployment at concurrency {a.concurrency:g} with TPOT within {SAME_TPOT:.0%} ({b.id}): "
                        "the measurement does not reproduce (aiconfigurator rule B, fit/aic_quality.py)")
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

    return read_flag_entries(Path(path) if path else AIC_SOURCE_FLAGS, "aiconfigurator source-flag file",
                             FLAG_FIELDS, "field", f"use the fields {', '.join(FLAG_FIELDS)}",
                             'match = { system = "b300", framework = "sglang 0.5.10" }', "1024")


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
        why = [f"source correction: {f['reason']} ({f['source']}) (aiconfigurator rule C, fit/aic_quality.py)"
               for f in flags if all(_same(getattr(p, k), v) for k, v in f["match"].items())]
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


def _decoding_batch(p, instances: int) -> float:
    """Decoding requests per decode instance of a point, by Little's law on its measured times (rules D
    and E, module docstring): C_inst · (OSL − 1)·TPOT / (TTFT + (OSL − 1)·TPOT), at most C_inst."""
    m = p.measured
    dec = (p.osl - 1) * m["tpot_s"]
    return p.concurrency / instances * dec / (m["ttft_s"] + dec)


def _release_stated(framework: str) -> bool:
    """Whether a point's framework names its release (fit/aic_sweeps.release_stated)."""
    from jalapeno.fit.aic_sweeps import release_stated

    return release_stated(framework)


def _catalog_chip(system: str):
    from jalapeno.errors import JalapenoError
    from jalapeno.specs.catalog import load_system

    try:
        return load_system(system).chip
    except (JalapenoError, FileNotFoundError):
        return None


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
        if (p.source == "aiconfigurator" and m.get("ttft_s") and m.get("tpot_s") and p.concurrency
                and p.osl > 1 and _decode_layout(p) is not None and _release_stated(p.framework)):
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
                if (y.system == x.system or dict(cx.peak_flop_per_s) != dict(cy.peak_flop_per_s)
                        or cx.hbm_bandwidth_bytes_per_s < cy.hbm_bandwidth_bytes_per_s or lx[:2] != ly[:2]
                        or (lx[2] and ly[2] and lx[2] != ly[2]) or x.isl > y.isl or x.isl + x.osl > y.isl + y.osl):
                    continue
                dx = x.measured["tpot_s"] - stall
                if dx <= 0:  # the stall bound exceeds the TPOT: the pair tests nothing
                    continue
                bx, by = _decoding_batch(x, lx[3]), _decoding_batch(y, ly[3])
                bound = y.measured["tpot_s"] * max(1.0, bx / by)
                out.append({"x": x, "y": y, "batch_x": bx, "batch_y": by, "stall_x_s": stall, "decode_x_s": dx,
                            "bound_y_s": bound, "ratio": dx / bound})
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
            out[i] = (f"decode {q['decode_x_s'] * 1e3:.1f} ms (TPOT {x.measured['tpot_s'] * 1e3:.1f} ms less at most "
                      f"{q['stall_x_s'] * 1e3:.1f} ms of prefill stall) is {q['ratio']:.1f}x the "
                      f"{y.measured['tpot_s'] * 1e3:.1f} ms TPOT of the same release and decode layout on {y.system} "
                      f"({y.id}; batch {q['batch_y']:.1f} against {q['batch_x']:.1f} per instance), a chip of the same "
                      "compute and no more HBM bandwidth: a chip no slower in any resource does not decode slower "
                      "(aiconfigurator rule D, fit/aic_quality.py)")
    camp = lambda p: (p.system, p.model, p.framework, p.precision, p.mode)  # noqa: E731
    bad = {camp(worst[i]["x"]) for i in out}
    for c in bad:
        matched = [q for q in worst.values() if camp(q["x"]) == c]
        if all(q["ratio"] > 1.0 for q in matched):
            ids = sorted(i for i in out if camp(worst[i]["x"]) == c)
            for p in points:
                if p.source == "aiconfigurator" and camp(p) == c and p.id not in out:
                    out[p.id] = (f"campaign {' '.join(str(v) for v in c)}: rule D flags {', '.join(ids)} and every "
                                 f"one of its {len(matched)} rows with a sibling decodes slower than its sibling's "
                                 "bound (ratios " + ", ".join(f"{q['ratio']:.2f}" for q in
                                                              sorted(matched, key=lambda q: q['ratio'])) +
                                 "): a setting of the campaign, not one run (aiconfigurator rule D, fit/aic_quality.py)")
    return out


def _floor_catalog(p):
    """(model spec, chip) of a point from the catalog, or None where either is missing."""
    from jalapeno.errors import JalapenoError
    from jalapeno.specs.catalog import load_model

    chip = _catalog_chip(p.system)
    try:
        return (load_model(p.model), chip) if chip is not None else None
    except (JalapenoError, FileNotFoundError):
        return None


def _catalogued(p, catalog) -> tuple | None:
    """(model spec, chip, decode pool, instances) of a point with TTFT, TPOT, concurrency, an OSL above 1
    and a deployment whose model and chip ``catalog(p)`` holds; None otherwise (rules E and F's points)."""
    m, d = p.measured, p.deployment
    if d is None or not (m.get("ttft_s") and m.get("tpot_s") and p.concurrency and p.osl > 1):
        return None
    found = catalog(p)
    if found is None:
        return None
    pool = d.decode
    return (*found, pool, max(int(getattr(pool, "workers", 1) or 1), 1))


def decode_floor(p, catalog=_floor_catalog) -> dict | None:
    """Rule E's floor of one point (module docstring): ``batch`` (B, decoding requests per instance),
    ``chips`` (n), ``weight_bytes`` (W_dense + touched experts), ``kv_bytes`` (B · KV), ``floor_s`` and
    ``ratio`` (TPOT / floor); None for a point without TTFT, TPOT, concurrency, an OSL above 1 or a
    deployment, or whose model or chip the catalog lacks.

    ``p``: fit/validate.MeasuredPoint; ``catalog(p)``: (specs/model.ModelSpec, specs/hardware.Chip) or None.
    Units: bytes, seconds.
    """
    from jalapeno.cost.moe import touched_fraction
    from jalapeno.deploy.layout import Layout
    from jalapeno.deploy.memory_fit import (ROUTER_BYTES, kv_bytes_per_seq_per_chip, weight_bytes_per_chip,
                                            weight_elems_per_chip)
    from jalapeno.specs.workload import INFERENCEX_RANGE_RATIO

    got = _catalogued(p, catalog)
    if got is None:
        return None
    model, chip, pool, inst = got
    m, d = p.measured, p.deployment
    batch = _decoding_batch(p, inst)
    one = Layout(tp=1, dp=1, ep=1)  # every weight and KV head once: the least any sharding reads in total
    prec = d.precision
    elems = weight_elems_per_chip(model, one)
    total = weight_bytes_per_chip(model, one, prec)
    experts = total - sum(n * (ROUTER_BYTES if k == "router" else prec.weight_bytes(k)) for k, n in elems.items()
                          if k != "routed_experts")
    dense = total - experts - elems["embedding"] * prec.weight_bytes("embedding")
    touched = float(touched_fraction(batch, model.moe.num_experts, model.moe.top_k)) if model.moe else 0.0
    kv = batch * float(kv_bytes_per_seq_per_chip(model, one, prec, INFERENCEX_RANGE_RATIO * p.isl))
    weights = dense + experts * touched
    draft = d.mtp.draft_tokens if getattr(d, "mtp", None) is not None else 0
    n = pool.layout.chips
    floor = (weights + kv) / (n * chip.hbm_bandwidth_bytes_per_s * (1 + draft))
    return {"batch": batch, "chips": n, "weight_bytes": weights, "kv_bytes": kv, "floor_s": floor,
            "ratio": m["tpot_s"] / floor}


def aic_floor_flags(points: Sequence, catalog=_floor_catalog) -> dict[str, str]:
    """Point id → reason for every aiconfigurator point whose TPOT is below :data:`FLOOR_FACTOR` × its
    decode-step floor (rule E, module docstring); its TPOT and interactivity are flagged. Points of other
    sources, and points :func:`decode_floor` cannot bound, are passed over. ``catalog``: as decode_floor's.
    """
    out: dict[str, str] = {}
    for p in points:
        f = decode_floor(p, catalog) if p.source == "aiconfigurator" else None
        if f is not None and f["ratio"] < FLOOR_FACTOR:
            out[p.id] = (f"TPOT {p.measured['tpot_s'] * 1e3:.2f} ms is {f['ratio']:.2f}x the {f['floor_s'] * 1e3:.2f} ms "
                         f"floor of a decode step at its {f['batch']:.1f} decoding requests per instance (Little's law): "
                         f"{f['weight_bytes'] / 1e9:.1f} GB of weights and {f['kv_bytes'] / 1e9:.1f} GB of KV cache over "
                         f"{f['chips']} chips at the datasheet HBM bandwidth: a decode step is no faster than its bytes "
                         "(aiconfigurator rule E, fit/aic_quality.py)")
    return out


def aic_decode_flags(points: Sequence) -> dict[str, str]:
    """Point id → reason for every aiconfigurator point whose TPOT (and interactivity) a rule flags: rule D
    (:func:`aic_sibling_flags`), rule E (:func:`aic_floor_flags`), rule F (:func:`aic_admission_flags`) and
    rules G, H (fit/aic_consistency.py: TPOT falls as the load rises, a repeat does not reproduce), reasons joined."""
    from jalapeno.fit.aic_consistency import aic_consistency_flags

    out = dict(aic_sibling_flags(points))
    for i, why in (*aic_floor_flags(points).items(), *aic_admission_flags(points).items(),
                   *aic_consistency_flags(points).items()):
        out[i] = f"{out[i]}; {why}" if i in out else why
    return out


def admission(p, catalog=_floor_catalog) -> dict | None:
    """Rule F's figures of one aggregated point (module docstring): ``batch`` (B, requests past their first
    token per instance), ``concurrency`` (C_inst), ``kv_room`` (K, requests the KV cache holds at ISL + OSL),
    ``admitted`` (min(C_inst, K)), ``ratio`` (B / admitted) and ``prefill_share`` (the prefill FLOP/s its request
    rate asks for over its chips' dense peak); None for a point that is not aggregated, lacks
    TTFT, TPOT, concurrency, an OSL above 1 or a deployment, or whose model or chip the catalog lacks.

    ``p``: fit/validate.MeasuredPoint; ``catalog(p)``: as :func:`decode_floor`'s. Units: requests.
    """
    from jalapeno.deploy.layout import Layout
    from jalapeno.deploy.memory_fit import kv_bytes_per_seq_per_chip, weight_bytes_per_chip, weight_elems_per_chip

    got = _catalogued(p, catalog) if p.mode == "agg" else None
    if got is None:
        return None
    model, chip, pool, inst = got
    m, d = p.measured, p.deployment
    one = Layout(tp=1, dp=1, ep=1)  # every weight and KV head once (replicas only take room)
    free = pool.layout.chips * chip.hbm_capacity_bytes * ADMIT_MEMORY_FRACTION - weight_bytes_per_chip(model, one,
                                                                                                       d.precision)
    kv = float(kv_bytes_per_seq_per_chip(model, one, d.precision, p.isl + p.osl))
    room = max(free, 0.0) / kv if kv > 0 else float("inf")
    admitted = min(p.concurrency / inst, room)
    batch = _decoding_batch(p, inst)
    elems = weight_elems_per_chip(model, one)
    k_of_e = model.moe.top_k / model.moe.num_experts if model.moe else 1.0
    active = sum(elems.values()) - elems["embedding"] - elems["routed_experts"] * (1.0 - k_of_e)
    rate = p.concurrency / inst / (m["ttft_s"] + (p.osl - 1) * m["tpot_s"])
    peak = pool.layout.chips * min(chip.peak_flop_per_s.values())
    return {"batch": batch, "concurrency": p.concurrency / inst, "kv_room": room, "admitted": admitted,
            "ratio": batch / admitted if admitted > 0 else float("inf"),
            "prefill_share": rate * 2.0 * active * p.isl / peak}


def aic_admission_flags(points: Sequence, catalog=_floor_catalog) -> dict[str, str]:
    """Point id → reason for every aggregated aiconfigurator point that decodes under :data:`ADMIT_FACTOR` of
    the requests its memory and concurrency admit (rule F, module docstring, and its campaign
    clause); every metric is flagged (through aic_ttft_flags and aic_decode_flags). ``catalog``: as decode_floor's.

    >>> from types import SimpleNamespace as P
    >>> from jalapeno.specs.catalog import load_model
    >>> from jalapeno.specs.formats import get_precision
    >>> def pt(ttft, tpot):  # gpt-oss-120b on 8 H100 (80 GB), BF16 KV, 1k/8k at concurrency 512
    ...     dep = P(decode=P(layout=P(chips=8), workers=1), precision=get_precision("mxfp4"))
    ...     return P(id="r", source="aiconfigurator", mode="agg", isl=1024, osl=8192, concurrency=512,
    ...              deployment=dep, measured={"ttft_s": ttft, "tpot_s": tpot})
    >>> cat = lambda p: (load_model("gpt-oss-120b"), P(hbm_capacity_bytes=80e9, peak_flop_per_s={"bf16": 989e12}))
    >>> list(aic_admission_flags([pt(117.8, 0.00357)], cat)), aic_admission_flags([pt(1.0, 0.015)], cat)
    (['r'], {})
    """
    out: dict[str, str] = {}
    for p in points:
        a = admission(p, catalog) if p.source == "aiconfigurator" else None
        if a is not None and a["ratio"] < ADMIT_FACTOR and a["prefill_share"] < PREFILL_SHARE:
            out[p.id] = (f"{a['batch']:.0f} requests decoding per instance (Little's law on TTFT "
                         f"{p.measured['ttft_s']:.1f} s, TPOT {p.measured['tpot_s'] * 1e3:.2f} ms) of the "
                         f"{a['admitted']:.0f} its concurrency {a['concurrency']:g} and KV cache ({a['kv_room']:.0f} "
                         f"requests at ISL + OSL in {ADMIT_MEMORY_FRACTION:.0%} of HBM) admit, with prefill asking "
                         f"{a['prefill_share']:.0%} of the chips' peak: the requests queued behind a cap the row does "
                         "not record (aiconfigurator rule F, fit/aic_quality.py)")
    return {**out, **campaign_admission_flags(points, out, lambda p: admission(p, catalog))}
