"""Deployments: precision, parallel layout, aggregated or disaggregated pools, MTP.

Aggregated: one instance (one layout) serves prefill and decode with continuous batching and
chunked prefill (a token budget per step, a cap on running requests, KV capacity from the
memory fit); replicas scale linearly, so one instance represents the deployment per chip.
Disaggregated: ``workers`` prefill instances and ``workers`` decode instances, each with its own
layout; the KV cache moves from prefill to decode; chips = prefill + decode (InferenceX).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, replace

from jalapeno.deploy.deployment_checks import (  # noqa: F401 (re-exported: split from here, round 47)
    BUDGET_PER,
    MEMORY_FRACTION_HELP,
    PREFILL_STEPS,
    RECIPE_LABELS,
    check_batch_wait,
    check_budget_per,
    check_deployment,
    check_memory_fraction,
    check_prefill_steps,
    check_recipe_label,
    positive_int_or_none,
)
from jalapeno.deploy.engine_memory import EngineMemory
from jalapeno.deploy.layout import Layout, for_model
from jalapeno.deploy.mtp import MTP
from jalapeno.deploy.overlap_mode import OVERLAP_MODES, check_overlap, check_overlap_layout, pool_overlap  # noqa: F401 (re-exported)
from jalapeno.deploy.sharding import has_ep_all_to_all
from jalapeno.errors import SpecError
from jalapeno.specs.efficiency_params import MOE_EXCHANGE_NAMES
from jalapeno.specs.formats import Precision
from jalapeno.specs.plausibility import MAX_CHIPS

#: Default chunked-prefill token budget per step (SGLang ``--chunked-prefill-size`` default 8192
#: on large GPUs; vLLM ``max_num_batched_tokens`` defaults are of the same order).
DEFAULT_TOKEN_BUDGET = 8192
#: Default cap on running requests per aggregated instance when its deployment states none. SGLang's own
#: default (no ``--max-running-requests``) is its request pool, min(max(KV tokens / context_len x 512, 2048), 4096)
#: per attention-DP worker (sgl-project/sglang ``python/sglang/srt/model_executor/model_runner.py``
#: ``init_memory_pool``; 5,120 in the 2024 releases, @01cc04e2): 4096 is that clamp's top, taken instance-wide
#: (assumption: one DP worker; vLLM's ``max_num_seqs`` and TensorRT-LLM's ``max_batch_size`` defaults differ and
#: a recipe that sets one states it as ``max_running``). The modelled KV capacity usually binds first.
DEFAULT_MAX_RUNNING = 4096
#: A disaggregated decode worker whose deployment states no ``max_running`` is capped by its KV capacity alone in
#: the simulator as in the analytic decode pool (serve/disagg.decode_curve: ``batch_caps(..., backstop=False)``),
#: not by :data:`DEFAULT_MAX_RUNNING`: SGLang's default request pool is per attention-DP worker (>= 2,048 each,
#: so >= 65,536 on a DP32 decode worker, above its KV capacity), and the aiconfigurator SGLang recipes that state
#: the cap set it far above the KV capacity (cfg576: ``max-running-requests: 67584``, NVIDIA/srt-slurm @5063eb43
#: ``recipes/gb300-fp4/1k1k/mid_curve.yaml``). Off: the simulator's old 4,096 instance-wide backstop there, which
#: queued cfg576 C 8,192 (simulated TTFT 16.8 s, measured 22.6 s) while the analytic decode batch was 8,095.
DISAGG_DECODE_KV_CAP_ON = True


@dataclass(frozen=True, slots=True)
class Pool:
    """``workers`` identical instances of one layout.

    ``moe_backend``: the engine's MoE kernel backend on these workers when its recipe names one
    (TensorRT-LLM ``moe_config.backend``, lower case; specs/moe_backends.MOE_BACKENDS), priced with
    that backend's measured-kernel parameters where the system has them (cost/pool_backends.with_moe_backend);
    None: the calibrated set (the fastest measured kernel per shape). ``attention_backend``: the
    engine's attention backend on these workers when its recipe names one (vLLM
    ``--attention-backend``, lower case; specs/attention_backends.ATTENTION_BACKENDS), its GQA decode
    priced at the backend's published KV-read speed where the system has one
    (cost/pool_backends.with_attention_backend); None: the set's HBM fraction. ``moe_exchange``: the MoE token
    exchange these workers' recipe runs where it differs from the stack's (specs/efficiency.MOE_EXCHANGE_NAMES;
    SGLang's ``nvfp4_all_gather`` on a flashinfer_cutlass NVFP4 prefill pool beside a DeepEP decode pool),
    applied by cost/pool_backends.with_pool_backends; None: the stack's ``Efficiency.moe_exchange``.

    Raises:
        SpecError: an unknown backend or exchange name, or ``workers`` not a whole number >= 1.
    """

    layout: Layout
    workers: int = 1
    moe_backend: str | None = None
    attention_backend: str | None = None
    moe_exchange: str | None = None

    def __post_init__(self) -> None:
        from jalapeno.specs.attention_backends import check_attention_backend
        from jalapeno.specs.moe_backends import check_moe_backend

        if not isinstance(self.layout, Layout):  # Pool(None) was built, then raised AttributeError: no 'dp' (break55)
            raise SpecError(
                "pool.layout", f"expected a Layout, got {type(self.layout).__name__}", "pass Pool(Layout(tp=8))"
            )
        check_moe_backend(self.moe_backend, "moe_backend")
        check_attention_backend(self.attention_backend, "attention_backend")
        if self.moe_exchange is not None and self.moe_exchange not in MOE_EXCHANGE_NAMES:
            raise SpecError(
                "pool.moe_exchange",
                f"unknown exchange {self.moe_exchange!r}",
                "one of " + ", ".join(MOE_EXCHANGE_NAMES) + ", or leave it unset (the stack's)",
            )
        if not (isinstance(self.workers, numbers.Real) and self.workers >= 1):  # 0: an IndexError in predict
            raise SpecError("pool.workers", f"must be at least 1, got {self.workers!r}", "give workers >= 1")
        if self.workers > MAX_CHIPS:  # 10**12 instances were priced: each holds at least one chip
            shown = f"{self.workers:.3g}" if self.workers < 1e300 else "more than 1e300"  # an int past 1e308: no float
            raise SpecError(
                "pool.workers",
                f"{shown} instances is above the {MAX_CHIPS:,}-chip "
                "plausibility bound (specs/plausibility.py; each instance holds a chip or more)",
                "give the instances the fleet runs",
            )
        if isinstance(self.workers, bool) or not float(self.workers).is_integer():  # 2.5 instances were priced
            raise SpecError(
                "pool.workers",
                f"must be a whole number of instances, got {self.workers!r}",
                "give workers as a whole number >= 1, e.g. 2",
            )

    @property
    def chips(self) -> int:
        """Chips of the pool: chips per worker times workers."""
        return self.layout.chips * self.workers

    def as_dict(self) -> dict:
        """The pool as JSON: its layout, workers, chips and any MoE or attention backend or MoE exchange."""
        return {
            **self.layout.as_dict(),
            "workers": self.workers,
            "chips": self.chips,
            **({"moe_backend": self.moe_backend} if self.moe_backend else {}),
            **({"attention_backend": self.attention_backend} if self.attention_backend else {}),
            **({"moe_exchange": self.moe_exchange} if self.moe_exchange else {}),
        }


@dataclass(frozen=True, slots=True)
class Deployment:
    """How a model is served.

    Attributes:
        precision: the precision preset.
        decode: the aggregated instance (kind ``agg``), or the decode pool (``disagg``).
        prefill: the prefill pool (``disagg`` only).
        mtp: MTP settings or None.
        token_budget: chunked-prefill tokens per step (aggregated) / per prefill step (SGLang
            ``--chunked-prefill-size``): the prefill part of a step only.
        max_running: cap on running requests per instance (per pipeline micro-batch; SGLang
            ``--max-running-requests``, vLLM ``max_num_seqs``, TRT-LLM ``max_batch_size``).
            None (default): the :data:`DEFAULT_MAX_RUNNING` backstop on aggregated instances
            (and on the simulator's prefill workers); a disaggregated decode pool is then capped by
            its KV capacity alone, in the analytic model and the simulator alike
            (:data:`DISAGG_DECODE_KV_CAP_ON`, :meth:`worker_running_limit`). ``running_cap`` gives the
            backstop's value, ``running_cap_source`` which of the three binds (``as_dict``: ``max_running``
            null and ``max_running_source`` ``kv_pool`` for the last; serve/limits.running_cap its size).
        memory_fraction: share of usable HBM the engine fills with weights + KV + activations
            (vLLM ``gpu_memory_utilization``, SGLang ``mem_fraction_static``). None (default):
            the efficiency set's 1 − ``memory_reserve_fraction`` = 0.96, which equals vLLM's
            default 0.9 of the driver-reported memory on H100 and B200 within 0.3%
            (deploy.memory_fit.usable_fraction).
        max_tokens_per_step: cap on all tokens one step processes — decode rows (1 + k per
            sequence with MTP) plus prefill tokens (TRT-LLM ``max_num_tokens``, vLLM
            ``max_num_batched_tokens``); None = no cap beyond ``token_budget``. Distinct from
            ``token_budget``, which bounds the prefill chunk alone.
        cuda_graph_max_batch: largest decode batch per attention rank replayed as a CUDA graph
            (SGLang ``--cuda-graph-max-bs``, TRT-LLM ``cuda_graph_config.max_batch_size``, vLLM
            ``max_capture_size``); larger decode steps run eagerly and pay a per-kernel launch
            cost (serve/limits.py). None = every decode step is graphed. With
            ``cuda_graph_batch_sizes`` it defaults to their largest, and must equal it.
        cuda_graph_batch_sizes: the decode batches per attention rank captured as CUDA graphs, with
            padding (TRT-LLM ``cuda_graph_config.batch_sizes`` + ``enable_padding``; the MLPerf
            configs' ``cuda_graph_batch_sizes`` + ``cuda_graph_padding_enabled``): a decode-only step
            of n sequences per rank runs the smallest captured size >= n, the rest dummy sequences
            of one context token (serve/limits.graph_padded); above the largest it runs eagerly.
            None = no padding modelled (a step runs at its own batch).
        cuda_graph_pad_routing: how the engine's MoE router treats those dummies (cost/batch.Batch
            ``pad_routing``; deploy/graph_capture.pad_routing by engine): ``routed`` (like independent
            tokens; the default), ``masked`` (top-k ids set to -1: no expert, no all-to-all) or
            ``one_token`` (identical dummies: one top-k set).
        eager_prompt_call_s: host seconds per call of a step that carries a prompt and runs without CUDA graphs
            (TensorRT-LLM without piecewise graphs): such a step costs max(host calls × this, GPU) (serve/limits.
            prompt_floor_s, cost/host_calls.py). 0 = graphed or not modelled (the default).
        eager_prompt_alone: the engine runs a prompt step without the decodes (SGLang without --enable-mixed-chunk):
            its host floor is the context-only step's, whoever is decoding (serve/limits.prompt_floor_s).
        recv_interval: decode steps between the scheduler's polls for new requests (SGLang
            ``--scheduler-recv-interval``; 1 = every step): an arrival waits
            ``recv_interval``·τ/2 on average before it can be scheduled (aggregated serving); on a
            disaggregated deployment, the decode worker's: the pre-allocation poll's period in decode steps
            (serve/handshake.recv_poll_wait_s; the prefill worker's own interval costs nothing).
        adp_balance_timeout_iters: TensorRT-LLM's attention-DP context balancing
            (``attention_dp_config``: ``enable_balance: true``, ``timeout_iters``): each attention-DP
            rank holds its new prompts until every rank has one, at most this many steps
            (serve/adp_balance.adp_balance_wait_s); None = prompts are scheduled as they arrive.
        batch_wait_timeout_iters, batch_wait_max_tokens_ratio: TensorRT-LLM's batch waiting (LLM
            arguments of the same names, both 0 by default: off): without attention DP and while
            sequences decode, new prompts are held until they and the decode rows fill
            ``batch_wait_max_tokens_ratio`` of ``max_tokens_per_step`` (else the token budget), at most
            ``batch_wait_timeout_iters`` steps; a hold needs both set (serve/batch_wait.py, aggregated
            instances).
        recipe: the engine recipe that set this deployment (deploy/engines.py), as a label that starts with one of
            :data:`RECIPE_LABELS` (none of the recipe's settings is read from it); None = the deployment as the
            user stated it.
        overlap: ``none`` or ``tbo`` (two-batch overlap; :data:`OVERLAP_MODES`), applied to the
            pools with an EP all-to-all (:func:`pool_overlap`).
        budget_per: ``instance`` (default) or ``rank`` (:data:`BUDGET_PER`): whether
            ``token_budget``, ``max_tokens_per_step`` and ``max_running`` bound a whole instance or
            each of its attention-DP ranks (TensorRT-LLM). With ``rank``, an instance of DP d
            carries d times each limit per step (:meth:`prefill_budget`, :meth:`step_token_cap`,
            :meth:`running_limit`).
        prefill_steps: ``mixed`` (default) or ``separate`` (:data:`PREFILL_STEPS`): whether an
            aggregated instance's prompts ride in the decode steps or run in prefill-only steps
            that the decoding sequences wait out (serve/analytic.py).
        engine_memory: an engine memory profile (deploy/engine_memory.py): the KV pool is what the
            engine's start-up profiling leaves (``memory_fraction`` is then its share of the
            driver-reported memory); the deployment's ``max_running`` / ``max_tokens_per_step``
            size the profiling run (:attr:`memory_profile`). None: the engine-free memory fit.

    Raises:
        SpecError: memory_fraction outside (0, 1]; a limit that is not a positive integer; cp > 1
            on an aggregated instance or a decode pool; an unknown ``overlap`` or ``prefill_steps``;
            a per-instance prefill budget below the prefilling pool's attention-DP degree; an
            ``eager_prompt_alone`` that is not True/False; a ``recipe`` that is not a recipe label.
    """

    precision: Precision
    decode: Pool
    prefill: Pool | None = None
    mtp: MTP | None = None
    token_budget: int = DEFAULT_TOKEN_BUDGET
    max_running: int | None = None
    memory_fraction: float | None = None
    max_tokens_per_step: int | None = None
    cuda_graph_max_batch: int | None = None
    cuda_graph_batch_sizes: tuple[int, ...] | None = None
    cuda_graph_pad_routing: str = "routed"
    recv_interval: int = 1
    adp_balance_timeout_iters: int | None = None
    batch_wait_timeout_iters: int = 0
    batch_wait_max_tokens_ratio: float = 0.0
    recipe: str | None = None
    overlap: str = "none"
    budget_per: str = "instance"
    engine_memory: EngineMemory | None = None
    prefill_steps: str = "mixed"
    eager_prompt_call_s: float = 0.0
    eager_prompt_alone: bool = False

    def __post_init__(self) -> None:
        """Check the types of the deployment's parts, then its engine memory fraction, limits and overlap mode, and
        that context parallelism is on prefill workers only (deploy/deployment_checks.check_deployment).

        Raises:
            SpecError: a precision, pool, MTP or engine memory profile of the wrong type (the Python API);
                the refusals of :func:`~jalapeno.deploy.deployment_checks.check_deployment`.
        """
        for name, v, kinds, fix in (
            ("precision", self.precision, (Precision,), "get_precision('fp8')"),
            ("decode", self.decode, (Pool,), "Pool(Layout(tp=8))"),
            ("prefill", self.prefill, (Pool, type(None)), "Pool(Layout(...)) or None"),
            ("mtp", self.mtp, (MTP, type(None)), "MTP(draft_tokens, acceptance) or None"),
            (
                "engine_memory",
                self.engine_memory,
                (EngineMemory, type(None)),
                "deploy/engine_memory.get_engine_memory(name) or None",
            ),
        ):
            if not isinstance(v, kinds):  # 'bf16' or mtp=2 ran on, to an AttributeError far from here
                raise SpecError(
                    f"Deployment: {name}",
                    f"expected {' or '.join(k.__name__ for k in kinds)}, got {type(v).__name__} {v!r:.40}",
                    f"pass {fix}",
                )
        check_deployment(self)

    def check_overlap(self, model) -> None:
        """``tbo`` must have a pool to apply to.

        Raises:
            SpecError: ``tbo`` but no pool's layout has an EP all-to-all.
        """
        pools = [p for p in (self.prefill, self.decode) if p is not None]
        if self.overlap == "tbo" and not any(has_ep_all_to_all(model, p.layout) for p in pools):
            check_overlap_layout("tbo", model, self.decode.layout)

    @property
    def memory_profile(self) -> EngineMemory | None:
        """``engine_memory`` sized by this deployment's ``max_running`` and ``max_tokens_per_step``."""
        if self.engine_memory is None:
            return None
        return self.engine_memory.with_limits(self.max_running, self.max_tokens_per_step)

    @property
    def batch_waits(self) -> bool:
        """Whether TensorRT-LLM's batch waiting can hold a prompt: both of its settings above 0 (with
        either at 0 the engine's release condition holds at once; serve/batch_wait.py)."""
        return self.batch_wait_timeout_iters > 0 and self.batch_wait_max_tokens_ratio > 0

    @property
    def running_cap(self) -> int:
        """``max_running``, or the :data:`DEFAULT_MAX_RUNNING` backstop when unset."""
        return DEFAULT_MAX_RUNNING if self.max_running is None else self.max_running

    @property
    def running_cap_source(self) -> str:
        """Where the cap on running requests per (decode) instance comes from: ``stated`` (``max_running``),
        ``kv_pool`` (a disaggregated decode pool with none stated, :data:`DISAGG_DECODE_KV_CAP_ON`: its KV
        capacity alone) or ``default`` (the :data:`DEFAULT_MAX_RUNNING` backstop). ``as_dict`` printed 4,096
        for the ``kv_pool`` case, a cap neither the analytic decode pool nor the simulator applies (ux50).

        >>> from jalapeno.specs.formats import get_precision
        >>> p = get_precision("fp8")
        >>> agg = Deployment(p, Pool(Layout(tp=8)))
        >>> dis = Deployment(p, Pool(Layout(dp=8, ep=8)), prefill=Pool(Layout(tp=8)))
        >>> agg.running_cap_source, dis.running_cap_source, replace(dis, max_running=64).running_cap_source
        ('default', 'kv_pool', 'stated')
        """
        if self.max_running is not None:
            return "stated"
        return "kv_pool" if self.prefill is not None and DISAGG_DECODE_KV_CAP_ON else "default"

    def worker_running_limit(self, layout: Layout, role: str, kv_tokens: int) -> int:
        """Running requests one simulated worker of ``layout`` admits (requests). ``role``: ``agg``, ``prefill``
        or ``decode``; ``kv_tokens``: the worker's KV capacity, tokens. :meth:`running_limit`, except a
        disaggregated decode worker whose deployment states no ``max_running`` (with
        :data:`DISAGG_DECODE_KV_CAP_ON`): ``kv_tokens``, a bound no admission reaches (each admitted request
        holds at least one token), so its KV capacity binds alone, as in the analytic decode pool.

        >>> from jalapeno.specs.formats import get_precision
        >>> d = Deployment(get_precision("fp4"), Pool(Layout(dp=32, ep=32)), prefill=Pool(Layout(dp=4, ep=4)))
        >>> d.worker_running_limit(Layout(dp=32, ep=32), "decode", 9_000_000), d.running_limit(Layout(dp=4, ep=4))
        (9000000, 4096)
        """
        if role == "decode" and self.max_running is None and DISAGG_DECODE_KV_CAP_ON:
            return max(1, int(kv_tokens))
        return self.running_limit(layout)

    @property
    def prefill_chunk_budget(self) -> int:
        """Prefill tokens one step may carry: the token budget, within ``max_tokens_per_step``."""
        return min(self.token_budget, self.max_tokens_per_step or self.token_budget)

    def rank_scale(self, layout: Layout) -> int:
        """Attention-DP ranks one limit counts for on ``layout``: its dp with ``budget_per`` =
        ``rank``, else 1."""
        return layout.dp if self.budget_per == "rank" else 1

    def prefill_budget(self, layout: Layout) -> int:
        """Prefill tokens one step of an instance of ``layout`` may carry (tokens per step):
        :attr:`prefill_chunk_budget`, times the attention-DP ranks when the budget is per rank.

        >>> from jalapeno.specs.formats import get_precision
        >>> d = Deployment(get_precision("fp4"), Pool(Layout(dp=8, ep=8)), token_budget=16640,
        ...                budget_per="rank")
        >>> d.prefill_budget(Layout(dp=8, ep=8)), d.prefill_budget(Layout(tp=8, ep=8))
        (133120, 16640)
        """
        return self.prefill_chunk_budget * self.rank_scale(layout)

    def prompt_budget(self, layout: Layout) -> float:
        """Prefill tokens of one prompt a step of an instance of ``layout`` may carry: the attention-DP
        rank's share of :meth:`prefill_budget` — a prompt runs on one rank (cost/adp_rank.py), which
        chunks it at its own budget (SGLang ``chunked_prefill_size // dp_size``; TensorRT-LLM
        ``max_num_tokens`` per rank); the whole budget without attention DP.

        >>> from jalapeno.specs.formats import get_precision
        >>> Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)), token_budget=16384).prompt_budget(Layout(dp=8, ep=8))
        2048.0
        """
        return self.prefill_budget(layout) / layout.dp

    def step_token_cap(self, layout: Layout) -> int | None:
        """``max_tokens_per_step`` of one instance of ``layout`` (None when unset), per-rank scaled."""
        t = self.max_tokens_per_step
        return None if t is None else t * self.rank_scale(layout)

    def running_limit(self, layout: Layout) -> int:
        """Running requests one instance of ``layout`` holds: ``max_running`` (per-rank scaled) or
        the :data:`DEFAULT_MAX_RUNNING` backstop (an instance-wide jalapeno default, never scaled)."""
        return self.running_cap if self.max_running is None else self.max_running * self.rank_scale(layout)

    @property
    def config(self) -> str:
        """What produced this deployment: ``"as stated"`` or the engine recipe's label."""
        return self.recipe or "as stated"

    @property
    def kind(self) -> str:
        """``disagg`` (separate prefill and decode pools) or ``agg``."""
        return "disagg" if self.prefill is not None else "agg"

    @property
    def chips(self) -> int:
        """Chips of the deployment (prefill + decode when disaggregated)."""
        return self.decode.chips + (self.prefill.chips if self.prefill else 0)

    def for_model(self, model) -> Deployment:
        """This deployment with its pools' layouts labelled for ``model`` (``Layout.moe``: a dense
        model's label names its FFN's TP, a MoE model's the experts' TP and EP); equal to ``self``."""
        pools = {k: p for k, p in (("decode", self.decode), ("prefill", self.prefill)) if p is not None}
        if all(for_model(p.layout, model) is p.layout for p in pools.values()):  # labelled already (a sweep's)
            return self
        return replace(self, **{k: replace(p, layout=for_model(p.layout, model)) for k, p in pools.items()})

    @property
    def label(self) -> str:
        """``agg <layout> [MTPk@α] [TBO] [precision]`` or ``disagg P <x>x(<layout>) + D <y>x(<layout>) ...``
        (layouts: :attr:`Layout.label`, attention then MoE parallelism)."""
        mtp = f" MTP{self.mtp.draft_tokens}@{self.mtp.acceptance:g}" if self.mtp else ""
        mtp += " TBO" if self.overlap == "tbo" else ""
        if self.prefill is None:
            return f"agg {self.decode.layout.label}{mtp} [{self.precision.name}]"
        return (
            f"disagg P {self.prefill.workers}x({self.prefill.layout.label}) + D "
            f"{self.decode.workers}x({self.decode.layout.label}){mtp} [{self.precision.name}]"
        )

    def as_dict(self) -> dict:
        """The deployment as JSON: kind, precision, chips, label, engine limits, MTP, overlap and its pools."""
        d = {
            "kind": self.kind,
            "precision": self.precision.name,
            "chips": self.chips,
            "label": self.label,
            "token_budget": self.token_budget,
            # null where the decode pool's KV capacity is the cap (its size: serve/limits.running_cap; ux50)
            "max_running": None if self.running_cap_source == "kv_pool" else self.running_cap,
            "max_running_source": self.running_cap_source,
            "memory_fraction": self.memory_fraction,
            "mtp": self.mtp.as_dict() if self.mtp else None,
            "overlap": self.overlap,
        }
        # engine limits beyond the defaults appear only when set (earlier outputs stay identical)
        for k in ("max_tokens_per_step", "cuda_graph_max_batch"):
            if getattr(self, k) is not None:
                d[k] = getattr(self, k)
        if self.cuda_graph_batch_sizes is not None:
            d["cuda_graph_batch_sizes"] = list(self.cuda_graph_batch_sizes)
            if self.cuda_graph_pad_routing != "routed":
                d["cuda_graph_pad_routing"] = self.cuda_graph_pad_routing
        if self.recv_interval != 1:
            d["recv_interval"] = self.recv_interval
        if self.adp_balance_timeout_iters is not None:
            d["adp_balance_timeout_iters"] = self.adp_balance_timeout_iters
        if self.batch_waits:
            d["batch_wait_timeout_iters"] = self.batch_wait_timeout_iters
            d["batch_wait_max_tokens_ratio"] = self.batch_wait_max_tokens_ratio
        if self.budget_per != "instance":
            d["budget_per"] = self.budget_per
        if self.prefill_steps != "mixed":
            d["prefill_steps"] = self.prefill_steps
        if self.recipe is not None:
            d["recipe"] = self.recipe
        if self.engine_memory is not None:
            d["engine_memory"] = self.engine_memory.name
        if self.prefill is None:
            d["layout"] = self.decode.layout.as_dict()
        else:
            d["prefill"] = self.prefill.as_dict()
            d["decode"] = self.decode.as_dict()
        return d
