"""TensorRT-LLM's per-TP-rank step cost by engine release and host CPU: which rows pay it (issue 18, round 27, tprank27).

Question: data/stack_fits.toml fits the ``trtllm`` profile a per-step cost per tensor-parallel rank beyond the first,
``tp_rank_step_s`` (75 µs; cost/step.step_overhead). Round 27's kimitrt27 found, as a what-if, that the Kimi K2.5 GB200
rows (Dynamo's TensorRT-LLM runtime 1.1.0-dev.2), GB300 DeepSeek-R1 0.8.1.post2 and B200 gpt-oss-120b 1.2.0rc2 fit better
without it, Hopper and older rows worse, and read it as "TensorRT-LLM >= 1.2 on Blackwell does not pay it". Is there a
release (or host CPU) rule, and does the data hold it?

1. The release each row ran (:func:`trtllm_release`): a ``tensorrt-llm/release`` image states it (fit/aic_rows.
   trtllm_release, the point's ``engine_version``); a Dynamo TensorRT-LLM runtime image (aiconfigurator's ``backend_version``
   is then the Dynamo version, e.g. ``trtllm 0.8.1.post2``) ships the release of :data:`DYNAMO_RUNTIME_TRTLLM` (NVIDIA Dynamo
   support matrix); rows with neither stay unknown ("").
2. Low-load TPOT (at most :data:`LOW_LOAD_SEQS` sequences per decode worker, attention DP 1: where a per-step host cost is
   the largest share of the step), per (system, host CPU, model, mode, precision, MTP, release, attention TP): rows, median
   measured TPOT, the model's, the model's with ``tp_rank_step_s`` = 0, and their signed errors.
3. The rule the what-if suggests, as a what-if (:func:`rule_applies`: ``tp_rank_step_s`` = 0 where the release is at least
   :data:`RULE_SINCE` on a Blackwell chip, else the fitted value): TPOT median |error| / median signed error before and after
   of the rows it moves, per (system, model, release) and load (low: at most :data:`LOW_LOAD_SEQS` sequences per decode
   attention rank; high: more), and of every matched TensorRT-LLM row.

Nothing is fitted or written; predictions do not move. Needs the aiconfigurator-core package (pip install -e ".[calibrate]").
Run: python scripts/trt_rank_cost_by_release.py   (about 30 s)
"""

from __future__ import annotations

import re
from dataclasses import replace

import pandas as pd

from jalapeno.errors import SpecError
from jalapeno.fit.aic_release import DYNAMO_RUNTIME_TRTLLM
from jalapeno.fit.stack_fit import load_points
from jalapeno.fit.validate import point_release, point_stack, predict_points
from jalapeno.specs.engine_versions import version_key
from jalapeno.specs.stacks import stack_for_framework

#: Dynamo TensorRT-LLM runtime image -> the TensorRT-LLM release it ships: moved to fit/aic_release.py (round 32), where
#: fit/validate.point_release reads it (re-exported here for this script's readers).

#: Host CPU behind each system's GPUs (data/systems/*.toml host-memory tiers): GB200/GB300 one Grace (aarch64) per two
#: GPUs over NVLink-C2C; the HGX systems x86 hosts over PCIe.
HOST_CPU = {"gb200-nvl72": "grace", "gb300-nvl72": "grace", "b200": "x86", "b300": "x86", "h100": "x86", "h200": "x86"}
BLACKWELL = frozenset({"b200", "b300", "gb200-nvl72", "gb300-nvl72"})
#: Sequences per decode worker (attention DP 1) counted as low load in table 2.
LOW_LOAD_SEQS = 8
#: The what-if rule of table 3: no per-rank cost from this release on, on Blackwell (kimitrt27's lead).
RULE_SINCE = "1.2.0rc2"


def trtllm_release(framework: str, stated: str = "") -> str:
    """The TensorRT-LLM release a row ran: ``stated`` (its image's or label's, fit/validate.point_release) when set, else the release
    the Dynamo runtime named by ``framework`` ships (:data:`DYNAMO_RUNTIME_TRTLLM`), else "" (unknown).

    >>> trtllm_release("trtllm 1.2.0rc2", "1.2.0rc2"), trtllm_release("trtllm 0.8.1.post2"), trtllm_release("trtllm unstated")
    ('1.2.0rc2', '1.2.0rc6.post2', '')
    """
    if stated:
        return stated
    return DYNAMO_RUNTIME_TRTLLM.get(framework.split()[-1] if framework else "", ("", ""))[0]


def rule_applies(system: str, release: str, since: str = RULE_SINCE) -> bool:
    """Whether table 3's rule drops the per-rank cost: a Blackwell system running TensorRT-LLM ``since`` or later
    (an unknown or unparsable release keeps the cost).

    >>> rule_applies("b200", "1.2.0rc6.post2"), rule_applies("h100", "1.2.0rc6.post3"), rule_applies("b200", "1.1.0rc2.post2")
    (True, False, False)
    """
    if system not in BLACKWELL or not release:
        return False
    try:
        return version_key(release) >= version_key(since)
    except SpecError:
        return False


def _labelled(df: pd.DataFrame, by_id: dict) -> pd.DataFrame:
    """TPOT rows of a predict_points frame with release, host CPU, decode attention TP / DP and load per worker."""
    df = df[df.metric == "tpot_s"].copy()
    df["release"] = [trtllm_release(by_id[i].framework, point_release(by_id[i])) for i in df.id]
    df["host"] = df.system.map(HOST_CPU).fillna("?")
    pools = df.deployment.str.findall(r"attn TP(\d+) DP(\d+)")
    df["tp"] = pools.map(lambda p: int(p[-1][0]))
    df["dp"] = pools.map(lambda p: int(p[-1][1]))
    workers = df.deployment.str.extract(r"D (\d+)x", expand=False).fillna("1").astype(int)
    df["seqs_per_worker"] = df.concurrency / workers / df.dp
    df["prec"] = df.deployment.map(lambda d: (re.findall(r"\[([^\]]+)\]", d) or ["?"])[-1])
    df["mtp"] = df.deployment.str.contains("MTP")
    return df


def _errors(g: pd.DataFrame, col: str) -> tuple[float, float]:
    e = (g[col] / g.measured - 1).dropna()
    return 100 * e.abs().median(), 100 * e.median()


def tables() -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Tables 2 and 3 (module docstring) and the overall line of table 3."""
    pts = [p for p in load_points() if stack_for_framework(p.framework, p.system).name == "trtllm"]
    by_id = {p.id: p for p in pts}
    cur = predict_points(pts)
    zero = predict_points(pts, stack_of=lambda p: replace(point_stack(p), tp_rank_step_s=0.0))
    df = _labelled(cur, by_id)
    df["zero"] = df.id.map(zero[zero.metric == "tpot_s"].set_index("id").predicted)
    df["rule"] = [z if rule_applies(s, r) else c for z, c, s, r in zip(df.zero, df.predicted, df.system, df.release)]

    lo = df[(df.seqs_per_worker <= LOW_LOAD_SEQS) & (df.dp == 1)]
    keys = ["system", "host", "model", "mode", "prec", "mtp", "release", "tp"]
    rows = []
    for k, g in lo.groupby(keys):
        meas, mod, z = (1e3 * g[c].median() for c in ("measured", "predicted", "zero"))
        rows.append((*k, len(g), meas, mod, z, 100 * (mod / meas - 1), 100 * (z / meas - 1)))
    low = pd.DataFrame(rows, columns=[*keys, "n", "meas_ms", "model_ms", "no_rank_ms", "err_%", "err_no_rank_%"])

    rows = []
    df["load"] = (df.seqs_per_worker > LOW_LOAD_SEQS).map({False: "low", True: "high"})
    for k, g in df[[rule_applies(s, r) for s, r in zip(df.system, df.release)]].groupby(
        ["system", "model", "release", "load"]
    ):
        rows.append((*k, len(g), *_errors(g, "predicted"), *_errors(g, "rule")))
    rule = pd.DataFrame(
        rows, columns=["system", "model", "release", "load", "n", "mape_%", "bias_%", "rule_mape_%", "rule_bias_%"]
    )
    a, b = _errors(df, "predicted"), _errors(df, "rule")
    overall = (
        f"all {len(df)} TensorRT-LLM TPOT rows: median |error| / bias {a[0]:.1f}% / {a[1]:+.1f}% shipped, "
        f"{b[0]:.1f}% / {b[1]:+.1f}% with the rule"
    )
    return low, rule, overall


def main() -> None:
    pd.set_option("display.width", 220)
    pd.set_option("display.max_rows", 500)
    print("== 1. Dynamo TensorRT-LLM runtimes -> TensorRT-LLM release")
    for dyn, (rel, src) in DYNAMO_RUNTIME_TRTLLM.items():
        print(f"  {dyn:15s} {rel:15s} {src}")
    low, rule, overall = tables()
    print(f"\n== 2. Low-load TPOT (<= {LOW_LOAD_SEQS} sequences per decode worker, attention DP 1), medians")
    print(low.round(2).to_string(index=False))
    print(f"\n== 3. What-if rule: tp_rank_step_s = 0 on Blackwell from TensorRT-LLM {RULE_SINCE} (TPOT; rows it moves)")
    print(rule.round(1).to_string(index=False))
    print(overall)


if __name__ == "__main__":
    main()
