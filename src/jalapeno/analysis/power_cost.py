"""Power, energy and cost per token under labelled power conventions (DESIGN.md §3).

    tok/s per kW = throughput_per_chip / (P_chip / 1000)
    J/token      = P_chip / throughput_per_chip
    $/M tokens   = ($/chip-hour) / (throughput_per_chip · 3600 / 10^6)

P_chip is one of: ``chip`` (the chip's TDP), ``sustained`` (sustained power under load where the
catalog has it, else TDP, labelled so), ``all-in`` (provisioned power per chip incl. host,
network and facility; InferenceX's convention). Throughput counts input + output tokens, as
InferenceX's tok/s/MW and $/M tokens do.
"""

from __future__ import annotations

import math

import numpy as np

from jalapeno.errors import UnknownNameError, choice_hint
from jalapeno.specs.hardware import System

CONVENTIONS = ("chip", "sustained", "all-in")


def power_w_per_chip(system: System, convention: str) -> tuple[float, str]:
    """Power per chip under ``convention`` and a label saying what it is.

    Raises:
        UnknownNameError: unknown convention, or ``load`` (field ``--power``: the drawn power is
            audit's convention, analysis/claims.py, not one figure per chip).
    """
    c = system.chip
    if convention == "chip":
        return c.tdp_w, "chip TDP"
    if convention == "sustained":
        if c.sustained_w is None:
            return c.tdp_w, "chip TDP (no sustained figure published)"
        return c.sustained_w, "chip sustained"
    if convention == "all-in":
        return system.allin_power_w_per_chip, "all-in provisioned"
    check_convention(convention)
    raise AssertionError(convention)  # unreachable: check_convention refuses every other name


def whole_boxes(chips: int, box_chips: int, boxes: int, w_per_chip: float | None) -> dict:
    """A fleet of ``chips`` in use, bought as ``boxes`` whole boxes (racks) of ``box_chips`` each: the one rule for
    compare's per-rack line (one rack: ``whole_boxes(n, n, 1, w)``) and plan's provisioned line (ux54), so both count
    a rack's power the same way: every chip of a whole box, idle or not, at ``w_per_chip`` (the all-in provisioned
    W per chip, the facility's; None: no figure). Returns ``{"chips": boxes x box_chips (at least chips),
    "idle_chips", "all_in_power_kw"}`` (kW; None without ``w_per_chip``).

    Hand check (Jalapeño: 16 trays = 128 chips a rack, 917 W IT x PUE 1.25 = 1.15 kW all-in per chip, its system
    file): 108 chips in use in one rack: 128 chips bought, 20 idle, 128 x 1,150 W = 147.2 kW.

    >>> whole_boxes(108, 128, 1, 1150.0)
    {'chips': 128, 'idle_chips': 20, 'all_in_power_kw': 147.2}
    """
    n = max(int(chips), int(boxes) * int(box_chips))
    return {
        "chips": n,
        "idle_chips": n - int(chips),
        "all_in_power_kw": None if w_per_chip is None else n * w_per_chip / 1e3,
    }


def check_convention(convention: str) -> None:
    """Refuse a ``--power`` that names no convention, before any sweep: ``compare --power kw`` swept every
    system (14 s) and then said so. The error ``power_w_per_chip`` raises.

    Raises:
        UnknownNameError: unknown convention, or ``load`` (field ``--power``: the drawn power is
            audit's convention, analysis/claims.py, not one figure per chip).
    """
    if convention in CONVENTIONS:
        return
    if convention == "load":  # the drawn power is audit's convention (docs/audit.md §4): not a catalog figure
        raise UnknownNameError(
            "--power",
            "'load' (the chip power drawn at each operating point) is taken by jalapeno audit and sensitivity only",
            f"use one of {', '.join(CONVENTIONS)} here, or jalapeno audit --power load for the drawn power",
        )
    raise UnknownNameError(
        "--power",
        f"unknown power convention {convention!r}{choice_hint(convention, CONVENTIONS)}",
        f"use one of {', '.join(CONVENTIONS)}",
    )


def energy_and_cost(throughput_per_chip, system: System, convention: str) -> dict[str, np.ndarray]:
    """tok/s/kW, J/token and $/M tokens for throughputs (N,) tok/s per chip (input + output)."""
    t = np.asarray(throughput_per_chip, dtype=float)
    p, _ = power_w_per_chip(system, convention)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "power_w_per_chip": np.full(t.shape, p),
            "tok_s_per_kw": t / (p / 1000.0),
            "j_per_token": np.where(t > 0, p / t, np.inf),
            "usd_per_mtok": np.where(t > 0, system.usd_per_chip_hour / (t * 3600 / 1e6), np.inf),
        }


def point_utilisation(model, pricer, dep, workload, decode_batch, step_time_s, throughput_per_chip):
    """Compute, HBM and scale-up link utilisation of one deployment's operating points (arrays (N,)).

    One step of the (decode) instance at each point's decode batch ``B`` and mean context
    ISL + OSL/2 is priced with ``step_cost`` (aggregated: plus the prefill tokens that arrive per
    step, B·ISL/(OSL − 1)); its op table is one chip's share of the step, so with τ the point's
    step time:

        u_c = Σ_op FLOP_op / peak(format_op) / τ     (each op at the peak of its own compute format)
        u_m = chip HBM bytes per step / (τ · HBM bandwidth)
        u_l = Σ collective bytes · calls per step / (τ · scale-up bandwidth per direction)

    Each op's FLOPs count against its own format's peak: energy per FLOP at a format is the
    compute power over that format's peak, so a BF16 FLOP (attention) costs twice an FP8 one on a
    chip whose BF16 peak is half — dividing every FLOP by the FP8 peak halved the attention's power.
    The links were charged nothing under load (``u_l`` was not passed); their SerDes power now
    follows the step's collective bytes.

    Disaggregated: the decode chips at those utilisations; the prefill chips at the compute
    utilisation of their prompts — one prompt of ISL tokens priced on the prefill layout (FLOPs
    per chip by format, attention included) times the prompts per second per prefill worker — and
    no HBM streaming or link traffic; the point's value is the chip-weighted mean, a stated
    approximation. Returns (u_c, u_m, u_l), each clipped to [0, 1].
    """
    from jalapeno.cost.step import Batch, pool_step_cost, step_cost
    from jalapeno.specs.power import scale_up_bytes_per_s

    b = np.asarray(decode_batch, dtype=float)
    tau = np.asarray(step_time_s, dtype=float)
    isl, osl = workload.mean_isl, workload.mean_osl
    p = b * isl / max(osl - 1, 1) if dep.prefill is None else np.zeros_like(b)
    lay = dep.decode.layout
    # the mean chip's share of the prompts (energy), not the busiest rank's: one prompt on every
    # attention-DP rank (cost/adp_rank.py prices max(n/dp, min(n, 1)) of n prompts on the busiest)
    sc = pool_step_cost(
        model,
        pricer,
        dep,
        lay,
        Batch.make(
            decode_seqs=b, decode_ctx=isl + osl / 2, prefill_tokens=p, prefill_seqs=np.where(p > 0, float(lay.dp), 0.0)
        ),
    )
    chip = pricer.system.chip
    link = scale_up_bytes_per_s(pricer.system)
    co = sc.collectives
    coll = (co.bytes * np.asarray(co.calls, dtype=float)[:, None]).sum(axis=0) if len(co.name) else np.zeros_like(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        u_c = np.clip(np.nan_to_num(_peak_seconds(sc.ops, chip) / tau), 0, 1)
        u_m = np.clip(np.nan_to_num(sc.ops.bytes.sum(axis=0) / (tau * chip.hbm_bandwidth_bytes_per_s)), 0, 1)
        u_l = np.clip(np.nan_to_num(coll / (tau * link)), 0, 1) if link > 0 else np.zeros_like(b)
    if dep.prefill is not None:
        pre = dep.prefill
        one = step_cost(model, pricer, pre.layout, dep.precision, Batch.make(decode_seqs=0, prefill_tokens=isl))
        prompt_rate = np.asarray(throughput_per_chip, dtype=float) * dep.chips / (isl + osl)  # prompts/s
        u_pre = np.clip(prompt_rate / pre.workers * float(_peak_seconds(one.ops, chip)[0]), 0, 1)
        n_pre, n_dec = pre.chips, dep.decode.chips
        u_c = (n_dec * u_c + n_pre * u_pre) / dep.chips
        u_m = u_m * n_dec / dep.chips
        u_l = u_l * n_dec / dep.chips
    return u_c, u_m, u_l


def _peak_seconds(ops, chip) -> np.ndarray:
    """Seconds the op table's FLOPs take at peak, each op at its own compute format's peak, (N,)."""
    fallback = chip.peak_flop_per_s.get("bf16", max(chip.peak_flop_per_s.values()))
    peak = np.array([chip.peak_flop_per_s.get(f, fallback) for f in ops.fmt], dtype=float)
    return (ops.flop / peak[:, None]).sum(axis=0)


def load_power_w_per_chip(model, pricer, dep, workload, decode_batch, step_time_s, throughput_per_chip, terms=None):
    """Chip power drawn at operating points (W, (N,)): specs/power.load_power_w at the
    utilisations of :func:`point_utilisation` (compute, HBM and scale-up links), with the chip's
    components (a variant's relative to its root); ``terms``: power-term values replacing the mid
    ones (specs/power.POWER_TERMS)."""
    from jalapeno.specs.power import chip_power, load_power_w

    u_c, u_m, u_l = point_utilisation(model, pricer, dep, workload, decode_batch, step_time_s, throughput_per_chip)
    return load_power_w(chip_power(pricer.system, _root(pricer.system), terms), u_c, u_m, u_l)


def _root(system):
    """The catalog system a variant's power components are anchored on (None: itself)."""
    o = system.origin
    if o is None or o.root is None or not any(not k.startswith("efficiency.") for k, _ in o.overrides):
        return None
    from jalapeno.specs.catalog import load_system

    return load_system(o.root)


def usd_text(x) -> str:
    """A dollar figure to three significant figures without an exponent, ``-`` when missing or not finite:
    0.00534 -> ``0.00534``, 1.234 -> ``1.23``, 1234.6 -> ``1235`` (Python's rounding: 1234.5 -> ``1234``; a fixed ``.3f`` printed 0.0054 and
    0.0046 $/M tok both as ``0.005``, hiding a 17% difference)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    if x == 0:
        return "0"
    return f"{x:.{max(0, 2 - math.floor(math.log10(abs(x))))}f}"
