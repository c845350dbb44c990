"""MI325X SGLang-ROCm DeepSeek-R1 FP8 8k/1k (TP8, MoE TP8 EP1): the shape in batch of the measured TPOT against the model's decode step.

Question (issue 18, round 33, mi325x33): the held-out MI325X SGLang rows at C8 / C32 (InferenceX sglang-rocm@0.5.19,
8k/1k) are priced 7-11% too slow in interactivity while the fit rows beside them go -0% (C4), -15% (C16), +6% (C64).
Is this an intercept the stack fit absorbed, or a slope in batch?

The measured rows (``data/validation/inferencex_points.csv``, MI325X DeepSeek-R1-0528 FP8 sglang 8192/1024, image
lmsysorg/sglang:v0.5.19-rocm700-mi30x, C = 4 .. 64, mean TPOT) are split the way the closed loop splits them:
TPOT = step(C) + C · P / OSL, P the time of one 8,192-token prompt (each of the C requests stalls the decode stream
once per OSL output tokens; SGLang runs a prompt's chunk in the step, the budget 131,072 holds a whole prompt).
P is the model's own marginal price of one prompt in a step beside the C decode rows (``jalapeno step -s mi325x
-m deepseek-r1 -p fp8 --kv-dtype fp8 --tp 8 --ep 1 --stack sglang-rocm@0.5.19 -b C -c 8704 --prefill-tokens 8192``
less the same step without the prompt), so ``meas_step`` is the decode step the rows imply under the model's
prefill. Printed per C: the model's decode step (``-b C -c 8704``, mean context
8,192 + 1,024/2) split into the routed experts (``moe.experts``), the MLA decode kernel and the rest, the implied
measured step, the per-request slope between adjacent C of each, and the expected number of distinct experts
a rank's MoE reads at uniform top-8 routing, E·(1 − (1 − k/E)^C) (256 experts, k = 8, DeepSeek-V3 config.json).

Finding: the implied measured step grows near-linearly in C (0.39-0.60 ms per request), the model's step is
concave (0.92 → 0.34 ms per request) because its routed-expert term follows the distinct-expert count and
saturates; the model is slower at C8-C32 and faster at C64 with the C4 step matched. A what-if (printed, not
shipped) refits the series with the routed-expert term at another HBM fraction and the MLA decode term times k.
Nothing is written. Run: python scripts/mi325x_sglang_decode_shape.py
"""

from __future__ import annotations

import numpy as np

#: measured mean TPOT (ms) by concurrency: data/validation/inferencex_points.csv, MI325X DeepSeek-R1-0528 FP8
#: sglang 8192/1024 TP8 EP1 (InferenceX PR #3318 baseline, image lmsysorg/sglang:v0.5.19-rocm700-mi30x)
MEASURED_TPOT_MS = {4: 18.53, 8: 21.56, 16: 26.75, 32: 39.45, 64: 66.55}
ISL, OSL = 8192, 1024
#: DeepSeek-V3 / R1 config.json: n_routed_experts 256, num_experts_per_tok 8
EXPERTS, TOP_K = 256, 8
STACK = "sglang-rocm@0.5.19"
#: measured median TPOT (ms) at C64, sglang-rocm@0.5.9 (image lmsysorg/sglang:v0.5.9-rocm700-mi30x), by (system, ISL):
#: data/validation/inferencex_points.csv lines 26 / 28 / 34 / 35
PAIRS_TPOT_MS = {("mi325x", 8192): 74.8, ("mi325x", 1024): 44.7, ("mi300x", 8192): 85.3, ("mi300x", 1024): 51.3}


def distinct_experts(b: float, experts: int = EXPERTS, k: int = TOP_K) -> float:
    """Expected distinct routed experts hit by ``b`` tokens at uniform top-k routing: E·(1 − (1 − k/E)^b)."""
    return experts * (1.0 - (1.0 - k / experts) ** b)


def model_step(
    b: int, ctx: float, prefill_tokens: int = 0, system: str = "mi325x", stack: str = STACK
) -> tuple[dict, float]:
    """The model's op times (ms) by op name and its step time (ms), as ``jalapeno step`` prices them on MI325X."""
    from jalapeno.cli.common import resolve_precision
    from jalapeno.cli.system_opts import system_pricer
    from jalapeno.cost.step import Batch, step_cost
    from jalapeno.deploy.layout import Layout, for_model
    from jalapeno.specs.catalog import load_model

    m = load_model("deepseek-r1")
    pr = system_pricer(system, "calibrated", [], stack, "roofline")
    prec = resolve_precision(m, "fp8", "fp8")
    sc = step_cost(
        m,
        pr,
        for_model(Layout(tp=8, dp=1, ep=1), m),
        prec,
        Batch.make(decode_seqs=b, decode_ctx=ctx, prefill_tokens=prefill_tokens, prefill_ctx=0),
    )
    ops = {r["op"]: r["time_s"] * 1e3 for r in sc.op_rows(0)}
    return ops, float(np.atleast_1d(sc.step_time_s)[0]) * 1e3


def rows() -> list[dict]:
    """One dict per concurrency: model step parts, implied measured step (ms) and distinct experts."""
    ctx = ISL + OSL / 2
    out = []
    for c, tpot in MEASURED_TPOT_MS.items():
        ops, step = model_step(c, ctx)
        prompt_ms = model_step(c, ctx, ISL)[1] - step  # the prompt's marginal time in a mixed step
        moe, mla = ops.get("moe.experts", 0.0), ops.get("attn.mla_decode", 0.0)
        out.append(
            {
                "C": c,
                "model_step": step,
                "moe": moe,
                "mla": mla,
                "rest": step - moe - mla,
                "stall": c * prompt_ms / OSL,
                "meas_tpot": tpot,
                "meas_step": tpot - c * prompt_ms / OSL,
                "experts": distinct_experts(c),
                "prompt_ms": prompt_ms,
            }
        )
    return out


def context_pairs() -> list[dict]:
    """C64 at 1k/1k and 8k/1k on sglang-rocm@0.5.9 per chip: measured TPOT, model step + stall (ms)."""
    out = []
    for (system, isl), tpot in PAIRS_TPOT_MS.items():
        ctx, stack = isl + OSL / 2, "sglang-rocm@0.5.9"
        ops, step = model_step(64, ctx, system=system, stack=stack)
        stall = 64 * (model_step(64, ctx, isl, system=system, stack=stack)[1] - step) / OSL
        out.append(
            {
                "system": system,
                "isl": isl,
                "model_step": step,
                "mla": ops.get("attn.mla_decode", 0.0),
                "stall": stall,
                "model_tpot": step + stall,
                "meas_tpot": tpot,
            }
        )
    return out


def _calibrated(*keys: str) -> float:
    """A value of data/calibration/mi325x.toml's ``[parameters]`` (read, not copied: a refit moves it)."""
    from jalapeno.specs.calibration import load_calibration

    v = load_calibration("mi325x")["parameters"]
    for k in keys:
        v = v[k]
    return float(v)


#: moe.fp8.hbm_fraction of data/calibration/mi325x.toml (borrowed from MI355X; 0.450 at round 33) and what-if
#: values: 0.6, 0.75, the chip's generic hbm_fraction in the same file (0.865), and an expert block that does not
#: grow with batch (inf)
MOE_FRACTION_NOW = _calibrated("moe", "fp8", "hbm_fraction")
MOE_FRACTIONS = (MOE_FRACTION_NOW, 0.6, 0.75, _calibrated("hbm_fraction"), float("inf"))


def moe_mla_whatif(rs: list[dict]) -> list[dict]:
    """What-if: the routed-expert term scaled to another HBM fraction, the MLA decode term's multiplier k and an
    intercept a fitted to the implied measured step (step = a + rest + moe·f_now/f + k·mla); rms residual in ms."""
    y = np.array([r["meas_step"] for r in rs])
    moe, mla, rest = (np.array([r[k] for r in rs]) for k in ("moe", "mla", "rest"))
    out = []
    for f in MOE_FRACTIONS:
        a = np.c_[np.ones_like(mla), mla]
        coef, res, *_ = np.linalg.lstsq(a, y - rest - moe * MOE_FRACTION_NOW / f, rcond=None)
        out.append(
            {
                "moe_fraction": f,
                "intercept": float(coef[0]),
                "mla_multiplier": float(coef[1]),
                "rms": float(np.sqrt(res[0] / len(y))),
            }
        )
    return out


def main() -> None:
    rs = rows()
    print(
        "P = one 8,192-token prompt's marginal time in a mixed step beside C decode rows (model): "
        + ", ".join(f"C{r['C']} {r['prompt_ms']:.0f} ms" for r in rs)
        + "; stall = C · P / OSL"
    )
    print(
        f"{'C':>3} {'model_step':>10} {'moe':>6} {'mla':>5} {'rest':>5} {'stall':>6} {'meas_tpot':>9} "
        f"{'meas_step':>9} {'step_err':>8} {'experts':>7} {'slope_m':>7} {'slope_x':>7}"
    )
    for i, r in enumerate(rs):
        sm = sx = float("nan")
        if i:
            p, dc = rs[i - 1], r["C"] - rs[i - 1]["C"]
            sm, sx = (r["model_step"] - p["model_step"]) / dc, (r["meas_step"] - p["meas_step"]) / dc
        print(
            f"{r['C']:>3} {r['model_step']:>10.1f} {r['moe']:>6.1f} {r['mla']:>5.1f} {r['rest']:>5.1f} "
            f"{r['stall']:>6.1f} {r['meas_tpot']:>9.2f} {r['meas_step']:>9.1f} "
            f"{r['model_step'] / r['meas_step'] - 1:>+8.1%} {r['experts']:>7.1f} {sm:>7.2f} {sx:>7.2f}"
        )
    print("slope_m / slope_x: ms per added request between adjacent C, model step / implied measured step")
    c = np.array([r["C"] for r in rs], dtype=float)
    y = np.array([r["meas_step"] for r in rs])
    fit = {
        "a + b·C": np.c_[np.ones_like(c), c],
        "a + b·C + g·experts(C)": np.c_[np.ones_like(c), c, [distinct_experts(x) for x in c]],
    }
    for name, a in fit.items():
        coef, res, *_ = np.linalg.lstsq(a, y, rcond=None)
        print(
            f"implied measured step ~ {name}: coefficients {np.round(coef, 3).tolist()} (ms), "
            f"residual rms {np.sqrt(float(res[0]) / len(y)) if len(res) else 0.0:.2f} ms"
        )
    print(
        "\nwhat-if (not shipped): routed experts at HBM fraction f (scaled from 0.450), MLA decode x k, intercept a,"
        " fitted to the implied measured step"
    )
    for w in moe_mla_whatif(rs):
        print(
            f"  f {w['moe_fraction']:>6.3f}: k {w['mla_multiplier']:.2f}, a {w['intercept']:+.2f} ms, rms {w['rms']:.2f} ms"
        )
    err = np.array([r["model_step"] - r["meas_step"] for r in rs])
    print(f"  the model as shipped: rms {np.sqrt(np.mean(err**2)):.2f} ms")
    print("\nC64, sglang-rocm@0.5.9 (median TPOT): the context step from 1k/1k (ctx 1,536) to 8k/1k (ctx 8,704)")
    ps = context_pairs()
    for r in ps:
        print(
            f"{r['system']:>7} ISL {r['isl']:>5}: model step {r['model_step']:.1f} (MLA decode {r['mla']:.1f}) "
            f"+ stall {r['stall']:.1f} = {r['model_tpot']:.1f} ms; measured {r['meas_tpot']:.1f} ms "
            f"({r['model_tpot'] / r['meas_tpot'] - 1:+.1%})"
        )
    for sysname in ("mi325x", "mi300x"):
        lo, hi = (next(r for r in ps if r["system"] == sysname and r["isl"] == i) for i in (1024, 8192))
        print(
            f"{sysname}: 8k minus 1k TPOT, model {hi['model_tpot'] - lo['model_tpot']:.1f} ms "
            f"(step {hi['model_step'] - lo['model_step']:.1f}, stall {hi['stall'] - lo['stall']:.1f}); "
            f"measured {hi['meas_tpot'] - lo['meas_tpot']:.1f} ms"
        )


if __name__ == "__main__":
    main()
