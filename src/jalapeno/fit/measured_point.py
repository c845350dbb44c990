"""A measured serving result (:class:`MeasuredPoint`) and what it is priced with.

A point carries its source's id, system, model, precision, engine, lengths, concurrency, the deployment it ran
(when known), the measured metrics and the mapping that predicts it (fit/validate.py lists the mappings). What it
is priced with follows from its fields: the engine release that ran it (:func:`point_release`), its software-stack
profile at that release with its client's front end and its build's fusions (:func:`point_stack`), the lengths it
served (:func:`point_workload`) and an engine harness's term per step (:func:`with_harness_step`).

Moved from fit/validate.py (round 46, module budget), which imports every name back
(``from jalapeno.fit.validate import MeasuredPoint, point_stack`` keeps working). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from jalapeno.deploy.deployment import Deployment
from jalapeno.fit.searched import FRAMEWORK_ALIASES
from jalapeno.specs.workload import INFERENCEX_RANGE_RATIO, Workload


@dataclass
class MeasuredPoint:
    """One measured result and the deployment it ran (when known)."""

    source: str
    id: str
    system: str
    model: str
    precision: str
    framework: str
    isl: int
    osl: int
    concurrency: float | None
    deployment: Deployment | None
    measured: dict
    mapping: str
    fixed_lengths: bool = False
    notes: list = field(default_factory=list)
    #: the source says the run was disaggregated (even when its deployment could not be read)
    disagg: bool = False
    #: speculative decoding as the source states it: ``mtp``, ``none`` or ``unspecified`` ("" = not stated)
    spec: str = ""
    #: the measured TTFT is the runs' median (InferenceX ``ttft_stat``), compared with the predicted p50
    ttft_median: bool = False
    #: ``best_entry@concurrency``: the published entries that ran this concurrency (fit/entries.py);
    #: ``searched_best*``: the search space's runs, (deployment, concurrencies) pairs (fit/searched.py)
    candidates: tuple = ()
    #: the lengths the run served when not the InferenceX range at isl/osl (an MLPerf dataset's spread)
    workload: Workload | None = None
    engine_version: str = ""  # the engine release the source states (else its launch recipe's: point_stack)
    #: ``frontier@tpot_limit`` / ``frontier@limits``: the benchmark rules' p99 TPOT limit (s) the result had to meet
    tpot_limit_s: float | None = None
    #: ``frontier@limits``: the rules' p99 TTFT limit (s), met under Poisson arrivals (fit/latency_limits.py)
    ttft_limit_s: float | None = None
    #: the run's engine build fuses each row-parallel GEMM with its TP all-reduce, as its config declares
    #: (TensorRT-LLM ``gemm_allreduce_plugin``; fit/mlperf.py): priced with Stack.with_gemm_allreduce_fusion
    gemm_allreduce_fusion: bool = False
    allreduce_rms_fusion: bool = (
        False  # its launch script sets vLLM fuse_allreduce_rms (Stack.with_allreduce_rms_fusion)
    )
    client: str = ""  # the benchmark client that timed it, "" = its source's (fit/aic_rows.aic_client)
    #: ``matched``: a finite run of this many requests issued at once (MLPerf Offline ``samples_per_query``), its
    #: duration ending with the last: the throughput carries the drain (serve/finite_run.py); 0 = steady state
    queries: int = 0
    #: ``matched``: the share of the tokens the engine computes that the run delivers (vLLM V0 multi-step windows,
    #: fit/mlperf_multi_step.multi_step_spread; the workload holds the computed lengths); 1 = every computed token
    delivered_share: float = 1.0
    #: ``frontier@limits`` / ``matched@limits``: a LoadGen Server run's settings (serve/finite_run.ServerRun), its
    #: throughput counted to the last-issued query's response (fit/latency_limits.server_run_factors); None = steady
    server_run: object = None
    #: the run's chips (MLPerf: the system's GPUs; they set a Server run's arrival rate, so its length), 0 = not stated
    chips: int = 0
    #: the serving modes a frontier mapping may pick from (analysis/sweep.SweepOptions.serving): ``agg`` where the
    #: source states the run served aggregated engines (fit/mlperf_rows.MLPERF_AGGREGATED), else ``both``
    serving: str = "both"
    #: frontier mappings: host seconds per call of the engine's eager prompt-carrying steps, given to every swept
    #: deployment (SweepOptions.eager_prompt_call_s; fit/mlperf_engines.DSR1_EAGER_PROMPT_CALL_S); 0 = not modelled
    eager_prompt_call_s: float = 0.0
    #: seconds per step the engine's harness adds to ``efficiency.step_overhead_s`` (fit/mlperf_engines.DSR1_HARNESS_STEP_S)
    harness_step_s: float = 0.0
    #: (dense, light) compute clock ratios of a run held at a declared GPU clock cap (fit/amd_clock_caps.clock_cap_of;
    #: Chip.clock_cap), None = none declared or priced
    clock_cap: tuple[float, float] | None = None
    #: ``matched`` from a best row whose run was identified (fit/run_identity.py): the mapping it had, else "";
    #: such a row stays out of the stack fits' pool (fit/stack_split.fit_pool)
    identified_from: str = ""
    timed_by = property(lambda self: self.client or self.source, doc="The client that timed it: client, else source.")

    @property
    def uses_mtp(self) -> bool | None:
        """Whether the run used MTP: True/False where the source or the deployment says, None when unknown."""
        if self.deployment is not None and self.deployment.mtp is not None or self.spec == "mtp":
            return True
        return False if self.spec == "none" else None

    @property
    def mode(self) -> str:
        """``disagg`` or ``agg``: the deployment's kind, else what the source says."""
        return "disagg" if (self.deployment is not None and self.deployment.prefill) or self.disagg else "agg"


def point_release(p: MeasuredPoint) -> str:
    """The engine release that ran a point: the one its source states (``engine_version``; an aiconfigurator
    row's label, fit/aic_release.label_release: its own ``backend_version``, a Dynamo runtime's mapped to the
    TensorRT-LLM it ships), else its launch recipe's (deploy/engine_version.point_engine_version); "" when neither
    says, and for an aiconfigurator row whose release is unstated (fit/aic_sweeps.UNSTATED_RELEASE: the recipe may
    postdate it). A point silent on MTP with a deployment takes the recipe its deployment's MTP picks, the one its
    limits came from (deploy/engines.launch_limits ``mtp=``), not the MTP and plain recipes' agreement."""
    from jalapeno.deploy.engine_version import point_engine_version
    from jalapeno.fit.aic_release import label_release
    from jalapeno.fit.aic_sweeps import release_stated

    if p.source == "aiconfigurator" and not p.engine_version:
        if not release_stated(p.framework):
            return ""
        if label := label_release(p.framework):  # the run's own metadata beats today's recipe
            return label
    if p.engine_version:
        return p.engine_version
    fw = p.framework.strip().split(" ")[0].lower()  # the configs' name of it (fit/searched.FRAMEWORK_ALIASES)
    mtp = p.uses_mtp if p.uses_mtp is not None or p.deployment is None else p.deployment.mtp is not None
    return point_engine_version(p.system, p.model, FRAMEWORK_ALIASES.get(fw, fw), p.precision, p.mode, mtp)


def point_stack(p: MeasuredPoint, profiles=None):
    """A point's software-stack profile: its framework's at the engine release that ran it
    (:func:`point_release`), with the front end of the client that timed it (``MeasuredPoint.timed_by``) and the
    fusions its engine build or launch script declares (``gemm_allreduce_fusion``, ``allreduce_rms_fusion``), and,
    while fit/client_floor.CLIENT_FLOOR_ON (shipped on, round 47), its client's disaggregated floor and burst share.
    ``profiles``: the profiles by name to take it from (specs/stacks.build_stacks of other fits: fit/loso.py);
    None: the shipped ones."""
    from jalapeno.fit.client_floor import with_client_floor
    from jalapeno.specs.stacks import stack_for_framework

    st = stack_for_framework(p.framework, p.system)
    st = (profiles[st.name] if profiles is not None else st).at_version(point_release(p)).for_client(p.timed_by)
    st = with_client_floor(st, p.timed_by, p.mode)
    st = st.with_allreduce_rms_fusion(True) if p.allreduce_rms_fusion else st
    return st.with_gemm_allreduce_fusion(True) if p.gemm_allreduce_fusion else st


def point_workload(p: MeasuredPoint) -> Workload:
    """The workload a point is served with: its own (an MLPerf dataset spread) or its ISL/OSL with
    InferenceX's length range (uniform in [0.8·L, L], specs/workload.INFERENCEX_RANGE_RATIO), fixed
    lengths where the source says so."""
    return p.workload or Workload(f"{p.isl}/{p.osl}", p.isl, p.osl, 1.0 if p.fixed_lengths else INFERENCEX_RANGE_RATIO)


def with_harness_step(pricer, harness_step_s: float):
    """``pricer`` with an engine's harness term (:attr:`MeasuredPoint.harness_step_s`, s a step) added to its
    ``efficiency.step_overhead_s``; ``pricer`` itself where the term is 0 (every row but the MLPerf DeepSeek-R1
    TensorRT-LLM ones, fit/mlperf_engines.DSR1_HARNESS_STEP_S). Read by :func:`predict_points` and
    fit/mlperf_scenarios.priced_point."""
    if not harness_step_s:
        return pricer
    e = pricer.efficiency
    return pricer.with_efficiency(replace(e, step_overhead_s=e.step_overhead_s + harness_step_s))


def with_clock_cap(pricer, clock_cap: tuple[float, float] | None):
    """``pricer`` with its system's chip at a declared GPU clock cap (:attr:`MeasuredPoint.clock_cap`, Chip.clock_cap:
    its compute priced by cost/roofline.capped_clock); ``pricer`` itself where None (every row but the AMD-harness
    MLPerf Llama-2-70B rows with fit/amd_clock_caps.MLPERF_AMD_CLOCK_CAP_ON). Read by fit/validate.predict_points and
    fit/mlperf_scenarios.priced_point."""
    if clock_cap is None:
        return pricer
    system = pricer.system
    return replace(pricer, system=replace(system, chip=replace(system.chip, clock_cap=tuple(clock_cap))))
