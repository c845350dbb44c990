"""The decode running cap of a disaggregated aiconfigurator row from the InferenceX recipe that ran it (issue 18).

aiconfigurator-core 0.12.0's disaggregated TensorRT-LLM rows exported from InferenceX (``db-dump/``, ``source_file=
2026-03-25.csv`` / ``2026-04-06.csv``: fit/aic_rows.INFERENCEX_EXPORTS; every one names a Dynamo
``ai-dynamo/tensorrtllm-runtime`` image) state the two pools' layouts and worker counts and the run's concurrency
(``decode_batch_size x decode_num_workers``), not the engine limits. The InferenceX sweep that ran them launched each
(layout, concurrency) from one srt-slurm recipe whose file name states the decode worker's ``max_batch_size`` per
attention-DP rank (``ctx1_gen4_tep8_batch4_eplb0_mtp0_24.yaml``: 1 prefill and 4 decode workers at TEP8, decode
``max_batch_size: 4``, concurrency 24; the file itself, InferenceX @792d8aa4b ``benchmarks/multi_node/srt-slurm-
recipes/dsr1/trtllm/gb300-fp8/1k1k/disagg/stp/``, sets ``max_batch_size: 4`` and ``max_num_tokens: 4`` under
``decode``). data/validation/inferencex_search.toml holds those entries (``max_batch``; fit/searched.py).

A decode worker admits at most ``max_batch_size`` requests per attention-DP rank (TensorRT-LLM's PyExecutor
schedules no more, ``tensorrt_llm/_torch/pyexecutor/py_executor.py``); with a closed loop of C users above the pool's
cap N = workers x dp x max_batch, the C − N others hold their prefilled KV and wait for a slot, and the client counts
that wait in TTFT. Little's law gives the mean wait: the pool completes N / S requests per second (S: one request's
decode time), so TTFT + S = C·S/N and the wait is (C/N − 1)·S. serve/analytic.py prices exactly that queue beyond a
cap (``Deployment.max_running``, W = (C − C_cap)/λ_cap). Measured (main @96ffb23, before this rule): GB300 FP8
1k/1k at C = 24 on 4 x TEP8 with batch 4 (N = 16): TTFT 4.15 s, TPOT 9.3 ms: (24/16 − 1) x 1,023 x 9.3 ms = 4.8 s;
the model had 0.22 s.

The rule (:func:`searched_decode_cap`): the entries of every Dynamo + TensorRT-LLM disaggregated space of the row's
system, model, precision and ISL/OSL whose prefill and decode layouts and worker counts equal the row's, that ran its
concurrency, with MTP as the row is priced (its deployment's ``mtp``); if they state one ``max_batch``, it is the
row's cap. Several values: those of the spaces in force at the row's measured date (each key's latest space on or
before it, as fit/searched.matching_spaces reads a dated row); still several or none there: no cap (the row stays
capped by its KV capacity alone). The dates are not required first because the table samples the configs at fixed
dates (2025-12-15, 2026-01-29, 2026-02-05, ...) and a sweep measured between two samples (the GB300 FP4 sweep of
2026-02-03, InferenceX #618) is held by the next one; an exact match of both pools' layouts, worker counts and the
concurrency is taken as the recipe that ran it (assumption).

Two more forms state the cap (round 25, kimidp25; scripts/inferencex_search_space.py reads both): the 2025 Dynamo +
TensorRT-LLM entries set it inline (``DECODE_MAX_BATCH_SIZE``) and Dynamo's benchmark ran their ``conc-list`` per
decode worker (the 2025-12-19 GB200 FP4 sweep's 4 x TEP8 entry: 141 -> 564 users, above 4 x 128); the
``dynamo-vllm`` recipes set vLLM's decode ``max-num-seqs`` (per engine, one engine per data-parallel rank: the 8k/1k
4 x TEP4 Kimi K2.5 recipe's 16 holds 64 of 128 users). The vLLM rows reach their entry once their pools read as
the recipes run them (fit/aic_sweep_layouts.with_sweep_config_layouts).
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.fit.searched import SearchSpace, ix_precision, latest_of_each_key, search_spaces

#: the aiconfigurator backend -> the InferenceX framework whose entries state a decode max_batch (TensorRT-LLM's
#: srt-slurm recipe file names and bodies, or the 2025 entries' inline ``DECODE_MAX_BATCH_SIZE``; vLLM's recipe
#: ``max-num-seqs``, per engine, and vLLM runs one engine per data-parallel rank; the SGLang spaces state none)
RECIPE_FRAMEWORKS = {"trtllm": "dynamo-trt", "vllm": "dynamo-vllm"}


def _pool_key(pool: Pool) -> tuple:
    lay = pool.layout
    return lay.tp, lay.dp, lay.ep, lay.pp, pool.workers


def searched_decode_cap(
    system: str,
    model: str,
    precision: str,
    isl: int,
    osl: int,
    dep: Deployment,
    concurrency: float,
    date: str,
    framework: str = "dynamo-trt",
    spaces: tuple[SearchSpace, ...] | None = None,
) -> tuple[int | None, str]:
    """(decode ``max_batch`` per attention-DP rank, its source) of the recipe that ran a disaggregated row
    (module docstring: the rule); (None, "") when no entry, or no single one, says. ``precision``: the row's
    preset (``fp4``, ``fp8``); ``date``: its measured UTC date (``YYYY-MM-DD``; "" = none known).

    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> d = Deployment(get_precision("fp8"), Pool(Layout(tp=8, ep=8), 4), prefill=Pool(Layout(dp=4, ep=4)))
    >>> searched_decode_cap("gb300-nvl72", "deepseek-r1", "fp8", 1024, 1024, d, 24, "2026-02-07")[0]
    4
    >>> searched_decode_cap("gb300-nvl72", "deepseek-r1", "fp8", 1024, 1024, d, 25, "2026-02-07")
    (None, '')
    """
    if dep.prefill is None:
        return None, ""
    mtp = dep.mtp is not None
    want = (_pool_key(dep.prefill), _pool_key(dep.decode))
    hits = [
        (s, e.max_batch)
        for s in (search_spaces() if spaces is None else spaces)
        if s.disagg
        and s.framework == framework
        and (s.system, s.model, s.isl, s.osl) == (system, model, isl, osl)
        and ix_precision(model, s.precision.upper(), system) == precision
        for e in s.entries
        if e.prefill is not None
        and e.max_batch
        and e.mtp == mtp
        and concurrency in e.concurrencies
        and (_pool_key(e.prefill), _pool_key(e.decode)) == want
    ]
    if len({b for _, b in hits}) > 1 and date:  # the spaces in force at the row's date (as matching_spaces reads it)
        keep = {(s.key, s.date) for s in latest_of_each_key([s for s, _ in hits if s.date <= date])}
        hits = [(s, b) for s, b in hits if (s.key, s.date) in keep]
    if len({b for _, b in hits}) != 1:
        return None, ""
    s, b = hits[0]
    return b, f"{s.key} {s.isl}/{s.osl} space of {s.date} ({s.source.split(';')[0]})"


def with_searched_decode_cap(
    dep: Deployment,
    backend: str,
    system: str,
    model: str,
    precision: str,
    isl: int,
    osl: int,
    concurrency: float,
    date: str,
) -> tuple[Deployment, str]:
    """(deployment, note): a disaggregated InferenceX-exported row of a :data:`RECIPE_FRAMEWORKS` backend with its
    recipe's decode ``max_batch_size`` as ``max_running`` per attention-DP rank (``budget_per = "rank"``, as
    fit/searched.searched_runs gives the same entry); ``dep`` and "" for other rows, rows with a running cap
    already, and rows no single recipe entry describes (:func:`searched_decode_cap`).
    """
    if dep.prefill is None or dep.max_running is not None or backend not in RECIPE_FRAMEWORKS:
        return dep, ""
    cap, source = searched_decode_cap(
        system, model, precision, isl, osl, dep, concurrency, date, RECIPE_FRAMEWORKS[backend]
    )
    if cap is None:
        return dep, ""
    out = replace(dep, max_running=cap, budget_per="rank")
    pool = cap * dep.decode.layout.dp * dep.decode.workers
    knob = "max-num-seqs" if backend == "vllm" else "max_batch_size"
    return out, (
        f"decode {knob} {cap} per attention-DP rank ({pool} requests over the decode pool at "
        f"concurrency {concurrency:g}) from the recipe InferenceX ran this layout and load with: {source} "
        "(fit/aic_decode_caps.py)"
    )


def above_decode_cap(dep: Deployment | None, concurrency: float | None) -> bool:
    """Whether a disaggregated run of ``concurrency`` users exceeds its decode pool's running cap (``max_running``
    per attention-DP rank x dp x workers), so that C − N users wait for a decode slot and its TTFT holds that queue.

    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> d = Deployment(get_precision("fp8"), Pool(Layout(tp=8, ep=8), 4), prefill=Pool(Layout(dp=4, ep=4)),
    ...                max_running=4, budget_per="rank")
    >>> above_decode_cap(d, 24), above_decode_cap(d, 16), above_decode_cap(replace(d, max_running=None), 24)
    (True, False, False)
    """
    if dep is None or dep.prefill is None or dep.max_running is None or not concurrency:
        return False
    return concurrency > dep.max_running * dep.decode.layout.dp * dep.decode.workers
