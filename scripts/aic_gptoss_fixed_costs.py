"""Which fitted fixed cost carries the B200 gpt-oss-120b aggregated misses (issue 18, round 15; no prediction moves).

The aiconfigurator B200 gpt-oss-120b aggregated rows (TensorRT-LLM 1.2.0rc2*, vLLM 0.15.1, unstated releases)
err interactivity 10.0% / −9.1% and TTFT 34.4% / +28.1% (median / bias, main @87a0b93), while their modelled
kernels are anchored on measured ones (the routed experts on TRT-LLM-gen's W4A8 MXFP4 table, the TP all-reduces
on TensorRT-LLM's own, cost/moe_backend.py, cost/engine_allreduce.py). Three tables, each a what-if on the
stack profiles the validation uses (fit/validate.point_stack), nothing fitted or written:

1. Low-load TPOT (concurrency <= 8, attention DP 1) of every matched aggregated TRT-LLM / vLLM aiconfigurator row
   of the stack fits (fit/stack_fit.load_points), per (engine, system, model, precision, attention TP): rows,
   median measured TPOT, the model's, and the model's with the per-TP-rank step cost ``tp_rank_step_s`` set to 0
   (cost/step.step_overhead; data/stack_fits.toml: TRT-LLM 0.1125 ms, vLLM 0.125 ms per rank beyond the first).
2. Low-load TTFT (concurrency <= 4, the rows the client front end is fitted on, fit/stack_fit.FRONTEND_MAX_CONCURRENCY)
   of the same rows, per (engine, client, system, model, ISL): median measured TTFT, the model's with no front end
   (``request_overhead_s`` = ``prompt_overhead_s_per_token`` = 0) and their difference, the front end each group
   implies, s.
3. The B200 gpt-oss-120b aggregated group (the validation's rows: fit/validate.load_aiconfigurator, matched)
   and every TRT-LLM InferenceX-export-client aggregated group, median |error| / median signed error, under:
   the shipped profiles; the TRT-LLM export client's front end replaced by :data:`WHATIF_FRONT_S` (no per-token
   part); ``tp_rank_step_s`` = 0; both.

Nothing here is a fix: one per-engine constant serves every model, and the what-ifs move other groups the wrong
way (docs/gap_aic_itl.md, docs/gap_aic_ttft.md, "B200 gpt-oss-120b aggregated (round 15)").
Needs the aiconfigurator-core package (pip install -e ".[calibrate]").
Run: python scripts/aic_gptoss_fixed_costs.py   (about 5 minutes)
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from jalapeno.fit.aic_quality import aic_decode_flags, aic_source_flags, aic_ttft_flags
from jalapeno.fit.stack_fit import FRONTEND_MAX_CONCURRENCY, load_points
from jalapeno.fit.validate import load_aiconfigurator, point_stack, predict_points
from jalapeno.specs.stacks import stack_for_framework

#: What-if front end of the TRT-LLM InferenceX-export client, s per request: the vLLM profile's fitted front end
#: for the same client at a 1k prompt (data/stack_fits.toml: 0.025 s + 6.25 µs x 1,024 = 0.031 s), rounded; the
#: same benchmark client (InferenceX's benchmark_serving) in front of another Python OpenAI server. A what-if only.
WHATIF_FRONT_S = 0.03
#: Engines whose profiles fit ``tp_rank_step_s`` (fit/stack_fit.PLAN).
ENGINES = ("trtllm", "vllm")
TPOT_MAX_CONCURRENCY = 8


def _engine(p) -> str:
    return stack_for_framework(p.framework, p.system).name


def _no_front(st):
    return replace(st, request_overhead_s=0.0, prompt_overhead_s_per_token=0.0)


def _front_whatif(st):
    if st.name.split("@")[0] == "trtllm" and st.clients.get("inferencex-db") is not None:
        return replace(st, request_overhead_s=WHATIF_FRONT_S, prompt_overhead_s_per_token=0.0)
    return st


def _labels(df: pd.DataFrame, pts) -> pd.DataFrame:
    by_id = {p.id: p for p in pts}
    return df.assign(
        engine=df.id.map(lambda i: _engine(by_id[i])),
        client=df.id.map(lambda i: by_id[i].timed_by),
        tp=df.deployment.str.extract(r"attn TP(\d+)", expand=False).astype(float),
        dp=df.deployment.str.extract(r"DP(\d+)", expand=False).astype(float),
        precision=df.deployment.str.extract(r"\[([^\],]+)", expand=False),
    )


def tpot_table(pts) -> pd.DataFrame:
    """Table 1: low-load TPOT with and without the per-TP-rank step cost, ms."""
    sel = [p for p in pts if (p.concurrency or 0) <= TPOT_MAX_CONCURRENCY]
    cur = predict_points(sel)
    zero = predict_points(sel, stack_of=lambda p: replace(point_stack(p), tp_rank_step_s=0.0))
    df = _labels(cur[cur.metric == "tpot_s"], sel)
    df["no_rank_cost"] = df.id.map(zero[zero.metric == "tpot_s"].set_index("id").predicted)
    df = df[df.dp == 1]
    g = df.groupby(["engine", "system", "model", "precision", "tp"])
    t = (g[["measured", "predicted", "no_rank_cost"]].median() * 1e3).round(2)
    t.insert(0, "n", g.size())
    return t


def ttft_table(pts) -> pd.DataFrame:
    """Table 2: low-load TTFT, the model's without a front end, and the front end each group implies, s."""
    sel = [p for p in pts if (p.concurrency or 0) <= FRONTEND_MAX_CONCURRENCY]
    df = predict_points(sel, stack_of=lambda p: _no_front(point_stack(p)))
    df = _labels(df[df.metric == "ttft_s"].dropna(subset=["predicted"]), sel)
    g = df.assign(implied=df.measured - df.predicted).groupby(["engine", "client", "system", "model", "isl"])
    t = g[["measured", "predicted", "implied"]].median().round(3)
    t.insert(0, "n", g.size())
    return t


def _summary(df: pd.DataFrame, flagged: dict[str, frozenset]) -> str:
    out = []
    for m in ("interactivity", "ttft_s"):
        d = df[df.metric == m]
        e = d[~d.id.isin(flagged[m])].error.dropna()
        out.append(f"{m} {100 * e.abs().median():5.1f}% / {100 * e.median():+5.1f}% (n {len(e)})")
    return "   ".join(out)


def whatif_table() -> list[str]:
    """Table 3: the B200 gpt-oss group and the TRT-LLM export-client groups under the what-ifs."""
    every = load_aiconfigurator()[0]
    source = frozenset(aic_source_flags(every))  # the validation's flags (fit/validation_run.py)
    flagged = {
        "ttft_s": source | frozenset(aic_ttft_flags(every)),
        "interactivity": source | frozenset(aic_decode_flags(every)),
    }
    pts = [p for p in every if p.mapping == "matched" and p.mode == "agg"]
    gptoss = [p for p in pts if p.system == "b200" and p.model == "gpt-oss-120b"]
    export = [
        p
        for p in pts
        if _engine(p) == "trtllm"
        and p.timed_by == "inferencex-db"
        and not (p.system == "b200" and p.model == "gpt-oss-120b")
    ]
    cases = {
        "shipped": lambda st: st,
        f"front end {WHATIF_FRONT_S} s": _front_whatif,
        "no per-rank cost": lambda st: replace(st, tp_rank_step_s=0.0),
        "both": lambda st: replace(_front_whatif(st), tp_rank_step_s=0.0),
    }
    lines = []
    for case, f in cases.items():
        lines.append(
            f"{case:18s} B200 gpt-oss-120b: "
            + _summary(predict_points(gptoss, stack_of=lambda p: f(point_stack(p))), flagged)
        )
        if case in ("shipped", f"front end {WHATIF_FRONT_S} s"):
            df = predict_points(export, stack_of=lambda p: f(point_stack(p)))
            for (s, m), g in df.groupby(["system", "model"]):
                lines.append(f"{'':18s}   TRT-LLM export {s} {m}: " + _summary(g, flagged))
    return lines


def main() -> None:
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    pts = [p for p in load_points() if p.source == "aiconfigurator" and p.mode == "agg" and _engine(p) in ENGINES]
    print(
        f"== 1. Low-load TPOT (C <= {TPOT_MAX_CONCURRENCY}, attention DP 1), median ms: measured, model, "
        "model without the per-TP-rank step cost"
    )
    print(tpot_table(pts).to_string())
    print(
        f"\n== 2. Low-load TTFT (C <= {FRONTEND_MAX_CONCURRENCY}), median s: measured, model without a front end, "
        "and the front end the group implies"
    )
    print(ttft_table(pts).to_string())
    print("\n== 3. What-ifs (median |error| / median signed error)")
    print("\n".join(whatif_table()))


if __name__ == "__main__":
    main()
