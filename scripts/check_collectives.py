"""Check the collective model against published benchmark figures; writes docs/collectives.md.

1. Link efficiency by algorithm and message size (fit/collectives.py): the NCCL ring / NVLS and
   custom all-reduce ramps fitted on the ``fit`` rows of src/jalapeno/data/collectives/nccl_tests.csv
   and judged on its ``check`` rows (published nccl-tests outputs, each row with its source), and
   on every other system's aiconfigurator NCCL / custom all-reduce table when the ``[calibrate]``
   extra is installed.
2. DeepEP dispatch / combine (cost/deepep.py) against every published V1 figure (deepseek-ai/DeepEP
   docs/legacy.md: H800, one CX7 400 Gb/s NIC per GPU; normal kernels EP 8-64 bandwidth, low-latency
   kernels EP 8-256 latency): one NVLink fraction fitted on the intranode EP8 dispatch, the rest held
   out (DEEPEP_LL_US, DEEPEP_NORMAL_GBS in scripts/collectives_moe_sections.py, with GB200's MoE all-to-all
   against TensorRT-LLM's measured kernels).
Run: python scripts/check_collectives.py [--out docs/collectives.md] [--check]   (rewrites docs/collectives.md)
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from _docgen import write_or_check
from collectives_engine_section import engine_allreduce_section, engine_allreduce_trials
from collectives_moe_sections import all_to_all_section, deepep_section

from jalapeno.cost.pricer import RooflinePricer, load_pricer
from jalapeno.fit.collectives import fit_custom_allreduce, fit_link_efficiency, load_nccl_tests, model_busbw
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY

OUT = Path(__file__).resolve().parent.parent / "docs" / "collectives.md"


def busbw_all_reduce(system, g: int, m: float) -> tuple[float, str]:
    r = system.collective("all_reduce", g, np.array([m]))
    t = float(r.time_s[0])
    return m / t * 2 * (g - 1) / g, str(r.algorithm[0])


def _fmt_bw(b: float) -> str:
    return f"{b / 1e9:.0f} GB/s" if b >= 1e10 else f"{b / 1e9:.2f} GB/s"


def _size(m: float) -> str:
    for unit, f in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if m >= f:
            return f"{m / f:.3g} {unit}"
    return f"{m:g} B"


def efficiency_section() -> list[str]:
    """The fit and the held-out checks of the link-efficiency ramps."""
    df = load_nccl_tests()
    p_link, r_link = fit_link_efficiency(df)
    p_car, r_car = fit_custom_allreduce(df)
    eff = DEFAULT_EFFICIENCY.with_overrides({**p_link, **p_car})
    rows = model_busbw(df, eff)
    intro = (
        "eta(M) = fraction / (1 + (half/M)^shape) of the per-direction link bandwidth "
        "(cost/collectives.size_efficiency), one ramp per algorithm family, fitted by "
        "`fit/collectives.py` on the `fit` rows of `src/jalapeno/data/collectives/nccl_tests.csv` "
        "(aiconfigurator-core's NCCL 2.27.3 and TensorRT-LLM custom all-reduce tables of an 8x H100 "
        "node); the `check` rows (published nccl-tests outputs and figures, never fitted) give the "
        "error. The shipped defaults (specs/efficiency.py) are these values, rounded."
    )
    ring = (
        f"| NCCL ring / direct (>= 1 MiB) | {p_link['link_fraction']:.3f} | {_size(p_link['link_half_bytes'])} | "
        f"{p_link['link_shape']:.2f} | {r_link['rows']} (with NVLS) | {r_link['median_ape']:.1%} / "
        f"{r_link['p90_ape']:.1%} |"
    )
    nvls = (
        f"| NVLS in-switch all-reduce (>= 1 MiB) | {p_link['in_switch_fraction']:.3f} | "
        f"{_size(p_link['in_switch_half_bytes'])} | {p_link['in_switch_shape']:.2f} | (above) | (above) |"
    )
    car = (
        f"| custom one-/two-shot all-reduce (all sizes; H100 default, per-system fits below) | "
        f"{p_car['custom_ar_fraction']:.3f} | {_size(p_car['custom_ar_half_bytes'])} | {p_car['custom_ar_shape']:.2f} | "
        f"{r_car['rows']} | {r_car['median_ape']:.1%} / {r_car['p90_ape']:.1%} (latency a = "
        f"{r_car['alpha_s'] * 1e6:.2f} us) |"
    )
    lines = [
        "## Link efficiency by algorithm and message size",
        "",
        intro,
        "",
        "| family | fraction | half size | shape | fit rows | fit median / p90 error |",
        "|---|---|---|---|---|---|",
        ring,
        nvls,
        car,
        "",
        "### Held-out published points",
        "",
        "| id | GPUs | collective | algorithm | size | published busbw | model busbw (algorithm) | error |",
        "|---|---|---|---|---|---|---|---|",
    ]
    chk = rows[rows.role == "check"]
    for r in chk.itertuples(index=False):
        lines.append(
            f"| {r.id} | {r.gpus} | {r.collective} | {r.algorithm} | {_size(r.message_bytes)} | "
            f"{_fmt_bw(r.busbw)} | {_fmt_bw(r.model_busbw)} ({r.model_algorithm}) | {r.error:+.0%} |"
        )
    lines += ["", "| check group | n | median abs error | bias |", "|---|---|---|---|"]
    for name, sel in (
        ("nccl-tests, >= 1 GiB (H100, H800, A100)", chk.message_bytes >= 2**30),
        ("H20 curve (Mooncake #3484), >= 1 MiB", chk.id.str.startswith("mooncake") & (chk.message_bytes >= 2**20)),
        ("H20 curve, < 1 MiB (latency-bound)", chk.id.str.startswith("mooncake") & (chk.message_bytes < 2**20)),
        ("custom all-reduce (SGLang #2904, H100, no CUDA graph)", chk.algorithm == "custom"),
    ):
        e = chk.error[sel]
        lines.append(f"| {name} | {len(e)} | {np.median(np.abs(e)):.1%} | {np.median(e):+.1%} |")
    lines += [
        "",
        "Error = model busbw / published − 1 (positive: the model is faster). Before this fit the",
        "calibrated H100 set gave ~270 GB/s ring / all-gather / reduce-scatter and ~394 GB/s NVLS",
        "all-reduce at 1-8 GiB (one constant link fraction fitted on all sizes). The SGLang rows",
        "were timed without CUDA graphs (host launch included), so small sizes read slow there.",
        "",
        "Sources of every row: the `source` column of the CSV. Below 1 MiB NCCL's own fixed latency",
        "(10-16 us on these nodes) dominates; the model prices small collectives as the serving",
        "engines' custom kernels (per-hop latency + `collective_launch_s`, ~3 us), so NCCL-only",
        "rows there read fast by design.",
        "",
    ]
    lines += _system_tables(eff)
    return lines


def _system_tables(eff) -> list[str]:
    """Every calibrated system's aiconfigurator tables, judged (needs the [calibrate] extra)."""
    try:
        from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS
        from jalapeno.specs.calibration import load_calibration
    except ImportError:
        return []
    lines = [
        "### Per NVLink generation (aiconfigurator-core NCCL tables; declared split)",
        "",
        "Each NVIDIA system's calibrated set carries the ring and NVLS ramps of its NVLink generation",
        "(fit/collectives.fit_generation, run by `jalapeno calibrate`): fitted on all-gather and",
        "all-reduce at the even powers of two >= 1 MiB (1, 4, 16, 64, 256 MiB) of every table of the",
        "generation (2, 4, 8 GPUs on HGX; 2, 4 on the GB200/GB300 tables); reduce-scatter and the",
        "odd powers (2 MiB ... 512 MiB) are held out. A100 (NVLink 3: one table, no generation fit) keeps",
        "the shipped default (H100's curve above); Vera Rubin (NVLink 6) and Jalapeño borrow",
        "GB300's set, i.e. the NVLink 5 curve (named assumption, docs/model.md §5).",
        "",
        "| generation | systems | fraction | half size | shape | NVLS fraction | NVLS half | NVLS shape | fit rows | fit median / p90 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    seen = set()
    for name in AIC_SYSTEM_DIRS:
        r = (load_calibration(name) or {}).get("report", {}).get("nccl", {})
        p = (load_calibration(name) or {}).get("parameters", {})
        gen = r.get("nvlink_generation")
        if gen is None or gen in seen:
            continue
        seen.add(gen)
        lines.append(
            f"| NVLink {gen} | {', '.join(r['ramp_systems'])} | {p['link_fraction']:.3f} | "
            f"{_size(p['link_half_bytes'])} | {p['link_shape']:.2f} | {p['in_switch_fraction']:.3f} | "
            f"{_size(p['in_switch_half_bytes'])} | {p['in_switch_shape']:.2f} | {r['ramp_rows']} | "
            f"{r['ramp_median_ape']:.1%} / {r['ramp_p90_ape']:.1%} |"
        )
    lines += [
        "",
        "Time error per system (model/measured − 1; negative: the model is faster), NCCL's own",
        "algorithms only, the model's full pricing (per-hop latency + `collective_launch_s`). Before",
        "this fit every system used H100's ramp: B200/B300/GB200/GB300 were 25-31% fast at >= 1 MiB",
        "(bias -27.5% / -27.0% / -30.9% / -28.1% in the former reports).",
        "",
        "| system | generation | NCCL rows | median abs error (all / >= 1 MiB) | bias (>= 1 MiB) | held-out rows: median / bias |",
        "|---|---|---|---|---|---|",
    ]
    for name in AIC_SYSTEM_DIRS:
        cal = load_calibration(name) or {}
        r = cal.get("report", {}).get("nccl")
        if r and "bias_ge_1mib" in r:
            lines.append(
                f"| {name} | {r.get('nvlink_generation', '-')} | {r['rows']} | {r['median_ape']:.1%} / "
                f"{r['median_ape_ge_1mib']:.1%} | {r['bias_ge_1mib']:+.1%} | "
                + (
                    f"{r['held_out_rows']}: {r['held_out_median_ape']:.1%} / {r['held_out_bias']:+.1%} |"
                    if r.get("held_out_rows")
                    else "- (no generation fit: judged on all rows) |"
                )
            )
    lines += [
        "",
        "(from each calibration file's `[report.nccl]`, written by `jalapeno calibrate`.)",
        "",
        "Custom all-reduce ramp per system (fitted by `jalapeno calibrate` on each system's own",
        "TensorRT-LLM custom all-reduce table; the shipped default is H100's). Blackwell's kernels",
        "reach a smaller share of NVLink 5 at mid sizes than Hopper's of NVLink 4: an H100-fitted",
        "ramp is 25-28% fast on B200/B300/GB200 (held-out check before the per-system fit).",
        "",
        "| system | fraction | half size | shape | eta at 64 KiB / 1 MiB / 64 MiB | fit median / p90 error |",
        "|---|---|---|---|---|---|",
    ]
    from jalapeno.cost.collectives import size_efficiency

    for name in AIC_SYSTEM_DIRS:
        cal = load_calibration(name) or {}
        p, r = cal.get("parameters", {}), cal.get("report", {}).get("custom_allreduce", {})
        if "custom_ar_fraction" not in p:
            continue
        eta = size_efficiency(
            np.array([2.0**16, 2.0**20, 2.0**26]),
            p["custom_ar_fraction"],
            p["custom_ar_half_bytes"],
            p["custom_ar_shape"],
        )
        lines.append(
            f"| {name} | {p['custom_ar_fraction']:.2f} | {_size(p['custom_ar_half_bytes'])} | "
            f"{p['custom_ar_shape']:.2f} | {' / '.join(f'{x:.2f}' for x in eta)} | "
            f"{r.get('ramp_median_ape', float('nan')):.1%} / {r.get('ramp_p90_ape', float('nan')):.1%} |"
        )
    lines.append("")
    return lines


#: Held-out end-to-end check of small-batch tensor parallelism (issue 18 part 4): QwQ-32B BF16 on
#: A100 80GB SXM, static batch, 1 input / 200 output tokens, TP2 -> TP8 decode speed-up.
TP_SCALING_MEASURED = {1: 1.74, 16: 1.44}


def _a100_kernels(model) -> list[str]:
    """The A100's own measured collective kernels at the decode all-reduce sizes (aiconfigurator's
    TensorRT-LLM custom all-reduce and NCCL tables; needs the [calibrate] extra), beside the model."""
    from jalapeno.errors import SpecError
    from jalapeno.fit.kernel_tables import load_nccl_table, load_table

    try:
        car, v_car = load_table("a100_sxm", "comm", "custom_allreduce_perf")
        nccl, v_nccl = load_nccl_table("a100_sxm")
    except SpecError:  # the optional package is missing: the section says so
        return ["", "(A100 kernel tables: install the [calibrate] extra to print them.)"]
    pr = load_pricer("a100-sxm")
    lines = [
        "",
        f"A100's measured all-reduce kernels (aiconfigurator-core: TensorRT-LLM {v_car} custom all-reduce,",
        f"NCCL {v_nccl}; latency interpolated in log size) against the model's engine kernel:",
        "",
        "| message (batch) | TRT-LLM custom TP2 / TP8 | NCCL TP2 / TP8 | model TP2 / TP8 |",
        "|---|---|---|---|",
    ]
    nc = nccl[(nccl.op_name == "all_reduce") & (nccl.nccl_dtype == "half")]
    for b in (1, 16):
        elems = b * model.hidden_size

        def at(t, g, elems=elems):
            r = t[t.num_gpus == g].drop_duplicates("message_size").sort_values("message_size")
            return float(np.exp(np.interp(np.log(elems), np.log(r.message_size), np.log(r.latency)))) * 1e3

        mod = {g: float(pr.collective("all_reduce", g, np.array([elems * 2.0])).time_s[0]) * 1e6 for g in (2, 8)}
        lines.append(
            f"| {elems * 2 / 1e3:.0f} kB ({b}) | {at(car, 2):.1f} / {at(car, 8):.1f} us | "
            f"{at(nc, 2):.1f} / {at(nc, 8):.1f} us | {mod[2]:.1f} / {mod[8]:.1f} us |"
        )
    return lines


def _a100_decomposition(model) -> list[str]:
    """The QwQ decode step per op group from vLLM's own A100 kernel tables beside the model
    (fit/tp_scaling.py; needs the [calibrate] extra)."""
    from jalapeno.errors import SpecError
    from jalapeno.fit.tp_scaling import GROUPS, dense_decode_kernels, load_engine_kernels, tp_decomposition

    try:
        k = load_engine_kernels("a100_sxm", "vllm")
    except SpecError:
        return ["", "(kernel decomposition: install the [calibrate] extra to print it.)"]
    d = tp_decomposition(model, load_pricer("a100-sxm", stack="vllm"), k, np.arange(1.0, 201.0))
    lines = [
        "",
        "Kernel-level decomposition (`fit/tp_scaling.py`): each op group of the decode step looked up in",
        f"vLLM's own A100 kernel tables (aiconfigurator-core: {k.label}; BF16 GEMM, flash-attention",
        "decode over the 200 KV lengths, CUDA-graph custom all-reduce), ms per step, beside the model",
        "(vLLM profile). The tables time standalone launches, so their sums bound a graph-captured",
        "step's GPU time from above; `other` (norms, RoPE and KV write, activation, residual adds,",
        "step and per-TP-rank overhead) is the model's on both sides.",
        "",
        "| op group | TP2 b1 kernels / model | TP8 b1 kernels / model | TP2 b16 kernels / model | TP8 b16 kernels / model |",
        "|---|---|---|---|---|",
    ]
    cell = {
        (b, tp, g): f"{d[b, tp]['kernels'][g] * 1e3:.2f} / {d[b, tp]['model'][g] * 1e3:.2f}"
        for b in (1, 16)
        for tp in (2, 8)
        for g in GROUPS
    }
    for g in GROUPS:
        lines.append(f"| {g} | " + " | ".join(cell[b, tp, g] for b in (1, 16) for tp in (2, 8)) + " |")
    lines.append(
        "| other (model) | "
        + " | ".join(f"{d[b, tp]['model']['other'] * 1e3:.2f}" for b in (1, 16) for tp in (2, 8))
        + " |"
    )
    step = {(b, tp): sum(d[b, tp]["kernels"].values()) + d[b, tp]["model"]["other"] for b in (1, 16) for tp in (2, 8)}
    mstep = {(b, tp): sum(d[b, tp]["model"].values()) for b in (1, 16) for tp in (2, 8)}
    lines.append(
        "| step | "
        + " | ".join(f"{step[b, tp] * 1e3:.2f} / {mstep[b, tp] * 1e3:.2f}" for b in (1, 16) for tp in (2, 8))
        + " |"
    )
    eager = load_engine_kernels("a100_sxm", "vllm", graph=False)
    ctx = np.arange(1.0, 201.0)
    lines += [
        "",
        (
            "| batch | speed-up, kernels only | kernels + model's other | same, eager all-reduce | model | measured | "
            "TP8 time beyond the kernels to match |"
        ),
        "|---|---|---|---|---|---|---|",
    ]
    for b in (1, 16):
        ks = sum(d[b, 2]["kernels"].values()) / sum(d[b, 8]["kernels"].values())
        need = step[b, 2] / TP_SCALING_MEASURED[b] - step[b, 8]
        ea = {
            tp: step[b, tp]
            - d[b, tp]["kernels"]["all_reduce"]
            + dense_decode_kernels(model, tp, b, ctx, eager)["all_reduce"]
            for tp in (2, 8)
        }
        lines.append(
            f"| {b} | {ks:.2f}x | {step[b, 2] / step[b, 8]:.2f}x | {ea[2] / ea[8]:.2f}x | "
            f"{mstep[b, 2] / mstep[b, 8]:.2f}x | {TP_SCALING_MEASURED[b]:.2f}x | "
            f"{need * 1e3:+.2f} ms per step ({need / model.num_layers * 1e6:+.0f} us per layer) |"
        )
    return lines


def _h100_sweep() -> list[str]:
    """Qwen3-32B (BF16) on H100 with vLLM 0.12.0 at TP2/TP4/TP8 (aiconfigurator's end-to-end rows;
    fit/tp_scaling.tp_sweep_rows): the TP2 -> TP8 speed-up, measured / model."""
    from jalapeno.errors import SpecError
    from jalapeno.fit.tp_scaling import tp_sweep_predictions, tp_sweep_rows
    from jalapeno.specs.catalog import load_model

    try:
        rows = tp_sweep_rows()
    except SpecError:
        return ["", "(H100 TP sweep: install the [calibrate] extra to print it.)"]
    d = tp_sweep_predictions(load_model("qwen3-32b"), load_pricer("h100", stack="vllm"), rows)
    t = d.pivot_table(index=["isl", "osl", "concurrency"], columns="tp", values=["tpot_s", "pred_tpot_s"])
    conc = sorted({int(c) for c in d.concurrency})
    lines = [
        "",
        "A second held-out check, on a graph-captured engine: Qwen3-32B (BF16; 64 q / 8 KV heads, the",
        "same 5120 hidden and 64 layers as QwQ-32B) on H100 with vLLM 0.12.0 at TP2/TP4/TP8, aiconfigurator's",
        f"end-to-end rows ({len(d)} rows; no fit reads them: the model is not mapped into `validate`).",
        "TP2 -> TP8 speed-up, measured / model (vLLM profile), and the model's TPOT error at TP8:",
        "",
        "| ISL/OSL | " + " | ".join(f"c{c}" for c in conc) + " |",
        "|---|" + "---|" * len(conc),
    ]
    errs, e8 = [], []
    for (isl, osl), g in t.groupby(level=[0, 1]):
        cells = []
        for c in conc:
            r = g.loc[(isl, osl, float(c))]
            ms, ps = r["tpot_s"][2] / r["tpot_s"][8], r["pred_tpot_s"][2] / r["pred_tpot_s"][8]
            errs.append(ps / ms - 1)
            e8.append(r["pred_tpot_s"][8] / r["tpot_s"][8] - 1)
            cells.append(f"{ms:.2f} / {ps:.2f} ({e8[-1]:+.0%})")
        lines.append(f"| {isl}/{osl} | " + " | ".join(cells) + " |")
    e = np.array(errs)
    lines += [
        "",
        f"Speed-up error: median {np.median(e):+.1%}, median |error| {np.median(np.abs(e)):.1%} over {e.size}",
        "workload x concurrency points. With CUDA graphs the model's small-batch TP scaling is a few",
        f"percent optimistic (c{conc[0]}: {e[0 :: len(conc)].min():+.0%} to {e[0 :: len(conc)].max():+.0%}), not the +47% of the QwQ/A100 point; its TP8 TPOT error",
        "grows with concurrency at every TP (a batch-proportional cost the model under-prices, more",
        "visible at TP8 where the sharded work is smallest), not with the TP size at small batch.",
    ]
    return lines


def tp_scaling_section() -> list[str]:
    """The QwQ-32B / A100 TP2 -> TP8 speed-up, model against measurement, and what it would take."""
    from jalapeno.cost.collectives import collective_time
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import Workload

    model, pricer = load_model("qwq-32b"), load_pricer("a100-sxm")
    wl = Workload("1/200", 1, 200, 1.0)
    tpot = {}
    for tp in (2, 8):
        r = serve_at_concurrency(model, pricer, Deployment(get_precision("bf16"), Pool(Layout(tp=tp))), wl, [1.0, 16.0])
        tpot[tp] = dict(zip((1, 16), (float(x) for x in r.tpot_s)))
    calls = 2 * model.num_layers  # attention and FFN all-reduce per layer
    lines = [
        "## Small-batch tensor parallelism (held-out end-to-end check)",
        "",
        "QwQ-32B (Qwen2, BF16) on `a100-sxm`, static batch, 1 input / 200 output tokens: decode TPOT at",
        "TP2 and TP8 and the speed-up, against the measured 1.74x (batch 1) and 1.44x (batch 16) (issue 18",
        "part 4; never fitted). `python benchmarks/bench_tp_scaling.py` prints the same.",
        "",
        (
            "| batch | TPOT TP2 | TPOT TP8 | model speed-up | measured | all-reduce TP2 / TP8 (engine kernel) | "
            "NCCL ring TP2 / TP8 | speed-up with NCCL ring | extra per TP8 all-reduce to match |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    system, eff = pricer.system, pricer.efficiency
    for b in (1, 16):
        m = np.array([b * model.hidden_size * 2.0])
        ar = {g: float(collective_time("all_reduce", g, m, system, eff).time_s[0]) for g in (2, 8)}
        ring = {
            g: float(collective_time("all_reduce", g, m, system, eff, algorithms=("ring",)).time_s[0]) for g in (2, 8)
        }
        s = tpot[2][b] / tpot[8][b]
        s_ring = (tpot[2][b] + calls * (ring[2] - ar[2])) / (tpot[8][b] + calls * (ring[8] - ar[8]))
        need = tpot[2][b] / TP_SCALING_MEASURED[b] - tpot[8][b]
        lines.append(
            f"| {b} | {tpot[2][b] * 1e3:.2f} ms | {tpot[8][b] * 1e3:.2f} ms | {s:.2f}x | "
            f"{TP_SCALING_MEASURED[b]:.2f}x | {ar[2] * 1e6:.1f} / {ar[8] * 1e6:.1f} us | "
            f"{ring[2] * 1e6:.1f} / {ring[8] * 1e6:.1f} us | {s_ring:.2f}x | {need / calls * 1e6:+.0f} us |"
        )
    lines += [
        "",
        "Per serving-stack profile (the per-TP-rank step cost `tp_rank_step_s` fitted with each",
        "profile's other step costs on aiconfigurator's end-to-end rows at TP1-TP8, docs/stacks.md;",
        "this point is held out):",
        "",
        "| stack | per rank per step | TPOT TP2 / TP8, batch 1 | speed-up batch 1 | TPOT TP2 / TP8, batch 16 | speed-up batch 16 |",
        "|---|---|---|---|---|---|",
    ]
    for st in ("default", "vllm", "trtllm", "sglang"):
        p = load_pricer("a100-sxm", stack=st)
        t = {
            tp: serve_at_concurrency(
                model, p, Deployment(get_precision("bf16"), Pool(Layout(tp=tp))), wl, [1.0, 16.0]
            ).tpot_s
            for tp in (2, 8)
        }
        lines.append(
            f"| {st} | {p.efficiency.tp_rank_step_s * 1e3:.3f} ms | {t[2][0] * 1e3:.2f} / {t[8][0] * 1e3:.2f} ms | "
            f"{t[2][0] / t[8][0]:.2f}x | {t[2][1] * 1e3:.2f} / {t[8][1] * 1e3:.2f} ms | {t[2][1] / t[8][1]:.2f}x |"
        )
    lines += _a100_kernels(model)
    lines += _a100_decomposition(model)
    lines += _h100_sweep()
    lines += [
        "",
        "Reading, cause by cause (issue 18 part 4), from the A100's own measured kernels above:",
        "",
        "- (a) All-reduce. vLLM's CUDA-graph custom all-reduce (one-shot at these sizes; NVSwitch gen 2 has",
        "  no NVLS) costs 5.3 / 6.4 us at TP2 / TP8 for batch 1 (10 kB) and 6.0 / 13.0 us for batch 16",
        "  (164 kB); the model's engine kernel (A100's own ramp, fitted on its TensorRT-LLM table) gives",
        "  4.2 / 5.5 and 6.9 / 10.2 us: close at TP2, 1-3 us fast at TP8 (0.1-0.4 ms per step; the ramp",
        "  fits every size, median error 8%, and the small TP8 messages are its worst). NCCL's A100",
        "  all-reduce (11-27 us) would add 1.3-1.7 ms per TP8 step over TP2. vLLM's eager",
        "  path costs ~44 us per call at every size up to 2 MB and every TP (a copy into its registered",
        "  buffer): 5.6 ms per step at TP2 and TP8 alike, which alone takes the speed-up to ~2.0x.",
        "- (b) GEMMs at few rows and thin per-rank shapes. A100's own set (fitted on its TensorRT-LLM GEMM",
        "  table) prices the weight-streaming GEMMs (gate_up, down, lm_head) within 1-5% of vLLM's",
        "  independent A100 table at both TPs (the H100-fitted default set it replaces was 8-20% fast,",
        "  so TP2 was too fast and the speed-up too low: 2.42x / 2.34x before, with the vLLM profile).",
        "  The thin TP8 shapes stay fast in the model: qkv (n = 896) and o (k = 640) stream at ~0.8 TB/s",
        "  (about 0.4 of HBM) against ~1.35 TB/s at TP2: 0.2 ms per TP8 step at batch 1, 0.6 ms at batch",
        "  16 (m = 16 runs slower tiles than the m = 1 GEMV path, at TP2's qkv too).",
        "- (c) Attention at few heads per rank. Decode attention costs ~13 us per call whether a rank holds",
        "  20 query / 4 KV heads (TP2) or 5 / 1 (TP8) (the kernel's floor at these short contexts;",
        "  flash-attention's own decode figures for Qwen-32B at TP2 on Hopper, 12-17 us at batch 1 and",
        "  1-4k tokens of context, agree: vllm-project/flash-attention PR 63) against the model's 3.5 us:",
        "  +0.6 ms per step at both TPs, which lowers the speed-up a little ('kernels + model's other').",
        "- (d) Per-rank fixed costs. With every kernel as measured, the speed-up is 2.51x / 2.25x: the",
        "  measured 1.74x / 1.44x needs another 4.6 / 6.8 ms per TP8 step outside the GPU kernels (72-106",
        "  us per layer, more than any kernel of the layer, and growing with the batch). The serving-stack",
        "  profiles carry the part of that cost fitted on other end-to-end data (`tp_rank_step_s`: vLLM",
        "  0.0875 ms per rank per step, 2.73x / 2.60x to 2.59x / 2.47x); the rest is the measured engine's",
        "  own host-side time (its engine, version and CUDA-graph use are not stated; an eager run, with",
        "  the eager all-reduce above and host-bound launches at the upper end of serve/limits.EAGER_LAUNCH_S,",
        "  reaches 1.4-2.0x). It is not fitted to this held-out point.",
        "",
    ]
    return lines


def render(rows: list | None = None) -> str:
    """The page's text; ``rows`` (if given) collects the headline checks' table rows."""
    rows = [] if rows is None else rows
    h100 = load_pricer("h100")
    for kind, g, m, meas, note in (
        ("all_reduce", 8, 4 * 2**30, 480e9, "NVLS, nccl-tests #212"),
        ("all_gather", 8, 4 * 2**30, 370e9, "ring, nccl-tests #212"),
    ):
        r = h100.collective(kind, g, np.array([float(m)]))
        fac = 2 * (g - 1) / g if kind == "all_reduce" else (g - 1) / g
        bw = m * fac / float(r.time_s[0])
        rows.append(
            (
                f"nccl-tests {kind} busbw, 8x H100, 4 GiB ({note})",
                f"{meas / 1e9:.0f} GB/s",
                f"{bw / 1e9:.0f} GB/s ({r.algorithm[0]})",
                f"{bw / meas - 1:+.0%}",
                "held out",
            )
        )
    # H800: the H100 node with NVLink capped at ~160 GB/s per direction (DeepEP's figure).
    node = dataclasses.replace(h100.system.levels[0], bandwidth_bytes_per_s=160e9, in_network_reduction=False)
    h800 = RooflinePricer(
        dataclasses.replace(h100.system, name="h800-like", levels=(node,) + h100.system.levels[1:]), h100.efficiency
    )
    tokens, hidden, topk = 4096, 7168, 8
    for label, b, meas in (("dispatch (FP8)", 1.0, 153e9), ("combine (BF16)", 2.0, 158e9)):
        m = tokens * topk * hidden * b
        r = h800.collective("all_to_all", 8, np.array([m]))
        eff_bw = m * 7 / 8 / float(r.time_s[0])
        rows.append(
            (
                f"DeepEP intranode EP8 {label}, 4096 tokens, H800 NVLink",
                f"{meas / 1e9:.0f} GB/s",
                f"{eff_bw / 1e9:.0f} GB/s",
                f"{eff_bw / meas - 1:+.0%}",
                "held out",
            )
        )
    lines = [
        "# Collectives: model vs published benchmarks",
        "",
        "Generated by `python scripts/check_collectives.py` from `jalapeno.cost.collectives`;",
        "formulas and conventions in that module's docstring and in `docs/model.md`.",
        "Sources: `src/jalapeno/data/collectives/nccl_tests.csv` (one source per row); deepseek-ai/DeepEP",
        "README (H800, CX7 400 Gb/s per GPU). For the DeepEP rows the H800 is modelled as the `h100`",
        "catalog node with NVLink capped at 160 GB/s per direction (DeepEP's stated maximum) and no NVLS.",
        "",
        "## Headline checks (the `h100` catalog system, calibrated set)",
        "",
        "| case | published | model | error | role |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows]
    lines += [
        "",
        f"Reading: the intranode all-to-all is priced with the constant `all_to_all_fraction` ({h100.efficiency.all_to_all_fraction:.2f}",
        "on the H100 set, carried over from the former NCCL all-size fit): conservative for DeepEP's",
        "tuned kernels (~0.96 of NVLink). Pricing it with the custom all-reduce ramp or NCCL's ramp",
        "instead moved GB200's disaggregated DeepSeek throughput error from 17% to 23-29% (fidelity",
        "guard), so the effective value stays (GB200's measured all-to-all judges it: next section). The scale-out",
        "all-to-all keeps the constant `scale_out_link_fraction`; DeepEP's internode kernels are",
        "checked per EP size in the next section.",
        "",
        "## Topologies",
        "",
        "- switched (NVL72, HGX NVSwitch, Jalapeño tray/rack): full per-chip bandwidth to any peer;",
        "  NVSwitch gen 3+ reduces in the switch (NVLS, `in_network_reduction`).",
        "- full mesh (AMD Infinity Fabric, 8 GPUs): 7 links per GPU; a group of g uses g-1 of them,",
        "  so TP2 on MI300X gets 1/7 of the per-GPU fabric bandwidth.",
        "- 3-D torus (Jalapeño global scale-up, 2,048 chips as [8, 16, 16] by default): all-to-all",
        "  bounded by mean hop count and by the bisection of the sub-torus the group occupies; both",
        "  grow with the group's diameter.",
        "- fat tree (scale-out NICs): NIC-bound, full bisection assumed; all-reduce by NCCL's ring or double",
        "  binary tree, both on the NIC size ramp (NCCL derates tree bandwidth by size, `treeCorrectionFactor`",
        "  in NVIDIA/nccl src/graph/tuning.cc), so a group spread over nodes is never priced faster than",
        "  packed (tests/properties/test_collective_properties.py; docs/model.md §5).",
        "",
    ]
    lines += deepep_section(h100)
    lines += all_to_all_section()
    lines += engine_allreduce_section(_size)
    lines += engine_allreduce_trials()
    lines += efficiency_section()
    lines += tp_scaling_section()
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write docs/collectives.md (or ``--check`` that it is current) and print the headline checks."""
    rows: list = []
    code = write_or_check(lambda: render(rows), OUT, __doc__, "check_collectives.py", argv)
    for r in rows:
        print(" | ".join(r))
    return code


if __name__ == "__main__":
    raise SystemExit(main())
