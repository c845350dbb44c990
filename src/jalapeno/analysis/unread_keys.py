"""Which ``--set efficiency.*`` keys no op of a model reads: a what-if that changes nothing, named.

``--set efficiency.moe.bf16.peak_fraction=0.3`` on DeepSeek-R1 FP8 was accepted and priced exactly as without
it: the routed experts compute in FP8 and ``moe[fp8]`` has its own peak fraction, so the BF16 entry (every
format's fallback, specs/efficiency.Efficiency._lookup) is reached by no lookup. robust42 named one such family
(``moe.w4a16.*``); this module names every one, from what the ops read, not from a list per key.

How a key is judged (:func:`unread_efficiency_keys`):

- a kernel-table key ``efficiency.<family>.<entry>.<field>`` (family gemm, moe, attention, mla_decode,
  mla_prefill; field one the family takes, specs/efficiency_params.KERNEL_FIELDS): the op table of one mixed
  step (one decoding sequence and one prompt chunk, cost/ops.build_step_ops on one chip) is read through the
  lookups the roofline makes op by op (cost/roofline._per_op: GEMM peak, half rows, HBM fraction and k-block
  time by the op's kernel key; MoE peak, half rows, HBM fraction, floor and token passes by its entry,
  Efficiency.moe_entry; every op's attention-kernel peak, HBM fraction and floor by its kernel family,
  cost/roofline.kernel_floor_s). The key is
  unread when setting that one field to another value changes none of those lookups; fallbacks count (on a
  set where ``moe[fp8]`` has no peak fraction of its own, ``moe.bf16.peak_fraction`` is read);
- one of :data:`CONDITIONAL_SCALARS`: unread when analysis/uncertain's getters for the model and system
  leave it out (the all-to-all terms on a dense model, the in-switch terms on a system without in-network
  reduction, the scale-out fraction without a scale-out level);
- every other key is taken as read (no claim is made).

Extra lookups can only keep a key from being called unread, so the probes err toward silence.
"""

from __future__ import annotations

from jalapeno.analysis.uncertain import _efficiency_getters
from jalapeno.cost.batch import Batch
from jalapeno.cost.ops import build_step_ops
from jalapeno.cost.roofline import kernel_floor_s
from jalapeno.deploy.layout import Layout
from jalapeno.specs.efficiency import unchecked_replace
from jalapeno.specs.efficiency_params import KERNEL_FIELDS

#: Kernel-table families a key is judged in (specs/efficiency.Efficiency's FormatTable fields).
TABLE_FAMILIES = ("gemm", "moe", "attention", "mla_decode", "mla_prefill")
#: Scalar efficiency keys that analysis/uncertain lists only where an op of the model reads them.
CONDITIONAL_SCALARS = (
    "all_to_all_fraction",
    "all_to_all_latency_s",
    "in_switch_fraction",
    "in_switch_half_bytes",
    "scale_out_link_fraction",
)


def _probe_table(model, chip, precision, eff):
    """The op table of one mixed step (1 decoding sequence at context 128, one 128-token prompt) on one chip."""
    batch = Batch.make(decode_seqs=1, decode_ctx=128, prefill_tokens=128, prefill_ctx=0)
    return build_step_ops(model, chip, Layout(), precision, batch, eff)[0]


def _lookups(table, eff) -> tuple:
    """Every efficiency value the roofline reads for the ops of ``table`` under ``eff`` (None where unset)."""
    fam = table.kernel or ("",) * len(table.name)
    out: list = []
    for kind, fmt, key, k in zip(table.kind, table.fmt, table.keys, fam):
        if kind == "moe":
            e = eff.moe_entry(fmt, key)
            out += [eff.moe_peak(e), eff.moe_half(e), eff.moe_hbm(e), eff.moe_floor(e), eff.moe_passes(e)]
        else:
            g = eff.gemm.get(key)
            out += [eff.gemm_peak(key), eff.gemm_half(key), eff.gemm_hbm(key), g.k_block_s if g else None]
        out += [eff.kernel_peak(k, fmt), eff.kernel_hbm(k, fmt)]
    return (*out, *kernel_floor_s(table, eff).ravel().tolist())


def read_entries(table, eff) -> list[str]:
    """``family[entry]`` names the ops of ``table`` are priced by (for a note), e.g. ``['gemm[bf16]', 'moe[fp8]']``."""
    fam = table.kernel or ("",) * len(table.name)
    names = {
        f"moe[{eff.moe_entry(f, g)}]" if kd == "moe" else f"gemm[{g}]"
        for kd, f, g in zip(table.kind, table.fmt, table.keys)
        if kd in ("gemm", "moe")
    }
    names |= {f"{k}[{f}]" for k, f in zip(fam, table.fmt) if k}
    return sorted(names)


def _moved(eff, family: str, entry: str, field: str):
    """``eff`` with ``family[entry].field`` set to a value other than the one it holds (unvalidated: a probe)."""
    held = getattr(eff, family).get(entry)
    now = getattr(held, field) if held is not None else None
    value = 0.0137 if now is None else now * 1.37 + 0.0137  # a fraction moved past 1: unchecked, as a probe
    if family == "attention" and entry == "bf16":
        raise ValueError("attention[bf16] is not used: the BF16 fraction is attention_peak_fraction")
    return unchecked_replace(eff, **{family: eff.kernel_table(family, entry, **{field: value})})


def unread_efficiency_keys(keys, model, precision, system, eff) -> list[str]:
    """The dotted ``--set`` keys among ``keys`` (``efficiency.moe.bf16.peak_fraction`` ...) that no op of ``model``
    at ``precision`` on ``system`` reads under the priced set ``eff`` (module docstring: how each is judged).

    Args:
        keys: dotted keys as parsed by specs/system_overrides.parse_sets; others than ``efficiency.*`` are skipped.
        model, precision: a ModelSpec and a resolved Precision; system: a System; eff: its priced Efficiency.

    Returns:
        The unread keys, in the order given.
    """
    keys = [k for k in keys if k.startswith("efficiency.")]
    if not keys:
        return []
    table = _probe_table(model, system.chip, precision, eff)
    base = _lookups(table, eff)
    getters = _efficiency_getters(model, precision, system, eff)
    out = []
    for key in keys:
        parts = key.split(".")
        if len(parts) == 2 and parts[1] in CONDITIONAL_SCALARS:
            if key not in getters:
                out.append(key)
        elif len(parts) == 4 and parts[1] in TABLE_FAMILIES:
            _, family, entry, field = parts
            try:  # a set the Efficiency refuses (attention[bf16]) is no claim: the --set check names it
                moved = _moved(eff, family, entry, field) if field in KERNEL_FIELDS[family] else None
            except ValueError:
                moved = None
            if moved is not None and _lookups(table, moved) == base:
                out.append(key)
    return out


def unread_note(keys, model, precision, system, eff) -> str | None:
    """The note naming the unread keys (:func:`unread_efficiency_keys`) and what the ops do read; None if none.

    ``precision`` may be a sequence of Precisions (``compare`` sweeps each system's formats): a key is named only
    where no op reads it at any of them, and the entries read are those of all of them.
    """
    precs = list(precision) if isinstance(precision, (list, tuple)) else [precision]
    torus = torus_note(keys, system)
    keys = [k for k in keys if k != TORUS_KEY or torus is None]
    each = [set(unread_efficiency_keys(keys, model, p, system, eff)) for p in precs]
    unread = [k for k in keys if all(k in u for u in each)]
    if not unread:
        return torus
    reads = ", ".join(sorted({e for p in precs for e in read_entries(_probe_table(model, system.chip, p, eff), eff)}))
    return (
        f"--set {', '.join(unread)} is not read: {model.name} at {'/'.join(p.name for p in precs)} on {system.name}: no op's "
        f"lookup reaches it (an entry of its own shadows it, or no op runs that kernel); its ops are priced by "
        f"{reads} (specs/efficiency.py lookups), so the what-if changes nothing"
    ) + (f"; {torus}" if torus else "")


#: The key only a 3-D torus level reads (cost/collectives.py: a torus all-to-all's time is multiplied by it).
TORUS_KEY = "efficiency.torus_congestion"


def torus_note(keys, system) -> str | None:
    """The note for ``--set efficiency.torus_congestion`` on a system with no ``torus3d`` level, or None:
    cost/collectives.py multiplies only a torus all-to-all's time by it, so on H200's switched NVLink it
    priced exactly as without it, with no word (break52)."""
    if TORUS_KEY not in keys or any(lv.topology == "torus3d" for lv in system.levels):
        return None
    return (
        f"--set {TORUS_KEY} is not read: {system.name} has no torus3d link level (it multiplies a 3-D torus's "
        "all-to-all time only, cost/collectives.py), so the what-if changes nothing"
    )
