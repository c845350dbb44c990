"""The host-CPU lead for the gfx942 InferenceX misses: the host ratio each same-image MI300X / MI325X pair asks for
(issue 18, round 55, amd55; diagnosis, nothing fitted or shipped).

Round 54 left one lead for MI300X's held-out TTFT miss: the two chips' InferenceX runners may have different host
CPUs, and the engine's host-side constants (the front end per request and per prompt token, the per-step and per-TP-
rank host costs of the stack profile) scale with a host's single-thread speed. InferenceX publishes no host CPU for
either runner (docs/gap_large_batch_decode.md, round 55 amd55, lists what the runner files do say), so nothing here
is a fitted or a sourced constant: the script only asks how large a host ratio the measured rows would need.

For each same-image, same-layout pair (MI325X row, MI300X row: same model, engine release, TP, ISL, concurrency,
run date) it multiplies the MI300X row's host constants (:data:`HOST_FIELDS`, those the profile sets) by s, keeps
the MI325X row as shipped, and solves by bisection for the s at which the model's MI300X / MI325X ratio of TTFT
(median) and of TPOT equals the measured one (:func:`needed_ratio`). Then it prices every gfx942 row with one host
ratio s from :data:`RATIOS` put on MI300X (its hosts slower) or 1 / s on MI325X (its hosts faster) and prints the held-
out (split ``held_out`` / ``none``, fit/heldout.py) median |error| and bias of TTFT, TPOT, interactivity and
throughput per chip. :data:`RATIOS` spans the single-thread gap between two server CPUs of the generations such
hosts carry (see its comment). Run: python scripts/gfx942_host_cpu55.py [--front-end-only] (seconds).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from importlib.resources import files

import numpy as np

from jalapeno.errors import SpecError
from jalapeno.fit.heldout import split_labels
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.measured_point import point_stack
from jalapeno.fit.validate import predict_points

#: The stack profile's host-side constants: the front end (per request, per prompt token) and the engine's host
#: time per step and per TP rank beyond the first (specs/stack_profile.Stack). A field the profile leaves unset
#: (None: the efficiency set's value) is left as it is.
HOST_FIELDS = ("request_overhead_s", "prompt_overhead_s_per_token", "step_overhead_s", "tp_rank_step_s")
#: The front end alone (``--front-end-only``): round 54's lead as stated.
FRONT_END_FIELDS = HOST_FIELDS[:2]

#: (MI325X row, MI300X row) of inferencex_points.csv run on one image at one layout, ISL and concurrency (the
#: InferenceX-app best-GPU blogs @2d1d3d65: DeepSeek-R1 SGLang v0.5.9 TP8 2026-02-27 at 8k / 1k; gpt-oss-120b vLLM
#: TP1 2026-03-09 at 8k). Rows 51 / 53 (gpt-oss 1k) are not a pair: MI325X ran TP2, MI300X TP1.
PAIRS = (("26", "28"), ("34", "35"), ("44", "45"))

#: Host single-thread ratios to price: 1.16 = AMD's Zen 5 over Zen 4 IPC claim at one clock (Computex 2024
#: keynote, +16% average IPC); 1.35 = the boost-clock ratio of the fastest and a slow 64-core part of those two
#: generations a dual-socket host of 256+ threads (the runners' ``--cpus-per-task=256``) could carry, EPYC 9575F 5.0 GHz
#: over EPYC 9534 3.7 GHz (AMD product pages); 1.57 = both (1.16 x 1.35); 1.87 = 5.0 GHz Zen 5 over the 3.1 GHz Zen 4c
#: EPYC 9754 (1.16 x 5.0 / 3.1), the widest gap of the two generations. Assumptions: the hosts are EPYC 9004 / 9005
#: parts (not published) and a host constant scales as 1 / single-thread speed.
RATIOS = (1.0, 1.16, 1.35, 1.57, 1.87)

METRICS = ("ttft_s", "tpot_s", "interactivity", "throughput_per_chip")


def scaled_stack(stack, s: float, fields: tuple[str, ...] = HOST_FIELDS):
    """``stack`` with each of ``fields`` it sets multiplied by ``s`` (> 0); unset fields stay unset.

    >>> from jalapeno.specs.stack_profile import Stack
    >>> t = scaled_stack(Stack("x", "x", "x", request_overhead_s=0.025, step_overhead_s=None), 2.0)
    >>> t.request_overhead_s, t.step_overhead_s
    (0.05, None)

    Raises:
        SpecError: ``s`` is not a positive finite number.
    """
    if not (np.isfinite(s) and s > 0):
        raise SpecError("host ratio", f"{s!r} is not a positive number", "pass a ratio such as 1.35")
    changed = {f: getattr(stack, f) * s for f in fields if getattr(stack, f) is not None}
    return replace(stack, **changed)


def host_stack_of(scale: dict[str, float], fields: tuple[str, ...] = HOST_FIELDS):
    """A ``stack_of`` for fit/validate.predict_points: each point's shipped stack (fit/measured_point.point_stack)
    with its ``fields`` times ``scale[system]`` (1 for a system not named)."""

    def stack_of(p):
        st = point_stack(p)
        s = scale.get(p.system, 1.0)
        return st if s == 1.0 else scaled_stack(st, s, fields)

    return stack_of


def needed_ratio(model_ratio_at, target: float, lo: float = 1.0, hi: float = 10.0, tol: float = 1e-3) -> float:
    """The host ratio s in [lo, hi] at which ``model_ratio_at(s)`` (increasing in s) equals ``target``, by bisection;
    ``lo`` when the model's ratio at ``lo`` is already at or above it, ``inf`` when even ``hi`` falls short.

    >>> round(needed_ratio(lambda s: 1.0 + 0.1 * (s - 1.0), 1.2), 2)
    3.0
    >>> needed_ratio(lambda s: 1.0, 1.1)
    inf
    """
    if model_ratio_at(lo) >= target:
        return lo
    if model_ratio_at(hi) < target:
        return float("inf")
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if model_ratio_at(mid) < target else (lo, mid)
    return 0.5 * (lo + hi)


def goal_figures(errors: np.ndarray) -> tuple[float, float]:
    """Median |error| and median error (the bias) in %, as fit/goals.py reads a group.

    >>> goal_figures(np.array([-0.107, 0.078, -0.358, -0.294]))
    (20.05, -20.05)
    """
    e = np.asarray(errors, dtype=float)
    return round(float(np.median(np.abs(e))) * 100, 2), round(float(np.median(e)) * 100, 2)


def main(fields: tuple[str, ...] = HOST_FIELDS) -> None:
    print(f"host constants scaled: {', '.join(fields)}\n")
    points, _ = load_inferencex(files("jalapeno") / "data/validation/inferencex_points.csv")
    gfx942 = [p for p in points if p.system in ("mi300x", "mi325x")]
    by_id = {p.id.rsplit(":", 1)[1]: p for p in gfx942}
    labels = split_labels(points)

    def priced(pts, scale):
        return predict_points(pts, stack_of=host_stack_of(scale, fields)).set_index(["id", "metric"])

    print("1. The host ratio (MI300X's host constants x s, MI325X's as shipped) each same-image pair asks for")
    print(f"{'pair (325 / 300)':17} {'metric':7} {'measured ratio':>14} {'model ratio':>11} {'s needed':>9}")
    for a, b in PAIRS:
        pa, pb = by_id[a], by_id[b]
        base_a = priced([pa], {})
        for metric in ("ttft_s", "tpot_s"):
            ka, kb = (pa.id, metric), (pb.id, metric)
            target = pb.measured[metric] / pa.measured[metric]

            def model_ratio(s, kb=kb, ka=ka):
                return priced([pb], {"mi300x": s}).loc[kb, "predicted"] / base_a.loc[ka, "predicted"]

            need = needed_ratio(model_ratio, target)
            print(f"{a + ' / ' + b:17} {metric:7} {target:14.3f} {model_ratio(1.0):11.3f} {need:9.2f}")

    print("\n2. Held out (split held_out / none), median |error| / bias % per metric, with one host ratio s")
    print(f"{'hosts':24} {'system':7} " + " ".join(f"{m:>21}" for m in METRICS))
    held = [p for p in gfx942 if labels.get(p.id, "none") != "fit"]
    for who, scale_of in (("MI300X x s", lambda s: {"mi300x": s}), ("MI325X x 1/s", lambda s: {"mi325x": 1 / s})):
        for s in RATIOS:
            d = priced(held, scale_of(s)).reset_index()
            for sysn in ("mi300x", "mi325x"):
                cells = []
                for m in METRICS:
                    e = d[(d.system == sysn) & (d.metric == m)].error.dropna().to_numpy()
                    med, bias = goal_figures(e) if len(e) else (float("nan"), float("nan"))
                    cells.append(f"{med:5.1f} / {bias:+6.1f} (n {len(e)})")
                print(f"{who + f' (s {s:.2f})':24} {sysn:7} " + " ".join(f"{c:>21}" for c in cells))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--front-end-only", action="store_true", help="scale the front end only (request, prompt token)")
    main(FRONT_END_FIELDS if ap.parse_args().front_end_only else HOST_FIELDS)
