"""The Dynamo + TensorRT-LLM disaggregated request path priced from its loop structure, against the low-load TTFT
residual of every TensorRT-LLM disaggregated aiconfigurator row (issue 18, round 30, trtlow30; diagnosis, nothing fitted,
no prediction moves).

wave30 (docs/gap_aic_ttft.md) left the GB200/GB300 TensorRT-LLM disaggregated 1k/1k rows below their decode cap
under-predicted by a flat amount per request (GB300 config 417 +0.15-0.20 s, GB200 +0.05-0.07 s). This script holds
what the path at the rows' releases adds to the model's TTFT and tests whether a flat per-request term fits the rows.

**The path** (Dynamo 0.8.1.post2: the PyPI wheel ``ai-dynamo==0.8.1.post2`` pins ``tensorrt-llm==1.2.0rc6.post2``;
facts read in its ``dynamo/trtllm/request_handlers/handler_base.py`` and ``handlers.py``, and in NVIDIA/TensorRT-LLM
``tensorrt_llm/_torch/pyexecutor/py_executor.py`` — stored versions of 2025-2026 whose disaggregated loop is the same
in every one read; no code copied):

1. The frontend's prefill router sends the request to a prefill worker, whose handler sets ``max_tokens = 1``,
   ``request_type = "context_only"`` and ``streaming = False`` and yields once, with ``disaggregated_params``, when the
   context step's response is final (the executor answers a context-only request in the iteration that ran it and
   keeps it in ``ctx_in_transmission_requests`` until the KV is sent); prefill runs synchronously, decode after it.
2. The router sends a second request to a decode worker (``prefill_result`` → ``request_type = "generation_only"``).
   Its executor loop, once per iteration, fetches new requests, checks the transfers in flight
   (``_check_disagg_gen_transfer_status``: non-blocking, except when every active request is in transfer — an idle
   worker — when it waits for one), schedules, and allocates the new generation-only requests' KV and starts their
   transfer (``_prepare_disagg_gen_init`` → ``request_and_receive_async``): the receiver pulls, so the transfer starts
   at the first iteration top after the request arrives, U(0, τ_d) later (½ step on average; 0 on an idle worker).
3. At the first iteration top after the transfer completes (½ step on average: what the model's τ_d/2 holds), the
   request is scheduled, ``_prepare_disagg_gen_transmission_complete`` appends the context's first token and
   ``_handle_first_token_response`` sends it to the client *before* that iteration's forward step. The decode
   recipe's ``stream_interval`` (100 in NVIDIA/srt-slurm ``recipes/trtllm/gb300-fp4/1k1k/stp/
   ctx1_gen4_tep8_batch32_eplb0_mtp0.yaml``, config 417's concurrencies 12x48x96x192) does not delay it
   (``_handle_responses`` skips a generation-only request's first overlap iteration because that token was sent).

So the loop adds at most ½ decode step over the model (:data:`GEN_INIT_STEPS`): the generation-init poll.

**What it prints** (``python scripts/trt_disagg_loop_check.py VALIDATE.csv [--held-out]``, a ``jalapeno validate -o``
CSV; seconds): (A) per system and ISL/OSL, the unflagged non-MTP rows below 0.8 of their decode cap — the measured
minus predicted TTFT left, the decode step τ_d (the predicted TPOT), left/τ_d and the ½-step term's share of left;
(B) TTFT median |error| / median error with the ½-step term added to every row (an upper bound: the idle-worker case
would add nothing); (C) model-free pairs — for one system, release, precision and prefill layout, the lowest-load
1k/1k and 8k/1k rows below the cap with at most :data:`PAIR_MAX_USERS` users: a flat per-request term cancels in measured T(8k) − T(1k), so that difference
should match the model's, and the 8k row should be under-predicted by the same amount.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

#: decode steps the generation-init poll adds to the model's τ_d/2 (U(0, τ_d) before the transfer starts; module doc)
GEN_INIT_STEPS = 0.5
#: the load band (concurrency / decode cap) read as "low load": below it no cap or slot wait applies
LOW_LOAD = 0.8
#: the most users a model-free pair's rows may have (few users: little prefill queue or idle-start burst in either)
PAIR_MAX_USERS = 64


def _rows(csv: pd.DataFrame, held_out: bool) -> pd.DataFrame:
    from jalapeno.fit.validate import load_aiconfigurator

    aic = csv[(csv.source == "aiconfigurator") & (csv["mode"] == "disagg") & csv.framework.str.startswith("trtllm")]
    ttft = aic[(aic.metric == "ttft_s") & aic.quality.isna()]
    if held_out:
        ttft = ttft[ttft.split == "held_out"]
    tpot = aic[aic.metric == "tpot_s"].set_index("id").predicted
    out = []
    for p in load_aiconfigurator()[0]:
        if p.id not in set(ttft.id) or p.uses_mtp or p.id not in tpot.index:
            continue
        r = ttft[ttft.id == p.id].iloc[0]
        d = p.deployment
        cap = d.decode.workers * d.max_running * d.decode.layout.dp if d.max_running else np.nan
        lay = lambda pool: f"{pool.workers}x(tp{pool.layout.tp}dp{pool.layout.dp})"  # noqa: E731
        out.append(
            {
                "sys": p.system.split("-")[0],
                "rel": p.framework.split()[-1],
                "prec": p.precision,
                "isl_osl": f"{p.isl // 1024}k/{p.osl // 1024}k",
                "C": int(p.concurrency),
                "P": lay(d.prefill),
                "D": lay(d.decode),
                "load": p.concurrency / cap,
                "meas": r.measured,
                "pred": r.predicted,
                "tau": float(tpot[p.id]),
            }
        )
    df = pd.DataFrame(out, columns=["sys", "rel", "prec", "isl_osl", "C", "P", "D", "load", "meas", "pred", "tau"])
    df["left"] = df.meas - df.pred
    df["left_tau"] = df.left / df.tau
    df["term"] = GEN_INIT_STEPS * df.tau
    return df.sort_values(["sys", "rel", "isl_osl", "P", "D", "C"]).reset_index(drop=True)


def _err(pred, meas) -> str:
    e = pred / meas - 1
    return f"{100 * e.abs().median():.1f} / {100 * e.median():+.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("validate_csv")
    ap.add_argument("--held-out", action="store_true", help="only the rows the CSV's split marks held_out")
    args = ap.parse_args()
    df = _rows(pd.read_csv(args.validate_csv), args.held_out)
    low = df[df.load < LOW_LOAD]
    with pd.option_context("display.width", 220, "display.max_rows", 400, "display.float_format", "{:.3f}".format):
        print(f"(A) rows below {LOW_LOAD} of the decode cap (s; left = measured - predicted)")
        print(low.drop(columns=["term"]).to_string(index=False))
        g = low.groupby(["sys", "isl_osl"]).agg(
            n=("left", "size"),
            left_med=("left", "median"),
            tau_med=("tau", "median"),
            left_tau_med=("left_tau", "median"),
            term_med=("term", "median"),
        )
        g["term_share"] = g.term_med / g.left_med
        print("\nper system and ISL/OSL (low load)")
        print(g.to_string())
        print("\n(B) TTFT median |error| / median error, %: shipped -> + GEN_INIT_STEPS x tau_d on every row")
        for key, grp in df.groupby(["sys", "isl_osl"]):
            print(
                f"  {key[0]:6s} {key[1]:6s} n {len(grp):3d}: {_err(grp.pred, grp.meas)} -> "
                f"{_err(grp.pred + grp.term, grp.meas)}"
            )
        print(f"  all           n {len(df):3d}: {_err(df.pred, df.meas)} -> {_err(df.pred + df.term, df.meas)}")
        print(
            f"\n(C) model-free pairs: lowest-load 1k/1k and 8k/1k rows (C <= {PAIR_MAX_USERS}) of one system, release, "
            "precision, prefill layout; meas_d / pred_d = T(8k) - T(1k) measured / predicted, s"
        )
        pairs = []
        for key, grp in low[low.C <= PAIR_MAX_USERS].groupby(["sys", "rel", "prec", "P"]):
            a, b = grp[grp.isl_osl == "1k/1k"], grp[grp.isl_osl == "8k/1k"]
            if len(a) and len(b):
                a, b = a.loc[a.C.idxmin()], b.loc[b.C.idxmin()]
                pairs.append(
                    {
                        "sys": key[0],
                        "rel": key[1],
                        "prec": key[2],
                        "P": key[3],
                        "C_1k": a.C,
                        "C_8k": b.C,
                        "left_1k": a.left,
                        "left_8k": b.left,
                        "meas_d": b.meas - a.meas,
                        "pred_d": b.pred - a.pred,
                    }
                )
        print(pd.DataFrame(pairs).to_string(index=False) if pairs else "  none")


if __name__ == "__main__":
    main()
