#!/usr/bin/env python3
"""Physics sanity sweep of points nobody measured: the deployed configurations of the mission models.

Prices a dense grid through the public path (analysis/deployed.sweep_by_load with a recipe's options, as
``frontier``/``compare --as-deployed`` do; analysis/sweep.sweep otherwise; serve/point.serve_at_concurrency
as ``predict`` does) for DeepSeek-R1, Kimi K2.5 and gpt-oss-120b on GB200/GB300 NVL72, B200, B300, H200
and the Jalapeño system at 1k/1k, 8k/1k, 1k/8k and a 32k/1k long-context (agentic-turn) shape, and checks
invariants any expert expects, each derived from physics, not from the model's code:

1. floors: no decode step faster than its HBM floor (the bytes one instance must read, over its chips'
   peak HBM bandwidth: weights at the preset's narrowest stored format -- scales left out -- for the
   non-routed weights once and the expected distinct routed experts E(1-(1-k/E)^T) of T uniform-routed
   tokens, x0.95 for the spread; plus KV at least 0.8 ISL tokens per sequence, windowed layers clipped)
   nor its compute floor (2 FLOP per active parameter per token over the chips' highest peak); no TTFT
   below the prompt's FLOPs (0.8 ISL tokens, the shortest InferenceX prompt) over the prefill worker's
   highest peak;
2. monotone: along a deployment's load, TPOT non-decreasing and throughput per chip non-decreasing up to
   its knee (its highest point), within ``MONO_TOL``; TTFT non-decreasing in ISL at a fixed deployment;
3. continuity: on a dense concurrency grid (ratio ``C_RATIO``) no TPOT / throughput jump above ``JUMP``
   unless an event explains it (printed: a binding limit or bound change, a CUDA-graph capture edge, a
   recipe draft-length band);
4. MTP: interactivity speed-up over the same layout and batch without MTP <= 1 + k (the most accepted
   tokens a step can add) and >= 1 at low load (batch 1);
5. the frontier (agg + disagg) holds no point another feasible point dominates by more than ``DOM_TOL``;
   FP4 never slower than FP8 at the same layout and batch on a chip with native FP4;
6. more HBM bandwidth or more FLOP/s (``--set``, x ``SPEC_UP``) never makes a point slower;
7. energy: tokens/s/kW x kW per chip = tokens/s/chip, and J/token x tokens/s/chip = W per chip.

Nothing is fitted or written. Prints each violation with where it is, a count per check, and the runtime
(about 70 s on one core for the full grid, 6 s for ``--quick``).

Findings at round 53 (main 3c415dc2): every check holds on every point (108K floor points, 82K monotone,
56K spec pairs, 1.8K MTP and FP4/FP8 pairs, 896 frontier points, 624 energy identities); 58 moves are named
events, none a violation. (a) H200 SGLang TP1 DP8 1k/1k throughput dips at concurrency 16 -> 19 and 32 -> 38:
SGLang's captured CUDA-graph sizes (1, 2, 4, 8, 12, ...) pad 2.1 sequences per rank to 4 and 4.75 to 8.
(b) Aggregated wide attention-DP layouts (DP >= 64) at 8k/1k and 32k/1k: TPOT falls 1-14 % as the decode
batch doubles at 2-32 sequences per instance. The pure decode step is monotone (``step`` at DP256 EP256: 12.9
-> 13.4 ms from 1 to 16 sequences); the mean step falls because the share of steps carrying a prefill chunk,
p / p_big (serve/analytic._chunk_step_load), falls 0.86 -> 0.55: the closed loop's bunched prompts
(serve/batch_wait.bunched_arrivals_per_step, above the mean rate once more than two users) run side by side on
distinct ranks, so fewer steps carry a chunk. A modelled mechanism, not a bug; note that its ``users`` is the
decode batch, not the concurrency (at 32k/1k C is about 2B), which understates the bunch at long prompts
(the concurrency: serve/batch_wait.BUNCH_CONCURRENCY_ON, bunch53, shipped off by the round-53 rule).

Run:
    python scripts/sanity_sweep53.py            # the full grid
    python scripts/sanity_sweep53.py --quick    # the subset tests/unit/test_sanity_sweep53.py runs
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import replace
from typing import NamedTuple
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402

import jalapeno as jp  # noqa: E402
from jalapeno.analysis.deployed import recipe_options, sweep_by_load  # noqa: E402
from jalapeno.analysis.frontier import frontier_indices  # noqa: E402
from jalapeno.analysis.records import PointRecord  # noqa: E402
from jalapeno.analysis.sweep import SweepOptions, sweep  # noqa: E402
from jalapeno.analysis.uncertain import apply  # noqa: E402
from jalapeno.deploy.engines import get_recipe  # noqa: E402
from jalapeno.deploy.mtp import MTP  # noqa: E402
from jalapeno.errors import JalapenoError  # noqa: E402
from jalapeno.serve.point import serve_at_concurrency  # noqa: E402

#: relative tolerance of the floors (numerical slack only: a floor is a bound)
FLOOR_TOL = 1e-3
#: monotonicity tolerance (a stated assumption: 1 % absorbs the analytic model's rounding of batches to ranks)
MONO_TOL = 0.01
#: dense concurrency grid ratio and the largest neighbour-to-neighbour move without an event (a
#: step's time is at most linear in its batch, so TPOT moves by at most C_RATIO between neighbours; JUMP
#: leaves room for fixed per-step terms shrinking: x1.6 above that is a discontinuity)
C_RATIO = 2**0.25
JUMP = 1.6
#: a frontier point dominated by another feasible point by more than this (both axes) is a violation
DOM_TOL = 0.005
#: the spec step of check 6
SPEC_UP = 1.25
#: the MTP settings of check 4 (DeepSeek-V3 report §5.4.3: 85-90 % acceptance of the 2nd token)
MTP_CHECK = ((1, 0.85), (3, 0.75))
#: chips with native FP4 tensor cores (NVIDIA Blackwell datasheets; the Jalapeño report's 13.4 PF FP4)
NATIVE_FP4 = ("gb200-nvl72", "gb300-nvl72", "b200", "b300", "jalapeno")


class Case(NamedTuple):
    """One system x model x precision, as deployed (``recipe``) or as the sweep enumerates it."""

    system: str
    model: str
    precision: str
    recipe: str | None = None
    serving: str = "both"


CASES = (
    Case("gb200-nvl72", "deepseek-r1", "fp4", "dynamo-trt-dsr1-fp4"),
    Case("gb300-nvl72", "deepseek-r1", "fp4", "dynamo-trt-dsr1-fp4"),
    Case("b200", "deepseek-r1", "fp4", "trtllm-b200-dsr1-fp4-mtp"),
    Case("b300", "deepseek-r1", "fp4", "dynamo-trt-dsr1-fp4"),
    Case("h200", "deepseek-r1", "fp8", "sglang-h200-dsr1-fp8"),
    Case("gb200-nvl72", "gpt-oss-120b", "mxfp4", "dynamo-trt-gptoss-fp4"),
    Case("h200", "gpt-oss-120b", "mxfp4", "trtllm-h200-gptoss-fp4"),
    Case("gb200-nvl72", "kimi-k2.5", "int4"),
    Case("gb300-nvl72", "kimi-k2.5", "int4"),
    Case("jalapeno", "deepseek-r1", "fp4"),
    Case("jalapeno", "deepseek-r1", "fp8"),
    Case("jalapeno", "kimi-k2.5", "int4"),
    Case("jalapeno", "gpt-oss-120b", "mxfp4"),
)
QUICK_CASES = (Case("gb200-nvl72", "deepseek-r1", "fp4", "dynamo-trt-dsr1-fp4"), Case("jalapeno", "deepseek-r1", "fp4"))
WORKLOADS = ("1k1k", "8k1k", "1k8k", "32k1k")
QUICK_WORKLOADS = ("1k1k", "8k1k")


class Findings:
    """Violations by check, printed as found."""

    def __init__(self, quiet: bool = False):
        self.by_check: dict[str, list[str]] = {}
        self.checked: dict[str, int] = {}
        self.quiet = quiet
        #: (decode step over its floor, where) of the tightest point check 1 saw
        self.tightest: tuple[float, str] = (np.inf, "")

    def count(self, check: str, n: int = 1) -> None:
        self.checked[check] = self.checked.get(check, 0) + n

    def add(self, check: str, where: str, what: str) -> None:
        line = f"  [{check}] {where}: {what}"
        self.by_check.setdefault(check, []).append(line)
        if not self.quiet and len(self.by_check[check]) <= 8:
            print(line)


# ---------------------------------------------------------------- floors (check 1), from config and specs


def _min_weight_bytes(prec) -> float:
    """Bytes per weight element of the preset's narrowest stored format (scales left out: a floor)."""
    return min(m.weight.bytes_per_elem for m in prec.modules.values())


def weights_floor_bytes(model, prec, tokens: np.ndarray) -> np.ndarray:
    """Bytes an instance must read for ``tokens`` (T,) tokens of one step: every non-routed active weight
    once, and the expected distinct routed experts of T uniform-routed tokens (x0.95), per MoE layer."""
    bpp = _min_weight_bytes(prec)
    m = model.moe
    if m is None:
        return np.full_like(tokens, bpp * model.active_params, dtype=float)
    per_expert = model.expert_params()
    fixed = model.active_params - model.num_moe_layers * m.top_k * per_expert
    distinct = m.num_experts * (1.0 - (1.0 - m.top_k / m.num_experts) ** np.maximum(tokens, 1.0))
    return bpp * (fixed + 0.95 * model.num_moe_layers * per_expert * np.maximum(distinct, m.top_k))


def kv_floor_bytes(model, prec, ctx: float) -> float:
    """KV bytes one sequence of ``ctx`` tokens makes a decode step read (element bits of the KV format,
    block scales and a wider rope part left out; windowed layers clipped to their window)."""
    per_layer = model.attention.kv_elems_per_token_layer * prec.kv_cache.element_bits / 8.0
    return sum(n * per_layer * (min(w, ctx) if w else ctx) for w, n in model.window_counts)


def _peak(system) -> float:
    return max(system.chip.peak_flop_per_s.values())


def check_floors(f: Findings, where: str, model, system, res, wl) -> None:
    """Check 1 on every feasible point of a sweep result."""
    p = res.points
    bw, peak = system.chip.hbm_bandwidth_bytes_per_s, _peak(system)
    isl_min = wl.range_ratio * wl.isl
    for i in np.flatnonzero(p.feasible):
        dep = res.deployments[int(res.dep_index[i])]
        lay = dep.decode.layout
        if lay.pp > 1:
            continue
        chips = lay.chips
        k = dep.mtp.draft_tokens if dep.mtp else 0
        tokens = float(p.decode_batch[i]) * (1 + k)
        w = float(weights_floor_bytes(model, dep.precision, np.array([tokens]))[0])
        kv = float(p.decode_batch[i]) * kv_floor_bytes(model, dep.precision, isl_min)
        hbm = (w + kv) / (chips * bw)
        comp = 2.0 * model.active_params * tokens / (chips * peak)
        step = float(p.step_time_s[i])
        f.count("1 floor")
        f.tightest = min(f.tightest, (step / max(hbm, comp), f"{where} {dep.label}"))
        if step < max(hbm, comp) * (1 - FLOOR_TOL):
            f.add(
                "1 floor",
                f"{where} {dep.label} batch {p.decode_batch[i]:g}",
                f"decode step {step * 1e3:.3f} ms < floor {max(hbm, comp) * 1e3:.3f} ms "
                f"(HBM {hbm * 1e3:.3f}, compute {comp * 1e3:.3f})",
            )
        pf = dep.prefill.layout.chips if dep.prefill is not None else chips
        ttft_floor = 2.0 * model.active_params * isl_min / (pf * peak)
        if float(p.ttft_s[i]) < ttft_floor * (1 - FLOOR_TOL):
            f.add(
                "1 floor",
                f"{where} {dep.label} batch {p.decode_batch[i]:g}",
                f"TTFT {p.ttft_s[i] * 1e3:.2f} ms < prompt FLOP floor {ttft_floor * 1e3:.2f} ms",
            )


# ---------------------------------------------------------------- monotone along load (check 2)


def _curves(res):
    """(deployment index, point indices sorted by decode batch) of each deployment with >= 2 feasible points."""
    p = res.points
    for d in np.unique(res.dep_index):
        idx = np.flatnonzero((res.dep_index == d) & p.feasible)
        if idx.size >= 2:
            yield int(d), idx[np.argsort(p.decode_batch[idx], kind="stable")]


def check_load_monotone(f: Findings, where: str, res, ctx: tuple | None = None) -> None:
    """Check 2 along each deployment's batch grid of a sweep; ``ctx`` (model, pricer, workload) lets a fall
    be named by the grouping of bunched prompts (:func:`_prefill_share_event`)."""
    p = res.points
    for d, idx in _curves(res):
        label = res.deployments[d].label
        tpot, thr = p.tpot_s[idx], p.throughput_per_chip[idx]
        f.count("2 monotone", idx.size)
        drop = [
            j
            for j in np.flatnonzero(tpot[1:] < tpot[:-1] * (1 - MONO_TOL))
            if _named(f, where, label, res, idx[j], idx[j + 1], ctx)
        ]
        for j in drop[:1]:
            f.add(
                "2 monotone",
                f"{where} {label}",
                f"TPOT falls {tpot[j] * 1e3:.2f} -> {tpot[j + 1] * 1e3:.2f} ms as batch "
                f"{p.decode_batch[idx[j]]:g} -> {p.decode_batch[idx[j + 1]]:g} ({_event(res, idx[j], idx[j + 1], ctx)})",
            )
        knee = int(np.argmax(thr))
        fall = [
            j
            for j in np.flatnonzero(thr[1 : knee + 1] < thr[:knee] * (1 - MONO_TOL))
            if _named(f, where, label, res, idx[j], idx[j + 1], ctx)
        ]
        for j in fall[:1]:
            f.add(
                "2 monotone",
                f"{where} {label}",
                f"throughput/chip falls {thr[j]:,.0f} -> {thr[j + 1]:,.0f} before its knee as batch "
                f"{p.decode_batch[idx[j]]:g} -> {p.decode_batch[idx[j + 1]]:g} ({_event(res, idx[j], idx[j + 1], ctx)})",
            )


def _named(f: Findings, where: str, label: str, res, i: int, j: int, ctx) -> bool:
    """True (a violation) where no event explains the move from point i to j; an explained one is printed."""
    ev = _event(res, i, j, ctx)
    if ev == "no event":
        return True
    f.count("events")
    if not f.quiet:
        p = res.points
        print(f"  [event] {where} {label} batch {p.decode_batch[i]:g} -> {p.decode_batch[j]:g}: {ev}")
    return False


def _prefill_share_event(ctx: tuple | None, dep, b0: float, b1: float) -> str | None:
    """The aggregated attention-DP event that lowers a mean step as the batch grows: the share of steps that carry
    prefill, p / p_big (serve/analytic._chunk_step_load, read through analytic.agg_plan), falls because the
    closed loop's bunched prompts (serve/batch_wait.bunched_arrivals_per_step: a prompt meets (C - 1)/(2 sqrt(pi)
    sigma) others per step, above the mean rate once C > 2) run side by side on distinct ranks, so fewer steps
    carry a chunk. None where it does not apply or the share does not fall."""
    if ctx is None or dep.prefill is not None or dep.decode.layout.dp <= 1:
        return None
    from jalapeno.serve.analytic import agg_plan

    model, pricer, wl = ctx
    plan = agg_plan(model, pricer, dep, wl, np.array([b0, b1]))
    share = plan[3] / plan[6]  # p_mb / p_big
    if share[1] < share[0] * (1 - MONO_TOL):
        return f"bunched prompts grouped on DP ranks: prefill-carrying share of steps {share[0]:.2f} -> {share[1]:.2f}"
    return None


def _event(res, i: int, j: int, ctx: tuple | None = None) -> str:
    """What changes between points i and j of a sweep (limit, bound, draft length, CUDA-graph bucket, the
    prefill-carrying share of an attention-DP step)."""
    p = res.points
    out = []
    if p.limit[i] != p.limit[j]:
        out.append(f"limit {p.limit[i] or '-'} -> {p.limit[j] or '-'}")
    if p.bound[i] != p.bound[j]:
        out.append(f"bound {p.bound[i]} -> {p.bound[j]}")
    di, dj = res.deployments[int(res.dep_index[i])], res.deployments[int(res.dep_index[j])]
    ki, kj = (di.mtp.draft_tokens if di.mtp else 0), (dj.mtp.draft_tokens if dj.mtp else 0)
    if ki != kj:
        out.append(f"MTP draft {ki} -> {kj}")
    g = _graph_edge(dj, float(p.decode_batch[i]), float(p.decode_batch[j]))
    if g:
        out.append(g)
    if not out and di is dj:
        e = _prefill_share_event(ctx, dj, float(p.decode_batch[i]), float(p.decode_batch[j]))
        if e:
            out.append(e)
    return "; ".join(out) or "no event"


# ---------------------------------------------------------------- dense concurrency / ISL (checks 2, 3)


def _graph_edge(dep, b0: float, b1: float) -> str | None:
    """The CUDA-graph event between decode batches b0 < b1 per instance: the per-rank batch crossing the
    capture ceiling (eager above it), or moving to the next captured size a padding engine pads to."""
    ranks = dep.decode.layout.dp * dep.decode.layout.pp
    n0, n1 = b0 / ranks, b1 / ranks
    cap = dep.cuda_graph_max_batch
    if cap is not None and n0 <= cap < n1:
        return f"CUDA-graph ceiling {cap}/rank crossed (eager above)"
    sizes = dep.cuda_graph_batch_sizes
    if sizes:
        g0 = next((g for g in sorted(sizes) if g >= n0 - 1e-9), None)
        g1 = next((g for g in sorted(sizes) if g >= n1 - 1e-9), None)
        if g0 != g1:
            return f"CUDA-graph bucket {g0} -> {g1}/rank (padded)"
    return None


def check_dense_concurrency(f: Findings, where: str, model, pricer, dep, wl) -> None:
    """Checks 2 and 3 on ``dep`` at concurrencies 1 ... 4096 (ratio C_RATIO), as ``predict`` prices them."""
    conc = np.unique(np.round(C_RATIO ** np.arange(0, 49)))
    p = serve_at_concurrency(model, pricer, dep, wl, conc)
    ok = np.flatnonzero(p.feasible)
    f.count("3 continuity", ok.size)
    tpot, thr = p.tpot_s, p.throughput_per_chip
    knee = ok[int(np.argmax(thr[ok]))] if ok.size else 0
    for a, b in zip(ok[:-1], ok[1:], strict=True):
        ev = []
        if p.limit[a] != p.limit[b]:
            ev.append(f"limit {p.limit[a] or '-'} -> {p.limit[b] or '-'}")
        if p.bound[a] != p.bound[b]:
            ev.append(f"bound {p.bound[a]} -> {p.bound[b]}")
        g = _graph_edge(dep, p.decode_batch[a], p.decode_batch[b])
        if g:
            ev.append(g)
        span = conc[b] / conc[a]
        r_t, r_x = tpot[b] / tpot[a], thr[b] / thr[a]
        at = f"{where} {dep.label} c {conc[a]:g} -> {conc[b]:g}"
        if tpot[b] < tpot[a] * (1 - MONO_TOL):
            f.add(
                "2 monotone",
                at,
                f"TPOT falls {tpot[a] * 1e3:.2f} -> {tpot[b] * 1e3:.2f} ms ({'; '.join(ev) or 'no event'})",
            )
        if b <= knee and thr[b] < thr[a] * (1 - MONO_TOL):
            if ev:  # a step up in the step's work (a padded graph bucket): throughput dips, then recovers
                f.count("events")
                print(f"  [event] {at}: throughput/chip {thr[a]:,.0f} -> {thr[b]:,.0f} explained by {'; '.join(ev)}")
            else:
                f.add(
                    "2 monotone", at, f"throughput/chip falls {thr[a]:,.0f} -> {thr[b]:,.0f} before the knee (no event)"
                )
        if max(r_t, 1 / r_t, r_x / span, span / r_x if r_x > 0 else np.inf) > JUMP * span and not ev:
            f.add(
                "3 continuity",
                at,
                f"TPOT x{r_t:.2f}, throughput x{r_x:.2f} over a x{span:.2f} step, no event "
                f"(batch {p.decode_batch[a]:g} -> {p.decode_batch[b]:g})",
            )
        elif max(r_t, 1 / r_t) > JUMP and ev:
            f.count("events")
            print(f"  [event] {at}: TPOT x{r_t:.2f} explained by {'; '.join(ev)}")


def check_isl(f: Findings, where: str, model, pricer, dep, osl: int = 1024) -> None:
    """Check 2 (TTFT non-decreasing in ISL) and 3 (no jump) at concurrency 1, ISL 512 ... 32K (ratio 2^0.25)."""
    isls = np.unique(np.round(512 * 2 ** (np.arange(0, 25) / 4)).astype(int))
    isls = isls[isls <= model.max_context - osl]
    ttft = []
    for isl in isls:
        wl = jp.get_workload(isl=int(isl), osl=osl)
        p = serve_at_concurrency(model, pricer, dep, wl, [1.0])
        ttft.append(float(p.ttft_s[0]) if p.feasible[0] else np.nan)
    ttft = np.array(ttft)
    f.count("2 monotone", isls.size)
    for a in range(len(isls) - 1):
        t0, t1 = ttft[a], ttft[a + 1]
        if not (np.isfinite(t0) and np.isfinite(t1)):
            continue
        at = f"{where} {dep.label} ISL {isls[a]} -> {isls[a + 1]}"
        if t1 < t0 * (1 - MONO_TOL):
            f.add("2 monotone", at, f"TTFT falls {t0 * 1e3:.2f} -> {t1 * 1e3:.2f} ms at concurrency 1")
        if t1 > t0 * JUMP * isls[a + 1] / isls[a]:
            f.add("3 continuity", at, f"TTFT x{t1 / t0:.2f} over a x{isls[a + 1] / isls[a]:.2f} ISL step")


# ---------------------------------------------------------------- pairs of sweeps (checks 4, 5, 6)


def _by_key(res, strip_precision: bool = False) -> dict:
    """(deployment label, decode batch) -> point index of each feasible point; the MTP part of the label
    dropped (check 4 pairs a layout with and without MTP), and with ``strip_precision`` the precision too."""
    out = {}
    p = res.points
    for i in np.flatnonzero(p.feasible):
        lab = re.sub(r" MTP\d+@[\d.]+", "", res.deployments[int(res.dep_index[i])].label)
        if strip_precision:
            lab = lab.rsplit(" [", 1)[0]
        out[(lab, float(p.decode_batch[i]))] = i
    return out


def _slowdown(slow, i, fast, j) -> float:
    """How much slower point j of ``fast`` is than point i of ``slow``: the larger of its TPOT ratio, its E2E
    ratio and its throughput-per-chip shortfall (TTFT alone is not judged: at a fixed decode batch a faster
    decode pool sends its prefill pool more requests per second, and a longer prefill queue is right)."""
    ps, pf = slow.points, fast.points
    return max(
        pf.tpot_s[j] / ps.tpot_s[i], pf.e2e_s[j] / ps.e2e_s[i], ps.throughput_per_chip[i] / pf.throughput_per_chip[j]
    )


def check_pair(f: Findings, check: str, where: str, slow, fast, tol: float, what: str, strip: bool = False) -> None:
    """Points at the same deployment label and batch: ``fast`` no slower than ``slow`` (:func:`_slowdown`)."""
    a, b = _by_key(slow, strip), _by_key(fast, strip)
    both = sorted(set(a) & set(b))
    f.count(check, len(both))
    r = {key: _slowdown(slow, a[key], fast, b[key]) for key in both}
    bad = [key for key in both if r[key] > 1 + tol]
    if bad:
        key = max(bad, key=r.get)
        i, j = a[key], b[key]
        f.add(
            check,
            f"{where} {key[0]} batch {key[1]:g}",
            f"{what} slower x{r[key]:.3f} (TPOT {slow.points.tpot_s[i] * 1e3:.2f} -> {fast.points.tpot_s[j] * 1e3:.2f} ms, "
            f"E2E {slow.points.e2e_s[i]:.3f} -> {fast.points.e2e_s[j]:.3f} s, tok/s/chip "
            f"{slow.points.throughput_per_chip[i]:,.0f} -> {fast.points.throughput_per_chip[j]:,.0f}); "
            f"{len(bad)} of {len(both)} points",
        )


def check_mtp(f: Findings, where: str, model, pricer, wl, prec) -> None:
    """Check 4: aggregated sweeps with and without MTP at the same layouts and batches."""
    opts = SweepOptions(serving="agg", overlap="none")
    base = sweep(model, pricer, wl, prec, opts)
    b0 = _by_key(base)
    for k, acc in MTP_CHECK:
        res = sweep(model, pricer, wl, prec, replace(opts, mtp=MTP(k, acc)))
        b1 = _by_key(res)
        both = sorted(set(b0) & set(b1))
        f.count("4 MTP", len(both))
        for key in both:
            s = res.points.interactivity[b1[key]] / base.points.interactivity[b0[key]]
            if s > 1 + k + 1e-6:
                f.add("4 MTP", f"{where} {key[0]} batch {key[1]:g} MTP{k}", f"speed-up x{s:.2f} > 1 + k = {1 + k}")
            if key[1] == 1.0 and s < 1 - MONO_TOL:
                f.add("4 MTP", f"{where} {key[0]} batch 1 MTP{k}@{acc}", f"speed-up x{s:.3f} < 1 at batch 1")


def check_frontier(f: Findings, where: str, res) -> None:
    """Check 5a: no frontier point dominated by another feasible point of the same sweep."""
    p = res.points
    ok = np.flatnonzero(p.feasible & (p.throughput_per_chip > 0) & np.isfinite(p.interactivity))
    if ok.size == 0:
        return
    fi = ok[frontier_indices(p.interactivity[ok], p.throughput_per_chip[ok])]
    f.count("5 frontier", fi.size)
    x, y = p.interactivity[ok], p.throughput_per_chip[ok]
    for i in fi:
        dom = (x > p.interactivity[i] * (1 + DOM_TOL)) & (y > p.throughput_per_chip[i] * (1 + DOM_TOL))
        if dom.any():
            f.add("5 frontier", f"{where}", f"frontier point {res.deployments[int(res.dep_index[i])].label} dominated")
    kinds = {"disagg" if res.deployments[int(res.dep_index[i])].prefill is not None else "agg" for i in fi}
    print(f"  {where}: frontier {fi.size} points, {'+'.join(sorted(kinds))}")


def check_energy(f: Findings, where: str, system, res, n: int = 12) -> None:
    """Check 7 on up to ``n`` feasible points: tok/s/kW x kW = tok/s/chip; J/token x tok/s/chip = W/chip."""
    p = res.points
    ok = np.flatnonzero(p.feasible & (p.throughput_per_chip > 0))
    for i in ok[:: max(1, ok.size // n)][:n]:
        rec = PointRecord.from_points(p, int(i), res.deployments[int(res.dep_index[i])], system, "all-in")
        f.count("7 energy")
        a = rec.tok_s_per_kw * rec.power_w_per_chip / 1e3 / rec.throughput_per_chip
        b = rec.j_per_token * rec.throughput_per_chip / rec.power_w_per_chip
        if abs(a - 1) > 1e-6 or abs(b - 1) > 1e-6:
            f.add(
                "7 energy",
                f"{where} {rec.deployment.label}",
                f"tok/s/kW x kW / tok/s = {a:.6f}, J/tok x tok/s / W = {b:.6f}",
            )


# ---------------------------------------------------------------- driver


def case_sweep(case: Case, model, pricer, wl):
    prec = jp.get_precision(case.precision)
    if case.recipe:
        rec = get_recipe(case.recipe)
        return sweep_by_load(
            model, pricer, wl, prec, recipe_options(rec, SweepOptions(), f"as deployed: {case.recipe}"), rec
        )
    return sweep(model, pricer, wl, prec, SweepOptions(serving=case.serving))


def _spec_keys(system) -> dict:
    chip = system.chip
    keys = {"chip.hbm_bandwidth_tb_per_s": chip.hbm_bandwidth_bytes_per_s / 1e12 * SPEC_UP}
    flops = {f"chip.peak_dense_tflops.{k}": v / 1e12 * SPEC_UP for k, v in chip.peak_flop_per_s.items()}
    return {"HBM bandwidth": keys, "FLOP/s": flops}


def run_case(f: Findings, case: Case, workloads, dense: bool = True) -> None:
    model, pricer = jp.load_model(case.model), jp.load_pricer(case.system)
    system = pricer.system
    for wname in workloads:
        wl = jp.get_workload(wname)
        where = f"{case.system} {case.model} {case.precision} {wname}{' (' + case.recipe + ')' if case.recipe else ''}"
        try:
            res = case_sweep(case, model, pricer, wl)
        except JalapenoError as e:
            print(f"  {where}: nothing fits ({e})")
            continue
        check_floors(f, where, model, system, res, wl)
        check_load_monotone(f, where, res, (model, pricer, wl))
        check_frontier(f, where, res)
        check_energy(f, where, system, res)
        if wname != workloads[0]:
            continue
        for name, keys in _spec_keys(system).items():
            up, _ = apply(pricer, keys)
            check_pair(f, "6 specs", where, res, case_sweep(case, model, up, wl), 0.005, f"x{SPEC_UP} {name}")
        if case.system in NATIVE_FP4 and case.precision == "fp4":
            opts = SweepOptions(serving="agg", overlap="none")
            r8 = sweep(model, pricer, wl, jp.get_precision("fp8"), opts)
            r4 = sweep(model, pricer, wl, jp.get_precision("fp4"), opts)
            check_pair(f, "5 FP4 vs FP8", where, r8, r4, 0.005, "FP4", strip=True)
        if model.mtp_layers and not case.recipe:
            check_mtp(f, where, model, pricer, wl, jp.get_precision(case.precision))
        if dense:
            deps = {}
            for i in np.flatnonzero(res.points.feasible):
                d = res.deployments[int(res.dep_index[i])]
                if d.prefill is None and d.mtp is None:
                    deps.setdefault(d.decode.layout.chips, d)
            for d in [deps[c] for c in sorted(deps)][:2]:
                check_dense_concurrency(f, where, model, pricer, d, wl)
                check_isl(f, where, model, pricer, d)


def main(argv: list[str] | None = None, quiet: bool = False) -> Findings:
    """Run the grid (``--quick``: QUICK_CASES x QUICK_WORKLOADS); returns the findings."""
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    t0 = time.perf_counter()
    f = Findings(quiet)
    for case in QUICK_CASES if quick else CASES:
        t = time.perf_counter()
        run_case(f, case, QUICK_WORKLOADS if quick else WORKLOADS)
        print(f"{case.system} {case.model} {case.precision}: {time.perf_counter() - t:.1f} s")
    print("\nviolations:")
    for check in sorted(f.by_check):
        for line in f.by_check[check]:
            print(line)
    print("\nchecks (points checked, violations):")
    for check in sorted((set(f.checked) | set(f.by_check)) - {"events"}):
        print(f"  {check}: {f.checked.get(check, 0):,} checked, {len(f.by_check.get(check, []))} violations")
    print(f"  moves named by an event (not violations): {f.checked.get('events', 0)}")
    if np.isfinite(f.tightest[0]):
        print(f"  tightest decode step over its floor: x{f.tightest[0]:.2f} ({f.tightest[1]})")
    print(f"runtime {time.perf_counter() - t0:.1f} s")
    return f


if __name__ == "__main__":
    main()
