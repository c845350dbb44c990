"""GB200 NVL72 Dynamo + TRT-LLM DeepSeek-R1 FP4 decode workers: the model's decode step beside the
step the measured TPOT implies, and beside TensorRT-LLM's own measured kernels for the two MoE
pieces that change with the decode worker's layout (docs/gap_gb200_fp4_8k1k.md, "Decomposition").

For each identified InferenceX row (default 6-10 and 22: TEP8, DEP32, DEP16, DEP4 decode workers)
it serves the row's deployment at its concurrency (serve/point.py), then prices one decode step
at the decode batch the model settles on, as served (serve/open_loop.decode_pool_step: the pool's
backends and CUDA-graph padding), and prints, per MoE layer:
- the routed experts as priced (the pool's MoE backend curve, else the calibrated form) and the
  measured CUTLASS / CuTe-DSL curves at the same load (data/moe_backends.toml);
- the EP all-to-all (dispatch + combine) as priced, and TensorRT-LLM's measured NVLink one-sided
  and two-sided all-to-all on GB200 at the rank's tokens (aiconfigurator-core 0.12.0
  ``systems/data/gb200/comm/trtllm/1.3.0rc10/trtllm_alltoall_perf.parquet``, TRT-LLM 1.2.0rc6,
  DeepSeek's hidden 7168 / top-8 / 256 experts, NVFP4; num_tokens per rank; two-sided with the
  low-precision combine the recipes set, plus its prepare phase), and the step gap left once the
  priced all-to-all is replaced by the measured one-sided kernel (the main layers only; the MTP
  draft layers' exchanges are not counted);
and the measured step the TPOT implies (TPOT x tokens per step at the row's MTP acceptance).
Needs the ``[calibrate]`` extra for the all-to-all table. Run: python benchmarks/bench_gb200_decode_gap.py [ROW ...]
"""

from __future__ import annotations

import sys
from importlib import resources

import numpy as np

from jalapeno.fit.entries import with_stack_mtp
from jalapeno.fit.kernel_tables import load_table
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import point_stack
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.serve.open_loop import decode_pool_step
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.moe_backends import moe_backend_curves
from jalapeno.specs.workload import Workload

ROWS = (6, 7, 8, 9, 10, 22)
MOE_LAYERS = 58


def a2a_table():
    """{(kernel_source, op_name): (tokens per rank, latency s)} per EP size, NVFP4, DeepSeek's shape."""
    df, _ = load_table("gb200", "comm", "trtllm_alltoall_perf")
    df = df[(df.moe_dtype == "nvfp4") & (df.hidden_size == 7168) & (df.topk == 8) & (df.num_experts == 256)]
    out = {}
    for (src, op, ep), g in df.groupby(["kernel_source", "op_name", "moe_ep_size"]):
        g = g.groupby("num_tokens").latency.min()
        out[(src, op, int(ep))] = (g.index.to_numpy(float), g.to_numpy() * 1e-3)
    return out


def _at(curve, x: float) -> float:
    t, y = curve
    return float(np.exp(np.interp(np.log(x), np.log(t), np.log(y))))


def _curve_ms(system: str, backend: str, ep: int, tokens: float) -> float:
    got = [c for c in moe_backend_curves(system, backend, 7168, 2048, 256, 8, 1, ep) if c[0] == "fp4"]
    if not got:
        return float("nan")
    _, _, tok, lat, _ = got[0]
    return _at((np.asarray(tok, float), np.asarray(lat)), tokens) * 1e3


def main(rows=ROWS) -> None:
    ids = {f"inferencex_points:{r}" for r in rows}
    pts, _ = load_inferencex(resources.files("jalapeno") / "data" / "validation" / "inferencex_points.csv")
    tab = a2a_table()
    print("per MoE layer, µs; steps in ms; a2a = dispatch + combine (one-sided / two-sided incl. prepare)")
    for p in pts:
        if p.id not in ids:
            continue
        st = point_stack(p)
        dep = with_stack_mtp(p.deployment, st, p.model)
        model, pr = load_model(p.model), load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        wl = Workload(f"{p.isl}/{p.osl}", p.isl, p.osl, 0.8)
        res = serve_at_concurrency(model, pr, dep, wl, [p.concurrency])
        lay, mtp = dep.decode.layout, dep.mtp
        b = float(res.decode_batch[0])
        sc = decode_pool_step(model, pr, dep, wl.decode_ctx, [b])  # as served: pool backends, graph padding
        k, a = (mtp.draft_tokens, mtp.acceptance) if mtp else (0, 0.0)
        per_step = sum(a**i for i in range(k + 1))  # tokens a sequence emits per verify step
        rows_rank = b / lay.dp * (1 + k)  # tokens each attention rank puts into a MoE layer
        group = rows_rank * lay.dp
        t = dict(zip(sc.ops.name, sc.times.time_s[:, 0]))
        c = dict(zip(sc.collectives.name, sc.coll_time_s[:, 0]))
        a2a = (c.get("moe.dispatch", 0.0) + c.get("moe.combine", 0.0)) / MOE_LAYERS * 1e6
        meas_tpot = p.measured.get("tpot_s")
        print(
            f"\nrow {p.id.split(':')[1]}: {dep.for_model(model).label}, conc {p.concurrency:g}, "
            f"backend {dep.decode.moe_backend}"
        )
        print(
            f"  decode batch {b:.0f} ({b / lay.dp:.1f}/rank, {rows_rank:.0f} rows/rank, {group:.0f} into each "
            f"MoE layer); tokens/step {per_step:.2f} (acceptance {a:g})"
        )
        print(
            f"  step: model {sc.step_time_s[0] * 1e3:.2f} (TPOT {res.tpot_s[0] * 1e3:.2f}); measured TPOT "
            f"{meas_tpot * 1e3:.2f} -> implied step {meas_tpot * per_step * 1e3:.2f} "
            f"(gap {(meas_tpot * per_step - sc.step_time_s[0]) * 1e3:+.2f})"
        )
        ep = lay.ep
        print(
            f"  routed experts: priced {t['moe.experts'] / MOE_LAYERS * 1e6:.0f}; measured CUTLASS "
            f"{_curve_ms(p.system, 'cutlass', ep, group) * 1e3:.0f}, CuTe-DSL {_curve_ms(p.system, 'cutedsl', ep, group) * 1e3:.0f}"
        )
        if ("NVLinkOneSided", "alltoall_dispatch", ep) in tab and a2a > 0:
            one = sum(
                _at(tab[("NVLinkOneSided", op, ep)], rows_rank) for op in ("alltoall_dispatch", "alltoall_combine")
            )
            two = sum(
                _at(tab[("NVLinkTwoSided", op, ep)], rows_rank)
                for op in ("alltoall_prepare", "alltoall_dispatch", "alltoall_combine_low_precision")
            )
            d_one = (one * 1e6 - a2a) * MOE_LAYERS / 1e3
            print(
                f"  all-to-all: priced {a2a:.0f}; measured one-sided {one * 1e6:.0f}, two-sided {two * 1e6:.0f} "
                f"-> step {d_one:+.2f} / {(two * 1e6 - a2a) * MOE_LAYERS / 1e3:+.2f}"
            )
            gap = (meas_tpot * per_step - sc.step_time_s[0]) * 1e3
            print(
                f"  gap left with the measured one-sided all-to-all: {gap - d_one:+.2f} ms "
                f"({(gap - d_one) / (meas_tpot * per_step * 1e3):+.1%} of the implied step)"
            )


if __name__ == "__main__":
    main(tuple(int(x) for x in sys.argv[1:]) or ROWS)
