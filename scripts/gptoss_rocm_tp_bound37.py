"""gpt-oss-120b vLLM on gfx942: what the sibling chip's choice of run says about row 51 (issue 18, round 37 amd37).

InferenceX's gpt-oss-120b best-per-GPU rows on MI300X and MI325X (InferenceX-app blog
best-gpu-for-gptoss120b-inference.mdx, 2026-03-09) are one publication: the same image
(vllm/vllm-openai-rocm:v0.17.0), the same launch script (benchmarks/single_node/gptoss_fp4_mi3{00,25}x.sh
@87250a0e2, InferenceX PR #889), the same checkpoint (openai/gpt-oss-120b, .github/configs/amd-master.yaml
@87250a0e2) and, at 1k/1k C = 64, runs at several TPs on each chip (MI300X: TP1, TP2, TP4; MI325X: TP1,
TP2, TP4, TP8). Each published row is the run with the highest throughput per GPU, so every other run at
C = 64 had less. A run's throughput per GPU is C · m · (ISL + OSL) / (G · E2E), E2E = TTFT + (m · OSL − 1)
· TPOT, m = fit/data_quality.MEAN_LENGTH_FRACTION (0.9: lengths uniform in [0.8 L, L]); so a losing run of
G GPUs has E2E > C · m · (ISL + OSL) / (G · best), i.e.

    TPOT_loser > (C · m · (ISL + OSL) / (G · best) − TTFT_loser) / (m · OSL − 1),

a lower bound once TTFT_loser is bounded above (here by the TP1 row's own TTFT: a TP2 prefill of the same
prompt is not slower than a TP1 one, an assumption stated where used). Rows: 51 (MI325X, TP2 won by the
closed-loop identity, fit/run_identity.py), 53 (MI300X, TP1 won), 44 / 45 (MI325X / MI300X 8k/1k, TP1 both).

Printed: (1) the bounds — MI300X's losing TP2 run at 1k/1k C = 64 and MI325X's losing TP1 run; (2) the
pair's TPOT ratio MI300X / MI325X at TP1 (rows 45 / 44) against its lower bound at TP2 (bound / row 51); (3) the
model's TPOT and throughput per GPU for the four runs (won and lost on each chip) and the order it ranks them
in; (4) ``--w4a16``: the what-if of pricing the routed experts in BF16 (W4A16, as vLLM's ROCm Triton MXFP4
backend runs openai/gpt-oss-120b on a chip without FP4 math) instead of the ``mxfp4`` preset's FP8 (W4A8), with
the set's own fractions; (5) ``--runners``: two MI300X runs of one image on two runner pools (InferenceX issue
#828: TP4, C = 4, 1k/1k on mi300x-amds_1, 8k/1k on mi300x-cr_0) against the model. Nothing is fitted, nothing written, no prediction moves
(docs/gap_large_batch_decode.md, round 37).

Run: python scripts/gptoss_rocm_tp_bound37.py [--w4a16] [--runners]
"""

from __future__ import annotations

import argparse
import dataclasses

from jalapeno.fit.data_quality import MEAN_LENGTH_FRACTION
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS

#: role -> InferenceX point id (data/validation/inferencex_points.csv line)
ROWS = {
    "mi325x_tp2_1k": "inferencex_points:51",
    "mi300x_tp1_1k": "inferencex_points:53",
    "mi325x_tp1_8k": "inferencex_points:44",
    "mi300x_tp1_8k": "inferencex_points:45",
}


#: MI300X, openai/gpt-oss-120b, vllm/vllm-openai-rocm:v0.16.0, TP4, C = 4: runner, median TPOT (ms), mean TTFT (ms),
#: SemiAnalysisAI/InferenceX issue #828 (Klaud-Cold comment of 2026-03-03, run 22601920598, "Benchmark Results —
#: MI300X (4x MI300X, TP4, conc4)" and the per-runner power tables)
ISSUE_828 = {"mi300x_tp1_1k": ("mi300x-amds_1", 7.46, 167.5), "mi300x_tp1_8k": ("mi300x-cr_0", 4.74, 249.6)}


def loser_tpot_bound_s(
    best_tput_per_gpu: float, concurrency: float, isl: int, osl: int, gpus: int, ttft_upper_s: float
) -> float:
    """Lower bound on the TPOT of a run that lost a best-per-GPU selection at the same concurrency, s.

    Args:
        best_tput_per_gpu: the published (winning) run's throughput per GPU, input + output tokens/s.
        concurrency: the closed-loop concurrency C both runs ran.
        isl, osl: the workload's nominal lengths (InferenceX draws lengths uniformly in [0.8 L, L]).
        gpus: GPUs of the losing run G.
        ttft_upper_s: an upper bound on the losing run's TTFT, s.

    Returns:
        (C · m · (ISL + OSL) / (G · best) − TTFT) / (m · OSL − 1), m = MEAN_LENGTH_FRACTION (module docstring).

    Raises:
        ValueError: a non-positive throughput, concurrency or GPU count.

    By hand, MI300X TP2 at 1k/1k C = 64 against the TP1 row's 3,887.2 tok/s per GPU and its 143.6 ms TTFT:
    64 × 0.9 × 2048 / (2 × 3887.2) = 15.174 s; (15.174 − 0.1436) / 920.6 = 16.33 ms.

    >>> round(loser_tpot_bound_s(3887.2, 64, 1024, 1024, 2, 0.1436) * 1e3, 2)
    16.33
    """
    if best_tput_per_gpu <= 0 or concurrency <= 0 or gpus <= 0:
        raise ValueError(
            "loser_tpot_bound_s: best_tput_per_gpu, concurrency and gpus must be positive "
            f"(got {best_tput_per_gpu}, {concurrency}, {gpus}); pass the published row's figures"
        )
    m = MEAN_LENGTH_FRACTION
    e2e_min = concurrency * m * (isl + osl) / (gpus * best_tput_per_gpu)
    return (e2e_min - ttft_upper_s) / (m * osl - 1.0)


def _points() -> dict:
    pts, _ = load_inferencex(DEFAULT_POINTS)
    by_id = {p.id: p for p in pts}
    missing = [i for i in ROWS.values() if i not in by_id]
    if missing:
        raise SystemExit(f"rows {missing} not in {DEFAULT_POINTS}: the script reads InferenceX rows 44/45/51/53")
    return {role: by_id[i] for role, i in ROWS.items()}


def _serve(p, tp: int | None = None, precision=None) -> tuple[float, float, float]:
    """The model's TPOT (s), TTFT (s) and throughput per GPU for row ``p``'s run, at ``tp`` and ``precision``
    where given (the row's own otherwise)."""
    from jalapeno.fit.mlperf_scenarios import priced_point
    from jalapeno.serve.point import serve_at_concurrency

    model, pricer, dep, wl = priced_point(p)
    if tp is not None:
        lay = dataclasses.replace(dep.decode.layout, tp=tp)
        dep = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, layout=lay))
    if precision is not None:
        dep = dataclasses.replace(dep, precision=precision)
    run = serve_at_concurrency(model, pricer, dep, wl, [int(p.concurrency)])
    ttft = run.ttft_p50_s if p.ttft_median else run.ttft_s
    return float(run.tpot_s[0]), float(ttft[0]), float(run.throughput_per_chip[0])


def bounds(rows: dict) -> dict:
    """The two losing runs' TPOT lower bounds (s) and the pair's TPOT ratios (module docstring, (1)-(2))."""
    r51, r53, r44, r45 = (rows[k] for k in ("mi325x_tp2_1k", "mi300x_tp1_1k", "mi325x_tp1_8k", "mi300x_tp1_8k"))
    ttft_tp1 = r53.measured["ttft_s"]  # assumption: no 1k/1k run on gfx942 prefilled slower than MI300X TP1
    b300 = loser_tpot_bound_s(r53.measured["throughput_per_chip"], 64, 1024, 1024, 2, ttft_tp1)
    b325 = loser_tpot_bound_s(r51.measured["throughput_per_chip"], 64, 1024, 1024, 1, ttft_tp1)
    tp1_ratio = r45.measured["tpot_s"] / r44.measured["tpot_s"]
    return {
        "mi300x_tp2_min": b300,
        "mi325x_tp1_min": b325,
        "tp1_ratio": tp1_ratio,
        "tp2_ratio_min": b300 / r51.measured["tpot_s"],
        "mi325x_tp1_from_ratio": r53.measured["tpot_s"] / tp1_ratio,
    }


def main(w4a16: bool, runners: bool = False) -> None:
    rows = _points()
    b = bounds(rows)
    print("| run (1k/1k, C = 64, v0.17.0) | measured TPOT ms | bound from the selection |")
    print("|---|---|---|")
    print(f"| MI325X TP2 (row 51, won) | {rows['mi325x_tp2_1k'].measured['tpot_s'] * 1e3:.1f} | — |")
    print(
        f"| MI325X TP1 (lost) | — (row 53 / TP1 chip ratio: {b['mi325x_tp1_from_ratio'] * 1e3:.1f}) | "
        f"> {b['mi325x_tp1_min'] * 1e3:.2f} |"
    )
    print(f"| MI300X TP1 (row 53, won) | {rows['mi300x_tp1_1k'].measured['tpot_s'] * 1e3:.1f} | — |")
    print(f"| MI300X TP2 (lost) | — | > {b['mi300x_tp2_min'] * 1e3:.2f} |")
    print(
        f"\nMI300X / MI325X TPOT ratio: TP1 (rows 45/44) {b['tp1_ratio']:.3f}; TP2 >= {b['tp2_ratio_min']:.3f} "
        f"(HBM 5.3 / 6.0 TB/s: {6.0 / 5.3:.3f})"
    )

    print("\n| chip | TP | model TPOT ms | model TTFT ms | model tok/s per GPU | measured |")
    print("|---|---|---|---|---|---|")
    model = {}
    for key, other in (("mi325x_tp2_1k", 1), ("mi300x_tp1_1k", 2)):
        p = rows[key]
        own_tp = p.deployment.decode.layout.tp
        for tp in (own_tp, other):
            tpot, ttft, tput = _serve(p, tp)
            model[(p.system, tp)] = (tpot, tput)
            meas = (
                f"{p.measured['tpot_s'] * 1e3:.1f} ms, {p.measured['throughput_per_chip']:.0f} tok/s (won)"
                if tp == own_tp
                else "lost"
            )
            print(f"| {p.system} | {tp} | {tpot * 1e3:.1f} | {ttft * 1e3:.1f} | {tput:.0f} | {meas} |")
    for chip, won in (("mi325x", 2), ("mi300x", 1)):
        lost = 3 - won
        order = "as measured" if model[(chip, won)][1] > model[(chip, lost)][1] else "reversed"
        print(f"model ranks {chip} TP{won} vs TP{lost} per GPU: {order}")
    k = rows["mi325x_tp2_1k"].measured["tpot_s"] / model[("mi325x", 2)][0]
    print(
        f"one chip-independent factor on the TP2 step that meets row 51 (x{k:.3f}) puts MI300X TP2 at "
        f"{k * model[('mi300x', 2)][0] * 1e3:.1f} ms against its bound {b['mi300x_tp2_min'] * 1e3:.2f} ms"
    )

    if runners:
        print(
            "\n| MI300X TP4 C 4 (InferenceX issue #828, v0.16.0) | runner | median TPOT ms | mean TTFT ms | "
            "model TPOT ms (v0.17.0 recipe) |"
        )
        print("|---|---|---|---|---|")
        for key, (runner, tpot_ms, ttft_ms) in ISSUE_828.items():
            p = dataclasses.replace(rows[key], concurrency=4.0)
            tpot = _serve(p, 4)[0]
            print(f"| {p.isl}/{p.osl} | {runner} | {tpot_ms} | {ttft_ms} | {tpot * 1e3:.2f} |")

    if w4a16:
        from jalapeno.specs.formats import _preset

        pre = _preset(
            "mxfp4",
            "what-if: routed experts W4A16",
            "bf16",
            "bf16",
            requires=("routed_experts",),
            routed_experts=("mxfp4", "bf16"),
        )
        print("\n| row | chip | ISL | TP | measured TPOT / TTFT ms | model (W4A8, as shipped) | what-if W4A16 |")
        print("|---|---|---|---|---|---|---|")
        for p in sorted(rows.values(), key=lambda q: int(q.id.split(":")[1])):
            a, b_ = _serve(p), _serve(p, precision=pre)
            print(
                f"| {p.id.split(':')[1]} | {p.system} | {p.isl} | {p.deployment.decode.layout.tp} | "
                f"{p.measured['tpot_s'] * 1e3:.1f} / {p.measured['ttft_s'] * 1e3:.1f} | "
                f"{a[0] * 1e3:.1f} / {a[1] * 1e3:.1f} | {b_[0] * 1e3:.1f} / {b_[1] * 1e3:.1f} |"
            )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--w4a16", action="store_true", help="also the routed-experts-in-BF16 what-if table")
    ap.add_argument(
        "--runners",
        action="store_true",
        help="also InferenceX issue #828's MI300X TP4 C 4 runs on two runner pools against the model",
    )
    args = ap.parse_args()
    main(args.w4a16, args.runners)
