"""SGLang's disaggregated bootstrap / pre-allocation handshake as a per-request TTFT cost (issue 18; diagnosis).

Round 26 (docs/gap_aic_ttft.md, disttft26) named a lead for the SGLang GB200/GB300 disaggregated TTFT error: a
prefill worker does not schedule a request until the decode worker has pre-allocated its KV cache, and both sides
poll once per scheduler iteration. This reads that path at the rows' releases and prices it from the loop structure,
with the decode step the model already prices; nothing is fitted and no shipped value changes.

**The path, read in sgl-project/sglang at the rows' releases** (the PyPI wheels sglang 0.5.5.post2, 0.5.8 and
0.5.8.post1; ``disaggregation/`` is byte-identical between 0.5.8 and 0.5.8.post1, and 0.5.5.post2's loops have the
same structure; facts, no code copied):

1. *Bootstrap.* The Dynamo 0.8.1 frontend the srt-slurm recipes run (NVIDIA/srt-slurm @5063eb43
   ``recipes/gb200-fp4/1k1k/mid-curve.yaml``: ``frontend.type: dynamo``, ``dynamo.version: 0.8.1``) hands a request
   to the decode worker's handler, which sends it to a prefill worker, waits for the prefill handler's first
   yield (the bootstrap host, port and room) and only then submits it to its own engine (ai-dynamo/dynamo
   ``components/src/dynamo/sglang/request_handlers/decode_handler.py``). The prefill engine puts the request in its
   ``PrefillBootstrapQueue``; its sender stays ``Bootstrapping`` until the decode side's message arrives
   (``nixl/conn.py``: the prefill manager's bootstrap thread sets ``WaitingForInput`` when the decode receiver's
   ``init`` sends the pre-allocated page indices).
2. *Pre-allocation, once per decode iteration.* The decode scheduler's loop (``event_loop_overlap_disagg_decode``,
   overlap on: the recipes pass no ``--disable-overlap-schedule`` and nothing in ``server_args.py`` turns it off
   for these flags) receives requests and runs ``process_decode_queue`` → ``DecodePreallocQueue.pop_preallocated``
   once at the top of each iteration (``disaggregation_decode_polling_interval`` default 1), i.e. once per decode
   step: a request arriving mid-step waits for the step in flight to end, on average half a step.
3. *Prefill admission, once per prefill iteration.* ``PrefillBootstrapQueue.pop_bootstrapped`` runs at the top of
   each prefill iteration (both loops); an idle prefill worker spins, a busy one picks the request up at the next
   step, which a queued request waits for anyway.
4. *First token.* The decode worker polls the finished transfer at the top of an iteration
   (``DecodeTransferQueue.pop_transferred``, half a step on average), runs the request as a "prebuilt" batch (with
   attention DP an idle forward beside the other ranks' decode step) and streams the prefill's token when that
   batch's result is processed, one iteration later (``process_batch_result_prebuilt`` → ``stream_output``; the
   recipes' ``stream-interval: 50`` still sends the first token, ``len(output_ids) % 50 == 1``).

**Slot limits do not bind.** The prefill worker's metadata slots are 2 x its ``max_running_requests``
(``scheduler.py``: ``buffer_size = self.max_running_requests * 2``; the recipes set 30,000), the decode worker's
2 x its request pool; the decode gate (``pop_preallocated``: the input plus ``num-reserved-decode-tokens``, 112 in
the recipes, must fit in the free KV) is the KV capacity the model already caps the decode batch with.

So the decode loop sits in a request's TTFT for :data:`LOOP_STEPS_SOURCE` decode steps on average (½ at
pre-allocation, ½ at the transfer poll, 1 for the prebuilt iteration) where the model holds ½ (serve/disagg.py: the
first token leaves with the next step): at most 1.5 extra decode steps a request (:data:`EXTRA_STEPS_HIGH`), at
least the ½ step of the pre-allocation poll (:data:`EXTRA_STEPS_LOW`, if the prebuilt iteration is already what the
model's half step stands for). That is a latency, not a capacity: at load it overlaps the prefill queue, so the
what-if below (which adds it to every row) is an upper bound of its effect.

Shipped since (round 28, sglwait28): serve/handshake.py prices the term in the model and the simulator, so a validate
CSV of a later main already holds it; this what-if reads a CSV of main @fb94a12 or earlier.

Run: python scripts/sgl_bootstrap_wait.py VALIDATE.csv  (a ``jalapeno validate -o`` CSV; instant)
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pandas as pd

#: decode steps of a request's TTFT spent in the decode worker's loop, per the source (module docstring, 2 + 4):
#: the pre-allocation poll's residual (½), the transfer poll's residual (½) and the prebuilt iteration (1)
LOOP_STEPS_SOURCE = 2.0
#: decode steps the model already holds (serve/disagg.py: ``tau / 2``, the first token leaves with the next step)
LOOP_STEPS_MODEL = 0.5
#: extra decode steps a request: the source's loop minus the model's half step (an upper bound) ...
EXTRA_STEPS_HIGH = LOOP_STEPS_SOURCE - LOOP_STEPS_MODEL
#: ... and the pre-allocation poll alone (a lower bound)
EXTRA_STEPS_LOW = 0.5
#: load bands, users per prefill GPU (round 26's table)
BANDS = ((0, 2), (2, 16), (16, 128), (128, np.inf))

_POOL = re.compile(r"(?P<pool>[PD]) (?P<n>\d+)x\(attn TP(?P<tp>\d+) DP(?P<dp>\d+)")


def pool_gpus(deployment: str, pool: str = "P") -> int:
    """GPUs of the prefill (``P``) or decode (``D``) pool in a validate ``deployment`` label.

    >>> pool_gpus("disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]")
    16
    >>> pool_gpus("disagg P 4x(attn TP1 DP4 · MoE TP1 EP4) + D 1x(attn TP1 DP32 · MoE TP1 EP32) [fp4]", "D")
    32
    """
    for m in _POOL.finditer(deployment):
        if m["pool"] == pool:
            return int(m["n"]) * int(m["tp"]) * int(m["dp"])
    raise ValueError(f"deployment {deployment!r}: no {pool} pool of the form 'Nx(attn TPa DPb'")


def extra_s(decode_step_s, steps: float = EXTRA_STEPS_HIGH):
    """The handshake's extra TTFT over the model's, s: ``steps`` decode steps of ``decode_step_s`` (s; array or float).

    >>> extra_s(0.01), extra_s(0.01, EXTRA_STEPS_LOW)
    (0.015, 0.005)
    """
    if steps < 0:
        raise ValueError(f"steps: {steps} < 0 (decode steps a request waits; use EXTRA_STEPS_LOW or _HIGH)")
    return np.asarray(decode_step_s, dtype=float) * steps if np.ndim(decode_step_s) else float(decode_step_s) * steps


def sglang_rows(csv: str) -> pd.DataFrame:
    """The unflagged aiconfigurator SGLang disaggregated TTFT rows of a validate CSV with the model's decode step
    (``tau_s``: the row's predicted TPOT; none of these rows runs MTP) and users per prefill GPU (``load``)."""
    d = pd.read_csv(csv)
    d = d[d["quality"].isna()] if "quality" in d else d
    keep = (d["source"] == "aiconfigurator") & (d["mode"] == "disagg") & d["stack"].astype(str).str.contains("sglang")
    t = d[keep & (d["metric"] == "ttft_s")]
    tp = d[keep & (d["metric"] == "tpot_s")][["id", "predicted"]].rename(columns={"predicted": "tau_s"})
    t = t.merge(tp, on="id").dropna(subset=["predicted", "tau_s"])
    if t["deployment"].str.contains("MTP").any():
        raise ValueError("an SGLang disaggregated row runs MTP: its decode step is TPOT x tokens a step, not TPOT")
    return t.assign(load=t["concurrency"] / t["deployment"].map(pool_gpus))


def summarise(t: pd.DataFrame, steps: float) -> pd.DataFrame:
    """Median |error| and median error (%) of each group as shipped and with ``steps`` extra decode steps added."""
    after = (t["predicted"] + extra_s(t["tau_s"].to_numpy(), steps)) / t["measured"] - 1
    t = t.assign(after=after)
    g = t.groupby(["system", "framework", "precision"])
    return pd.DataFrame(
        {
            "n": g.size(),
            "med": 100 * g["error"].apply(lambda e: e.abs().median()),
            "bias": 100 * g["error"].median(),
            "med_after": 100 * g["after"].apply(lambda e: e.abs().median()),
            "bias_after": 100 * g["after"].median(),
        }
    ).round(1)


def gap_share(t: pd.DataFrame, steps: float = EXTRA_STEPS_HIGH, max_load: float = 16.0) -> pd.DataFrame:
    """At low load (users per prefill GPU ≤ ``max_load``, where queueing is small) on the under-predicted rows: the
    median measured − predicted gap (ms), the median handshake extra (ms) and the median share of the gap it is."""
    lo = t[(t["load"] <= max_load) & (t["measured"] > t["predicted"])]
    gap = lo["measured"] - lo["predicted"]
    ext = pd.Series(extra_s(lo["tau_s"].to_numpy(), steps), index=lo.index)
    g = pd.DataFrame(
        {"system": lo["system"], "precision": lo["precision"], "gap": gap, "extra": ext, "share": ext / gap}
    ).groupby(["system", "precision"])
    return pd.DataFrame(
        {
            "n": g.size(),
            "gap_ms": 1e3 * g["gap"].median(),
            "extra_ms": 1e3 * g["extra"].median(),
            "share_pct": 100 * g["share"].median(),
        }
    ).round(1)


def by_band(t: pd.DataFrame, steps: float) -> pd.DataFrame:
    """GB200/GB300 rows by users per prefill GPU (:data:`BANDS`): median |error| / error (%) before and after."""
    t = t[t["system"].str.startswith("gb")]
    t = t.assign(
        after=(t["predicted"] + extra_s(t["tau_s"].to_numpy(), steps)) / t["measured"] - 1,
        band=pd.cut(t["load"], [b[0] for b in BANDS] + [np.inf], right=True),
    )
    g = t.groupby("band", observed=True)
    return pd.DataFrame(
        {
            "n": g.size(),
            "med": 100 * g["error"].apply(lambda e: e.abs().median()),
            "bias": 100 * g["error"].median(),
            "med_after": 100 * g["after"].apply(lambda e: e.abs().median()),
            "bias_after": 100 * g["after"].median(),
        }
    ).round(1)


def main(csv: str) -> None:
    t = sglang_rows(csv)
    pd.set_option("display.width", 200)
    for name, steps in (
        ("lower bound, +0.5 decode step", EXTRA_STEPS_LOW),
        ("upper bound, +1.5 decode steps", EXTRA_STEPS_HIGH),
    ):
        print(f"\n== every SGLang disaggregated aiconfigurator row, TTFT: shipped -> {name} a request ==")
        print(summarise(t, steps).to_string())
        print(f"\n-- GB200/GB300 by users per prefill GPU ({name}) --")
        print(by_band(t, steps).to_string())
    print(
        "\n== low load (<= 16 users per prefill GPU), under-predicted rows: the gap and the handshake's +1.5 steps =="
    )
    print(gap_share(t).to_string())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/sgl_bootstrap_wait.py VALIDATE.csv")
    main(sys.argv[1])
