"""Steady-state analytic model of agentic sessions on one aggregated instance, with KV-cache tiers.

Sessions run turns back to back (specs/agentic.py): turn k prefills its new tokens n_k (the
system prompt and first tool output, then each tool output u) on top of the cached prefix
P_k, decodes r tokens, and after θ = ``think_s`` the next turn arrives. Parametrised by the
decode batch B of the instance (as serve/analytic.py), with a = tokens per decode step and
D = (r − 1)/a decode steps per turn:

    λ = B/(D·τ) turns/s,   X = λ/K tasks/s,   p = λ·n̄·τ = B·n̄/D prefill tokens per step,
    τ = (1 − f)·step(B, 0) + f·step(B, c),  f = p/c (c = min(n̄, budget); p ≥ c: τ = step(B, p)),
    (with attention DP: c = min(n̄, budget/dp), one prompt's chunk on its rank, and a step carrying
    prefill carries g·c tokens, g = m/(1 − e^(−m)) with m = (p/c)·t_p/t_d the turns in prefill it
    meets, t_p the one-chunk step, t_d the decode step; f = p/(g·c): cost/adp_rank.py, docs/model.md §3;
    serve/turn_arrivals.py, whose TURN_ARRIVALS_ON, on since round 55, counts the turns at the model's own rate,
    clustered by the step mix one think time earlier, chunks as an engine cuts them),
    TTFT_k = τ/2 + reload_k + prefill_k + front end (a + b·ISL_k),   TPOT = τ/a,
    T_task = Σ_k (TTFT_k + D·τ) + (K − 1)·θ,   sessions in flight N = X·T_task (Little's law).

KV-cache tiers (specs/kv_tiers.py). Running sequences hold B·ctx_dec tokens of HBM; the rest of
the instance's KV capacity caches finished turns (an LRU prefix cache). Between two turns of a
session the other sessions keep inserting their contexts, so the cache holds a parked volume

    V = X·θ·Σ_k E_k   tokens   (E_k = ISL_k + r, the context each turn leaves)

that fills HBM's free capacity first, then host memory, SSD and the remote service (each tier's
capacity per chip × chips / KV bytes per token per chip); the part beyond every tier is
evicted. A returning entry is taken to be equally likely anywhere in that LRU stack (turn
and think times vary, which mixes the order), so tier t serves its share of V
(:func:`placement`). A prefix found in a lower tier is reloaded (latency + bytes/bandwidth per
chip) or recomputed (its tokens prefilled again), whichever is faster for that turn —
cache-offload engines (LMCache, Dynamo KVBM) make the same choice; a tier with zero capacity or
bandwidth is never used. Recomputing adds prefill to every step, which slows the instance and
shrinks V: the recomputed share is solved as a fixed point (damped steps, the damping halved
when the residual changes sign: a bisection, since the share parked below HBM falls as the
recomputed share rises). A step carries at most the prompt budget, so where the recomputed
prefixes would ask more of it (B·n̄/D > budget·pp) the decode batch the prefill keeps fed is
B = budget·pp·D/n̄ at that share (limit ``prefill_budget``; the other turns wait for prefill) —
before round 39 only the budget was charged, and recomputing could look faster than reloading.
The reload link's utilisation ρ = reload bytes/s / (bandwidth × attention-DP ranks), tiers over one link summed
(specs/kv_tiers.shared_link_utilisation, ux54), adds an M/D/1 wait reload·ρ/(2(1 − ρ));
ρ ≥ 0.95 is not a steady state. The prefix-cache hit rate (cached prompt tokens / prompt
tokens) is a result. Bound per point (``kv_bound``): ``kv_capacity:hbm`` (returns served below
HBM), ``reload_link:<link>`` (reloads ≥ 5% of the task time or ρ ≥ 0.5) or ``prefill_recompute``
(recompute's TTFT plus the throughput it costs ≥ 5%), with its share.

A turn's n_k new tokens prefill as an engine chunks them at the prompt budget pb (one prompt's tokens
a step): ⌊n_k/pb⌋ full-chunk steps, their tokens at mean context P_k + ⌊n_k/pb⌋·pb/2, then one
remainder step of n_k mod pb tokens at P_k + ⌊n_k/pb⌋·pb + (n_k mod pb)/2 (before round 53 the
remainder was priced as a full chunk and every chunk at the first one's context). Per-turn prefill
and recompute times are priced at turn 0 (which prefills S + u) and up to 7 turns of 1 … K − 1,
interpolated linearly in between (smooth in the prefix). p90 task time: the sum of K turns whose
reply lengths are uniform in ±jitter, by the central limit theorem T + 1.2816·σ,
σ = (τ/a)·jitter·r·sqrt(K/3); queueing tails come from the simulator. Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

import numpy as np

from jalapeno.cost.pricer import Pricer
from jalapeno.cost.step import Batch, pool_step_cost
from jalapeno.cost.step_bounds import BOUNDS, rank_bounds
from jalapeno.deploy.deployment import Deployment
from jalapeno.deploy.mtp import query_len
from jalapeno.deploy.memory_fit import kv_bytes_per_seq_per_chip
from jalapeno.deploy.kv_capacity import decode_batch_cap
from jalapeno.serve.analytic import frontend_s
from jalapeno.serve.limits import batch_caps, decode_step_s, graph_padded
from jalapeno.serve.turn_arrivals import chunks_per_prefill_step
from jalapeno.specs.agentic import AgenticSpec
from jalapeno.specs.kv_tiers import shared_link_utilisation
from jalapeno.specs.model import ModelSpec

#: p90 of a normal distribution (the task time is a sum of K turns).
Z90 = 1.2816
#: Link utilisation at which reloads are no longer a steady state.
MAX_LINK_UTILISATION = 0.95
#: A reload (or recompute) share of the task time above which it is named the point's KV bound.
KV_BOUND_SHARE = 0.05
#: Turns priced individually; the others interpolate (a speed choice, see module docstring).
SAMPLE_TURNS = 8


@dataclass(frozen=True, slots=True)
class SessionPoints:
    """Operating points of agentic sessions on one deployment; arrays of shape (N,) unless noted.

    Units: seconds, tasks/s (the whole deployment). ``ttft_turn_s`` is (N, K): TTFT of each turn.
    ``kv_tier``: the deepest tier serving at least 5% of returning sessions (``hbm``, ``host``,
    ``ssd``, ``remote``, or ``recompute`` for evicted prefixes) and ``kv_tier_share`` the share of
    returning sessions it serves (for ``hbm``, 1 minus the share served below it: a point is
    ``kv_capacity:hbm`` below 95%, so 0.96 is one step from flipping); ``kv_bound``: ``""``,
    ``kv_capacity:hbm``, ``reload_link:<link>`` or ``prefill_recompute`` (module docstring), and
    ``kv_bound_share`` the share of task time (or throughput) it costs.
    """

    sessions: np.ndarray
    decode_batch: np.ndarray
    tasks_per_s: np.ndarray
    task_time_s: np.ndarray
    task_time_p90_s: np.ndarray
    ttft_turn_s: np.ndarray
    tpot_s: np.ndarray
    step_time_s: np.ndarray
    reload_s_per_task: np.ndarray
    recompute_tokens_per_task: np.ndarray
    hit_rate: np.ndarray
    kv_tier: np.ndarray
    kv_tier_share: np.ndarray
    link_utilisation: np.ndarray
    kv_bound: np.ndarray
    kv_bound_share: np.ndarray
    bound: np.ndarray
    bound_margin: np.ndarray
    chips: np.ndarray
    limit: np.ndarray
    feasible: np.ndarray
    reason: np.ndarray

    def __len__(self) -> int:
        return self.sessions.shape[0]

    @property
    def tasks_per_hour_per_chip(self) -> np.ndarray:
        """Tasks finished per hour per chip, (N,)."""
        return self.tasks_per_s * 3600.0 / self.chips

    def take(self, idx) -> SessionPoints:
        """The points at ``idx`` (an index array or a mask) of every field."""
        return SessionPoints(**{f.name: getattr(self, f.name)[idx] for f in fields(self)})


def _tier_chain(model, pricer, dep) -> list[tuple[str, str, float, float, float]]:
    """Usable tiers below HBM as (name, link, capacity tokens per instance, bandwidth B/s per chip,
    latency s); token capacity = capacity per chip × chips / KV bytes per token per chip."""
    lay = dep.decode.layout
    kv1 = float(kv_bytes_per_seq_per_chip(model, lay, dep.precision, 1.0))
    tokens_per_byte = lay.dp * lay.cp / kv1  # a token's KV lives on chips/dp chips of the instance
    return [
        (t.name, t.link, t.capacity_bytes * tokens_per_byte, t.bandwidth_bytes_per_s, t.latency_s)
        for t in pricer.system.kv_tiers
        if t.usable
    ]


def placement(volume, hbm_free, capacities) -> np.ndarray:
    """Shares of returning sessions served by HBM, each lower tier and none (evicted), (N, T + 2).

    The parked volume V fills HBM's free capacity first, then each tier in turn; a returning
    entry is equally likely anywhere in the LRU stack (the spread of turn and think times mixes
    the order), so tier t serves (min(V, cum_t) − min(V, cum_{t−1}))/V of the returns and the
    part of V beyond every tier is recomputed.

    >>> placement(np.array([100.0]), np.array([50.0]), [30.0]).round(2).tolist()
    [[0.5, 0.3, 0.2]]
    """
    v = np.maximum(np.asarray(volume, dtype=float), 1e-12)
    cum = [np.asarray(hbm_free, dtype=float)]
    for c in capacities:
        cum.append(cum[-1] + c)
    filled = [np.minimum(v, c) for c in cum]
    shares = [filled[0] / v] + [(filled[i] - filled[i - 1]) / v for i in range(1, len(filled))]
    shares.append(1 - filled[-1] / v)
    return np.stack(shares, axis=1)


def sessions_by_batch(
    model: ModelSpec,
    pricer: Pricer,
    dep: Deployment,
    spec: AgenticSpec,
    decode_batch,
    use_tiers: bool = True,
    iterations: int = 40,
) -> SessionPoints:
    """Agentic points of one aggregated instance at decode batches ``decode_batch`` (N,).

    ``use_tiers=False`` keeps only HBM (a prefix evicted from it is recomputed). Points whose
    parked volume exceeds HBM solve the recompute fraction by a bisection-damped fixed point
    (``iterations``; recomputing slows the instance, which shrinks the volume parked); where the
    recomputed prompt tokens would exceed the step budget, ``decode_batch`` is the smaller batch
    the budget keeps fed and ``limit`` reads ``prefill_budget``.

    Raises:
        SpecError: a disaggregated deployment (prefix caching across pools is not modelled).
    """
    from jalapeno.errors import SpecError

    if dep.prefill is not None:
        raise SpecError(
            "serving",
            "agentic sessions are modelled on aggregated instances",
            "use --serving agg (the prefix cache lives with the instance that prefills)",
        )
    eff, lay, prec = pricer.efficiency, dep.decode.layout, dep.precision
    a = dep.mtp.tokens_per_step if dep.mtp else 1.0
    K, r, theta = spec.turns, float(spec.reply_tokens), float(spec.think_s)
    isl, new0, prefix = spec.turn_isl(), spec.turn_new_tokens(), spec.turn_prefix_tokens()
    D = (r - 1) / a
    spread = spec.jitter * spec.tool_output_tokens  # a turn's new tokens are uniform in ±spread
    ctx_dec = float(isl.mean() + r / 2)
    budget = float(dep.prefill_budget(lay))
    pb = float(dep.prompt_budget(lay))  # one prompt's tokens a step, on its attention-DP rank (cost/adp_rank.py)
    ctx_ref = spec.final_context_tokens / 2
    cap_tokens = (
        decode_batch_cap(
            model,
            pricer.system,
            lay,
            prec,
            ctx_ref,
            eff,
            dep.mtp,
            budget,
            memory_fraction=dep.memory_fraction,
            engine=dep.memory_profile,
        )
        * ctx_ref
    )
    chain = _tier_chain(model, pricer, dep) if use_tiers else []
    nbar0 = float(new0.mean())
    caps = {
        "kv_capacity": cap_tokens / (ctx_dec + nbar0),
        "prefill_budget": budget * D / nbar0 * lay.pp,
        **batch_caps(dep, query_len(dep.mtp), nbar0 / D, lay.pp, layout=lay),
    }
    cap_name = min(caps, key=caps.get)
    b_req = np.atleast_1d(np.asarray(decode_batch, dtype=float))
    b_all = np.minimum(b_req, max(caps[cap_name], 0.0))
    b_u, inv = np.unique(b_all, return_inverse=True)
    # turn 0 prefills S + u, the others u: turns 1 … K − 1 are sampled apart from it, so that no turn is
    # interpolated from turn 0 (round 53: turns 1-5 of the coding agent lay on a line from turn 0's 8,500-token
    # prefill to turn 6's 2,500-token one)
    samp = np.unique(
        np.concatenate([[0], np.round(np.linspace(1, max(K - 1, 1), min(max(K - 1, 1), SAMPLE_TURNS - 1)))])
    ).astype(int)
    samp = samp[samp < K]
    kv_pc = kv_bytes_per_seq_per_chip(model, lay, prec, prefix)  # (K,) per chip holding the sequence
    kk = np.arange(K)

    def evaluate(b, miss):
        """Every quantity at decode batches b (n,) with a recomputed share ``miss`` (n, K) of each prefix."""
        n = b.shape[0]
        new = new0[None, :] + miss * prefix[None, :]
        pre_ctx = (1 - miss) * prefix[None, :]
        nbar = new.mean(axis=1)
        # a step carries at most `budget` prompt tokens: recomputed prefixes shrink the decode batch the
        # prefill keeps fed (the prefill_budget cap at this miss; the rest wait in the prefill queue)
        b = np.minimum(b, budget * D * lay.pp / nbar)
        b_mb = b / lay.pp
        p_mb = b_mb * nbar / D
        chunk = np.minimum(nbar, pb)
        w_ctx = (new * (pre_ctx + new / 2)).sum(axis=1) / new.sum(axis=1)
        # attention DP: a step carrying prefill costs about one rank's chunk (cost/adp_rank.py) and carries g
        # chunks of c tokens, g from the turns in prefill it meets (serve/turn_arrivals.py, TURN_ARRIVALS_ON)
        g, f_seen = np.ones_like(p_mb), None
        if lay.dp > 1:
            g, chunk, f_seen = chunks_per_prefill_step(
                model, pricer, dep, lay, b_mb, ctx_dec, new, spread, pb, D, w_ctx
            )
        p_big = np.minimum(np.maximum(p_mb, g * chunk), budget)
        ks = samp.size
        # a turn's n_k new tokens run as ⌊n_k/pb⌋ full chunks, their tokens at mean context P + ⌊n_k/pb⌋·pb/2,
        # then one remainder chunk at P + ⌊n_k/pb⌋·pb + rem/2 (a 2,500-token tool output at pb = 2,048 is
        # 2,048 + 452 tokens: round 53 priced the 452 as a second full chunk)
        n_k = new[:, samp]
        full_k = np.floor(n_k / pb + 1e-9)
        rem_k = np.maximum(n_k - full_k * pb, 0.0)
        ch_k = np.where(full_k > 0, pb, np.maximum(rem_k, 1.0))
        # the decode-only rows (first n) priced in one call with the prompt-carrying ones, as serve/analytic.agg_plan
        sc = pool_step_cost(
            model,
            pricer,
            dep,
            lay,
            graph_padded(
                dep,
                lay,
                Batch.make(
                    decode_seqs=np.concatenate([b_mb, b_mb] + [np.repeat(b_mb, ks)] * 3),
                    decode_ctx=ctx_dec,
                    prefill_tokens=np.concatenate(
                        [np.zeros(n), p_big, ch_k.ravel(), np.full(n * ks, pb), np.maximum(rem_k, 1.0).ravel()]
                    ),
                    prefill_ctx=np.concatenate(
                        [
                            np.zeros(n),
                            w_ctx,
                            (pre_ctx[:, samp] + np.where(full_k > 0, full_k * pb, ch_k) / 2).ravel(),
                            np.tile(prefix[samp] / 2, n),
                            (pre_ctx[:, samp] + full_k * pb + rem_k / 2).ravel(),
                        ]
                    ),
                    prefill_seqs=np.concatenate([np.zeros(n), np.maximum(p_big / chunk, 1), np.ones(3 * n * ks)]),
                ),
            ),
        )
        t_dec = decode_step_s(sc, eff, dep, np.concatenate([b, b]), lay)[:n]
        f = np.minimum(p_mb / p_big, 1.0) if f_seen is None else f_seen
        tau = (1 - f) * t_dec + f * sc.step_time_s[n : 2 * n]

        def interp(y):
            return np.stack([np.interp(kk, samp, row) for row in y])

        chunk_s = sc.step_time_s[2 * n : 2 * n + n * ks].reshape(n, ks)
        rem_s = sc.step_time_s[2 * n + 2 * n * ks :].reshape(n, ks)
        prefill_s = interp(np.where(full_k > 0, full_k * chunk_s, 0.0) + np.where(rem_k > 1e-9, rem_s, 0.0))
        recompute_s = interp(sc.step_time_s[2 * n + n * ks : 2 * n + 2 * n * ks].reshape(n, ks)) * prefix[None, :] / pb
        lam = np.where(b > 0, b / (D * tau), 0.0)
        X = lam / K
        volume = X * theta * (isl + r).sum()
        running = b * ctx_dec + lam * prefill_s.mean(axis=1) * isl.mean()
        w = placement(volume, np.maximum(cap_tokens - running, 0.0), [c[2] for c in chain])
        # per lower tier and turn: reload (latency + bytes/bandwidth) or recompute, whichever is faster
        reload = np.stack([c[4] + kv_pc / c[3] for c in chain]) if chain else np.zeros((0, K))  # (T, K)
        use = reload[None, :, :] < recompute_s[:, None, :]  # (n, T, K)
        use[:, :, 0] = False
        share = w[:, 1:-1, None]  # (n, T, 1)
        target = w[:, -1:] + (share * ~use).sum(axis=1)  # (n, K)
        target[:, 0] = 0.0
        rho = (
            (
                X[:, None]
                * (share[:, :, 0:1] * use * kv_pc[None, None, :]).sum(axis=2)
                / np.array([c[3] for c in chain])[None, :]
                / lay.dp
            )
            if chain
            else np.zeros((n, 0))
        )
        rho = shared_link_utilisation(rho, [c[3] for c in chain], [c[1] for c in chain])  # one link, summed (ux54)
        wait = np.where(rho < 1, rho / (2 * np.maximum(1 - rho, 1e-9)), np.inf)  # (n, T)
        reload_k = (share * use * reload[None, :, :] * (1 + wait[:, :, None])).sum(axis=1)  # (n, K)
        return {
            "b": b,
            "sc": sc,
            "f": f,
            "tau": tau,
            "prefill_s": prefill_s,
            "recompute_s": recompute_s,
            "X": X,
            "w": w,
            "target": target,
            "reload_k": reload_k,
            "rho": rho.max(axis=1) if chain else np.zeros(n),
        }

    n = b_u.shape[0]
    miss = np.zeros((n, K))
    ev = evaluate(b_u, miss)
    x_no_miss = ev["X"].copy()
    spill = ev["target"].max(axis=1) > 1e-9
    if spill.any():
        idx = np.flatnonzero(spill)
        m = np.zeros((idx.size, K))
        # the recomputed share is the root of target(m) − m, target falling in m (recomputing slows the
        # instance, which parks less): damped steps whose damping halves when the residual changes sign
        eta, sign = np.full(idx.size, 0.5), np.zeros(idx.size)
        for _ in range(iterations):
            res = evaluate(b_u[idx], m)["target"] - m
            s_now = np.sign(res.mean(axis=1))
            eta = np.where(s_now * sign < 0, eta / 2, eta)
            sign = s_now
            step = eta[:, None] * res
            m = np.clip(m + step, 0.0, 1.0)
            if np.max(np.abs(step)) < 1e-4:
                break
        miss[idx] = m
        e = evaluate(b_u[idx], m)
        ev = {k: _put(ev[k], idx, e[k]) for k in ev if k != "sc"} | {"sc": ev["sc"], "sc_spill": (idx, e["sc"])}
    sc, f, tau = ev["sc"], ev["f"], ev["tau"]
    attr = np.stack([(1 - f) * sc.attribution_s[k][:n] + f * sc.attribution_s[k][n : 2 * n] for k in BOUNDS])
    fits = sc.feasible[:n] & sc.feasible[n : 2 * n]
    reason = np.where(sc.feasible[:n], sc.reason[n : 2 * n], sc.reason[:n]).astype(object)
    if "sc_spill" in ev:
        idx, s2 = ev["sc_spill"]
        m2 = idx.size
        attr[:, idx] = np.stack(
            [(1 - f[idx]) * s2.attribution_s[k][:m2] + f[idx] * s2.attribution_s[k][m2 : 2 * m2] for k in BOUNDS]
        )
        fits[idx] = s2.feasible[:m2] & s2.feasible[m2 : 2 * m2]
        reason[idx] = np.where(s2.feasible[:m2], s2.reason[m2 : 2 * m2], s2.reason[:m2])
    bound, margin = rank_bounds(attr)
    X, w, rho = ev["X"], ev["w"], ev["rho"]
    wait = dep.recv_interval * tau / 2
    ttft = wait[:, None] + ev["reload_k"] + ev["prefill_s"] + frontend_s(eff, isl)[None, :]
    task = ttft.sum(axis=1) + K * D * tau + (K - 1) * theta
    sd = tau / a * spec.jitter * r * math.sqrt(K / 3)
    hit = ((1 - miss) * prefix[None, :]).sum(axis=1) / isl.sum()
    reload_total = ev["reload_k"].sum(axis=1)
    recompute_total = (miss * ev["recompute_s"]).sum(axis=1)
    names = np.array(["hbm"] + [c[0] for c in chain] + ["recompute"], dtype=object)
    deepest = np.array([max(np.flatnonzero(row >= 0.05), default=0) for row in w])
    tier = names[deepest]
    links = np.array([""] + [c[1] for c in chain] + [""], dtype=object)
    spilled = w[:, 0] < 0.95
    kv_bound = np.full(n, "", dtype=object)
    kv_bound[spilled] = "kv_capacity:hbm"
    slow = spilled & ((reload_total / task >= KV_BOUND_SHARE) | (rho >= 0.5))
    if slow.any():
        lk = [links[max(np.flatnonzero(row[1:-1] >= 0.05), default=0) + 1] for row in w[slow]]
        kv_bound[slow] = np.array([f"reload_link:{x}" for x in lk], dtype=object)
    # recomputing costs its own TTFT and, by the extra prefill in every step, throughput
    rec_loss = recompute_total / task + np.maximum(1 - X / np.maximum(x_no_miss, 1e-30), 0.0)
    rec = spilled & (rec_loss >= KV_BOUND_SHARE) & (rec_loss >= reload_total / task)
    kv_bound[rec] = "prefill_recompute"
    share = np.where(rec, rec_loss, np.where(spilled, reload_total / task, 0.0))
    fits &= b_u > 0
    ok_link = rho < MAX_LINK_UTILISATION
    reason = np.where(
        ~fits,
        np.where(b_u > 0, reason, "no sequence fits in the KV cache; shard wider"),
        np.where(ok_link, "", "the KV reload link is saturated (utilisation >= 0.95); fewer sessions or a faster tier"),
    )
    pts = SessionPoints(
        sessions=X * task,
        decode_batch=ev["b"],
        tasks_per_s=X,
        task_time_s=task,
        task_time_p90_s=task + Z90 * sd,
        ttft_turn_s=ttft,
        tpot_s=tau / a,
        step_time_s=tau,
        reload_s_per_task=reload_total,
        recompute_tokens_per_task=(miss * prefix[None, :]).sum(axis=1),
        hit_rate=hit,
        kv_tier=tier,
        kv_tier_share=w[np.arange(n), deepest],
        link_utilisation=rho,
        kv_bound=kv_bound,
        kv_bound_share=share,
        bound=np.where(fits, bound, "hbm_capacity"),
        bound_margin=margin,
        chips=np.full(n, float(lay.chips)),
        limit=np.where(ev["b"] < b_u * (1 - 1e-9), "prefill_budget", "").astype(object),
        feasible=fits & ok_link,
        reason=reason.astype(object),
    )
    out = pts.take(inv)
    return replace(out, limit=np.where(b_req > caps[cap_name], cap_name, out.limit).astype(object))


def _put(base: np.ndarray, idx: np.ndarray, vals: np.ndarray) -> np.ndarray:
    out = np.array(base, copy=True)
    out[idx] = vals
    return out


def sessions_at(
    model: ModelSpec, pricer: Pricer, dep: Deployment, spec: AgenticSpec, sessions, use_tiers: bool = True
) -> SessionPoints:
    """Points at requested sessions in flight (N,) per instance: N(B) tabulated on a geometric grid
    of decode batches, inverted log-log and refined by secant steps; beyond the batch cap the extra
    sessions wait for admission (task time grows by the wait, throughput stays flat)."""
    s_req = np.atleast_1d(np.asarray(sessions, dtype=float))
    grid = np.geomspace(0.05, 16384.0, 64)
    g = sessions_by_batch(model, pricer, dep, spec, grid, use_tiers)
    ok = g.sessions > 0
    sb, bb = g.sessions[ok], g.decode_batch[ok]
    _, first = np.unique(bb, return_index=True)
    sb, bb = sb[first], bb[first]
    order = np.argsort(sb)
    ls, lb = np.log(sb[order]), np.log(bb[order])
    b = np.exp(np.interp(np.log(s_req), ls, lb))
    for _ in range(4):
        pts = sessions_by_batch(model, pricer, dep, spec, b, use_tiers)
        got = np.maximum(pts.sessions, 1e-30)
        if np.all(np.abs(got / s_req - 1) < 1e-3):
            break
        b = np.minimum(b * s_req / got, float(np.exp(lb[-1])))
    excess = np.maximum(s_req - pts.sessions, 0.0)
    queued = excess > 1e-3 * s_req
    wait = np.where(queued & (pts.tasks_per_s > 0), excess / np.maximum(pts.tasks_per_s, 1e-30), 0.0)
    d = {f.name: getattr(pts, f.name) for f in fields(pts)}
    d["task_time_s"] = d["task_time_s"] + wait
    d["task_time_p90_s"] = d["task_time_p90_s"] + wait
    d["sessions"] = np.where(queued, s_req, d["sessions"])
    return SessionPoints(**d)
