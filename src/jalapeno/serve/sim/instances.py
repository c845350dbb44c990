"""The instances of a simulated deployment (serve/sim/simulation.Simulation): one per worker of each pool (``agg``, or
``prefill`` and ``decode``), each with its step timer (serve/sim/step_time.py), KV capacity in tokens, prefix cache
with the system's lower KV tiers, and its engine's admission settings (serve/sim/scheduler.Instance).

Split from serve/sim/simulation.py (round 50, module budget): ``Simulation.__init__``'s instance loop
(:func:`build_instances`), ``_capacity_tokens`` and ``Simulation._lower_tiers`` (:func:`lower_tiers`).
"""

from __future__ import annotations

import numpy as np

from jalapeno.deploy.deployment import Deployment, pool_overlap
from jalapeno.deploy.layout import validate_layout
from jalapeno.deploy.memory_fit import kv_bytes_per_seq_per_chip
from jalapeno.deploy.kv_capacity import decode_batch_cap, kv_capacity_seqs
from jalapeno.errors import InfeasibleDeployment
from jalapeno.serve import kv_admission
from jalapeno.serve.batch_wait import instance_kw as batch_wait_kw
from jalapeno.serve.sim import adp_gate
from jalapeno.serve.limits import prompt_floor_s
from jalapeno.serve.overlap_loop import lag_steps
from jalapeno.serve.sim.entities import LowerTier, PrefixCache
from jalapeno.serve.sim.scheduler import Instance
from jalapeno.serve.sim.step_time import StepTimer
from jalapeno.cost.pricer import Pricer
from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.specs.model import ModelSpec


def _capacity_tokens(
    model,
    pricer: Pricer,
    layout,
    precision,
    ctx_ref: float,
    budget: int,
    mtp,
    memory_fraction: float | None = None,
    engine=None,
) -> float:
    """KV tokens one instance holds: the decode-batch cap at the reference context x that context
    (``engine``: the deployment's engine memory profile, Deployment.memory_profile; an SGLang
    profile's pool is a fixed number of tokens, SGLang's ``max_total_num_tokens``)."""
    if engine is not None and engine.rule == "sglang":  # the pool in tokens: capacity at a 1-token context
        return float(
            kv_capacity_seqs(
                model,
                pricer.system,
                layout,
                precision,
                np.array([1.0]),
                0.0,
                pricer.efficiency,
                mtp=mtp,
                memory_fraction=memory_fraction,
                engine=engine,
            )[0]
        )
    return (
        decode_batch_cap(
            model,
            pricer.system,
            layout,
            precision,
            ctx_ref,
            pricer.efficiency,
            mtp,
            float(budget),
            memory_fraction=memory_fraction,
            engine=engine,
        )
        * ctx_ref
    )


def lower_tiers(model: ModelSpec, system, precision, layout) -> list[LowerTier]:
    """The system's usable KV tiers below HBM (specs/kv_tiers.py) in tokens per instance."""
    kv1 = float(kv_bytes_per_seq_per_chip(model, layout, precision, 1.0))
    return [
        LowerTier(t.name, t.capacity_bytes * layout.dp * layout.cp / kv1, t.bandwidth_bytes_per_s, t.latency_s)
        for t in system.kv_tiers
        if t.usable
    ]


def build_instances(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    rng: np.random.Generator,
    *,
    ctx_ref: float,
    prefix_cache: bool,
    kv_tiers: bool,
) -> list[Instance]:
    """The instances of ``dep``, ids in order (the prefill pool's first), sized at the reference context ``ctx_ref``
    (tokens); ``rng``: the simulation's own stream (MTP draws); ``prefix_cache`` / ``kv_tiers``: as
    :class:`~jalapeno.serve.sim.simulation.Simulation` takes them.

    Raises:
        SpecError: a layout the model or system cannot take (deploy/layout.validate_layout).
        InfeasibleDeployment: a layout that leaves no HBM for the KV cache.
    """
    system, eff = pricer.system, pricer.efficiency
    instances: list[Instance] = []
    pools = [("agg", dep.decode)] if dep.prefill is None else [("prefill", dep.prefill), ("decode", dep.decode)]
    prof, fl = dep.memory_profile, {role: prompt_floor_s(model, dep, pool, pricer) for role, pool in pools}
    for role, pool in pools:
        validate_layout(pool.layout, model, system, role)
        # a decode-only worker runs no prompt chunk: no activations for a prefill budget in its pool
        budget = 0 if role == "decode" and kv_admission.DECODE_ADMISSION_ON else dep.prefill_budget(pool.layout)
        cap = _capacity_tokens(
            model,
            pricer,
            pool.layout,
            dep.precision,
            ctx_ref,
            budget,
            dep.mtp if role != "prefill" else None,
            dep.memory_fraction,
            dep.memory_profile,
        )
        if cap <= 0:
            raise InfeasibleDeployment(
                "deployment",
                f"the {role} layout {pool.layout.label} leaves no HBM for the KV cache",
                "shard wider or use a smaller precision",
            )
        timer = StepTimer(
            model,
            with_pool_backends(pricer, pool, model, pool.layout, dep.precision.kv_cache.name),
            pool.layout,
            dep.precision,
            dep.mtp if role != "prefill" else None,
            prompt_floor=fl[role],
            cuda_graph_max_batch=dep.cuda_graph_max_batch,
            graph_sizes=dep.cuda_graph_batch_sizes,
            pad_routing=dep.cuda_graph_pad_routing,
            overlap=pool_overlap(dep.overlap, model, pool.layout),
        )
        for _ in range(pool.workers):
            cache = PrefixCache(
                enabled=prefix_cache,
                lower=lower_tiers(model, system, dep.precision, pool.layout) if kv_tiers and role != "decode" else [],
            )
            instances.append(
                Instance(
                    len(instances),
                    role,
                    timer,
                    pool.layout.chips,
                    cap,
                    dep.worker_running_limit(pool.layout, role, cap),
                    dep.prefill_budget(pool.layout),
                    cache,
                    dep.mtp,
                    rng,
                    dep.step_token_cap(pool.layout),
                    dep.recv_interval if role == "agg" else 1,
                    reserve_outputs=prof is not None and prof.ignore_eos_admission,
                    prefill_first=dep.prefill_steps == "separate",
                    prebuilt=eff.disagg_handshake != "none",
                    admission_lag=lag_steps(eff, dep, pool.layout),
                    adp_gate=_adp_gate(dep, pool.layout, role),
                    **batch_wait_kw(dep, pool.layout),
                )
            )
    return instances


def _adp_gate(dep, layout, role: str) -> adp_gate.AdpGate | None:
    """An aggregated instance's attention-DP balancing gate (serve/sim/adp_gate.py), or None: off
    (:data:`~jalapeno.serve.sim.adp_gate.SIM_ADP_GATE_ON`), no ``timeout_iters``, one rank, or no running cap (the
    per-rank slots are ``max_running`` counted per rank, serve/admission_waits.running_slots, over the ranks)."""
    from jalapeno.serve.admission_waits import running_slots

    ranks = layout.dp * layout.pp
    slots = running_slots(dep, layout)
    if (
        not adp_gate.SIM_ADP_GATE_ON
        or role != "agg"
        or dep.adp_balance_timeout_iters is None
        or ranks <= 1
        or slots is None
    ):
        return None
    return adp_gate.AdpGate(ranks, int(round(slots / ranks)), dep.adp_balance_timeout_iters)
