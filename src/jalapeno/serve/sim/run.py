"""One ``jalapeno simulate`` run: its options checked (serve/sim/run_plan.py), its request plan drawn from the
workload (fixed-length in a closed or open loop, agentic sessions, or a trace), the :class:`Simulation` built and run,
and the run's configuration recorded with the result.

Split from serve/sim/simulation.py (round 50, module budget), which re-exports :func:`simulate` (module
``__getattr__``: this module imports that one, so not at import time). Randomness only through
``numpy.random.default_rng(seed)``: same seed, same result.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from jalapeno.deploy.deployment import Deployment
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.serve.limits import running_cap
from jalapeno.serve.sim.run_plan import check_run_options, trace_replay_count
from jalapeno.serve.sim.simulation import SimResult, Simulation
from jalapeno.serve.sim.trace import Trace, first_failing_row
from jalapeno.serve.sim.workloads import AgenticSpec, RequestSpec, fixed_length_requests, open_loop_arrivals
from jalapeno.cost.pricer import Pricer, check_pricer
from jalapeno.specs.precision_checks import check_precision
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.workload import Workload


def simulate(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    *,
    workload: Workload | None = None,
    agentic: AgenticSpec | None = None,
    trace: list[RequestSpec] | None = None,
    concurrency: int | None = None,
    rate: float | None = None,
    arrival: str = "poisson",
    num_requests: int | None = None,
    sessions: int | None = None,
    seed: int = 0,
    prefix_cache: bool = True,
    kv_tiers: bool = True,
    warmup: int | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> SimResult:
    """Simulate ``dep`` serving one workload; exactly one of workload / agentic / trace.

    Closed loop (``concurrency``): fixed-length issues ``warmup`` (default 2·C) uncounted warm-up
    requests in line, then 10·C counted ones (a steady state). ``warmup=0`` is InferenceX's own
    protocol: its ``--num-warmups 2·C`` run as a separate phase that drains before the measured
    run, so the 10·C counted requests start from an idle server with C of them at once
    (utils/bench_serving/benchmark_serving.py, ``benchmark()``).
    agentic runs ``sessions`` (default 2·C) tasks with C in flight. Open loop (``rate``):
    ``num_requests`` (default 1,000) arrivals of the given process. A trace replays its own
    arrival times: its first ``num_requests`` requests by arrival (default
    serve/sim/run_plan.TRACE_DEFAULT_REQUESTS; ``trace_replay_count``), all of them in a shorter trace.

    Raises:
        SpecError: inconsistent options. InfeasibleDeployment: nothing fits.
    """
    if not isinstance(dep, Deployment):  # 'str' object has no attribute 'precision'
        raise SpecError(
            "simulate: dep",
            f"expected a Deployment, got {type(dep).__name__}",
            "pass Deployment(get_precision(name), Pool(Layout(...)))",
        )
    check_run_options(workload, agentic, trace, concurrency, rate, num_requests, sessions, seed, warmup, arrival)
    if workload is not None:
        model.check_context(workload.isl + workload.osl, "--isl/--osl", f"{workload.isl} + {workload.osl} tokens")
    if agentic is not None:  # the longest turn it can draw, said as such (was '~120,000 tokens exceed ... 131072')
        model.check_context(
            agentic.longest_context_tokens,
            "--workload",
            f"{agentic.name}'s last turns (up to "
            f"{agentic.longest_context_tokens:,} tokens: the mean {agentic.final_context_tokens:,} with tool "
            f"outputs and replies drawn {agentic.jitter:.0%} longer)",
            "use a model with a longer context, or an agentic TOML with fewer turns or a smaller jitter",
        )
    check_pricer(pricer, "simulate")
    check_precision(dep.precision, model, pricer.system.chip)
    system = pricer.system
    if dep.chips > system.max_chips:
        raise InfeasibleDeployment(
            "deployment",
            f"{dep.chips} chips exceed {system.name}'s {system.max_chips}",
            "use fewer replicas/workers or smaller layouts",
        )
    rng = np.random.default_rng(seed)
    if workload is not None:
        ctx_ref = workload.decode_ctx
    elif agentic is not None:
        ctx_ref = agentic.final_context_tokens / 2
    else:
        trace = Trace.from_specs(trace)
        rows = len(trace)
        trace = trace.head(trace_replay_count(rows, num_requests))
        first_failing_row(trace, lambda i, o, where: model.check_context(i + o, where, f"{i} + {o} tokens"))
        ctx_ref = float(np.mean(trace.isl + trace.osl / 2))
    sim = Simulation(model, pricer, dep, seed=seed, ctx_ref=ctx_ref, prefix_cache=prefix_cache, kv_tiers=kv_tiers)
    sim.on_progress = on_progress
    config = {
        "model": model.name,
        "system": system.name,
        "deployment": dep.as_dict(),
        "seed": seed,
        "concurrency": concurrency,
        "rate": rate,
        "prefix_cache": prefix_cache,
        "kv_tiers": kv_tiers,
        "running_cap": running_cap(model, pricer, dep, workload),  # as predict's (ux50), + the pool's tokens
    }
    if dep.running_cap_source == "kv_pool":
        config["running_cap"]["kv_tokens"] = next(i.capacity for i in sim.instances if i.role == "decode")
    if workload is not None:
        config["workload"] = workload.as_dict()
        if concurrency is not None:
            n = num_requests or 10 * concurrency
            warm = 2 * concurrency if warmup is None else warmup
            sim.closed_loop(fixed_length_requests(workload, n + warm, rng), concurrency, warm)
        else:
            n = num_requests or 1000
            sim.open_loop(fixed_length_requests(workload, n, rng), open_loop_arrivals(n, rate, arrival, rng))
    elif agentic is not None:
        if concurrency is None:
            raise SpecError("--rate", "agentic sessions run closed loop", "give --concurrency (sessions in flight)")
        config["workload"] = {
            "agentic": agentic.name,
            "turns": agentic.turns,
            "final_context_tokens": agentic.final_context_tokens,
            "think_s": agentic.think_s,
        }
        sim.agentic(agentic, sessions or 2 * concurrency, concurrency)
    else:
        config["workload"] = {"trace": len(trace), "trace_rows": rows}
        sim.open_loop(trace)
    res = sim.run()
    return SimResult(res.summary, res.requests, res.tasks, res.timeseries, config)
