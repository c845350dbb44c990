"""TensorRT-LLM's MLA KV hand-off fan-out priced by pool layout, and its effect on the TTFT groups it touches (issue 18,
round 36, kvfan36; shipped: Efficiency.kv_handoff_fanout, serve/disagg.handoff_copies).

Part 1 (no input): the hand-off time of one DeepSeek-R1 request (FP8 KV, 35,136 B a token) at ISL 1k and 8k for the
disaggregated TensorRT-LLM layouts the rows ran, on B200 / H200 (pools that span nodes: one 50 GB/s NIC per GPU) and
GB200 (NVLink), as the even spread over min(prefill, decode) chips (the model before round 36) and with the fan-out:
max(1, t_d / t_p) whole copies from each prefill rank of the request's attention group.

Part 2 (two validate CSVs, ``jalapeno validate --json -o FILE`` without and with the fan-out, or ``--held-out``): the
median |error| / median error of each TensorRT-LLM disaggregated TTFT group before and after, on the rows' split as
given (``--ho``: only rows not in the fit split and unflagged, as the issue judges).
Run: python scripts/kv_handoff_fanout36.py [--before BEFORE.csv --after AFTER.csv [--ho]]
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import numpy as np
import pandas as pd

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.layout import Layout
from jalapeno.serve.disagg import handoff_copies, kv_transfer_s
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack

#: (name, prefill layout, decode layout) of the TensorRT-LLM disaggregated DeepSeek-R1 pools in the rows
LAYOUTS = (
    ("DEP4 -> TEP8", Layout(dp=4, ep=4), Layout(tp=8, ep=8)),
    ("DEP8 -> TEP8", Layout(dp=8, ep=8), Layout(tp=8, ep=8)),
    ("DEP4 -> DEP8", Layout(dp=4, ep=4), Layout(dp=8, ep=8)),
    ("TP4 -> TEP8", Layout(tp=4, ep=4), Layout(tp=8, ep=8)),
    ("TP8 -> DEP8", Layout(tp=8, ep=8), Layout(dp=8, ep=8)),
)


def handoff_table(systems=("b200", "h200", "gb200-nvl72"), isls=(1024.0, 8192.0)) -> pd.DataFrame:
    """One row per (system, layout, ISL): the copies per sender and the hand-off time, ms, spread and fanned out.
    The deployment is one prefill and one decode instance (their chips together set the link level)."""
    model, prec = load_model("deepseek-r1"), get_precision("fp8")
    rows = []
    for system in systems:
        on = load_pricer(system, stack=get_stack("dynamo-trtllm"))
        off = on.with_efficiency(replace(on.efficiency, kv_handoff_fanout=False))
        for name, pre, dec in LAYOUTS:
            c = handoff_copies(model, on, pre, dec)
            total = pre.chips + dec.chips
            for isl in isls:
                rows.append(
                    dict(
                        system=system,
                        layout=name,
                        isl=int(isl),
                        copies=c,
                        spread_ms=1e3 * kv_transfer_s(model, off, prec, isl, pre.chips, dec.chips, total),
                        fanout_ms=1e3 * kv_transfer_s(model, on, prec, isl, pre.chips, dec.chips, total, c),
                    )
                )
    return pd.DataFrame(rows)


#: the TensorRT-LLM disaggregated TTFT groups of the brief: (name, source, systems)
GROUPS = (
    ("aiconfigurator B200", "aiconfigurator", ("b200",)),
    ("aiconfigurator H200", "aiconfigurator", ("h200",)),
    ("aiconfigurator GB200", "aiconfigurator", ("gb200-nvl72",)),
    ("aiconfigurator GB300", "aiconfigurator", ("gb300-nvl72",)),
    ("InferenceX B200/H200", "inferencex", ("b200", "h200")),
)


def group_errors(before: pd.DataFrame, after: pd.DataFrame, held_out: bool) -> pd.DataFrame:
    """Median |error| and median error, %, of each TensorRT-LLM disaggregated TTFT group (:data:`GROUPS`) before and
    after, matched on (id, metric); ``held_out``: rows not in the fit split and unflagged only."""
    key = ["id", "metric"]
    m = before.merge(after[key + ["error"]], on=key, suffixes=("_b", "_a"))
    m = m[(m.metric == "ttft_s") & (m["mode"] == "disagg") & m.framework.str.contains("trt", case=False)]
    if held_out:
        m = m[(m.split != "fit") & m.quality.isna()]
    out = []
    for name, source, systems in GROUPS:
        g = m[(m.source == source) & m.system.isin(systems)]
        eb, ea = 100 * g.error_b.to_numpy(float), 100 * g.error_a.to_numpy(float)
        moved = int((eb != ea).sum())
        stat = (lambda e: (float(np.median(abs(e))), float(np.median(e)))) if len(g) else (lambda e: (np.nan, np.nan))
        out.append(
            dict(
                group=name,
                n=len(g),
                moved=moved,
                **dict(zip(("med_before", "bias_before"), stat(eb))),
                **dict(zip(("med_after", "bias_after"), stat(ea))),
            )
        )
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", help="validate CSV without the fan-out")
    ap.add_argument("--after", help="validate CSV with it")
    ap.add_argument("--ho", action="store_true", help="held-out rows only (not in the fit split, unflagged)")
    a = ap.parse_args()
    pd.set_option("display.width", 160)
    print(handoff_table().round(2).to_string(index=False))
    if a.before and a.after:
        print()
        print(group_errors(pd.read_csv(a.before), pd.read_csv(a.after), a.ho).round(1).to_string(index=False))


if __name__ == "__main__":
    main()
