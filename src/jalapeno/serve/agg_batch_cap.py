"""The largest decode batch one aggregated instance sustains, and the limit that caps it (``PointRecord.limit``).

:func:`aggregated_batch_cap`: the smallest of the KV capacity at the mean resident context
(deploy/kv_capacity.decode_batch_cap; with an SGLang memory profile its admission rule,
deploy/kv_capacity.admission_batch_cap), the prefill token budget and the engine limits (serve/limits.batch_caps);
:func:`_chunk`: a prompt's chunk within one rank's budget, which the cap's prefill share and serve/analytic's
step loads both read. Split from serve/analytic.py (round 53, line budget), which re-exports both names.
"""

from __future__ import annotations

from jalapeno.cost.pricer import Pricer
from jalapeno.deploy.deployment import Deployment
from jalapeno.deploy.kv_capacity import admission_batch_cap, decode_batch_cap
from jalapeno.deploy.mtp import query_len
from jalapeno.serve.kv_admission import cohort_admission_osl
from jalapeno.serve.limits import batch_caps
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload


def _chunk(dep: Deployment, isl: float) -> float:
    """A prompt's chunk: its length within one rank's budget (Deployment.prompt_budget)."""
    return float(min(isl, dep.prompt_budget(dep.decode.layout)))


def aggregated_batch_cap(model: ModelSpec, pricer: Pricer, dep: Deployment, wl: Workload) -> tuple[float, str]:
    """Largest decode batch one aggregated instance sustains, and what caps it.

    Caps: KV capacity at the mean resident context (ISL + OSL/2, or a length spread's
    output-token-weighted mean, Workload.decode_ctx) for the decoding sequences and
    the prefilling ones beside them (deploy/kv_capacity.decode_batch_cap) — with an SGLang memory
    profile, the running requests its admission rule keeps (deploy/kv_capacity.admission_batch_cap), of
    which the decoding share D·chunk/(D·chunk + ISL) —, the prefill budget
    (p = B·ISL/D ≤ token budget) and the engine limits ``max_running`` and
    ``max_tokens_per_step`` (serve/limits.batch_caps). Ties go to kv_capacity, max_running,
    prefill_budget, max_tokens_per_step, in that order.
    """
    a = dep.mtp.tokens_per_step if dep.mtp else 1.0
    steps = (wl.mean_osl - 1) / a
    ctx = wl.decode_ctx
    lay = dep.decode.layout
    chunk = _chunk(dep, wl.mean_isl)
    kv = decode_batch_cap(
        model,
        pricer.system,
        lay,
        dep.precision,
        ctx,
        pricer.efficiency,
        dep.mtp,
        float(dep.prefill_budget(lay)),
        wl.mean_isl / (steps * chunk),
        memory_fraction=dep.memory_fraction,
        engine=dep.memory_profile,
    )
    prof = dep.memory_profile
    if prof is not None and prof.rule == "sglang":  # the engine admits by reserved tokens, not by use

        def count(osl: float) -> float:
            return admission_batch_cap(
                model, pricer.system, lay, dep.precision, prof, wl.mean_isl, osl, dep.memory_fraction, dep.mtp
            )

        osl = cohort_admission_osl(count, wl) if prof.ignore_eos_admission else wl.mean_osl  # serve/kv_admission.py
        kv = min(kv, count(osl) * (steps * chunk) / (steps * chunk + wl.mean_isl))
    budget_cap = dep.prefill_budget(lay) * steps / wl.mean_isl * lay.pp
    engine = batch_caps(dep, query_len(dep.mtp), wl.mean_isl / steps, lay.pp, layout=lay)
    caps = {"kv_capacity": kv, "max_running": engine.pop("max_running"), "prefill_budget": budget_cap, **engine}
    name = min(caps, key=caps.get)
    return caps[name], name
