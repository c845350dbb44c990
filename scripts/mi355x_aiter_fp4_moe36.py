"""MI355X's MXFP4 routed experts against aiter's own fused-MoE table (issue 18, round 36, amdix36; nothing shipped).

``data/calibration/mi355x.toml`` has no ``moe[fp4]`` entry: the pinned amd-aiter tables (0.1.7.post2.dev18) hold
no MXFP4 fused-MoE rows, so the routed experts of Quark MXFP4 DeepSeek-R1 are priced by the dense MXFP4 GEMM
fit (``gemm.fp4``: peak fraction 0.498 of the 10,066 TFLOP/s dense MXFP4 peak, half rows 107, HBM fraction 0.593;
specs/efficiency.Efficiency.moe_peak falls back to it) plus the set's fused-MoE floor ``moe_floor_s`` (36.4 µs,
fitted on the BF16/FP8 ``tuned_fmoe`` rows). ROCm/aiter ships the tuned MXFP4 x MXFP4 fused-MoE kernels for
DeepSeek-V3/R1 on MI355X with their measured times (``aiter/configs/model_configs/dsv3_fp4_tuned_fmoe.csv``; the
rows read here are vendored: src/jalapeno/data/kernels/README.md).

Prints, for every measured row (TP8 / TP4 slices of 256 experts, EP8 / EP4 whole experts; T tokens, top-8):
the measured per-layer time and the FLOP rate it implies, then the calibrated routed-expert form
(fit/kernels.moe_model_s, the one ``jalapeno calibrate`` fits and the step prices) with three parameter sets:

- ``fallback``: what serving uses today (the ``gemm.fp4`` values and the set's floor);
- ``joint``: ``moe[fp4]`` fitted by fit/kernels.fit_moe on these rows together with the chip's ``tuned_fmoe``
  rows under calibrate's one-floor rule (what adding the table to fit/amd.py would give; needs amd-aiter);
- ``apart``: fitted on these rows alone, with a floor of their own (the FlyDSL/CK a4w4 kernels' 14 µs).

With ``--write-set DIR`` it writes ``DIR/mi355x.toml``, the shipped set with the ``joint`` ``moe[fp4]`` entry,
for ``jalapeno validate --efficiency DIR`` (the end-to-end what-if of docs/gap_large_batch_decode.md, round 36);
with ``--moved BEFORE.csv AFTER.csv`` (``jalapeno validate --json -o``) it prints every row whose prediction moved.

Run: python scripts/mi355x_aiter_fp4_moe36.py [--write-set DIR] [--moved BEFORE.csv AFTER.csv]
"""

from __future__ import annotations

import argparse
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd

#: the vendored MI355X rows (src/jalapeno/data/kernels/README.md)
TABLE = "data/kernels/aiter_dsv3_fp4_tuned_fmoe.csv"
#: aiter's MI355X compute-unit count (fit/amd.AITER_CU)
CU = 256
#: MI355X dense MXFP4 peak, FLOP/s (the catalog's chip.peak("fp4"); AMD Instinct MI355X datasheet)
MXFP4_PEAK_FLOP_PER_S = 10.066e15


def table_rows() -> pd.DataFrame:
    """The vendored rows with the FLOP one layer does and the rate and peak share the measured time implies.

    FLOP = 2 · T · k · 3 · h · I (gate, up and down projections of each of the T·k token-expert assignments);
    ``us`` is aiter's stage-1 + stage-2 time (``us1`` + ``us2``), µs.
    """
    d = pd.read_csv(files("jalapeno") / TABLE)
    flop = 2.0 * d.token * d.topk * 3 * d.model_dim * d.inter_dim
    rate = flop / (d.us * 1e-6)
    return d.assign(flop=flop, tflop_per_s=rate / 1e12, peak_share=rate / MXFP4_PEAK_FLOP_PER_S)


def _fp4_frame(d: pd.DataFrame) -> pd.DataFrame:
    from jalapeno.fit import amd

    quant = {**amd.MOE_QUANT, "QuantType.per_1x32": "mxfp4"}
    d = d[(d.cu_num == CU) & d.q_type.isin(list(quant))]
    return pd.DataFrame(
        {
            "moe_dtype": d.q_type.map(quant).to_numpy(),
            "num_tokens": d.token.to_numpy(),
            "hidden_size": d.model_dim.to_numpy(),
            "inter_size": d.inter_dim.to_numpy(),
            "topk": d.topk.to_numpy(),
            "num_experts": d.expert.to_numpy(),
            "moe_tp_size": 1,
            "moe_ep_size": 1,
            "distribution": "balanced",
            "latency": d.us.to_numpy() / 1e3,
        }
    )


def parameter_sets() -> dict[str, dict]:
    """{name: {eta, m_half, eta_m, floor_s, ...}} for ``fallback``, ``joint`` (needs amd-aiter) and ``apart``."""
    from jalapeno.fit import amd
    from jalapeno.fit.kernels import fit_moe
    from jalapeno.specs.catalog import load_efficiency, load_system

    system, eff = load_system("mi355x"), load_efficiency("mi355x", "calibrated")
    out = {
        "fallback": {
            "eta": eff.gemm_peak("fp4"),
            "m_half": eff.gemm_half("fp4"),
            "eta_m": eff.gemm_hbm("fp4"),
            "floor_s": float(eff.moe_floor_s),
        }
    }
    fp4 = _fp4_frame(pd.read_csv(files("jalapeno") / TABLE))
    fits = {"apart": fp4}
    try:
        fits["joint"] = pd.concat([_fp4_frame(amd.read_table("tuned_fmoe")), fp4], ignore_index=True)
    except Exception as e:  # noqa: BLE001 - amd-aiter missing: the joint fit is skipped, said so
        print(f"joint fit skipped: {e}")
    for name, frame in fits.items():
        p, r = fit_moe(frame, system, split=amd.MOE_SPLIT)
        f = p["moe"]["fp4"]
        ho = r["formats"]["fp4"].get("held_out_tokens", {})
        out[name] = {
            "eta": f["peak_fraction"],
            "m_half": f["half_rows"],
            "eta_m": f["hbm_fraction"],
            "floor_s": r["kernel_floor_s"],
            "held_out_median": ho.get("median_ape"),
            "held_out_p90": ho.get("p90_ape"),
            "bf16_hbm": p["moe"].get("bf16", {}).get("hbm_fraction"),
            "fp8_hbm": p["moe"].get("fp8", {}).get("hbm_fraction"),
        }
    return out


def compare(sets: dict[str, dict]) -> pd.DataFrame:
    """Measured per-layer time (s) and each parameter set's form, one row per vendored table row."""
    from jalapeno.fit.kernels import moe_model_s, moe_rows
    from jalapeno.specs.catalog import load_system

    system = load_system("mi355x")
    r = moe_rows(_fp4_frame(pd.read_csv(files("jalapeno") / TABLE)), "uniform")
    out = r[["num_experts", "inter_size", "num_tokens", "t"]].copy()
    for name, s in sets.items():
        out[name] = moe_model_s(system, r, "fp4", s["eta"], s["m_half"], s["eta_m"], s["floor_s"], 0.0)
    return out.sort_values(["num_experts", "inter_size", "num_tokens"])


def write_set(directory: str, joint: dict) -> Path:
    """``directory``/mi355x.toml: the shipped set with ``joint``'s ``moe[fp4]`` and the one floor (and the
    BF16/FP8 HBM fractions) that fit gives, as ``jalapeno calibrate`` would write them; every other system's
    shipped set beside it (``--efficiency DIR`` reads one file per system)."""
    text = (files("jalapeno") / "data/calibration/mi355x.toml").read_text()
    text = text.replace("moe_floor_s = 3.6416577e-05\n", f"moe_floor_s = {joint['floor_s']:.8g}\n", 1)
    text = text.replace(
        "[parameters.moe.bf16]\nhbm_fraction = 0.7683523\n",
        f"[parameters.moe.bf16]\nhbm_fraction = {joint['bf16_hbm']:.8g}\n",
        1,
    )
    text = text.replace(
        "[parameters.moe.fp8]\nhbm_fraction = 0.6813167\n",
        f"[parameters.moe.fp4]\nhbm_fraction = {joint['eta_m']:.8g}\npeak_fraction = {joint['eta']:.8g}\n"
        f"half_rows = {joint['m_half']:.8g}\n\n[parameters.moe.fp8]\nhbm_fraction = {joint['fp8_hbm']:.8g}\n",
        1,
    )
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for f in (files("jalapeno") / "data/calibration").iterdir():  # every system's shipped set, MI355X's changed
        if f.name.endswith(".toml"):
            (out / f.name).write_text(f.read_text())
    (out / "mi355x.toml").write_text(text)
    return out / "mi355x.toml"


def moved(before: str, after: str) -> pd.DataFrame:
    """Rows of two validate files whose prediction differs: id, system, stack, metric, split, errors (%)."""
    a, b = pd.read_csv(before), pd.read_csv(after)
    k = ["id", "metric"]
    j = a.merge(b[k + ["predicted", "error"]], on=k, suffixes=("_before", "_after"))
    j = j[~np.isclose(j.predicted_before, j.predicted_after, rtol=1e-12, atol=0.0)]
    return j.assign(before=100 * j.error_before, after=100 * j.error_after)[
        ["id", "system", "stack", "concurrency", "isl", "metric", "split", "before", "after"]
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write-set", metavar="DIR")
    ap.add_argument("--moved", nargs=2, metavar=("BEFORE", "AFTER"))
    a = ap.parse_args(argv)
    d = table_rows()
    print("aiter MXFP4 fused MoE on MI355X (vendored rows): FLOP rate the measured time implies")
    for (e, i), g in d.groupby(["expert", "inter_dim"]):
        big = g[g.token >= 4096]
        rate = (
            f"; T >= 4096: {big.tflop_per_s.min():.0f}-{big.tflop_per_s.max():.0f} TFLOP/s, at most "
            f"{100 * big.peak_share.max():.1f}% of the dense MXFP4 peak"
            if len(big)
            else ""
        )
        print(f"  {e:3d} experts x intermediate {i:4d}: {len(g):2d} rows, T {g.token.min()}-{g.token.max()}{rate}")
    sets = parameter_sets()
    for name, s in sets.items():
        print(
            f"{name:8s}: peak fraction {s['eta']:.3f}, half rows {s['m_half']:.1f}, HBM fraction {s['eta_m']:.3f}, "
            f"floor {s['floor_s'] * 1e6:.1f} us"
            + (
                f"; held-out token counts median {100 * s['held_out_median']:.1f}%, p90 {100 * s['held_out_p90']:.1f}%"
                if s.get("held_out_median")
                else ""
            )
        )
    c = compare(sets)
    names = list(sets)
    print(f"{'experts':>7} {'inter':>5} {'T':>6} {'aiter us':>9} " + " ".join(f"{n + ' /aiter':>15}" for n in names))
    for _, r in c.iterrows():
        print(
            f"{r.num_experts:7.0f} {r.inter_size:5.0f} {r.num_tokens:6.0f} {r.t * 1e6:9.1f} "
            + " ".join(f"{r[n] * 1e6:8.1f} {r[n] / r.t:6.2f}" for n in names)
        )
    for n in names:
        ratio = c[n] / c.t
        small, large = ratio[c.num_tokens <= 64], ratio[c.num_tokens >= 2048]
        print(
            f"{n:8s}: form / measured {small.min():.2f}-{small.max():.2f} at T <= 64, "
            f"{large.min():.2f}-{large.max():.2f} at T >= 2048; median |error| "
            f"{100 * np.median(np.abs(ratio - 1)):.1f}% (n {len(c)})"
        )
    if a.write_set and "joint" in sets:
        print(f"wrote {write_set(a.write_set, sets['joint'])}")
    if a.moved:
        print(moved(*a.moved).to_string(index=False, float_format=lambda v: f"{v:+.1f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
