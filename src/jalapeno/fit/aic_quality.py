"""Data quality of aiconfigurator's measured rows: two stated rules on their TTFT (A, B) and the sources'
own corrections (C), applied to every mapped row.

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
the deployment known instead of a frontier's).

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
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

#: A row's TTFT may exceed that of the same deployment at a higher concurrency by at most this factor
#: (InferenceX's sweep factor, fit/data_quality.SWEEP_TTFT_FACTOR: the run-to-run noise of a serving
#: benchmark's mean TTFT is tens of percent at low load, not 2x).
LOAD_TTFT_FACTOR = 2.0
#: Two measurements of one configuration at one concurrency may differ in TTFT by at most this factor.
REPEAT_TTFT_FACTOR = 2.0
#: TPOTs within this relative tolerance are "the same" (rule B) or "no lower" (rule A): run-to-run
#: noise of a decode step is a few percent, a changed setting (MTP, a kernel) moves it by tens.
SAME_TPOT = 0.10
#: The sources' own corrections of aiconfigurator rows (package data, rule C).
AIC_SOURCE_FLAGS = Path(__file__).resolve().parents[1] / "data" / "validation" / "aic_source_flags.toml"
#: The measured-point fields a rule-C entry may name (fit/validate.MeasuredPoint).
FLAG_FIELDS = ("system", "model", "framework", "precision", "isl", "osl")


#: Deployment fields an engine's launch script sets by load (deploy/engines.launch_limits: a scheduler poll,
#: running cap or chunk that the script picks by concurrency; fit/aic_sweeps.with_sweep_launch's per-rank cap):
#: not part of the deployment a row names (its layout, workers, MTP), so rows of one deployment stay comparable
LAUNCH_FIELDS = ("token_budget", "max_running", "recv_interval", "cuda_graph_max_batch", "memory_fraction",
                 "engine_memory", "batch_wait_timeout_iters", "batch_wait_max_tokens_ratio")


def _key(p) -> tuple:
    dep = (repr({k: v for k, v in p.deployment.as_dict().items() if k not in LAUNCH_FIELDS})
           if p.deployment is not None else "")
    return (p.system, p.model, p.framework, p.precision, p.mode, p.isl, p.osl, dep)


def aic_ttft_flags(points: Sequence) -> dict[str, str]:
    """Point id → reason for every aiconfigurator point whose TTFT breaks rule A or B (module docstring).

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
            groups.setdefault(_key(p), []).append(p)
    why: dict[str, list[str]] = {}
    for ps in groups.values():
        for a in ps:
            ta, pa = a.measured["ttft_s"], a.measured["tpot_s"]
            loaded = [b for b in ps if b.concurrency > a.concurrency and b.measured["tpot_s"] >= pa * (1 - SAME_TPOT)]
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
