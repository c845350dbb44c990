"""Engine memory profiles: the reserve terms a serving engine's start-up profiling takes per GPU.

vLLM sizes its KV cache once, at start-up (v1/worker/gpu_worker.py ``determine_available_memory``):

    KV pool = total · u − weights − torch peak increase − non-torch increase

with ``total`` the driver-reported memory (cudaMemGetInfo), ``u`` = ``gpu_memory_utilization``
and the two increases measured over ``profile_run``: a forward pass of ``max_num_batched_tokens``
tokens, then the sampler over R = min(``max_num_seqs``, ``max_num_batched_tokens``) rows of
fp32 logits with top-k and top-p on (the sort path). Modelled per term (docs/model.md §7.1):

- sampler peak = R · V · b_s, V the vocabulary, b_s the bytes live per logit element at the sort
  (38 from R >= 128, 50 below: counted tensor by tensor in ``data/engine_memory.toml``);
- forward peak = the activation estimate of deploy/memory_fit.py at T = ``max_num_batched_tokens``
  tokens with no logits; the torch peak increase is the larger of the two (they run one after
  the other);
- non-torch increase: a measured constant (cuBLAS workspace, kernel images);
- CUDA graphs: captured after the pool is sized, out of the (1 − u) headroom (vLLM < 0.21).

The pool is fixed for the engine's life: every step's activations fit in the profiled peak, so
a deployment with a profile subtracts the profile, not its own step's activations. ``None``
(the default everywhere) keeps the engine-free memory fit — what kernel-level questions use.

SGLang (``rule = "sglang"``) sizes its pool differently (``ModelRunner.profile_max_num_token``):

    KV pool = free after the weights load − free before it · (1 − mem_fraction_static)
            = F · m − weights

with F the free memory the runner measures after the distributed set-up, before loading
(``min_per_gpu_memory``): activations, CUDA graphs and workspaces come out of the F·(1 − m)
headroom, so no profiling run enters. Its scheduler admits a request only while the pool holds
its prompt and its whole output (clipped at ``clip_max_new_tokens``) on top of what the running
requests use and a ``new_token_ratio`` share of their remaining outputs
(``PrefillAdder.add_one_req``); requests with ``ignore_eos`` on a server without radix cache are
admitted only while all of them can finish (``add_one_req_ignore_eos``; docs/model.md §7.2).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

from jalapeno.errors import SpecError, UnknownNameError, choice_hint
from jalapeno.specs.hardware import Chip
from jalapeno.units import GiB

#: Rows below which PyTorch sorts a batch of rows by one full sort instead of a segmented one
#: (aten/src/ATen/native/cuda/SortStable.cu ``launch_stable_sort_kernel``: nsegments < 128).
SEGMENTED_SORT_MIN_ROWS = 128


@dataclass(frozen=True)
class EngineMemory:
    """One engine version's start-up memory profile (fields as the keys of ``data/engine_memory.toml``).

    Attributes:
        max_num_seqs, max_num_batched_tokens: the engine's defaults the profiling run is sized by
            (requests, tokens); a deployment's own limits override them (:meth:`with_limits`).
        gpu_memory_utilization: default share of the driver-reported memory the engine fills.
        sampler_bytes_per_logit: (from 128 rows, below 128 rows) bytes per (row, vocab entry).
        non_torch_bytes: memory outside PyTorch's allocator gained while profiling.
        cuda_graphs: ``outside`` — graphs come from the (1 − utilization) headroom.
        moe_layout: (chip-name prefix, MXFP4 expert layout of deploy/engine_layout.py) pairs.
        device_total_bytes: (chip-name prefix, driver-reported total memory) pairs.
        rule: ``vllm`` (the terms above) or ``sglang`` (pool = F·m − weights; module docstring).
        free_before_load_bytes: (chip-name prefix, F) pairs, SGLang's free memory before loading.
        context_bytes: device total − F where F is not sourced (CUDA context, NCCL and all-reduce
            buffers; SGLang).
        new_token_ratio: share of a running request's remaining output SGLang's admission keeps
            reserved once its ratio has decayed (0 for vLLM, which admits by blocks).
        clip_max_new_tokens: SGLang's clip of the output it reserves per request.
        ignore_eos_admission: requests carry ``ignore_eos`` and the radix cache is off, so SGLang
            admits by whole remaining outputs (:meth:`admission_tokens`).
    """

    name: str
    engine: str
    version: str
    source: str
    max_num_seqs: int
    max_num_batched_tokens: int
    gpu_memory_utilization: float
    sampler_bytes_per_logit: tuple[float, float]
    non_torch_bytes: float
    cuda_graphs: str
    moe_layout: tuple[tuple[str, str], ...]
    device_total_bytes: tuple[tuple[str, float], ...]
    rule: str = "vllm"
    free_before_load_bytes: tuple[tuple[str, float], ...] = ()
    context_bytes: float = 0.0
    new_token_ratio: float = 0.0
    clip_max_new_tokens: int = 0
    ignore_eos_admission: bool = False

    def with_limits(self, max_num_seqs: int | None = None, max_num_batched_tokens: int | None = None) -> EngineMemory:
        """The profile with a deployment's own ``max_running`` / ``max_tokens_per_step``."""
        from dataclasses import replace

        return replace(
            self,
            max_num_seqs=max_num_seqs or self.max_num_seqs,
            max_num_batched_tokens=max_num_batched_tokens or self.max_num_batched_tokens,
        )

    def device_total(self, chip: Chip, measured: bool = True) -> tuple[float, bool]:
        """(driver-reported memory of ``chip`` in bytes, whether it is sourced). Chips without a
        figure use the catalog's usable HBM (the profile's named assumption), as does a chip that is
        not the one the figure was logged on (``measured`` False: a what-if variant whose memory or
        name differs from its catalog root's, deploy/engine_pool.engine_memory_breakdown)."""
        name = chip.name.upper()
        for prefix, total in self.device_total_bytes if measured else ():
            if name.startswith(prefix):
                return total, True
        return chip.hbm_usable_bytes, False

    def free_before_load(self, chip: Chip, measured: bool = True) -> tuple[float, bool]:
        """(SGLang's free memory before the weights load on ``chip`` in bytes, whether sourced):
        the chip's figure, else its device total less ``context_bytes`` (the named assumption);
        ``measured`` as in :meth:`device_total`."""
        name = chip.name.upper()
        for prefix, free in self.free_before_load_bytes if measured else ():
            if name.startswith(prefix):
                return free, True
        return self.device_total(chip, measured)[0] - self.context_bytes, False

    def admission_tokens(self, isl: float, osl: float) -> tuple[float, float]:
        """(tokens each running request counts for, tokens the request being admitted needs on top)
        under SGLang's admission rule at mean prompt ``isl`` and output ``osl``; (0, 0) for vLLM.

        With ``ignore_eos_admission`` (benchmark clients send ``ignore_eos`` and the server runs
        without a radix cache: ``PrefillAdder.add_one_req_ignore_eos``) a request is admitted
        only while every running request and it can finish with its whole output in the pool; a
        run that starts as one cohort (InferenceX's idle start: C requests at once) stays in step,
        so each counts ISL + OSL and the new one nothing more. Otherwise (``add_one_req``) a running
        request counts its cached context ISL + OSL/2 and ``new_token_ratio`` of its remaining
        output (half of it on average), and the new one needs its prompt and clipped output free.

        >>> p = get_engine_memory("sglang-0.5")
        >>> [round(x, 1) for x in p.admission_tokens(7373, 921.6)]   # 7373 + 921.6, nothing more
        [8294.6, 0.0]
        """
        if self.rule != "sglang":
            return 0.0, 0.0
        out = min(osl, self.clip_max_new_tokens)
        if self.ignore_eos_admission:
            return isl + osl, 0.0
        return isl + osl / 2 + self.new_token_ratio * out / 2, isl + out

    def moe_layout_for(self, chip: Chip) -> str | None:
        """The MXFP4 expert layout this version uses on ``chip`` (None: the chip's default)."""
        name = chip.name.upper()
        return next((lay for prefix, lay in self.moe_layout if name.startswith(prefix)), None)

    def sampler_rows(self) -> int:
        """Rows of the profiling sampler run: min(max_num_seqs, max_num_batched_tokens)."""
        return min(self.max_num_seqs, self.max_num_batched_tokens)

    def sampler_peak_bytes(self, vocab: int) -> float:
        """R · V · b_s: the sampler's profiled peak.

        >>> p = get_engine_memory("vllm-0.11").with_limits(max_num_batched_tokens=1024)
        >>> p.sampler_peak_bytes(201_088) / 2**30   # 1024 x 201,088 x 38 B
        7.2873...
        """
        rows = self.sampler_rows()
        b = self.sampler_bytes_per_logit[0 if rows >= SEGMENTED_SORT_MIN_ROWS else 1]
        return rows * vocab * b


def _gib_pairs(raw: dict, key: str) -> tuple[tuple[str, float], ...]:
    return tuple((k.upper(), float(v) * GiB) for k, v in raw.get(key, {}).items())


def _profile(raw: dict) -> EngineMemory:
    where = f"engine_memory.toml profile {raw.get('name', '?')!r}"
    if raw.get("rule") == "sglang":
        try:
            ratio = float(raw["init_new_token_ratio"]) * float(raw["min_new_token_ratio_factor"])
            return EngineMemory(
                name=raw["name"],
                engine=raw["engine"],
                version=raw["version"],
                source=raw["source"],
                max_num_seqs=0,
                max_num_batched_tokens=0,
                gpu_memory_utilization=float(raw["mem_fraction_static"]),
                sampler_bytes_per_logit=(0.0, 0.0),
                non_torch_bytes=0.0,
                cuda_graphs="outside",
                moe_layout=(),
                device_total_bytes=_gib_pairs(raw, "device_total_gib"),
                rule="sglang",
                free_before_load_bytes=_gib_pairs(raw, "free_before_load_gib"),
                context_bytes=float(raw["context_gib"]) * GiB,
                new_token_ratio=ratio,
                clip_max_new_tokens=int(raw["clip_max_new_tokens"]),
                ignore_eos_admission=bool(raw["ignore_eos_admission"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise SpecError(
                where,
                f"malformed SGLang profile ({e!r})",
                "give mem_fraction_static, context_gib, init_new_token_ratio, "
                "min_new_token_ratio_factor, clip_max_new_tokens and ignore_eos_admission",
            ) from None
    try:
        b = tuple(float(x) for x in raw["sampler_bytes_per_logit"])
        if len(b) != 2 or raw["cuda_graphs"] != "outside":
            raise ValueError
        return EngineMemory(
            name=raw["name"],
            engine=raw["engine"],
            version=raw["version"],
            source=raw["source"],
            max_num_seqs=int(raw["max_num_seqs"]),
            max_num_batched_tokens=int(raw["max_num_batched_tokens"]),
            gpu_memory_utilization=float(raw["gpu_memory_utilization"]),
            sampler_bytes_per_logit=b,
            non_torch_bytes=float(raw["non_torch_gib"]) * GiB,
            cuda_graphs=raw["cuda_graphs"],
            moe_layout=tuple((k.upper(), v) for k, v in raw.get("moe_layout", {}).items()),
            device_total_bytes=_gib_pairs(raw, "device_total_gib"),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise SpecError(
            where, f"malformed profile ({e!r})", "give every key of the file header; cuda_graphs = 'outside'"
        ) from None


@lru_cache(maxsize=1)
def engine_memory_profiles() -> MappingProxyType:
    """Name → :class:`EngineMemory`, from the package's ``data/engine_memory.toml``."""
    text = resources.files("jalapeno").joinpath("data/engine_memory.toml").read_text()
    return MappingProxyType({p["name"]: _profile(p) for p in tomllib.loads(text)["profile"]})


def get_engine_memory(name: str | None) -> EngineMemory | None:
    """The profile called ``name``; None or ``none`` → None (no engine terms).

    Raises:
        UnknownNameError: an unknown profile name (the message lists the valid ones).
    """
    if name is None or name == "none":
        return None
    profiles = engine_memory_profiles()
    if name not in profiles:
        raise UnknownNameError(
            "--engine-memory",
            f"unknown engine memory profile {name!r}{choice_hint(name, profiles)}",
            f"use one of: none, {', '.join(profiles)}",
        )
    return profiles[name]


#: The engine memory profile validation and ``predict --engine`` give SGLang recipes' runs.
SGLANG_MEMORY_PROFILE = "sglang-0.5"


def recipe_memory_profile(recipe) -> str | None:
    """The engine memory profile a recipe's runs are sized by (deploy/engines.Recipe; validation's
    and ``predict --engine``'s default): :data:`SGLANG_MEMORY_PROFILE` for an SGLang-family recipe
    that states its ``--mem-fraction-static``, else None (the catalog's memory fit)."""
    ok = recipe is not None and recipe.engine.startswith("sglang") and recipe.memory_fraction is not None
    return SGLANG_MEMORY_PROFILE if ok else None


def recipe_memory(recipe, profile: str | None = None) -> tuple[EngineMemory | None, float | None]:
    """The engine memory profile a recipe's runs are sized by and the memory fraction they run it at,
    as validation (deploy/engines.launch_limits) and ``predict``/``simulate --engine`` size them.

    ``profile``: a profile name given explicitly (``none`` drops it); None: the recipe's own
    (:func:`recipe_memory_profile`). The fraction is the recipe's ``memory_fraction`` (SGLang's
    ``--mem-fraction-static``) when a profile applies and the recipe states one, else None (the
    profile's default). ``recipe`` may be None (no recipe: the given profile, no fraction).

    >>> from jalapeno.deploy.engines import get_recipe
    >>> prof, frac = recipe_memory(get_recipe("sglang-h200-dsr1-fp8"))
    >>> prof.name, frac
    ('sglang-0.5', 0.82)
    >>> recipe_memory(get_recipe("sglang-h200-dsr1-fp8"), "none")
    (None, None)

    Raises:
        UnknownNameError: an unknown profile name.
    """
    prof = get_engine_memory(profile if profile is not None else recipe_memory_profile(recipe))
    frac = recipe.memory_fraction if prof is not None and recipe is not None and recipe.memory_fraction else None
    return prof, frac
