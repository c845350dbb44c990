"""vLLM's MoE kernel for 128x128-block FP8 experts on Hopper, by release (issue 18, round 36, h200tail36).

vLLM picks the kernel of an FP8 MoE layer in its FP8 MoE oracle
(``vllm/model_executor/layers/fused_moe/oracle/fp8.py`` ``select_fp8_moe_backend``), read here in the released wheels
(``pip download vllm==X --no-deps``):

- **0.16.0**: the backends are tried in one fixed order, AITER (ROCm), FLASHINFER_TRTLLM (Blackwell only:
  ``flashinfer_trtllm_moe._supports_current_device``), FLASHINFER_CUTLASS, DEEPGEMM, ... With no
  ``VLLM_USE_FLASHINFER_MOE_FP8`` / ``VLLM_USE_DEEP_GEMM`` / ``VLLM_MOE_USE_DEEP_GEMM`` set, FlashInfer's CUTLASS
  experts run: ``FlashInferExperts`` supports block FP8 (``kFp8Static128BlockSym`` weights, ``kFp8Dynamic128Sym``
  activations) on compute capability 9.0 at every parallel configuration but sequence parallelism
  (``flashinfer_cutlass_moe._supports_quant_scheme``, ``_supports_parallel_config``), MoE TP and EP alike, and
  ``flashinfer-python==0.6.3`` is a hard dependency of the wheel. vllm-project/vllm issue #34249 (2026-02-10) logs
  that pick on H100 ("Using FLASHINFER_CUTLASS Fp8 MoE backend").
- **from 0.17.0** (the 0.17.0 and 0.18.0 wheels, and the newest stored version): ``_get_priority_backends`` moves
  TRITON to the front at expert-parallel size 1 and FLASHINFER_CUTLASS at EP > 1 ("On Hopper for Block Fp8, prefer
  Triton for TP and FI CUTLASS for EP").

The CUTLASS experts are priced by the shipped ``cutlass`` curves: TensorRT-LLM 1.3.0rc20's CUTLASS FP8 block-scale
MoE (``moe_torch_flow_cutlass``, data/moe_backends.toml), measured at every MoE TP and EP size on H100/H200.
Named assumption: FlashInfer's ``cutlass_fused_moe`` runs that kernel family at that speed. Cross-check, not an input:
aiconfigurator-core 0.12.0's vLLM 0.24.0 tables time ``vllm_fp8moe_flashinfer_cutlass_flashinferexperts`` at EP2-EP8
(the layouts where 0.24.0 picks it), and at MiniMax-M2.5's shape they are 1.02-1.13x (H200) and 1.04-1.08x (H100)
TensorRT-LLM's (median per EP size, 1-256 tokens; tests/unit/test_vllm_fp8_moe.py). Triton at EP 1 keeps the
calibrated set (no curve shipped). Releases before 0.16.0 are not read: their rows keep the calibrated set.
Assumed (named): the standard activation format, i.e. vLLM's default all-to-all backend (``allgather_reducescatter``,
``vllm/config/parallel.py`` in 0.16.0); a DeepEP low-latency or pplx backend runs the batched experts instead
(``use_batched_activation_format``), which no aiconfigurator vLLM Hopper row of a read release names.

The rule is an engine behaviour, read on every path (round 37, vllmrule37): fit/aic_rows.py gives it to an
aiconfigurator vLLM row at the row's release, and ``predict``/``simulate``/``frontier``/``compare`` give it to a vLLM
run at the release the user states (:func:`stack_release`: ``--stack vllm@0.16.0``, or an ``--engine`` recipe's
``engine_version``/``version``) through :func:`release_moe_backend`. A pool that names its own MoE backend (a
recipe's ``moe_backend``) keeps it; a run whose release is not stated keeps the calibrated set and says so.
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.deploy.deployment import Deployment
from jalapeno.errors import SpecError
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.engine_versions import version_key

#: the catalog systems with compute capability 9.0 (Hopper) this rule holds on
HOPPER_SYSTEMS = frozenset({"h100", "h200"})
#: releases whose oracle runs FlashInfer's CUTLASS experts at every layout (read in the wheel)
CUTLASS_EVERY_LAYOUT = frozenset({"0.16.0"})
#: the first release whose oracle prefers Triton at EP 1 and FlashInfer CUTLASS at EP > 1 on Hopper
FIRST_HOPPER_SPLIT = "0.17.0"
#: the shipped backend curves that price FlashInfer's CUTLASS experts (specs/moe_backends.py)
CUTLASS = "cutlass"


def vllm_hopper_fp8_moe_backend(release: str, ep: int) -> str | None:
    """The MoE backend (a data/moe_backends.toml name) vLLM ``release`` runs 128x128-block FP8 experts on at
    expert-parallel size ``ep`` on Hopper, where a shipped curve prices it; None where it runs Triton (no curve),
    or the release is not a numbered one read here (module docstring).

    >>> [vllm_hopper_fp8_moe_backend(r, ep) for r, ep in (("0.16.0", 1), ("0.16.0", 8), ("0.18.0", 1), ("0.18.0", 8))]
    ['cutlass', 'cutlass', None, 'cutlass']
    >>> [vllm_hopper_fp8_moe_backend(r, 4) for r in ("0.15.1", "0.12.0", "", "nightly-5b8c30d62b754b57")]
    [None, None, None, None]
    """
    if release in CUTLASS_EVERY_LAYOUT:
        return CUTLASS
    try:
        key = version_key(release)
    except SpecError:
        return None
    return CUTLASS if key >= version_key(FIRST_HOPPER_SPLIT) and ep > 1 else None


def with_vllm_fp8_moe_backend(dep: Deployment, engine: str, release: str, system: str) -> tuple[Deployment, str]:
    """(deployment, note): the pools of a vLLM row on Hopper whose routed experts are 128x128-block FP8 and that name
    no MoE backend of their own given the one ``release``'s oracle runs at each pool's EP size
    (:func:`vllm_hopper_fp8_moe_backend`); ``dep`` and "" otherwise.

    >>> from jalapeno.deploy.deployment import Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> d = Deployment(get_precision("fp8"), Pool(Layout(tp=4)))
    >>> with_vllm_fp8_moe_backend(d, "vllm", "0.16.0", "h200")[0].decode.moe_backend
    'cutlass'
    >>> [with_vllm_fp8_moe_backend(d, e, r, s)[0].decode.moe_backend
    ...  for e, r, s in (("vllm", "0.18.0", "h200"), ("vllm", "0.16.0", "b200"), ("sglang", "0.16.0", "h200"))]
    [None, None, None]
    """
    if engine != "vllm" or system not in HOPPER_SYSTEMS or dep.precision.modules["routed_experts"].weight.name != "fp8":
        return dep, ""
    pools = {}
    for field in ("decode", "prefill"):
        pool = getattr(dep, field)
        if pool is None or pool.moe_backend is not None:
            continue
        name = vllm_hopper_fp8_moe_backend(release, pool.layout.ep)
        if name is not None:
            pools[field] = replace(pool, moe_backend=name)
    if not pools:
        return dep, ""
    return replace(dep, **pools), (
        f"MoE backend {CUTLASS}: vLLM {release} runs 128x128-block FP8 experts on FlashInfer's "
        "CUTLASS MoE on Hopper at this EP size (deploy/vllm_fp8_moe.py)"
    )


def stack_release(stack: str | None, recipe=None, system: str = "") -> tuple[str, str]:
    """(profile, release): the software-stack profile a user's run takes (its base name, no ``@VERSION`` or
    ``+ar_rms``) and the engine release it is stated to run, "" when none is: ``--stack NAME@VERSION``'s version,
    else the ``--engine`` recipe's release (deploy/engine_version.recipe_engine_version) where the run takes the
    recipe's own profile (no ``--stack``, or ``--stack`` naming that profile). ``system``: where the recipe runs
    (its engine's profile there, specs/stacks.stack_for_framework).

    >>> stack_release("vllm@0.16.0"), stack_release(" vllm @ 0.18.0+ar_rms"), stack_release("vllm"), stack_release(None)
    (('vllm', '0.16.0'), ('vllm', '0.18.0'), ('vllm', ''), ('', ''))
    >>> from jalapeno.deploy.engines import get_recipe
    >>> stack_release(None, get_recipe("vllm-h100-gptoss-fp4"), "h100"), stack_release("sglang", get_recipe("vllm-h100-gptoss-fp4"), "h100")
    (('vllm', '0.18.0'), ('sglang', ''))
    """
    from jalapeno.deploy.engine_version import recipe_engine_version, recipe_stack
    from jalapeno.specs.stacks import split_stack_name

    base, version, _ = split_stack_name(stack or "")
    if version or recipe is None:
        return base, version
    own = recipe_stack(recipe, system.lower()).name.partition("@")[0]
    return (own, recipe_engine_version(recipe)) if base in ("", own) else (base, "")


def release_moe_backend(
    dep: Deployment, model: ModelSpec, profile: str, release: str, system: str
) -> tuple[Deployment, str]:
    """(deployment, note): a user's vLLM run (``profile`` "vllm", :func:`stack_release`) of an MoE model on Hopper
    with FP8 routed experts given the MoE backend vLLM ``release`` runs at each pool's EP size
    (:func:`with_vllm_fp8_moe_backend`, as validation gives the aiconfigurator rows); a pool that names its own
    backend keeps it. The note says what was done, or why the calibrated set stays (no release stated, Triton at
    EP 1, a release not read here); ``dep`` and "" for any other engine, model, format or system.

    >>> from jalapeno.deploy.deployment import Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.catalog import load_model
    >>> from jalapeno.specs.formats import get_precision
    >>> m, d = load_model("deepseek-r1"), Deployment(get_precision("fp8"), Pool(Layout(tp=8, ep=8)))
    >>> release_moe_backend(d, m, "vllm", "0.16.0", "h200")[0].decode.moe_backend
    'cutlass'
    >>> release_moe_backend(d, m, "vllm", "", "h200")[0].decode.moe_backend is None
    True
    """
    if (
        profile != "vllm"
        or model.moe is None
        or system not in HOPPER_SYSTEMS
        or dep.precision.modules["routed_experts"].weight.name != "fp8"
    ):
        return dep, ""
    if all(p is None or p.moe_backend is not None for p in (dep.decode, dep.prefill)):
        return dep, ""  # every pool names its own backend (a recipe's moe_backend): it wins
    if not release:
        return dep, (
            "vLLM release not stated: which kernel runs its FP8 routed experts on Hopper depends on it "
            "(FlashInfer CUTLASS or Triton), so they keep the calibrated set's pricing; pin one with "
            "--stack vllm@VERSION (e.g. vllm@0.16.0; deploy/vllm_fp8_moe.py)"
        )
    out, note = with_vllm_fp8_moe_backend(dep, "vllm", release, system)
    if note:
        return out, note
    return dep, (
        f"vLLM {release}: its FP8 routed experts keep the calibrated set's pricing (from "
        f"{FIRST_HOPPER_SPLIT} Triton runs them at EP 1, no curve shipped; releases before "
        f"{min(CUTLASS_EVERY_LAYOUT)} are not read: deploy/vllm_fp8_moe.py)"
    )


def sweep_release_note(
    model: ModelSpec, dep: Deployment, profile: str, release: str, system: str, disagg: bool = True
) -> str:
    """The note ``frontier``/``compare`` print for a sweep of vLLM on ``system`` (:func:`release_moe_backend`'s rule
    at every aggregated layout; ``dep`` any deployment of the swept precision): which layouts take FlashInfer's
    CUTLASS experts at ``release``, or why the calibrated set stays; "" where the rule does not apply. ``disagg``: the
    sweep has disaggregated pools (priced per layout before their deployment: they keep the calibrated set).

    >>> from jalapeno.deploy.deployment import Pool
    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.catalog import load_model
    >>> from jalapeno.specs.formats import get_precision
    >>> m, d = load_model("deepseek-r1"), Deployment(get_precision("fp8"), Pool(Layout()))
    >>> print(sweep_release_note(m, d, "vllm", "0.18.0", "h100"))  # doctest: +NORMALIZE_WHITESPACE
    vLLM 0.18.0 on h100: FP8 routed experts priced on FlashInfer's CUTLASS MoE (the cutlass curves) at EP > 1,
    Triton's calibrated set at EP 1; disaggregated pools keep the calibrated set (deploy/vllm_fp8_moe.py)
    """
    _, note = release_moe_backend(dep, model, profile, release, system)
    if not note or not release:
        return note
    by_ep = [vllm_hopper_fp8_moe_backend(release, ep) for ep in (1, 2)]
    if by_ep[1] is None:
        return note
    where = "at every layout" if by_ep[0] else "at EP > 1, Triton's calibrated set at EP 1"
    return (
        f"vLLM {release} on {system}: FP8 routed experts priced on FlashInfer's CUTLASS MoE (the {CUTLASS} "
        f"curves) {where}{'; disaggregated pools keep the calibrated set' if disagg else ''} "
        "(deploy/vllm_fp8_moe.py)"
    )
