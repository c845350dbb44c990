"""What-if (not shipped): a per-request host cost in every vLLM step, under vLLM's two possible overlap rules.

Runs ``jalapeno <args>`` (e.g. ``validate --json -o FILE``), or with ``--fit`` scripts/fit_stacks.py (which
rewrites data/stack_fits.toml: restore it with git afterwards), with every step priced by a pool of the ``vllm``
stack profile (CUDA: the efficiency set's source names ``stack vllm``, ``vllm@<release>`` or ``vllm+ar_rms``;
not ``vllm-rocm``) given a host cost of ``HOST_US`` µs per scheduled request (decoding + prefilling sequences per
engine core, i.e. per attention-DP rank):

    HOST_RULE=add  step = step + h·n                              (host work in series with the GPU step)
    HOST_RULE=max  step = max(step, step_overhead + h·n)          (host work of step k+1 overlapped with the
                                                                   GPU's step k, vLLM's async scheduling:
                                                                   the GPU waits only when the host is slower)

n = (decode_seqs + prefill_seqs) / dp, step_overhead = cost/step.step_overhead (the profile's per-step cost).
Both the step latency and the interval between steps get it; the attribution books it as ``overhead``.
No source gives h for the rows' releases (docs/gap_aic_itl.md, "A per-request host cost in vLLM's step (round 25,
vllmcpu25): not sourced, not held, nothing shipped"): the values run are what MiniMax-M2.5's rows ask for, to
show what each rule does elsewhere.

``--bound FILE`` (a per-point CSV of ``jalapeno validate -o FILE``; nothing patched) prints, for the
aiconfigurator TPOT rows of MiniMax-M2.5 on vLLM (``mapping`` matched), two checks of a host cost:

1. ``tp_bound``: a host cost that does not depend on TP, overlapped by the max() rule, makes a step no slower
   than the fastest TP layout of the same (system, release, precision, ISL/OSL, concurrency) measured:
   H <= min over layouts of the measured TPOT. Per layout, the deficit (measured - predicted TPOT, ms) and the
   most of it that rule can explain, max(0, min(H, measured) - predicted); ``share`` = explained / deficit.
2. ``context``: the deficit at 8k/1k against 1k/1k at the same (system, release, precision, layout,
   concurrency); a per-request host cost does not grow with the prompt (each step's host work per request is
   the same at 1k and 8k of context).

Run: HOST_RULE=add HOST_US=20 python scripts/vllm_host_whatif.py validate --json -o FILE    (~30 s)
     HOST_RULE=add HOST_US=20 python scripts/vllm_host_whatif.py --fit                     (a few minutes)
     python scripts/vllm_host_whatif.py --bound FILE                                       (seconds)
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import replace

import numpy as np
import pandas as pd

from jalapeno.cost import step as S

RULE = os.environ.get("HOST_RULE", "add")
H_S = float(os.environ.get("HOST_US", "0")) * 1e-6
#: the CUDA vLLM profile in an efficiency set's source (specs/stacks.Stack.apply: "... + stack NAME"), not vllm-rocm
VLLM = re.compile(r"stack vllm(?!-)")


def with_host(sc: S.StepCost, eff, layout, batch: S.Batch) -> S.StepCost:
    """``sc`` with the host cost of the module docstring added by ``RULE``."""
    n = (np.asarray(batch.decode_seqs, dtype=float) + np.asarray(batch.prefill_seqs, dtype=float)) / layout.dp
    host = H_S * n
    if RULE == "add":
        extra = host
    elif RULE == "max":
        extra = np.maximum(0.0, S.step_overhead(eff, layout) + host - sc.step_time_s)
    else:
        raise SystemExit(f"HOST_RULE must be add or max, not {RULE!r}")
    att = dict(sc.attribution_s)
    att["overhead"] = att["overhead"] + extra
    return replace(sc, step_time_s=sc.step_time_s + extra, interval_s=sc.interval_s + extra, attribution_s=att)


def install() -> None:
    """Wrap cost/step._step_cost (every step_cost call resolves it at call time)."""
    orig = S._step_cost

    def patched(model, pricer, layout, precision, batch, *args):
        sc = orig(model, pricer, layout, precision, batch, *args)
        eff = pricer.efficiency
        return with_host(sc, eff, layout, batch) if H_S > 0 and VLLM.search(eff.source or "") else sc

    S._step_cost = patched


def _minimax_rows(csv: str) -> pd.DataFrame:
    """MiniMax-M2.5's matched aiconfigurator vLLM TPOT rows of ``csv``, averaged per (system, release, precision,
    ISL/OSL, layout, concurrency); ms, with the layout's TP."""
    d = pd.read_csv(csv)
    a = d[
        d.source.str.startswith("aic")
        & (d.metric == "tpot_s")
        & (d["mapping"] == "matched")
        & (d.model == "minimax-m2.5")
        & d.framework.str.startswith("vllm")
    ].copy()
    a["layout"] = a.deployment.str.extract(r"(attn TP\d+ DP\d+ · MoE TP\d+ EP\d+)")[0]
    a["tp"] = a.layout.str.extract(r"attn TP(\d+)")[0].astype(int)
    a["shape"] = a.isl.astype(int).astype(str) + "/" + a.osl.astype(int).astype(str)
    keys = ["system", "framework", "precision", "shape", "concurrency", "layout", "tp"]
    g = a.groupby(keys, as_index=False)[["measured", "predicted"]].mean()
    g["meas_ms"], g["pred_ms"] = g.measured * 1e3, g.predicted * 1e3
    return g.drop(columns=["measured", "predicted"])


def tp_bound(csv: str, min_conc: float = 128) -> pd.DataFrame:
    """Check 1 of the module docstring at concurrency >= ``min_conc``, for groups with two TP sizes or more."""
    g = _minimax_rows(csv)
    g = g[g.concurrency >= min_conc]
    grp = ["system", "framework", "precision", "shape", "concurrency"]
    g = g[g.groupby(grp).tp.transform("nunique") >= 2].copy()
    g["host_max_ms"] = g.groupby(grp).meas_ms.transform("min")
    g["deficit_ms"] = g.meas_ms - g.pred_ms
    g["explained_ms"] = np.maximum(0.0, np.minimum(g.host_max_ms, g.meas_ms) - g.pred_ms)
    return g.round(2)


def context(csv: str, min_conc: float = 128) -> pd.DataFrame:
    """Check 2 of the module docstring: deficit (ms) at 1k/1k and 8k/1k side by side, and their ratio."""
    g = _minimax_rows(csv)
    g = g[(g.concurrency >= min_conc) & g["shape"].isin(["1024/1024", "8192/1024"])]
    g["deficit_ms"] = g.meas_ms - g.pred_ms
    p = (
        g.pivot_table(
            index=["system", "framework", "precision", "layout", "concurrency"], columns="shape", values="deficit_ms"
        )
        .dropna()
        .reset_index()
    )
    p["ratio"] = p["8192/1024"] / p["1024/1024"]
    return p.round(2)


def main() -> None:
    if sys.argv[1:2] == ["--bound"]:
        pd.set_option("display.width", 250)
        pd.set_option("display.max_rows", 500)
        t = tp_bound(sys.argv[2])
        print(t.to_string(index=False), "\n")
        pos = t.deficit_ms > 0
        print(
            f"max() rule, TP-independent host cost: explains {t.explained_ms[pos].sum():.1f} of "
            f"{t.deficit_ms[pos].sum():.1f} ms of deficit over {int(pos.sum())} rows with a deficit\n"
        )
        print(context(sys.argv[2]).to_string(index=False))
        return
    install()
    if sys.argv[1:2] == ["--fit"]:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import fit_stacks

        fit_stacks.main(dry_run=False)
        return
    from jalapeno.cli.app import main as cli

    cli()


if __name__ == "__main__":
    main()
