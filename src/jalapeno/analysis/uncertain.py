"""The uncertain parameters of a system, each with its band and its physical limit.

One list serves sensitivity (each parameter moved across its band) and the claim audit (the
value each would need, the joint change, the physical limit). Every parameter is a dotted key that
``--set`` accepts (specs/variants.py), except ``power_terms.<name>`` (the component power model's
constants, specs/power.py), so any answer can be plugged back in on the command line.

Kinds and bands:

- ``fixed_cost`` — ``efficiency.kernel_launch_s``, ``collective_launch_s``, ``step_overhead_s``,
  the front end ``request_overhead_s`` / ``prompt_overhead_s_per_token`` (and ``moe_floor_s``
  where set), as the efficiency set (with its software stack applied) holds them. Where the
  stack profile (specs/stacks.py) gives a band, that band. Otherwise a system whose serving
  stack was measured (a calibration of kind ``measured``/``partial``, vendor-verified specs) gets
  a ±50% band (assumption: the spread between engine versions on one chip, DESIGN.md §7 "software
  maturity"). A system whose stack is its vendor's own compiler (derived calibration — Jalapeño,
  Vera Rubin) gets a band from the whole-graph-compiled anchors of issue 12 (0.25 µs per kernel,
  0.05 ms per step, 1 µs per collective launch — assumption) up to the GPU-like values it is
  priced with. Physical limit 0.
- ``efficiency`` — the fractions of peak and of bandwidth the precision's ops use (GEMM, MoE, MLA
  decode and prefill per compute format, attention, HBM, links), the GEMM and MoE half rows, the
  MoE token passes, a block-scaled GEMM's serial k-loop time (``gemm.fp8_block.k_block_s``,
  cost/roofline.k_serial_s), and the collectives' parameters the calibration's low/high sets also move (the
  all-to-all fraction of an MoE model, the custom all-reduce fraction and half size, the link and
  in-switch half sizes): band = the calibration's low/high sets where they differ, else ±10% for
  a fraction (at most 1) and ±50% for the others (assumption); weight-only INT4 experts' own entry
  (``moe.w4a16.*`` but token passes) by the W4A16 form's held-out error on its own kernel table (a derived set's
  low/high sets carry it; a measured chip's form moved by it here; specs/w4a16_moe.w4a16_band, round 42), its
  label the band's source. Physical limit: fractions 1 (links
  at line rate), half rows, token passes, k-block time and half sizes 0. Every efficiency the sets move for the
  ops the precision runs is listed, so the all-favourable corner (analysis/audit.py) is at least
  as favourable as the band's far end.
- ``spec`` — every number of the system file marked ``estimate = true``: the ``low``/``high`` the file states
  for it where it states both (the on-die network's), else ±20% (link latencies
  0.5-2x; a fraction at most 1, usable HBM at most the nominal capacity; assumption). The physical
  limit keeps the stated specs.
- ``power`` — with the ``load`` power convention, the power model's terms with their bands.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from jalapeno.cost.pricer import RooflinePricer
from jalapeno.specs.calibration import derived_from, load_calibration
from jalapeno.specs.power import POWER_TERMS
from jalapeno.specs.variants import variant_efficiency, with_overrides
from jalapeno.specs.w4a16_moe import W4A16_KEY, w4a16_band, w4a16_key

#: Whole-graph-compiled fixed costs (issue 12: ~0.25 µs per kernel, 0.05 ms per step; 1 µs per
#: collective launch is an assumption), the low end of a vendor-compiler stack's band.
COMPILED_ANCHORS = {"kernel_launch_s": 0.25e-6, "step_overhead_s": 0.05e-3, "collective_launch_s": 1e-6}
FIXED_COSTS = (
    "kernel_launch_s",
    "collective_launch_s",
    "step_overhead_s",
    "moe_floor_s",
    "request_overhead_s",
    "prompt_overhead_s_per_token",
)


def _stack_bands(pricer) -> tuple[dict, dict, str] | None:
    """(slow-end costs, fast-end costs, profile name) of the software stack the pricer's efficiency
    set was priced with (specs/stacks.py, when that module is present), else None."""
    try:
        from jalapeno.specs.stacks import stack_of_source
    except ImportError:  # software-stack profiles not in this build: the module's own bands apply
        return None
    st = stack_of_source(pricer.efficiency.source, pricer.system.name)
    return st.costs("low"), st.costs("high"), st.name


@dataclass(frozen=True)
class Parameter:
    """One uncertain parameter.

    Attributes:
        key: dotted key (``--set`` form; ``power_terms.<name>`` for power-model constants).
        current, low, high: the value priced now and its band.
        limit: its value at the physical limit (None: kept, as the stated specs are).
        lo, hi: the range a root-finder may search (physically meaningful values).
        kind: fixed_cost, efficiency, spec or power. band_source: where the band comes from.
        better: ``higher`` or ``lower`` (the direction that speeds a step: fractions up; fixed
            costs, half rows and token passes down); "" where it depends (specs, power terms).
    """

    key: str
    current: float
    low: float
    high: float
    limit: float | None
    lo: float
    hi: float
    kind: str
    band_source: str
    better: str = ""

    @property
    def favourable_end(self) -> float | None:
        """The end of the band that speeds a step (None where the direction is not fixed)."""
        return self.high if self.better == "higher" else self.low if self.better == "lower" else None

    def within_band(self, v: float) -> bool:
        """Whether ``v`` (the parameter's unit) lies in [low, high], with a relative tolerance of 1e-9 for rounding."""
        return self.low * (1 - 1e-9) <= v <= self.high * (1 + 1e-9)


def _stack_measured(system) -> bool:
    o = system.origin
    cal = load_calibration(o.calibration) if o is not None and o.calibration else None
    return bool(system.vendor_verified and cal and cal.get("kind") in ("measured", "partial"))


def _efficiency_getters(model, precision, system, eff) -> dict:
    """``efficiency.*`` key → getter on an Efficiency, for the ops the precision runs under ``eff`` (the priced set:
    it decides whether weight-only INT4 experts have an entry of their own)."""
    fmts = {precision.modules[m].compute for m in precision.modules} & set(system.chip.formats)
    # GEMM entries by kernel key (fp8_block for block-scaled FP8 weights: specs/formats.NumberFormat.gemm_key)
    keys = {mp.weight.gemm_key(mp.compute) for mp in precision.modules.values() if mp.compute in fmts}
    out = {
        "efficiency.hbm_fraction": lambda e: e.hbm_fraction,
        "efficiency.attention_peak_fraction": lambda e: e.attention_peak_fraction,
        "efficiency.link_fraction": lambda e: e.link_fraction,
    }
    for f in sorted(keys):
        out[f"efficiency.gemm.{f}.peak_fraction"] = lambda e, f=f: e.gemm_peak(f)
        out[f"efficiency.gemm.{f}.hbm_fraction"] = lambda e, f=f: e.gemm_hbm(f)
        out[f"efficiency.gemm.{f}.half_rows"] = lambda e, f=f: e.gemm_half(f)
        # a block-scaled GEMM's serial k-loop floor (cost/roofline.k_serial_s; the key's own entry, no fallback):
        # the calibration's high set moves it too, and left out of the list the all-favourable corner fell
        # under the band's far end (DeepSeek-R1 FP8 on Jalapeño: 480.9 against 500.2 tok/s/user)
        out[f"efficiency.gemm.{f}.k_block_s"] = lambda e, f=f: _own(e.gemm, f, "k_block_s")
    # the routed experts' own compute format only: listing the MoE keys of every format the precision computes in
    # put e.g. moe.bf16.half_rows (inherited, used by no op of an FP8/FP4 MoE) in the tornado, and setting it moved
    # the fallback of the formats the experts do run (specs/efficiency: bf16 is every format's fallback) — a swing
    # of a parameter no op reads, and 'the current value' set back changed the prediction
    moe_fmt = precision.modules["routed_experts"].compute if model.moe is not None else None
    # weight-only INT4 experts are priced by the set's own ``moe[w4a16]`` entry where it has one (cost/ops.py,
    # specs/w4a16_moe.w4a16_key): list that entry, not their compute format's (moe.bf16.*, which no op reads then)
    stored = precision.modules["routed_experts"].weight.name if model.moe is not None else ""
    moe_keys = {w4a16_key(stored, eff) or f for f in fmts & {moe_fmt}}
    for f in sorted(moe_keys):
        out[f"efficiency.moe.{f}.peak_fraction"] = lambda e, f=f: e.moe_peak(f)
        out[f"efficiency.moe.{f}.hbm_fraction"] = lambda e, f=f: e.moe_hbm(f)
        out[f"efficiency.moe.{f}.half_rows"] = lambda e, f=f: e.moe_half(f)
        out[f"efficiency.moe.{f}.token_passes"] = lambda e, f=f: e.moe_passes(f)
        if f == W4A16_KEY:  # its per-layer floor is the form's own (a derived set's low/high sets move it too)
            out[f"efficiency.moe.{f}.floor_s"] = lambda e, f=f: _own(e.moe, f, "floor_s")
    if model.attention.kind == "mla":
        a = precision.attention_compute
        out[f"efficiency.mla_decode.{a}.peak_fraction"] = lambda e: e.kernel_peak("mla_decode", a)
        out[f"efficiency.mla_decode.{a}.hbm_fraction"] = lambda e: e.kernel_hbm("mla_decode", a)
        out[f"efficiency.mla_prefill.{a}.peak_fraction"] = lambda e: e.kernel_peak("mla_prefill", a)
    # collectives: the calibration's low/high sets move these too, so the all-favourable corner
    # (analysis/audit.py) covers every value the band's far end takes
    out["efficiency.link_half_bytes"] = lambda e: e.link_half_bytes
    out["efficiency.custom_ar_fraction"] = lambda e: e.custom_ar_fraction
    out["efficiency.custom_ar_half_bytes"] = lambda e: e.custom_ar_half_bytes
    if model.moe is not None:
        out["efficiency.all_to_all_fraction"] = lambda e: e.all_to_all_fraction
        # its per-call latency too: the high set moves it, and left out the all-favourable corner fell under the
        # band's far end once the W4A16 experts' half rows took their own band (Kimi K2.5 on Jalapeño: 6,543 < 6,549)
        out["efficiency.all_to_all_latency_s"] = lambda e: e.all_to_all_latency_s
    if any(lv.in_network_reduction for lv in system.levels):
        out["efficiency.in_switch_fraction"] = lambda e: e.in_switch_fraction
        out["efficiency.in_switch_half_bytes"] = lambda e: e.in_switch_half_bytes
    if any(lv.scope == "scale_out" for lv in system.levels):
        out["efficiency.scale_out_link_fraction"] = lambda e: e.scale_out_link_fraction
    return out


def _w4a16_band(system, eff) -> tuple[float, str] | None:
    """(held-out error, label) of the W4A16 form the priced set ``eff`` took (specs/w4a16_moe.w4a16_band), or None
    where it has no ``moe[w4a16]`` entry or its system no calibration."""
    o = system.origin
    if W4A16_KEY not in eff.moe or o is None or not o.calibration:
        return None
    return w4a16_band(o.calibration, derived_from(eff.source or ""))


def _own(table, key: str, name: str) -> float | None:
    """``table[key].name`` of the key's own entry (None where it has none: no fallback to another format)."""
    e = table.get(key)
    return None if e is None else getattr(e, name)


def _spec_node(data: dict, key: str):
    """The file-form entry of dotted ``key`` in ``data`` (a bare number or a ``{value, low, high, source}``
    table; a level by its name), or None."""
    node = data
    for p in key.split("."):
        if isinstance(node, list):
            node = next((lv for lv in node if lv.get("name") == p), None)
        elif isinstance(node, dict):
            node = node.get(p)
        if node is None:
            return None
    return node


def _number(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _spec_value(data: dict, key: str) -> float | None:
    node = _spec_node(data, key)
    return _number(node.get("value") if isinstance(node, dict) else node)


def _stated_band(data: dict, key: str) -> tuple[float, float] | None:
    """The ``low``/``high`` a system file states for ``key`` (``die.link_bandwidth_tb_per_s = {value = 1.1,
    low = 0.28, high = 4.4, ...}``), or None where it states neither or only one."""
    node = _spec_node(data, key)
    if not isinstance(node, dict):
        return None
    lo, hi = _number(node.get("low")), _number(node.get("high"))
    return (lo, hi) if lo is not None and hi is not None else None


def uncertain_parameters(pricer, model, precision, convention: str = "chip") -> list[Parameter]:
    """The uncertain parameters of ``pricer``'s system for ``model`` at ``precision`` (see the
    module docstring for kinds, bands and limits)."""
    system, eff = pricer.system, pricer.efficiency
    out: list[Parameter] = []
    measured = _stack_measured(system)
    stack = _stack_bands(pricer)
    for name in FIXED_COSTS:
        v = getattr(eff, name)
        if v is None or v <= 0:
            continue
        ends = [stack[0][name], stack[1][name]] if stack and name in stack[0] and name in stack[1] else None
        if ends is not None and min(ends) != max(ends):
            lo, hi = min(*ends, v), max(*ends, v)
            src = f"software stack '{stack[2]}' band (data/stacks.toml)"
        elif measured or name not in COMPILED_ANCHORS:
            lo, hi, src = 0.5 * v, 1.5 * v, "assumption: ±50% spread of a measured stack's fixed costs"
        else:
            lo, hi = min(COMPILED_ANCHORS[name], v), v
            src = "vendor compiler: compiled anchors up to the value priced"
        out.append(Parameter(f"efficiency.{name}", v, lo, hi, 0.0, 0.0, 10 * v, "fixed_cost", src, "lower"))
    has_band = system.origin is not None and system.origin.calibration is not None
    lo_eff = variant_efficiency(system, "low") if has_band else eff
    hi_eff = variant_efficiency(system, "high") if has_band else eff
    w4band = _w4a16_band(system, eff)
    for key, get in _efficiency_getters(model, precision, system, eff).items():
        v, a, b = get(eff), get(lo_eff), get(hi_eff)
        if v is None:
            continue
        a, b = v if a is None else a, v if b is None else b
        a, b = min(a, b, v), max(a, b, v)
        frac = key.endswith("_fraction")
        if w4band is not None and key.startswith(f"efficiency.moe.{W4A16_KEY}.") and not key.endswith("token_passes"):
            # the W4A16 form's own held-out error, not an assumed ±10% / ±50%: a derived set's low/high sets carry
            # it (specs/w4a16_moe.band_form), a measured chip's form is moved by it here
            if a == b:
                a, b = v / (1 + w4band[0]), (min(1.0, v * (1 + w4band[0])) if frac else v * (1 + w4band[0]))
            src = w4band[1]
        elif a == b:
            a, b = (0.9 * v, min(1.0, 1.1 * v)) if frac else (0.5 * v, 1.5 * v)
            src = "assumption: " + ("±10%" if frac else "±50%") + " (no calibrated band)"
        else:
            src = "calibration low/high sets"
        if frac:
            out.append(Parameter(key, v, a, b, 1.0, min(a, v) * 0.1, 1.0, "efficiency", src, "higher"))
        elif v > 0:  # half rows, token passes, k-block time: less is faster; limit 0 (peak at any row count,
            # no passes, no serial k-loop floor)
            out.append(Parameter(key, v, a, b, 0.0, 0.0, 10 * max(b, v), "efficiency", src, "lower"))
    out += estimated_specs(system)
    if convention == "load":
        for name, t in POWER_TERMS.items():
            if t.low < t.high:
                out.append(
                    Parameter(
                        f"power_terms.{name}", t.value, t.low, t.high, None, t.low / 2, t.high * 2, "power", t.source
                    )
                )
    return out


def estimated_specs(system) -> list[Parameter]:
    """The ``spec`` parameters of ``system`` (kind ``spec``, module docstring): every number its file marks
    ``estimate = true`` (but ``host.*``), with the file's stated band or the assumed one; empty for a system with no
    file form. sensitivity and audit list them; compare --bands and report --bands move the ones a step reads with
    the efficiency band (analysis/spec_bands.py, ux55)."""
    out: list[Parameter] = []
    data = system.origin.data if system.origin is not None else None
    if data is None:
        return out
    for skey, text in system.sources.items():
        if "(estimate)" not in text or skey.startswith(("host.", "efficiency")):
            continue
        key = skey.replace("[", ".").replace("]", "")
        v = _spec_value(data, key)
        if v is None or v <= 0:
            continue
        lat = key.endswith("latency_us")
        lo, hi = (0.5 * v, 2 * v) if lat else (0.8 * v, 1.2 * v)
        src = "assumption: estimate " + ("0.5-2x" if lat else "±20%")
        stated = _stated_band(data, key)
        if stated is not None:  # the file's own band: Jalapeño's on-die links state 0.28-4.4 TB/s (1/4x to 4x),
            # which hardware show and docs/chip.md quote, where sensitivity and audit moved them ±20% (newuser52)
            lo, hi = min(stated[0], v), max(stated[1], v)
            src = f"the file's stated band {stated[0]:g}-{stated[1]:g}"
        # a fraction (kv_tiers.*.usable_fraction) stays at most 1 and usable HBM at most the nominal
        # capacity: 0.9's band ran to 1.08, Jalapeño's 216 GiB usable to 259 GiB, values the schema
        # refuses (sensitivity showed '-' at their high ends)
        top = 1.0 if key.endswith("_fraction") else _usable_cap(system, key) or max(10 * v, hi)
        out.append(Parameter(key, v, lo, min(hi, top), None, min(v / 10, lo), top, "spec", src))
    return out


#: Search range of a headline spec in the audit's "what the chip would need" table, as factors of the
#: stated value (assumption: a generation's step is ~2x in peak or bandwidth, so 0.5-4x spans a
#: generation back to two ahead).
HEADLINE_RANGE = (0.5, 4.0)


def headline_parameters(pricer, skip: set[str] | frozenset = frozenset()) -> list[Parameter]:
    """The stated headline specs of ``pricer``'s system that are not estimates (those are ``spec``
    parameters already): every ``chip.peak_dense_tflops.<format>``, ``chip.hbm_bandwidth_tb_per_s``,
    the nominal HBM capacity (``chip.hbm_capacity_gb`` or ``_gib``, as the file states it; :func:`apply` moves
    the usable capacity with it at the file's usable/nominal ratio, specs/variants.moved_together) and each
    level's ``levels.<name>.bandwidth_gb_per_s`` (a level sharing its inner level's ports moves those with it,
    their link power priced), minus the keys in ``skip``. Kind
    ``headline``: no band (low = high = the stated value: the audit's verdict is under the stated
    specs), searched over :data:`HEADLINE_RANGE` times it, no physical limit; higher is faster.
    The audit solves each alone for the value the claim needs ("what would the chip have to be");
    empty for a system with no file form (no origin)."""
    data = pricer.system.origin.data if pricer.system.origin is not None else None
    if data is None:
        return []
    keys = [f"chip.peak_dense_tflops.{f}" for f in data.get("chip", {}).get("peak_dense_tflops", {})]
    keys.append("chip.hbm_bandwidth_tb_per_s")
    keys += [f"chip.hbm_capacity_{u}" for u in ("gb", "gib") if f"hbm_capacity_{u}" in data.get("chip", {})]
    keys += [f"levels.{lv['name']}.bandwidth_gb_per_s" for lv in data.get("levels", []) if "name" in lv]
    out = []
    for key in keys:
        v = _spec_value(data, key)
        if key in skip or v is None or v <= 0:
            continue
        out.append(
            Parameter(
                key,
                v,
                v,
                v,
                None,
                HEADLINE_RANGE[0] * v,
                HEADLINE_RANGE[1] * v,
                "headline",
                "stated spec (the verdict keeps it)",
                "higher",
            )
        )
    return out


def _usable_cap(system, key: str) -> float | None:
    """The nominal HBM capacity in the unit of a ``chip.hbm_usable_gb``/``_gib`` key (None for others)."""
    unit = {"chip.hbm_usable_gb": 1e9, "chip.hbm_usable_gib": 2.0**30}.get(key)
    return None if unit is None else system.chip.hbm_capacity_bytes / unit


def apply(pricer, values: dict) -> tuple[RooflinePricer, dict | None]:
    """``pricer`` with parameter ``values`` ({key: value}) applied: (pricer, power terms or None).

    Hardware keys rebuild the system through its file form (specs/variants.with_overrides, every
    schema check applies; its power and cost follow), with what a search moves together with them
    (specs/variants.moved_together: usable HBM with the nominal capacity, a level's shared ports with it); ``efficiency.*`` keys apply to the pricer's
    own efficiency set, as ``--set`` applies them to the set a command prices with.

    Raises:
        SpecError: a value the schema or the efficiency set refuses (named).
    """
    from jalapeno.specs.variants import moved_together

    terms = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("power_terms.")}
    hwd = {k: v for k, v in values.items() if not k.startswith(("power_terms.", "efficiency."))}
    hw = [(k, _clean(v)) for k, v in {**hwd, **moved_together(pricer.system, hwd)}.items()]
    effo = [(k, v) for k, v in values.items() if k.startswith("efficiency.")]
    system = with_overrides(pricer.system, hw, where="audit", rename=False)[0] if hw else pricer.system
    eff = pricer.efficiency.with_overrides(_nested(effo), where="audit") if effo else pricer.efficiency
    if dataclasses.is_dataclass(pricer):  # the same kind of pricer (flat or sliced) on the new inputs
        return dataclasses.replace(pricer, system=system, efficiency=eff), terms or None
    return RooflinePricer(system, eff), terms or None


def _clean(v: float) -> float:
    """Whole numbers for integer fields written as floats by a root-finder stay floats; stacks round."""
    return float(v) if not math.isclose(v, round(v)) else float(round(v))


def _nested(items) -> dict:
    from jalapeno.specs.efficiency import nest_params

    return nest_params({k[len("efficiency.") :]: v for k, v in items})


def physical_limit(params: list[Parameter]) -> dict:
    """The values at the physical limit: every parameter that has one (fixed costs 0, efficiencies 1)."""
    return {p.key: p.limit for p in params if p.limit is not None}
