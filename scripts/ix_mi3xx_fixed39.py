"""MI3xx SGLang v0.5.9 median TTFT against the model's fixed part: the front end each median leaves room for (issue 18, round 39).

Prices, with the shipped stacks, the InferenceX rows whose TTFT is a run's median on gfx942 SGLang v0.5.9 (rows 26/28/34/35:
DeepSeek-R1 FP8, TP8, C = 64, MI325X and MI300X, 1k/1k and 8k/1k) and the same MI325X 1k/1k deployment at the two
loads of SemiAnalysisAI/InferenceX issue #890 (Klaud-Cold 2026-03-08, image v0.5.9-rocm700-mi30x: median TTFT 114.9 /
118.8 ms at C = 4 / 8, the figures data/stacks.toml's ``first_wave_stall_s`` source transcribes; no validation row).
Per point it prints the measured median, the model's p50 and its parts (serve/ttft_parts.py: front end, prefill, half
step, waits), and the front end the median leaves room for — measured − (p50 − front end) — with the overlap loop's
admission lag off (shipped) and on (``admission_lag_steps`` = 1, serve/overlap_loop.py), beside the two front ends the
profiles offer at that prompt: SGLang's fitted one (0.0875 s + 17.5 µs per prompt token, which ``sglang-rocm``
borrows: fit/stack_fit.SAME_SERVER) and InferenceX's client entry fitted on vLLM / TensorRT-LLM (0.025 s + 7.5 µs).
Then the MI300X / MI325X ratios of the measured median TTFT and TPOT per ISL, the model's, and the dense-GEMM ratio
of AMD's Max-Achievable FLOPs (ROCm/rocm-blogs ``measuring-max-achievable-flops-part2``, 2025-02-28: FP8 1,273 TFLOPs at
1,230 MHz on MI300X, 1,519 TFLOPs at 1,464 MHz on MI325X, same peak). Nothing is fitted or written
(docs/gap_aic_ttft.md, round 39 ixttft39). Run: python scripts/ix_mi3xx_fixed39.py
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.fit.median_front import ISSUE_890_MEDIANS, RECIPE_ROW
from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.fit.validate import point_workload
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.ttft_parts import ttft_parts

#: the rows (InferenceX points ids) and issue #890's loads: (row whose deployment is priced, concurrency, median s)
ROWS = ("inferencex_points:34", "inferencex_points:35", "inferencex_points:26", "inferencex_points:28")
ISSUE_890 = tuple((RECIPE_ROW, float(c), m) for c, m in sorted(ISSUE_890_MEDIANS.items()))  # fit/median_front.py
#: InferenceX's client entry fitted on vLLM and TensorRT-LLM (data/stack_fits.toml ``clients.inferencex``), s and s/token
IX_CLIENT = (0.025, 7.5e-6)
#: AMD Max-Achievable FLOPs, FP8 (TFLOPs): MI325X over MI300X (ROCm blog, module docstring)
MAF_RATIO = 1519 / 1273


def price(p, conc: float, lag: bool) -> tuple[dict, float, float]:
    """(the p50's parts at ``conc``, the p50 (s), τ (s)) of point ``p``'s deployment, the admission lag on or off."""
    model, pr, dep, wl = priced_point(p)
    if lag:
        pr = pr.with_efficiency(replace(pr.efficiency, admission_lag_steps=1.0))
    res = serve_at_concurrency(model, pr, dep, wl, [conc])
    parts = {k: float(v[0]) for k, v in ttft_parts(model, pr, dep, wl, res).items()}
    return parts, float(res.ttft_p50_s[0]), float(res.step_time_s[0])


def main() -> None:
    pts = {p.id: p for p in load_inferencex(DEFAULT_POINTS)[0]}
    cases = [(r, pts[r].concurrency, pts[r].measured["ttft_s"], r.split(":")[1]) for r in ROWS]
    cases += [(r, c, m, "#890") for r, c, m in ISSUE_890]
    print(
        "point  system  ISL    C | median    p50 (error) | p50: front prefill half rest (ms) | room, lag off / on | "
        "IX client front end (ms)"
    )
    for rid, conc, med, name in cases:
        p = pts[rid]
        parts, p50, tau = price(p, conc, False)
        p50_on = price(p, conc, True)[1]
        fe, pre, half = parts["frontend_s"], parts["prefill_s"], parts["first_step_s"]
        ix = IX_CLIENT[0] + IX_CLIENT[1] * point_workload(p).mean_isl
        print(
            f"{name:5s} {p.system:7s} {p.isl:5d} {conc:3.0f} | {med * 1e3:6.1f} {p50 * 1e3:6.1f} ({p50 / med - 1:+4.0%}) | "
            f"{fe * 1e3:5.1f} {pre * 1e3:6.1f} {half * 1e3:5.1f} {(p50 - fe - pre - half) * 1e3:5.1f} | "
            f"{(med - p50 + fe) * 1e3:6.1f} / {(med - p50_on + fe) * 1e3:6.1f} | {ix * 1e3:5.1f}   (tau {tau * 1e3:.1f} ms)"
        )
    print("\nMI300X / MI325X, same image, recipe, run date and peak: measured vs model")
    for a, b in (("inferencex_points:35", "inferencex_points:34"), ("inferencex_points:28", "inferencex_points:26")):
        pa, pb = pts[a], pts[b]
        ra, rb = price(pa, pa.concurrency, False), price(pb, pb.concurrency, False)
        print(
            f"ISL {pa.isl}: median TTFT {pa.measured['ttft_s'] / pb.measured['ttft_s']:.2f}x (model p50 "
            f"{ra[1] / rb[1]:.2f}x, model prefill {ra[0]['prefill_s'] / rb[0]['prefill_s']:.2f}x); TPOT "
            f"{pa.measured['tpot_s'] / pb.measured['tpot_s']:.2f}x (model {ra[2] / rb[2]:.2f}x; HBM 6.0/5.3 = 1.13x); "
            f"AMD MAF FP8 {MAF_RATIO:.2f}x"
        )


if __name__ == "__main__":
    main()
