"""Which run a "best configuration" row is: restate it ``matched`` where its run can be read (issue 18).

An InferenceX "best" row (``max_throughput_per_gpu``: the blog tables of best-gpu-for-dsr1-inference.mdx and
best-gpu-for-gptoss120b-inference.mdx, InferenceX-app @2d1d3d65) names its system, framework, precision,
ISL/OSL, concurrency and date but not its deployment. Validation bounds such a row by the runs the benchmark
made (``searched_best@concurrency``, fit/searched.py; ``best_entry@concurrency``, fit/entries.py): the best
predicted throughput over every run at the row's concurrency. Where those runs are one deployment, the row's
deployment *is* read: the benchmark config in force at the row's date (``.github/configs/*-master.yaml`` at
the commit data/validation/inferencex_search.toml records; data/engines.toml ``[[identified]]`` entries with
their recipe files) ran that concurrency in one layout only. Such a row is ``matched`` with it, as a row whose
source states its topology is, and is judged on every metric it gives (TTFT, TPOT, interactivity), not only on
throughput. The rule (:func:`identify_run`), applied to every best row with a concurrency alike:

1. the runs that ran the row's concurrency, with MTP as the row states it, and both with and without MTP
   where it is silent (a layout that only the other MTP setting ran is still a run the row may be);
2. grouped by layout (prefill and decode pools: layouts and worker counts);
3. where the row gives throughput per GPU, TTFT and TPOT, only the layouts whose GPU count G the closed-loop
   identity admits: G / G_implied within fit/data_quality.RESIDUAL_BAND (rule 1 of that module, whose
   shipped rows with every cell give 0.972-0.997), G_implied = C · (ISL + OSL) · m / (E2E · tput_per_gpu),
   E2E = TTFT + (m · OSL − 1) · TPOT, m = fit/data_quality.MEAN_LENGTH_FRACTION. The GPU count is a fact of
   the run that the row's own cells imply (its throughput per GPU times its GPUs is its total); it chooses
   between published layouts only and sets no parameter; the row's prediction is then the model's for that
   layout, whatever it gives;
4. exactly one layout left: the row ran it. Its run is then chosen as the search-space rule chooses for a row
   silent on MTP (fit/searched.searched_mapping, fit/entries.silent_mtp_entries): without MTP where such a run
   of that layout ran the concurrency, else with it; that run must be one deployment. Else the row keeps its
   ``searched_best`` / ``best_entry`` mapping (e.g. H100 Dynamo + TRT-LLM 8k/1k at 154: two 48-GPU layouts).

The rule reads the row's measured cells, which the row is then judged on, but no prediction; on the shipped rows
every other run sits a factor >= 1.34 beyond the band, so the choice is a fact of the run, not a fine call on the
cells (docs/gap_disagg_overprediction.md §Is the chosen run independent of the metrics it is judged on?;
tests/unit/test_run_identity.py holds every identified row to a factor 1.25).

A row restated so carries ``MeasuredPoint.identified_from`` (the mapping it had) and stays out of the
engine-fixed-cost fits (fit/stack_split.fit_pool): those fits' declared split alternates within each group by
concurrency, so adding rows would relabel rows judged before; these rows were in no fit and stay judged (``none``).
"""

from __future__ import annotations

from jalapeno.deploy.deployment import Deployment
from jalapeno.fit.data_quality import MEAN_LENGTH_FRACTION, RESIDUAL_BAND


def implied_gpus(measured: dict, isl: int, osl: int, concurrency: float | None) -> float | None:
    """GPUs a closed-loop row implies (module docstring, step 3), or None without throughput, TTFT or TPOT.

    ``measured``: ``throughput_per_chip`` (tokens/s per GPU, input + output), ``ttft_s``, ``tpot_s`` (s).
    By hand, H200 Dynamo + TRT-LLM 1k/1k C = 1024 (2,315.7 tok/s/GPU, TTFT 1.8319 s, TPOT 31.9 ms):
    E2E = 1.8319 + 920.6 × 0.0319 = 31.199 s, G = 1024 × 1843.2 / (31.199 × 2315.7) = 26.12.

    >>> round(implied_gpus({"throughput_per_chip": 2315.7, "ttft_s": 1.8319, "tpot_s": 0.0319}, 1024, 1024, 1024), 2)
    26.12
    """
    tput, ttft, tpot = (measured.get(k) for k in ("throughput_per_chip", "ttft_s", "tpot_s"))
    if not (tput and ttft and tpot and concurrency):
        return None
    e2e = ttft + (MEAN_LENGTH_FRACTION * osl - 1) * tpot
    return concurrency * MEAN_LENGTH_FRACTION * (isl + osl) / (e2e * tput)


def admits(gpus: int, implied: float | None) -> bool:
    """Whether a layout of ``gpus`` GPUs fits a row implying ``implied`` (None: not known, so every layout does).

    >>> admits(24, 26.12), admits(40, 26.12), admits(3, None)
    (True, False, True)
    """
    return implied is None or RESIDUAL_BAND[0] <= gpus / implied <= RESIDUAL_BAND[1]


def _layout_key(dep: Deployment) -> tuple:
    return tuple((p.workers, p.layout) if p is not None else None for p in (dep.prefill, dep.decode))


def pick(deps: list[Deployment], stated_mtp: bool | None, implied: float | None) -> tuple[Deployment | None, int]:
    """(the one deployment of ``deps`` the rule identifies, or None; how many layouts ran) — steps 2-4.

    ``deps``: every run at the row's concurrency (MTP as stated; both where silent), ``stated_mtp`` the row's
    MTP use (None: silent), ``implied`` its implied GPUs (None: not known).
    """
    layouts = {_layout_key(d) for d in deps}
    kept = [d for d in deps if admits(d.chips, implied)]
    if len({_layout_key(d) for d in kept}) != 1:
        return None, len(layouts)
    if stated_mtp is None:  # silent: the runs without MTP where any ran it, as the search-space rule
        kept = [d for d in kept if d.mtp is None] or kept
    distinct = {repr(d.as_dict()): d for d in kept}
    return (next(iter(distinct.values())) if len(distinct) == 1 else None), len(layouts)


def _why(n_layouts: int, dep: Deployment, implied: float | None) -> str:
    if n_layouts == 1:
        return f"the only layout that ran it ({dep.chips} GPUs)"
    return (
        f"of the {n_layouts} layouts that ran it, the only one whose GPU count the closed-loop identity admits "
        f"({dep.chips} GPUs; the row implies {implied:.2f}, band {RESIDUAL_BAND[0]:g}-{RESIDUAL_BAND[1]:g})"
    )


def identify_run(
    row: dict, system: str, model: str, precision: str, isl: int, osl: int, concurrency: float | None, measured: dict
) -> tuple[Deployment, list[str], str] | None:
    """(deployment, notes, the mapping it replaces) for a best row whose run is identified, else None.

    ``row``: the row's CSV cells (framework, precision, disagg, date, spec); ``precision``: the preset its
    precision cell names (fit/searched.ix_precision). Published ``[[identified]]`` entries first (the
    ``best_entry@concurrency`` path of fit/ix_points.load_inferencex), then the search spaces.
    """
    from jalapeno.deploy.engines import identified_candidates
    from jalapeno.fit.searched import matching_spaces, searched_runs

    if not concurrency:
        return None
    spec = (row.get("spec") or "").strip()
    stated = {"mtp": True, "none": False}.get(spec)
    implied = implied_gpus(measured, isl, osl, concurrency)
    framework = (row.get("framework") or "").strip()
    entries = identified_candidates(system, model, framework, precision, isl, osl, concurrency, stated)
    if len(entries) >= 2:
        deps = [e.deployment() for e in entries]
        dep, n = pick(deps, stated, implied)
        if dep is None:
            return None
        e = next(e for e, d in zip(entries, deps) if repr(d.as_dict()) == repr(dep.as_dict()))
        return (
            dep,
            [
                f"deployment identified as a published entry: of the {len(entries)} entries that ran "
                f"concurrency {concurrency:g}, {_why(n, dep, implied)}: {e.name} ({dep.label}; prefill budget "
                f"{dep.token_budget} per rank; decode max_batch {e.decode_max_batch}); source: {e.source}"
            ],
            "best_entry@concurrency",
        )
    spaces = matching_spaces(
        system, model, row.get("precision", ""), framework, isl, osl, row.get("disagg") or "", row.get("date") or ""
    )
    runs = searched_runs(system, model, isl, osl, spaces, stated, concurrency)
    if not runs:
        return None
    dep, n = pick([d for d, _ in runs], stated, implied)
    if dep is None:
        return None
    used = sorted(
        {
            f"{s.key}: {s.source}"
            for s in spaces
            if any(concurrency in e.concurrencies and (stated is None or e.mtp == stated) for e in s.entries)
        }
    )
    mtp = (
        ""
        if stated is not None
        else " MTP use unspecified: "
        + (
            "predicted without MTP (a run without it ran this layout)"
            if dep.mtp is None
            else "only runs with MTP ran this layout, predicted with MTP"
        )
        + "."
    )
    return (
        dep,
        [
            f"deployment identified by the benchmark's search space in force at the row's date: at "
            f"concurrency {concurrency:g}, {_why(n, dep, implied)}: {dep.label}.{mtp} Source: " + "; ".join(used)
        ],
        "searched_best@concurrency",
    )
