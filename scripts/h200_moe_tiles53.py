"""Is the InferenceX H200 SGLang DeepSeek-R1 decode hump the Triton fused MoE's tile schedule? The launch geometry
SGLang's shipped H200 configuration gives the routed + shared experts at M = 4 … 64 decode rows a rank, beside the
routed-expert stream rate round 52 read from the measured sweeps (issue 18, round 53, h200moe53; docs/gap_aic_itl.md
"round 53, h200moe53"). Diagnosis: nothing is fitted, priced or written into the package.

The kernel (sgl-project/sglang 0.5.9 wheel, identical in 0.5.12: ``fused_moe_triton/fused_moe_triton_kernels.py``
``fused_moe_kernel`` and ``invoke_fused_moe_kernel``; ``moe_align_block_size.py``): tokens are sorted by expert and each
expert's list padded to BLOCK_SIZE_M (``moe_align_block_size``); the grid launches cdiv(len(sorted_ids), BLOCK_SIZE_M)
· cdiv(N, BLOCK_SIZE_N) programs, of which those past ``num_tokens_post_padded`` return at once; len(sorted_ids) is
numel · BLOCK_SIZE_M when numel = M · top_k < E + 1, else numel + (E + 1)(BLOCK_SIZE_M − 1). Each live program reads
one BLOCK_SIZE_N × K slice of one expert's weight in K / BLOCK_SIZE_K pipelined steps of ``num_stages`` buffers.
DeepSeek-R1 at attention TP8, MoE TP8 EP1: every rank sees all M = C decode rows, hidden K = 7,168, expert
intermediate 2,048 / 8 = 256, so the gate/up GEMM has N = 512, K = 7,168 and the down GEMM N = 7,168, K = 256; SGLang
fuses the shared expert (E = 257, top_k = 8 + 1; round 42, cost/shared_fusion.py). The configuration by M is
:data:`GATE_UP` / :data:`DOWN` (the files ``configs/triton_3_5_1/E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,
block_shape=[128, 128].json`` (md5 aea2380e…) and ``..._down.json`` (md5 fb5ae5c9…), byte-identical in the 0.5.9,
0.5.12 and 0.5.14 wheels, round 50; the nearest key to M is taken, ``get_config``); ``--wheel`` re-reads them.

Routing: uniform top-8 of 256 without replacement (InferenceX's random tokens; the model's own assumption), so one
routed expert's rows are Binomial(M, 8/256) and the shared expert has M rows. Per M printed, expected values:
distinct routed experts, live M-blocks and padded rows, launched and live programs of each GEMM, the CTAs an SM holds
by shared memory alone (num_stages · (BLOCK_SIZE_M · BLOCK_SIZE_K + BLOCK_SIZE_K · BLOCK_SIZE_N) FP8 bytes against
Hopper's 227 KB a block may use, NVIDIA Hopper tuning guide; 16 CTAs of 4 warps by the 64-warp limit; registers
ASSUMED not binding), waves of live programs on 132 SMs, weight bytes the live programs read (each M-block re-reads its
expert's slices) and the unique touched bytes, the padded MACs and their time at H200's 1,979 TFLOPS dense FP8
(datasheet) against the touched bytes' time at 4.8 TB/s. With a validate CSV, the routed-expert stream rate round 52's
Part 5 implies (scripts/h200_decode_hump52.py) is printed beside them.

Usage: python scripts/h200_moe_tiles53.py [VALIDATE_CSV] [--wheel SGLANG_0_5_9_WHEEL]
(VALIDATE_CSV: ``jalapeno validate --json -o X.csv``; the wheel: ``pip download --no-deps sglang==0.5.9``)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
import zipfile
from pathlib import Path

from jalapeno.errors import SpecError

#: decode rows a rank (= concurrency at attention TP8) the sweeps ran
ROWS = (4, 8, 16, 32, 64)
#: DeepSeek-R1 (DeepSeek-V3 config.json): hidden 7,168, moe_intermediate_size 2,048, 256 routed experts, top-8, one
#: shared expert, 58 MoE layers (61 layers, first_k_dense_replace 3)
HIDDEN, INTER, ROUTED, TOP_K, MOE_LAYERS = 7168, 2048, 256, 8, 58
#: MoE TP8: each rank holds every expert's 1/8 intermediate slice
TP = 8
#: H200 SXM: 132 SMs, 4.8 TB/s HBM3e, 1,979 TFLOPS dense FP8 (NVIDIA H200 datasheet); 227 KB of shared memory a block
#: may use, 64 resident warps an SM (NVIDIA Hopper tuning guide, compute capability 9.0)
SMS, HBM_B_S, FP8_FLOP_S, SMEM_B, WARPS_SM = 132, 4.8e12, 1.979e15, 227 * 1024, 64
#: (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_warps, num_stages) by M key: sglang 0.5.9 wheel,
#: fused_moe_triton/configs/triton_3_5_1/E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json
GATE_UP: dict[int, tuple[int, int, int, int, int]] = {
    1: (16, 64, 128, 4, 5),
    2: (16, 64, 128, 4, 5),
    4: (16, 64, 128, 4, 5),
    8: (16, 64, 128, 4, 5),
    16: (16, 64, 128, 4, 3),
    24: (16, 128, 128, 4, 3),
    32: (16, 64, 128, 4, 5),
    48: (16, 64, 128, 4, 5),
    64: (16, 64, 128, 4, 4),
    96: (16, 64, 128, 4, 5),
    128: (16, 64, 128, 4, 3),
}
#: the same for the down GEMM: the ``..._down.json`` file beside it (every entry USE_TMA true)
DOWN: dict[int, tuple[int, int, int, int, int]] = {
    1: (16, 128, 128, 4, 2),
    2: (16, 128, 64, 4, 3),
    4: (16, 128, 128, 4, 2),
    8: (16, 128, 128, 4, 2),
    16: (16, 128, 128, 4, 2),
    24: (16, 128, 64, 4, 3),
    32: (16, 256, 64, 4, 3),
    48: (16, 128, 64, 4, 3),
    64: (16, 128, 128, 4, 2),
    96: (16, 128, 128, 4, 2),
    128: (16, 128, 128, 4, 2),
}
#: the files' folder inside the wheel (``fused_moe_triton/configs/`` to 0.5.9, ``moe_runner/triton_utils/configs/`` in
#: 0.5.12) and name
CONFIG_PATH = "/triton_3_5_1/"
CONFIG_FILE = "E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128]"


def nearest(table: dict[int, tuple], m: int) -> tuple:
    """The entry of ``table`` whose key is nearest ``m`` (SGLang's ``min(keys, key=lambda x: abs(x - M))``: the first
    key in ascending order wins a tie). Raises SpecError on an empty table or m < 1."""
    if not table or m < 1:
        raise SpecError("rows", str(m), "give M >= 1 and a non-empty configuration table")
    return table[min(sorted(table), key=lambda k: abs(k - m))]


def binom_pmf(n: int, p: float, k: int) -> float:
    return math.comb(n, k) * p**k * (1.0 - p) ** (n - k)


def expected_blocks(m: int, block_m: int, experts: int = ROUTED, top_k: int = TOP_K) -> tuple[float, float]:
    """Expected (distinct routed experts, routed M-blocks) at ``m`` rows under uniform top-``top_k`` routing without
    replacement: an expert's rows are Binomial(m, top_k / experts); it is touched when it has one and takes
    cdiv(rows, block_m) blocks."""
    p = top_k / experts
    touched = experts * (1.0 - (1.0 - p) ** m)
    blocks = experts * sum(binom_pmf(m, p, k) * math.ceil(k / block_m) for k in range(1, m + 1))
    return touched, blocks


def launched_m_blocks(m: int, block_m: int, top_k: int, experts: int) -> int:
    """M-blocks the grid launches: cdiv(len(sorted_token_ids), block_m), len = numel · block_m when numel = m · top_k
    < experts + 1, else numel + (experts + 1)(block_m − 1) (moe_align_block_size, sglang 0.5.9)."""
    numel = m * top_k
    length = numel * block_m if numel < experts + 1 else numel + (experts + 1) * (block_m - 1)
    return -(-length // block_m)


def ctas_per_sm(cfg: tuple[int, int, int, int, int]) -> int:
    """CTAs one SM holds by shared memory (num_stages · (BM·BK + BK·BN) FP8 bytes) and by warps (64 an SM); registers
    ASSUMED not binding."""
    bm, bn, bk, warps, stages = cfg
    return max(1, min(SMEM_B // (stages * (bm * bk + bk * bn)), WARPS_SM // warps))


def schedule(m: int) -> dict[str, float]:
    """The launch geometry of one MoE layer's two GEMMs at ``m`` decode rows a rank (expected values; module doc)."""
    n1, k1 = 2 * INTER // TP, HIDDEN  # gate/up: 512 x 7,168
    n2, k2 = HIDDEN, INTER // TP  # down: 7,168 x 256
    g, d = nearest(GATE_UP, m), nearest(DOWN, m)
    bm = g[0]
    if d[0] != bm:
        raise SpecError("BLOCK_SIZE_M", f"{d[0]} != {bm}", "the down GEMM reuses the gate/up GEMM's alignment")
    touched, routed_blocks = expected_blocks(m, bm)
    blocks = routed_blocks + math.ceil(m / bm)  # + the fused shared expert's m rows
    grid_m = launched_m_blocks(m, bm, TOP_K + 1, ROUTED + 1)
    out: dict[str, float] = {
        "touched": touched,
        "blocks": blocks,
        "grid_m": grid_m,
        "pad": blocks * bm / (m * (TOP_K + 1)),
    }
    weight_read = 0.0
    for tag, cfg, n, k in (("g", g, n1, k1), ("d", d, n2, k2)):
        tiles = -(-n // cfg[1])
        live = blocks * tiles
        occ = ctas_per_sm(cfg)
        out[f"{tag}_cfg"] = cfg
        out[f"{tag}_launched"] = grid_m * tiles
        out[f"{tag}_live"] = live
        out[f"{tag}_occ"] = occ
        out[f"{tag}_waves"] = live / (SMS * occ)
        out[f"{tag}_bytes_cta"] = cfg[1] * k
        weight_read += live * cfg[1] * k
    unique = (touched + 1) * (n1 * k1 + n2 * k2)
    macs = blocks * bm * (n1 * k1 + n2 * k2)
    out["read_mb"] = weight_read / 1e6
    out["unique_mb"] = unique / 1e6
    out["mem_us"] = unique / HBM_B_S * 1e6
    out["mac_us"] = 2 * macs / FP8_FLOP_S * 1e6
    return out


def wheel_tables(wheel: Path) -> tuple[dict, dict]:
    """The gate/up and down tables read from an sglang wheel, as :data:`GATE_UP` / :data:`DOWN` tuples. Raises
    SpecError when the wheel lacks the files."""
    try:
        with zipfile.ZipFile(wheel) as z:
            names = {n.rsplit("/", 1)[-1]: n for n in z.namelist() if CONFIG_PATH in n}
            raw = [json.loads(z.read(names[CONFIG_FILE + s + ".json"])) for s in ("", "_down")]
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise SpecError("--wheel", str(wheel), f"give an sglang 0.5.9+ wheel holding {CONFIG_FILE}.json ({exc})")
    keys = ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "num_warps", "num_stages")
    return tuple({int(m): tuple(c[k] for k in keys) for m, c in t.items() if int(m) <= 128} for t in raw)


def hump52():
    """scripts/h200_decode_hump52.py, loaded in-process (its sweep reader, model step and what-if)."""
    path = Path(__file__).with_name("h200_decode_hump52.py")
    spec = importlib.util.spec_from_file_location("h200_decode_hump52", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: Part 5's context: the v0.5.12 1k/1k sweep's mean (0.9 x (1,024 + 1,024 / 2), round 52)
WHAT_IF_CTX = 1382
#: Part 5's rows whose excess sets the latency: the T <= 16 rows (T >= 32 read faster than HBM peak)
WHAT_IF_ROWS = (4, 8, 16)


def form_shift_ms(latency_us: float) -> dict[int, float]:
    """Part 5: {C: ms} the step's routed experts lose when priced as their bytes' stream at 4.8 TB/s + ``latency_us`` a
    MoE layer instead of the model's price (context :data:`WHAT_IF_CTX`)."""
    mod = hump52()
    out = {}
    for c in ROWS:
        st = mod.model_step(c, WHAT_IF_CTX)
        out[c] = st["experts"] - (st["experts_bytes"] / HBM_B_S * 1e3 + MOE_LAYERS * latency_us * 1e-3)
    return out


def implied_rates(csv_path: Path) -> dict[str, dict[int, tuple[float, float]]]:
    """Round 52's Part 5 by C: {sweep label or "model": {C: (stream rate as a share of 4.8 TB/s, time above the
    routed bytes' stream at 4.8 TB/s, µs a MoE layer)}} for the v0.5.9 1k/8k and v0.5.12 1k/1k sweeps (implied: every
    other term of the model's step taken as right) and the model's own routed-expert price; read in-process from
    scripts/h200_decode_hump52.py. Raises SpecError on an unreadable CSV."""
    mod = hump52()
    sweeps = mod.sweep_rows(mod.read_rows(csv_path))
    out: dict[str, dict[int, tuple[float, float]]] = {}
    for label, src, stack, isl, osl in mod.IMPLIED_SWEEPS:
        cells = sweeps.get((src, stack, isl, osl), {})
        ctx = round(mod.MEAN_OUTPUT_FRACTION * (isl + osl / 2))
        for c in ROWS:
            if c not in cells:
                continue
            st = mod.model_step(c, ctx)
            r = mod.implied_experts(float(cells[c]["measured"]) * 1e3, float(cells[c]["predicted"]) * 1e3, st)
            peak_us = st["experts_bytes"] / HBM_B_S * 1e6 / MOE_LAYERS
            out.setdefault(label, {})[c] = (r["tb_s"] * 1e12 / HBM_B_S, r["experts"] * 1e3 / MOE_LAYERS - peak_us)
            model_rate = st["experts_bytes"] / st["experts_memory"] / 1e9 * 1e12 / HBM_B_S
            out.setdefault("model", {})[c] = (model_rate, st["experts"] * 1e3 / MOE_LAYERS - peak_us)
    return out


#: aiconfigurator-core's H200 SGLang MoE tables (package data: systems/data/h200_sxm/moe/sglang/<version>/moe_perf.parquet)
AIC_MOE_DIR = ("systems", "data", "h200_sxm", "moe", "sglang")


def balanced_experts(tokens: int, experts: int = ROUTED, top_k: int = TOP_K) -> int:
    """Distinct experts aiconfigurator's ``balanced_logits`` routes ``tokens`` tokens to (module doc, Part 4)."""
    stride = -(-experts // top_k)
    if tokens >= stride:
        picks = {(t + stride * i) % experts for t in range(tokens) for i in range(top_k)}
    else:
        picks = {int(t * stride / tokens + stride * i) % experts for t in range(tokens) for i in range(top_k)}
    return len(picks)


def aic_balanced_rows() -> dict[str, dict[int, float]]:
    """{version: {T: µs a layer}} of the installed aiconfigurator-core's H200 SGLang fused-MoE rows at DeepSeek-R1's TP8
    EP1 FP8 shape, ``balanced`` routing, T in :data:`ROWS`. Raises SpecError when the package is not installed."""
    from importlib import resources

    import pandas as pd

    try:
        base = resources.files("aiconfigurator_core").joinpath(*AIC_MOE_DIR)
    except ModuleNotFoundError:
        raise SpecError(
            "aiconfigurator", "aiconfigurator-core is not installed", 'pip install -e ".[calibrate]"'
        ) from None
    out: dict[str, dict[int, float]] = {}
    for d in sorted((p for p in base.iterdir() if p.joinpath("moe_perf.parquet").is_file()), key=lambda p: p.name):
        df = pd.read_parquet(d.joinpath("moe_perf.parquet"))
        q = df[
            (df.hidden_size == HIDDEN)
            & (df.inter_size == INTER)
            & (df.num_experts == ROUTED)
            & (df.topk == TOP_K)
            & (df.moe_tp_size == TP)
            & (df.moe_ep_size == 1)
            & (df.moe_dtype == "fp8_block")
            & (df.distribution == "balanced")
            & (df.num_tokens.isin(ROWS))
        ]
        if len(q):
            out[d.name] = {int(t): float(v) * 1e3 for t, v in q.groupby("num_tokens").latency.median().items()}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("validate_csv", type=Path, nargs="?")
    ap.add_argument("--wheel", type=Path)
    args = ap.parse_args(argv)
    try:
        if args.wheel:
            g, d = wheel_tables(args.wheel)
            same = g == GATE_UP and d == DOWN
            print(f"wheel {args.wheel.name}: tables {'match' if same else 'DIFFER from'} GATE_UP / DOWN")
        rates = implied_rates(args.validate_csv) if args.validate_csv else {}
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows = {m: schedule(m) for m in ROWS}
    print("Part 1. Configuration by M (BLOCK_SIZE_M/N/K, warps, stages; CTAs an SM by shared memory)")
    for m, s in rows.items():
        g, d = s["g_cfg"], s["d_cfg"]
        print(
            f"  M {m:3d}  gate/up {g[0]}/{g[1]}/{g[2]} w{g[3]} s{g[4]} ({s['g_occ']} a SM)"
            f"   down {d[0]}/{d[1]}/{d[2]} w{d[3]} s{d[4]} ({s['d_occ']} a SM)"
        )
    print("\nPart 2. One MoE layer's schedule (expected under uniform routing; live = programs past the early exit)")
    head = (
        "   M  experts  blocks  pad x  grid m   g live  g launch  g waves   d live  d launch  d waves"
        "  read MB  uniq MB  mem us  MAC us"
    )
    print(head)
    for m, s in rows.items():
        print(
            f"{m:4d}{s['touched']:9.1f}{s['blocks']:8.1f}{s['pad']:7.2f}{s['grid_m']:8d}"
            f"{s['g_live']:9.0f}{s['g_launched']:10d}{s['g_waves']:9.2f}"
            f"{s['d_live']:9.0f}{s['d_launched']:10d}{s['d_waves']:9.2f}"
            f"{s['read_mb']:9.1f}{s['unique_mb']:9.1f}{s['mem_us']:8.1f}{s['mac_us']:8.1f}"
        )
    if rates:
        print(
            "\nPart 3. Routed experts: stream rate (share of 4.8 TB/s) and time above the routed bytes' stream at 4.8 TB/s"
            " (µs a MoE layer), implied by the sweeps (round 52 Part 5) and the model's; waves as launched (ceil)"
        )
        print("   M" + "".join(f"{k:>22s}" for k in rates) + "  gate/up waves  down waves")
        for m, s in rows.items():
            cells = "".join(
                f"{rates[k][m][0]:12.2f}{rates[k][m][1]:8.1f} us" if m in rates[k] else " " * 22 for k in rates
            )
            print(
                f"{m:4d}{cells}{s['g_waves']:9.2f} ({math.ceil(s['g_waves'])}){s['d_waves']:8.2f} ({math.ceil(s['d_waves'])})"
            )
    try:
        aic = aic_balanced_rows()
    except SpecError as exc:
        print(f"\nPart 4 skipped: {exc}")
        return 0
    per_expert = 3 * HIDDEN * INTER // TP
    print(
        "\nPart 4. aiconfigurator-core H200 SGLang fused MoE, E = 256, balanced: µs a layer (above the stream at 4.8 TB/s)"
    )
    print("   T  experts" + "".join(f"{v:>22s}" for v in aic))
    for m in ROWS:
        e = balanced_experts(m)
        peak_us = e * per_expert / HBM_B_S * 1e6
        cells = "".join(f"{aic[v][m]:12.1f} ({aic[v][m] - peak_us:+6.1f})" if m in aic[v] else " " * 22 for v in aic)
        print(f"{m:4d}{e:9d}{cells}")
    newest = max(aic, key=lambda v: tuple(int(x) for x in v.split(".") if x.isdigit()), default=None)
    if not args.validate_csv or newest is None:
        return 0
    per = [aic[newest][m] - balanced_experts(m) * per_expert / HBM_B_S * 1e6 for m in WHAT_IF_ROWS if m in aic[newest]]
    latency = sum(per) / len(per)
    shift = form_shift_ms(latency)
    mod = hump52()
    rows_csv = mod.read_rows(args.validate_csv)
    print(
        f"\nPart 5. What-if: routed experts at the stream + {latency:.1f} us a layer ({newest}, T {WHAT_IF_ROWS});"
        " v0.5.12 DeepSeek-R1 TPOT lowered by (ms): " + " / ".join(f"{shift[c]:.2f}" for c in ROWS)
    )
    for name, hump in (("all C", shift), ("C <= 16", {c: v for c, v in shift.items() if c <= 16})):
        base, moved = mod.what_if_errors(rows_csv, hump)
        f0 = mod.goal_figures([100 * e for e in base])
        f1 = mod.goal_figures([100 * e for e in moved])
        print(
            f"  held-out InferenceX H200 interactivity ({name}): {f0[0]:.1f} / {f0[1]:.1f} / {f0[2]:+.1f}"
            f" -> {f1[0]:.1f} / {f1[1]:.1f} / {f1[2]:+.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
