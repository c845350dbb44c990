"""MLPerf v5.1 Llama TensorRT-engine rows: what the Interactive configs change against their Server twins, and the
per-step time every peer run of the same configs shows beyond the model (issue 18; docs/gap_large_batch_decode.md
"Round 47 (mlperfint47)"); the fit of fit/mlperf_engines.LLAMA_TRT_HARNESS_STEP_S.

Data: each config (mlcommons/inference_results_v5.1 @965182b closed/<submitter>/configs/<system>/<scenario>/
{llama2-70b,llama3_1-405b}.py) and docs/data/mlperf51_peer_runs.csv (every v5.1 Server / Interactive run on NVIDIA
B200 / GB200 / H200 systems, each run's mlperf_log_summary.txt). Four blocks:

1. ``configs``: :data:`CONFIG_DIFFS`, every field that differs between a system's Interactive and Server config
   (Custom harness, accuracy 0.99, MaxP), whether the model prices it and what it is worth on the step.
2. ``peers``: every Llama peer run priced at the validation row's engine of its system and scenario (the peers'
   configs repeat it but for the rate: ``git diff`` of each against the Nebius / NVIDIA file), at its own steady load
   (Little's law on the median TPOT, scripts/mlperf_peer_runs38.STEADY): the measured median TPOT minus the model's
   mean TPOT (``residual``), by (model, system, scenario) group, the fit split (peers that are not validation rows)
   apart from the validation runs.
3. ``fit``: the per-step term h per config family (:data:`FAMILIES`) that leaves zero mean residual over the family's
   fit groups, each group weighted equally (:func:`fitted_term_s`, bisection: the residual falls as h rises), and the
   residuals with it; then the same term fitted over every family at once (``all``), the what-if of one
   chip-independent constant.

Reading (round 47): the residual is a property of the config and load, reproduced by every submitter within
1-5 ms. On H200 (FP8 engines) it is one per-step time in all three groups that have fit runs (Llama-2-70B
Interactive +6.5 ms, Server +8.8, Llama-3.1-405B Server +6.4; the validation runs +6.0 / +6.4 / +8.9 (405B
Interactive) / +6.8): fitted, 7.25 ms, and the validation runs' residuals with it are -1.2 / -0.9 / +1.7 / -0.4 ms
(round 52: with serve/chunked.MIXED_STEP_ROOM_ON the Llama-2-70B Interactive group reads +7.2 ms and the term 7.47 ms).
On B200 (NVFP4 engines) the groups disagree in sign (Llama-2-70B Interactive +8.1, Server -13.0; Llama-3.1-405B
+15.4 / +6.6), so no per-step constant is what the B200 rows miss; one constant over all families (5.25 ms; 5.28 ms with MIXED_STEP_ROOM_ON, round 52) breaks
the met GB200-NVL72 MLPerf median and bias goals. fit/mlperf_engines.LLAMA_TRT_HARNESS_STEP_S carries the H200 value.
Run: python scripts/mlperf_llama_peers47.py   (about half a minute)
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling scripts, as the others import them

from mlperf_peer_runs38 import STEADY, peer_runs  # noqa: E402

from jalapeno.fit.measured_point import with_harness_step  # noqa: E402
from jalapeno.fit.mlperf import load_mlperf  # noqa: E402
from jalapeno.fit.mlperf_scenarios import priced_point  # noqa: E402
from jalapeno.serve.analytic import aggregated_by_batch  # noqa: E402

_CFG = "inference_results_v5.1 @965182b closed/{}/configs/{}/{{Interactive,Server}}/{}.py"
#: (system, model, source, [(field, Interactive, Server, priced?, worth on the step)]): every field of the Interactive
#: config that differs from the Server one (the rates, ``server_target_qps``, and ``min_duration`` left out: the load is
#: the run's own); equal in both: tp / pp 1 (405B: 4 B200, 8 H200), ``use_graphs: False``, ``enable_chunked_context``,
#: ``batch_scheduler_policy: max_util``, ``context_chunking_policy: first_come_first_served``, ``tokens_per_block`` 32,
#: ``use_fp8_context_fmha``, ``use_fused_mlp``, paged KV; no config sets ``traffic_distribution_policy`` (round 44).
CONFIG_DIFFS = (
    (
        "B200",
        "Llama-2-70B",
        _CFG.format("NVIDIA", "B200-SXM-180GBx8", "llama2-70b"),
        (
            ("gpu_batch_size", "768", "2,048", "yes (slots)", "none at the run's 255 a GPU (not binding)"),
            (
                "max_num_tokens (build, runtime)",
                "768",
                "3,584",
                "yes (prefill budget)",
                "the chunk size of the mixed steps; the run carries ~209 prompt tokens a step, under both",
            ),
            (
                "build: gemm_plugin",
                "'fp4'",
                "(TensorRT's own FP4 path)",
                "no",
                "no kernel timing of either is read; the model prices aiconfigurator's NVFP4 GEMM tables for both",
            ),
            (
                "build: norm_quant_fusion",
                "(absent)",
                "'enable'",
                "no (both priced unfused)",
                "the Server's fusion would save the quantiser launch per GEMM (320 a step, 2.6 us each: ~0.8 ms) "
                "and the norm's pass: a credit to the Server step, not a cost to the Interactive one",
            ),
            (
                "checkpoint: kv_cache_dtype",
                "(absent: llmlib default None)",
                "'fp8'",
                "priced FP8 in both",
                "BF16 KV what-if +38 -> +24% (round 43); which dtype ran is not determinable (one checkpoint folder "
                "per TP/PP/precision)",
            ),
            ("harness: vboost_slider", "(absent)", "1", "no", "no source gives its clock"),
        ),
    ),
    (
        "H200 (Nebius)",
        "Llama-2-70B",
        _CFG.format("Nebius", "H200-SXM-141GBx8", "llama2-70b"),
        (
            ("gpu_batch_size", "512", "2,048", "yes (slots)", "none at the run's 107 (not binding)"),
            (
                "max_num_tokens (build, runtime)",
                "256",
                "1,536",
                "yes (prefill budget)",
                "chunk of 256 - decodes; ~82 prompt tokens a step at the run's load",
            ),
            (
                "build: gemm_swiglu_plugin",
                "(absent)",
                "'fp8'",
                "no (both priced unfused: ffn.act)",
                "a credit to the Server step (its SwiGLU pass, ~6 B x 28,672 a token a layer), not an Interactive cost",
            ),
        ),
    ),
    (
        "B200",
        "Llama-3.1-405B",
        _CFG.format("NVIDIA", "B200-SXM-180GBx8", "llama3_1-405b"),
        (("max_num_tokens (runtime)", "1,536", "2,048", "yes (prefill budget)", "the chunk size; build flags equal"),),
    ),
    (
        "H200 (Nebius)",
        "Llama-3.1-405B",
        _CFG.format("Nebius", "H200-SXM-141GBx8", "llama3_1-405b"),
        (
            (
                "max_num_tokens (build)",
                "6,144",
                "8,192",
                "no need",
                "none: both run the runtime max_num_tokens 2,560 (the priced budget), max_batch_size 64",
            ),
        ),
    ),
)
_V = "mlperf51_{}_TRT_{}_{}"
_TAG = {"llama2-70b-99": "llama2-70b-99", "llama3.1-405b": "llama3p1-405b"}
_BASE_SYSTEM = {
    "b200": "NVIDIA_B200-SXM-180GBx8",
    "h200": "Nebius_H200-SXM-141GBx8",
    "gb200-nvl72": "NVIDIA_GB200-NVL72_GB200-186GB_aarch64x4",
}
#: the config families a term is fitted per (the catalog system of their validation rows): Hopper FP8, Blackwell NVFP4
FAMILIES = {"h200": ("h200",), "b200": ("b200", "gb200-nvl72")}


def base_row(bench: str, system: str, scenario: str) -> str:
    """The validation row whose engine prices a peer run of ``bench`` on ``system`` in ``scenario``: the NVIDIA (B200,
    GB200 x4; GB200 x72 for Llama-3.1-405B) or Nebius (H200) result."""
    sys_ = _BASE_SYSTEM[system]
    if system == "gb200-nvl72" and bench == "llama3.1-405b":
        sys_ = "NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72"
    return _V.format(sys_, _TAG[bench], scenario)


def catalog_system(name: str) -> str | None:
    """A peer run's catalog system, or None for a board the validation rows do not carry (H200 NVL, the Azure GB200
    VM, the Dynamo disaggregated run)."""
    if any(x in name for x in ("Dynamo", "NVL-", "H200_NVL", "ND_GB200")):
        return None
    return "gb200-nvl72" if "GB200" in name else "b200" if "B200" in name else "h200" if "H200" in name else None


def gpus(name: str) -> int:
    """GPUs of a peer run's system, from its name (x72, x16, x4; 8 otherwise)."""
    return next((n for tag, n in (("x72", 72), ("x16", 16), ("x4", 4)) if tag in name), 8)


@functools.lru_cache(maxsize=1)
def peer_rows() -> tuple[dict, ...]:
    """Block 2's runs: group (bench, system, scenario), who, whether it is a validation row, its steady load per
    instance, measured median TPOT (s) and what prices it (model, pricer, one instance, workload)."""
    pts = {p.id: p for p in load_mlperf()[0]}
    out = []
    for bench in _TAG:
        for sc in ("Interactive", "Server"):
            for r in peer_runs(benchmark=bench, scenario=sc):
                system = catalog_system(r["system"])
                key = base_row(bench, system, sc) if system else None
                if key not in pts or not pts[key].mapping.startswith("matched"):
                    continue  # no validation row, or one with no declared engine (GB200 x4 Llama-2-70B Interactive)
                # the model without the term it fits (fit/mlperf_engines.LLAMA_TRT_HARNESS_STEP_S: the H200 rows carry it)
                model, pr, dep, wl = priced_point(dataclasses.replace(pts[key], harness_step_s=0.0))
                one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
                chips = dep.decode.layout.chips
                n = r["tokens_per_s"] / gpus(r["system"]) * r[f"tpot_{STEADY}_ms"] / 1e3 * chips
                val = key == _V.format(f"{r['submitter']}_{r['system'].replace('_TRT', '')}", _TAG[bench], sc)
                out.append(
                    {
                        "group": (bench, system, sc),
                        "who": f"{r['submitter']} {r['system']}",
                        "val": val,
                        "per_instance": n,
                        "measured_s": r[f"tpot_{STEADY}_ms"] / 1e3,
                        "priced": (model, pr, one, wl),
                    }
                )
    return tuple(out)


def residual_s(row: dict, h_s: float) -> float:
    """Measured median TPOT minus the model's mean TPOT (s) at the run's load, ``h_s`` seconds a step added as
    fit/validate.predict_points adds a row's harness term."""
    model, pr, one, wl = row["priced"]
    sp = aggregated_by_batch(model, with_harness_step(pr, h_s), one, wl, np.array([row["per_instance"]]))
    return row["measured_s"] - float(sp.tpot_s[0])


def group_residuals(rows, h_s: float, fit: bool) -> dict:
    """(group -> residuals, s) of the fit runs (``fit``) or of the validation runs at ``h_s``."""
    out: dict = {}
    for r in rows:
        if r["val"] != fit:
            out.setdefault(r["group"], []).append(residual_s(r, h_s))
    return out


def fitted_term_s(systems: tuple[str, ...], hi_s: float = 0.03, steps: int = 16) -> float:
    """The term h (s) in [0, ``hi_s``] whose model leaves zero mean of the fit groups' mean residuals over the runs on
    ``systems`` (each group weighted equally), by bisection.

    Raises:
        ValueError: no fit run on ``systems``, or the residual has one sign over the whole interval.
    """
    rows = [r for r in peer_rows() if r["group"][1] in systems]

    def mean(h: float) -> float:
        g = group_residuals(rows, h, fit=True)
        if not g:
            raise ValueError(
                f"no fit run on {systems}: docs/data/mlperf51_peer_runs.csv holds none that is not a validation row"
            )
        return float(np.mean([np.mean(v) for v in g.values()]))

    lo, hi = 0.0, hi_s
    if mean(lo) <= 0 or mean(hi) >= 0:
        raise ValueError(f"the fit runs' residual on {systems} does not change sign in [0, {hi_s * 1e3:g} ms]")
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mean(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


def _print_groups(rows, h_s: float) -> None:
    fit, val = group_residuals(rows, h_s, True), group_residuals(rows, h_s, False)
    for g in sorted(set(fit) | set(val)):
        f, v = fit.get(g, []), val.get(g, [])
        m = f"{np.mean(f) * 1e3:+6.1f} (spread {np.ptp(f) * 1e3:4.1f})" if f else "     -            "
        print(
            f"  {g[0]:14s} {g[1]:12s} {g[2]:12s} fit n {len(f):2d} {m} | validation "
            f"{', '.join(f'{x * 1e3:+.1f}' for x in v) or '-'}"
        )


def main() -> None:
    print("1. Interactive vs Server config, field by field (Interactive | Server | priced? | worth on the step)")
    for system, model, src, diffs in CONFIG_DIFFS:
        print(f"  {system} {model} ({src})")
        for field, i, s, priced, worth in diffs:
            print(f"    {field}: {i} | {s} | {priced} | {worth}")
    rows = peer_rows()
    print("2. each peer run at its steady load: measured median TPOT, model, residual (ms)")
    for r in rows:
        print(
            f"  {'val' if r['val'] else 'fit'} {r['group'][0]:14s} {r['group'][2][:3]} {r['who'][:52]:52s} "
            f"{r['per_instance']:7.1f}  {r['measured_s'] * 1e3:6.1f}  {(r['measured_s'] - residual_s(r, 0)) * 1e3:6.1f}"
            f"  {residual_s(r, 0) * 1e3:+6.1f}"
        )
    print("   by group, no term (ms): fit runs' mean | validation runs")
    _print_groups(rows, 0.0)
    for name, systems in (*FAMILIES.items(), ("all", tuple(s for v in FAMILIES.values() for s in v))):
        try:
            h = fitted_term_s(systems)
        except ValueError as e:
            print(f"3. {name}: {e}")
            continue
        print(f"3. {name} ({', '.join(systems)}): term {h * 1e3:.2f} ms; by group with it (ms)")
        _print_groups([r for r in rows if r["group"][1] in systems], h)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # no arguments: --help only
    main()
