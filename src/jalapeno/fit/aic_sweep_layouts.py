"""How an aiconfigurator row's sweep restates its MoE layout: the launch scripts' expert parallelism where the
row's fields say otherwise (split from fit/aic_sweeps.py, which reads the sweeps; fit/aic_rows.py applies both).

- :func:`with_sweep_expert_parallel`: an aggregated row whose script always turns MoE EP on over every chip (vLLM's
  ``--enable-expert-parallel`` whatever the configuration's ``ep``; SGLang's ``--enable-ep-moe`` / ``--ep-size``), or
  whose script never does while the fields say EP (``no_expert_parallel``); a disaggregated row whose scripts run
  attention-DP pools with DeepEP (:func:`_dp_attention_ep`) or, in their low-latency modes, both pools at tensor
  parallelism (:func:`_low_latency_tp`).
- :func:`with_sweep_dp_dispatch`: a disaggregated row whose decode server put each request on a random attention-DP
  rank (``decode_dp_dispatch``).
- :func:`with_sweep_dp_attention`: an aggregated row whose TensorRT-LLM script turned attention DP on above a
  concurrency (its ``DP_ATTENTION`` switch), where the row's fields write attention TP (``dp_attention_from``).
- :func:`with_sweep_config_layouts`: a disaggregated row whose recipes run the pools its configuration marks
  ``dp-attn`` at attention DP, where the row's fields write the configuration's ``tp`` (``config_dp_attention``).
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.errors import SpecError
from jalapeno.fit.aic_sweeps import Sweep


def _dp_attention_ep(dep, sweep: Sweep):
    """(deployment, note): each pool of a disaggregated ``dep`` that runs attention DP over all its chips
    (TP 1, DP k > 1) and MoE TP k in the row's fields, with MoE EP k instead (``Sweep.dp_attention_ep``).

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("gb200-nvl72", "deepseek-r1", "sglang", "0.5.5.post2", "fp4", "2025-12-21", "k", "none", "",
    ...           dp_attention_ep=True)
    >>> d, note = _dp_attention_ep(Deployment(get_precision("fp4"), Pool(Layout(dp=32), 1),
    ...                                       prefill=Pool(Layout(tp=4), 1)), s)
    >>> d.decode.layout.label, d.prefill.layout.label
    ('attn TP1 DP32 · MoE TP1 EP32', 'attn TP4 DP1 · MoE TP4 EP1')
    """

    def dep_pool(lay):
        return replace(lay, ep=lay.stage_chips) if lay.tp == 1 and lay.dp > 1 and lay.ep == 1 else lay

    return _restated(
        dep,
        dep_pool,
        lambda old, new: f"DEP{old.dp} (fields: MoE TP{old.moe_tp} EP1)",
        f"InferenceX sweep {sweep.config_key}'s scripts run attention-DP pools with DeepEP expert "
        "parallelism (data/validation/aic_sweeps.toml)",
    )


def _restated(dep, relayout, describe, why: str):
    """(deployment, note): ``dep`` with each pool's layout ``relayout(layout)``, the note naming every pool that
    changed (``describe(old, new)``) and ``why``; ``dep`` and "" where none changes."""
    pools, moved = {}, []
    for role in ("prefill", "decode"):
        pool = getattr(dep, role)
        new = relayout(pool.layout)
        if new != pool.layout:
            pools[role] = replace(pool, layout=new)
            moved.append(f"{role} {describe(pool.layout, new)}")
    return (replace(dep, **pools), f"{', '.join(moved)}: {why}") if moved else (dep, "")


def _is_low_latency(dep, sweep: Sweep) -> bool:
    """Whether a disaggregated row ran its sweep's low-latency scripts (its decode pool spans
    ``sweep.low_latency_tp_chips`` chips)."""
    return bool(sweep.low_latency_tp_chips) and dep.decode.layout.stage_chips == sweep.low_latency_tp_chips


def _low_latency_tp(dep, sweep: Sweep):
    """(deployment, note): both pools of a disaggregated ``dep`` whose decode pool spans
    ``sweep.low_latency_tp_chips`` chips at tensor parallelism over each pool's chips (attention TP N, DP 1, MoE
    TP N, EP 1), as the sweep's low-latency scripts run them; ``dep`` and "" for other rows or pools already so.

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("gb200-nvl72", "deepseek-r1", "sglang", "0.5.5.post2", "fp4", "2025-12-21", "k", "none", "",
    ...           dp_attention_ep=True, low_latency_tp_chips=4)
    >>> d, note = _low_latency_tp(Deployment(get_precision("fp4"), Pool(Layout(dp=4), 2),
    ...                                      prefill=Pool(Layout(dp=4), 1)), s)
    >>> d.decode.layout.label, d.prefill.layout.label, d.decode.workers
    ('attn TP4 DP1 · MoE TP4 EP1', 'attn TP4 DP1 · MoE TP4 EP1', 2)
    >>> _low_latency_tp(Deployment(get_precision("fp4"), Pool(Layout(dp=32), 1), prefill=Pool(Layout(dp=4), 4)), s)[1]
    ''
    """
    if not _is_low_latency(dep, sweep):
        return dep, ""
    return _restated(
        dep,
        lambda lay: replace(lay, tp=lay.stage_chips, dp=1, ep=1),
        lambda old, new: f"TP{new.tp} (fields: {old.label})",
        f"InferenceX sweep {sweep.config_key}'s low-latency scripts run both pools at --tp-size "
        f"{sweep.low_latency_tp_chips} --dp-size 1 --ep-size 1 (data/validation/aic_sweeps.toml)",
    )


#: engine -> the flag its scripts run MoE EP over every chip with (``expert_parallel``; vLLM's otherwise)
_EP_FLAG = {"sglang": "--enable-ep-moe / --ep-size = --tp-size", "trtllm": "--ep_size = --tp_size"}


def with_sweep_expert_parallel(dep, sweep: Sweep | None):
    """(deployment, note) of an aggregated row whose sweep's launch script always passes vLLM's
    ``--enable-expert-parallel`` (``expert_parallel``): ``dep`` with MoE EP over every chip of its
    instance (``ep = tp * dp``, MoE TP 1: each chip holds whole experts, vLLM's expert-parallel layout),
    where the row's fields say MoE TP; for a disaggregated row of a sweep's low-latency scripts
    (``low_latency_tp_chips``) both pools at tensor parallelism (:func:`_low_latency_tp`), else, where the sweep says
    ``dp_attention_ep``, each attention-DP pool with MoE EP over its chips (:func:`_dp_attention_ep`); for a row
    whose sweep's script never passes the flag (``no_expert_parallel``), ``dep`` with MoE TP over the instance's
    chips (``ep = 1``) where the fields say MoE EP. ``dep`` and "" otherwise (no such sweep, one chip, or the layout
    already the script's).

    Why it matters: under MoE TP every chip reads its 1/tp slice of each expert the step touches; under EP
    the busiest chip reads the whole experts routed to it, more at small batches (cost/moe.py).

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("h200", "minimax-m2.5", "vllm", "0.18.0", "fp8", "2026-03-27", "k", "none", "", expert_parallel=True)
    >>> d, note = with_sweep_expert_parallel(Deployment(get_precision("fp8"), Pool(Layout(tp=8))), s)
    >>> d.decode.layout.label
    'attn TP8 DP1 · MoE TP1 EP8'
    >>> with_sweep_expert_parallel(Deployment(get_precision("fp8"), Pool(Layout(tp=8, ep=8))), s)[1]
    ''
    >>> k = Sweep("b200", "kimi-k2.5", "vllm", "0.17.0", "fp4", "2026-03-11", "k", "none", "", no_expert_parallel=True)
    >>> with_sweep_expert_parallel(Deployment(get_precision("fp4"), Pool(Layout(tp=4, ep=4))), k)[0].decode.layout.label
    'attn TP4 DP1 · MoE TP4 EP1'
    """
    if sweep is not None and dep is not None and dep.prefill is not None:
        if _is_low_latency(dep, sweep):
            return _low_latency_tp(dep, sweep)
        if sweep.dp_attention_ep:
            return _dp_attention_ep(dep, sweep)
    if (
        sweep is None
        or dep is None
        or dep.prefill is not None
        or not (sweep.expert_parallel or sweep.no_expert_parallel)
    ):
        return dep, ""
    lay = dep.decode.layout
    if sweep.no_expert_parallel:
        if lay.ep == 1 or lay.dp > 1:
            return dep, ""
        tp = replace(lay, ep=1)
        return (
            replace(dep, decode=replace(dep.decode, layout=tp)),
            f"MoE TP{tp.moe_tp} (fields: MoE TP{lay.moe_tp} EP{lay.ep}): InferenceX sweep {sweep.config_key}'s launch "
            "script passes no --enable-expert-parallel (data/validation/aic_sweeps.toml)",
        )
    if lay.stage_chips == 1 or lay.ep == lay.stage_chips:
        return dep, ""
    ep = replace(lay, ep=lay.stage_chips)
    return (
        replace(dep, decode=replace(dep.decode, layout=ep)),
        f"MoE EP{ep.ep} (fields: MoE TP{lay.moe_tp} EP{lay.ep}): InferenceX sweep {sweep.config_key}'s launch script "
        f"always passes {_EP_FLAG.get(sweep.engine, '--enable-expert-parallel')} (data/validation/aic_sweeps.toml)",
    )


def dp_attention_pairs(table, field: str = "dp_attention_from") -> tuple[tuple[str, int], ...]:
    """A sweep's ``dp_attention_from`` table (workload -> the first CONC its script runs with attention DP) as sorted
    (workload, CONC) pairs (``Sweep.dp_attention_from``).

    >>> dp_attention_pairs({"8k1k": 33, "1k1k": 256})
    (('1k1k', 256), ('8k1k', 33))

    Raises:
        SpecError: not a non-empty table of "NkMk" workloads to whole concurrencies >= 1 (naming ``field``).
    """
    import re

    if (
        not isinstance(table, dict)
        or not table
        or any(re.fullmatch(r"\d+k\d+k", str(k)) is None for k in table)
        or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in table.values())
    ):
        raise SpecError(
            field,
            repr(table),
            "write the launch script's DP_ATTENTION switch as a table of workload to "
            'the first CONC with attention DP on, e.g. { "1k1k" = 256, "8k1k" = 33 } for "CONC -ge 256" '
            'and "CONC -gt 32", or leave it out',
        )
    return tuple(sorted(table.items()))


def with_sweep_dp_attention(dep, sweep: Sweep | None, isl: int, osl: int, concurrency: float):
    """(deployment, note): an aggregated ``dep`` at attention TP over its instance's chips whose sweep's script turned
    attention DP on at the row's workload and ``concurrency`` (``dp_attention_from``): the same chips at attention DP
    (attention TP1, DP = the chips), its MoE layout kept (every such script passes ``--ep_size`` = TP with it);
    ``dep`` and "" for other rows, loads below the switch, or layouts already at attention DP.

    Source (data/validation/aic_sweeps.toml, the 2025-11-02 TensorRT-LLM DeepSeek-R1 entries): SemiAnalysisAI/InferenceX
    benchmarks/dsr1_fp{4,8}_*_trt_slurm.sh @9596d23d7 set ``DP_ATTENTION=true`` by ISL/OSL and CONC and write it into
    the extra LLM options (``enable_attention_dp: $DP_ATTENTION``, with ``attention_dp_config`` enable_balance,
    timeout_iters 60), passing ``--tp_size=$TP`` either way; the sample's rows of that date write ``attention_dp_size``
    1. What attention DP changes: each rank runs its own requests' attention and KV cache (CONC / TP a rank), its own
    scheduler and ``max_num_tokens`` (fit/aic_sweep_launch.with_sweep_token_limit), the attention-DP context balancing
    (fit/aic_sweep_launch.with_sweep_launch) and the host calls of the attention-DP path (cost/host_calls.tp_ep_calls).
    Not restated: the MoE backend the FP4 script switches to with it (``MOE_BACKEND="CUTLASS"``; ``TRTLLM``
    otherwise): priced by the shipped CUTLASS curve it fits these rows and misfits the later FP4 sweeps' attention-DP
    rows whose scripts switch alike (docs/gap_aic_ttft.md, round 29), so every such row keeps the calibrated set.

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("b200", "deepseek-r1", "trtllm", "", "fp4", "2025-11-02", "k", "none", "",
    ...           dp_attention_from=(("1k1k", 256), ("8k1k", 33)))
    >>> d = Deployment(get_precision("fp4"), Pool(Layout(tp=8, ep=8)))
    >>> with_sweep_dp_attention(d, s, 8192, 1024, 64)[0].decode.layout.label
    'attn TP1 DP8 · MoE TP1 EP8'
    >>> with_sweep_dp_attention(d, s, 1024, 1024, 128)[1], with_sweep_dp_attention(d, s, 1024, 8192, 256)[1]
    ('', '')
    """
    from jalapeno.deploy.recipe import workload_key

    if sweep is None or dep is None or dep.prefill is not None or not sweep.dp_attention_from:
        return dep, ""
    start = dict(sweep.dp_attention_from).get(workload_key(isl, osl))
    lay = dep.decode.layout
    if start is None or concurrency < start or lay.dp > 1 or lay.tp == 1:
        return dep, ""
    dp = replace(lay, tp=1, dp=lay.tp)
    return (
        replace(dep, decode=replace(dep.decode, layout=dp)),
        f"attention DP{dp.dp} (fields: attention TP{lay.tp}): InferenceX sweep {sweep.config_key}'s launch script "
        f"sets enable_attention_dp from CONC {start} at {workload_key(isl, osl)} (data/validation/aic_sweeps.toml)",
    )


def with_sweep_dp_dispatch(dep, sweep: Sweep | None):
    """(deployment, note): a disaggregated ``dep`` whose decode pool runs attention DP (dp > 1) with the sweep's
    ``decode_dp_dispatch`` (deploy/layout.Layout.dp_dispatch; cost/adp_rank.busiest_rank_decode prices the fullest
    rank); ``dep`` and "" for other rows, balanced sweeps, or a decode pool without attention DP.

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("gb200-nvl72", "deepseek-r1", "sglang", "0.5.5.post2", "fp8", "2025-12-21", "k", "none", "",
    ...           decode_dp_dispatch="random")
    >>> d, note = with_sweep_dp_dispatch(Deployment(get_precision("fp8"), Pool(Layout(dp=32, ep=32)),
    ...                                             prefill=Pool(Layout(dp=8, ep=8), 2)), s)
    >>> d.decode.layout.label, d.prefill.layout.dp_dispatch
    ('attn TP1 DP32 · MoE TP1 EP32 · DP dispatch random', 'balanced')
    >>> with_sweep_dp_dispatch(Deployment(get_precision("fp8"), Pool(Layout(tp=4)), prefill=Pool(Layout(tp=4))), s)[1]
    ''
    """
    if sweep is None or dep is None or dep.prefill is None or sweep.decode_dp_dispatch == "balanced":
        return dep, ""
    lay = dep.decode.layout
    if lay.dp == 1 or lay.dp_dispatch == sweep.decode_dp_dispatch:
        return dep, ""
    return (
        replace(dep, decode=replace(dep.decode, layout=replace(lay, dp_dispatch=sweep.decode_dp_dispatch))),
        f"decode DP dispatch {sweep.decode_dp_dispatch}: InferenceX sweep {sweep.config_key}'s decode server sends "
        "each request to rank bootstrap_room % dp with a random room (data/validation/aic_sweeps.toml)",
    )


def _pool_shape(pool) -> tuple[int, int, int, int]:
    """(chips per worker, MoE EP, pipeline stages, workers): what a row's fields and a search-space entry share
    whether the pool runs attention TP or DP."""
    lay = pool.layout
    return lay.stage_chips, lay.ep, lay.pp, pool.workers


def with_sweep_config_layouts(dep, sweep: Sweep | None, isl: int, osl: int, concurrency: float, spaces=None):
    """(deployment, note): a disaggregated ``dep`` of a ``config_dp_attention`` sweep with each pool's layout the one
    of the search-space entry (fit/searched.search_spaces, key ``sweep.config_key``, ``isl``/``osl``) that ran the
    row: the entries that ran ``concurrency`` whose two pools have the row's chips per worker, MoE EP and workers.
    ``dep`` and "" for other rows, rows no entry (or several layouts) describes, or pools already so.

    Source (the one sweep so marked, data/validation/aic_sweeps.toml): InferenceX ``kimik2.5-fp4-gb200-dynamo-vllm``
    (@235b232d2) marks every prefill pool and the 16- and 8-chip decode pools ``dp-attn: true``; their NVIDIA/srt-slurm
    recipes (@8294e64e, recipes/vllm/kimi-k2.5/) run them ``tensor-parallel-size: 1``, ``data-parallel-size`` = the
    pool's chips, ``enable-expert-parallel``; the rows write ``prefill_tp_size`` 4, ``decode_tp_size`` 16.

    >>> from jalapeno.deploy.deployment import Deployment, Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.fit.searched import SearchEntry, SearchSpace
    >>> from jalapeno.specs.formats import get_precision
    >>> s = Sweep("gb200-nvl72", "kimi-k2.5", "vllm", "0.18.0", "fp4", "2026-04-07", "k", "none", "",
    ...           config_dp_attention=True)
    >>> e = SearchEntry(Pool(Layout(dp=16, ep=16)), Pool(Layout(dp=4, ep=4)), False, (256, 512))
    >>> sp = (SearchSpace("k", "gb200-nvl72", "kimi-k2.5", "fp4", "dynamo-vllm", True, 1024, 1024, "2026-04-19", "",
    ...                   (e,)),)
    >>> d = Deployment(get_precision("fp4"), Pool(Layout(tp=16, ep=16)), prefill=Pool(Layout(tp=4, ep=4)))
    >>> r, note = with_sweep_config_layouts(d, s, 1024, 1024, 512, sp)
    >>> r.prefill.layout.label, r.decode.layout.label
    ('attn TP1 DP4 · MoE TP1 EP4', 'attn TP1 DP16 · MoE TP1 EP16')
    >>> with_sweep_config_layouts(d, s, 1024, 1024, 128, sp)[1]  # no entry ran 128 users on these pools
    ''
    """
    if sweep is None or dep is None or dep.prefill is None or not sweep.config_dp_attention:
        return dep, ""
    from jalapeno.fit.searched import search_spaces

    want = (_pool_shape(dep.prefill), _pool_shape(dep.decode))
    found = {
        (e.prefill.layout, e.decode.layout)
        for s in (search_spaces() if spaces is None else spaces)
        if (s.key, s.isl, s.osl) == (sweep.config_key, isl, osl) and s.disagg
        for e in s.entries
        if e.prefill is not None
        and concurrency in e.concurrencies
        and (_pool_shape(e.prefill), _pool_shape(e.decode)) == want
    }
    if len(found) != 1:
        return dep, ""
    pools, moved = {}, []
    for role, lay in zip(("prefill", "decode"), found.pop()):
        old = getattr(dep, role).layout
        if (lay.tp, lay.dp) != (old.tp, old.dp):
            pools[role] = replace(getattr(dep, role), layout=replace(old, tp=lay.tp, dp=lay.dp))
            moved.append(f"{role} attention TP{lay.tp} DP{lay.dp} (fields: TP{old.tp} DP{old.dp})")
    if not moved:
        return dep, ""
    return replace(dep, **pools), (
        f"{', '.join(moved)}: the recipe InferenceX sweep {sweep.config_key} ran this "
        "layout and load with runs the pools its configuration marks dp-attn at "
        "data-parallel attention (data/validation/aic_sweeps.toml)"
    )
