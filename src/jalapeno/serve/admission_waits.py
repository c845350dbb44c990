"""Admission waits of an aggregated instance's prompts before their first step: TensorRT-LLM's attention-DP
context balancing gate (:func:`adp_gate_s`, on the request slots :func:`running_slots`) and its batch waiting
(:func:`batch_wait_hold_s`). Split from serve/analytic.py (round 42, module budget); the waits themselves are
serve/adp_balance.py and serve/batch_wait.py.
"""

from __future__ import annotations

import numpy as np

from jalapeno.deploy.deployment import Deployment
from jalapeno.deploy.mtp import query_len
from jalapeno.serve.adp_balance import adp_balance_wait_s
from jalapeno.serve.batch_wait import batch_wait_steps, bunched_arrivals_per_step, prompts_to_fill
from jalapeno.specs.workload import Workload


def running_slots(dep: Deployment, layout) -> float | None:
    """Requests one aggregated instance runs at once (``max_running``, per rank scaled, x pp), or
    None when the deployment sets no limit."""
    if dep.max_running is None:
        return None
    return float(dep.max_running * dep.rank_scale(layout) * layout.pp)


def adp_gate_s(dep: Deployment, lay, b, lam, tau, slots_full, clock: bool | None = None) -> np.ndarray:
    """TTFT added by attention-DP context balancing (0 without it), s, (N,): only while every rank is
    decoding (a rank with no generation request releases at once, so b/dp ≥ 1).

    Args: ``b`` the instance's decode batch (sequences, (N,)), ``lam`` its request rate (1/s), ``tau`` its
    mean step (s), ``slots_full`` (N,) bool, or None to read it from ``b`` against ``max_running``
    (:func:`running_slots`). Shared by the closed loop (serve/analytic.agg_points) and the Poisson TTFT
    (serve/open_loop.poisson_ttft_s); the wait is serve/adp_balance.adp_balance_wait_s (``clock``: its ``clock``
    switch, None = the shipped ADP_CLOCK_MEAN)."""
    if dep.adp_balance_timeout_iters is None or lay.dp <= 1:
        return np.zeros_like(b)
    slots = running_slots(dep, lay)
    full = (
        (np.zeros(b.shape, dtype=bool) if slots is None else b >= slots - 1e-9)
        if slots_full is None
        else np.asarray(slots_full, dtype=bool)
    )
    wait = adp_balance_wait_s(lay.dp * lay.pp, lam, tau, dep.adp_balance_timeout_iters, full, clock)
    return np.where(b / (lay.dp * lay.pp) >= 1.0, wait, 0.0)


def batch_wait_hold_s(dep: Deployment, lay, wl: Workload, b, lam, users, t_dec) -> tuple[np.ndarray, np.ndarray]:
    """(hold, joined) of TensorRT-LLM's batch waiting on an aggregated instance, (N,) each: the mean time
    a prompt is held (s) and the other prompts sharing its prefill step (serve/batch_wait.py); zeros
    without it, with attention DP (the engine skips the hold there) or with no other user decoding.
    Held steps are decode-only (``t_dec``); the others arrive at λ·(C − 1)/C (arrival theorem), or at
    the closed loop's bunched rate where that is higher (batch_wait.bunched_arrivals_per_step)."""
    zero = np.zeros_like(b)
    if not dep.batch_waits or lay.dp > 1:
        return zero, zero
    c = np.maximum(np.asarray(users, dtype=float), 1.0)
    a = bunched_arrivals_per_step(
        c,
        lam * (c - 1) / c * t_dec,
        wl.osl,
        wl.range_ratio,
        dep.mtp.tokens_per_step if dep.mtp else 1.0,
        osl_std=wl.osl_std,
    )
    cap = dep.step_token_cap(lay) or dep.prefill_budget(lay)
    k = prompts_to_fill(dep.batch_wait_max_tokens_ratio, cap, b / lay.pp * query_len(dep.mtp), wl.mean_isl)
    steps, joined = batch_wait_steps(a, dep.batch_wait_timeout_iters, k)
    busy = np.clip(c - 1.0, 0.0, 1.0) * (b > 0)
    return busy * steps * t_dec, busy * joined
