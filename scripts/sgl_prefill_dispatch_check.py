"""SGLang's disaggregated prefill DP dispatch, the low-load TTFT split and an eager-floor what-if, GB200/GB300 rows (issue 18).

Round 30 (sgldis30) diagnosis, nothing shipped. Three checks on the aiconfigurator GB200/GB300 DeepSeek-R1 SGLang
disaggregated rows (unflagged ``ttft_s``; docs/gap_aic_ttft.md, section "SGLang's disaggregated prefill at the rows' releases
... (round 30, sgldis30)"):

1. **Prefill dispatch.** At the rows' releases a disaggregated SGLang prefill server sends each request to
   attention-DP rank ``bootstrap_room % dp`` (0.5.5.post2: ``data_parallel_controller.round_robin_scheduler``
   with a disaggregation mode; 0.5.8 / 0.5.8.post1: ``server_args._handle_load_balance_method`` maps ``auto`` and the
   recipes' ``round_robin`` to ``follow_bootstrap_room`` in prefill mode; sgl-project/sglang PR #16110 made only the
   decode side round robin), and Dynamo 0.8.1's prefill handler draws the room with ``random.randint(0, 2**63 - 1)``
   when the router gives none (``dynamo/sglang/request_handlers/handler_base.py``, the ai-dynamo 0.8.1 wheel).
   So a prefill pool's ranks get Poisson-split arrivals, where the model (cost/adp_rank.busiest_rank_prompts)
   prices a balanced dispatch. :func:`busiest_ratio` is what that costs a step: the expected fullest rank of ``dp``
   independent Poisson(mu) counts over the balanced busiest rank max(mu, min(dp * mu, 1)).
2. **Low-load split.** The model's TTFT of the TP-prefill rows at C <= 16 split into the lone prompt, the front
   end and the idle-start burst (scripts/aic_ttft_split.predict_parts), against the measured TTFT (``--split``).
3. **An eager prompt floor, what-if** (``--floor``): every row repriced with ``Deployment.eager_prompt_call_s`` at
   :data:`FLOOR_RATES_S` (serve/limits.prompt_floor_s: a prompt step costs max(host calls x rate, GPU)), the host
   calls being cost/host_calls' count (TensorRT-LLM's DeepSeek-R1 forward, a stand-in: SGLang's was not counted);
   TTFT median |error| / median error by group, no refit. Nothing is written.

Per row of check 1: lambda = C / (TTFT + (OSL - 1) * TPOT) from the row's measured TTFT and TPOT (nominal OSL),
a prefill worker's arrival rate lambda / x, mu = its prompts per rank per step taken as (lambda / x) * S / dp with
S the model's lone-prompt service time (serve/disagg.pool_prefill_perf; a lower bound of a loaded step, so mu and
the ratio are lower bounds too). Run: ``python scripts/sgl_prefill_dispatch_check.py VALIDATE.csv [--split] [--floor]``
(the CSV of ``jalapeno validate -o``; about a minute with ``--split``, two more with ``--floor``).
"""

from __future__ import annotations

import argparse
import math
import re
import sys

import numpy as np

#: host seconds per call of the ``--floor`` what-if (0: as shipped; 24 µs: TensorRT-LLM's fitted rate,
#: fit/trt_prompt_graphs.TRTLLM_EAGER_CALL_S, and half and 1.5x it)
FLOOR_RATES_S = (0.0, 12e-6, 24e-6, 36e-6)
#: the rows' prefill pool label: workers, attention TP, attention DP
_POOL = re.compile(r"P (\d+)x\(attn TP(\d+) DP(\d+)")


def expected_max_poisson(mu: float, n: int, kmax: int = 400) -> float:
    """E[max of ``n`` independent Poisson(``mu``) counts] = sum_k (1 - F(k)^n) over k >= 0 (exact to ``kmax``).

    >>> round(expected_max_poisson(1.0, 1), 6)  # one rank: the mean
    1.0
    >>> round(expected_max_poisson(0.5, 2), 4)  # 0.6321 + 0.1723 + 0.0286 + 0.0035 + 0.0003 (F(0) = e^-0.5, ...)
    0.8368
    """
    if mu <= 0:
        return 0.0
    k = np.arange(kmax)
    logp = -mu + k * math.log(mu) - np.array([math.lgamma(i + 1) for i in k])
    cdf = np.minimum(np.cumsum(np.exp(logp)), 1.0)
    return float(np.sum(1.0 - cdf**n))


def busiest_ratio(mu: float, dp: int) -> float:
    """Fullest-rank prompts of a random (Poisson-split) dispatch over the model's balanced busiest rank,
    max(mu, min(dp * mu, 1)) (cost/adp_rank.busiest_rank_prompts at n = dp * mu); 1 where there is no load.

    >>> round(busiest_ratio(0.25, 4), 3)  # one prompt a step: 1 - e^-1 + 0.1019 + 0.0086 + 0.0006 over 1
    0.743
    >>> round(busiest_ratio(4.0, 4), 2)  # 16 a step: E[max of 4 Poisson(4)] = 6.12 over 4
    1.53
    """
    bal = max(mu, min(dp * mu, 1.0))
    return expected_max_poisson(mu, dp) / bal if bal > 0 else 1.0


def dispatch_rows(csv_path: str) -> list[dict]:
    """The unflagged GB200/GB300 SGLang disaggregated rows of ``csv_path`` with an attention-DP prefill pool:
    id, workload, C, pool (x, tp, dp), measured TTFT and TPOT, signed TTFT error."""
    import pandas as pd

    df = pd.read_csv(csv_path)
    df = df[
        df.system.isin(["gb200-nvl72", "gb300-nvl72"])
        & (df["mode"] == "disagg")
        & df.framework.str.startswith("sglang")
        & (df.source != "inferencex")
    ]
    out = []
    for rid, g in df.groupby("id"):
        m = g.set_index("metric")
        if "ttft_s" not in m.index or "tpot_s" not in m.index or isinstance(m.loc["ttft_s", "quality"], str):
            continue
        pool = _POOL.search(m.loc["ttft_s", "deployment"])
        if pool is None or int(pool[3]) == 1 or not np.isfinite(m.loc["ttft_s", "error"]):
            continue
        out.append(
            {
                "id": rid,
                "system": m.loc["ttft_s", "system"],
                "precision": m.loc["ttft_s", "precision"],
                "isl": int(m.loc["ttft_s", "isl"]),
                "osl": int(m.loc["ttft_s", "osl"]),
                "conc": float(m.loc["ttft_s", "concurrency"]),
                "x": int(pool[1]),
                "tp": int(pool[2]),
                "dp": int(pool[3]),
                "ttft": float(m.loc["ttft_s", "measured"]),
                "tpot": float(m.loc["tpot_s", "measured"]),
                "err": float(m.loc["ttft_s", "error"]),
            }
        )
    return out


def lone_service_s(ids: set[str]) -> dict[str, float]:
    """The model's lone mean-prompt service time of each row's prefill pool (serve/disagg.pool_prefill_perf), s."""
    from jalapeno.fit.entries import with_stack_mtp
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload
    from jalapeno.serve.disagg import pool_prefill_perf
    from jalapeno.specs.catalog import load_model

    out = {}
    for p in load_aiconfigurator()[0]:
        if p.id not in ids:
            continue
        st = point_stack(p)
        dep = with_stack_mtp(p.deployment, st, p.model)
        pr = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
        out[p.id] = pool_prefill_perf(load_model(p.model), pr, dep, point_workload(p)).service_s
    return out


def dispatch_table(csv_path: str) -> None:
    """Print check 1 per row and the median ratio by load band."""
    rows = dispatch_rows(csv_path)
    svc = lone_service_s({r["id"] for r in rows})
    print("check 1: random prefill dispatch, fullest rank over the balanced busiest rank (lower bounds)")
    print(
        f"{'row':>10} {'sys':>5} {'prec':>4} {'ISL':>5} {'C':>6} {'pool':>9} {'lambda/s':>8} {'S ms':>6} {'mu':>6} "
        f"{'ratio':>6} {'err%':>6}"
    )
    for r in sorted(rows, key=lambda r: (r["system"], r["precision"], r["isl"], r["conc"])):
        lam = r["conc"] / (r["ttft"] + (r["osl"] - 1) * r["tpot"])
        s = svc.get(r["id"], float("nan"))
        mu = lam / r["x"] * s / r["dp"]
        r["ratio"] = busiest_ratio(mu, r["dp"]) if np.isfinite(mu) else float("nan")
        print(
            f"{r['id'][-6:]:>10} {r['system'][:5]:>5} {r['precision']:>4} {r['isl']:>5} {r['conc']:>6.0f} "
            f"{r['x']}xDEP{r['dp']:<3} {lam:>8.1f} {s * 1e3:>6.1f} {mu:>6.3f} {r['ratio']:>6.2f} {100 * r['err']:>+6.0f}"
        )


def split_table() -> None:
    """Print check 2: lone / front / burst of the model against the measured TTFT, TP-prefill rows at C <= 16."""
    sys.path.insert(0, "scripts")
    from aic_ttft_split import predict_parts

    from jalapeno.fit.validate import load_aiconfigurator

    pts = [
        p
        for p in load_aiconfigurator()[0]
        if p.system in ("gb200-nvl72", "gb300-nvl72")
        and p.mode == "disagg"
        and p.framework.startswith("sglang")
        and p.concurrency <= 16
        and p.deployment is not None
        and p.deployment.prefill is not None
        and p.deployment.prefill.layout.dp == 1
    ]
    df = predict_parts(pts).sort_values(["system", "precision", "isl", "conc"])
    print(
        "check 2: TP-prefill rows at C <= 16, TTFT s (lone: one prompt on an idle engine; front: the client's "
        "a + b*ISL; burst: the idle-start wave x the fitted share)"
    )
    print(f"{'row':>44} {'measured':>8} {'model':>6} {'lone':>6} {'front':>6} {'burst':>6} {'meas-front':>10}")
    for rid, r in df.iterrows():
        front = r.noburst - r.bare
        print(
            f"{rid.split(':')[-1]:>44} {r.measured_ttft_s:>8.3f} {r.full:>6.3f} {r.lone:>6.3f} {front:>6.3f} "
            f"{r.full - r.noburst:>6.3f} {r.measured_ttft_s - front:>10.3f}"
        )


def _stat(e) -> str:
    """'median |e| / median e' in % of a Series of errors, NaN left out."""
    e = e.dropna()
    return f"{100 * np.median(np.abs(e)):5.1f} / {100 * np.median(e):+6.1f}"


def floor_table(csv_path: str) -> None:
    """Print check 3: the rows' TTFT errors with an eager prompt floor at each of :data:`FLOOR_RATES_S`."""
    import dataclasses

    import pandas as pd

    from jalapeno.fit.validate import load_aiconfigurator, predict_points

    base = pd.read_csv(csv_path)
    t = base[base.metric == "ttft_s"].set_index("id")
    pts = [
        p
        for p in load_aiconfigurator()[0]
        if p.system in ("gb200-nvl72", "gb300-nvl72")
        and p.mode == "disagg"
        and p.framework.startswith("sglang")
        and p.deployment is not None
        and p.deployment.prefill is not None
        and p.id in t.index
        and not isinstance(t.loc[p.id, "quality"], str)
    ]
    df = pd.DataFrame(
        [
            {
                "id": p.id,
                "sys": p.system[:5],
                "prec": p.precision,
                "isl": p.isl,
                "conc": p.concurrency,
                "dp": p.deployment.prefill.layout.dp,
                "split": t.loc[p.id, "split"],
                "gpus": p.deployment.prefill.workers * p.deployment.prefill.layout.stage_chips,
            }
            for p in pts
        ]
    ).set_index("id")
    for r in FLOOR_RATES_S:
        got = predict_points(
            [dataclasses.replace(p, deployment=dataclasses.replace(p.deployment, eager_prompt_call_s=r)) for p in pts]
        )
        g = got[got.metric == "ttft_s"].set_index("id")
        df[f"{r * 1e6:.0f} us"] = g.predicted / g.measured - 1
    df["band"] = pd.cut(df.conc / df.gpus, [0, 2, 16, 128, 1e9], labels=["C/gpu <= 2", "2-16", "16-128", "> 128"])
    cols = [f"{r * 1e6:.0f} us" for r in FLOOR_RATES_S]
    print("check 3: eager prompt floor what-if, TTFT median |error| / median error %, by host s a call:", cols)
    groups = [
        ("all", df),
        ("held-out", df[df.split == "held_out"]),
        ("TP prefill, C <= 16", df[(df.dp == 1) & (df.conc <= 16)]),
    ]
    groups += [(" ".join(map(str, k)), g) for k, g in df.groupby(["sys", "prec", "isl"])]
    groups += [(str(k), g) for k, g in df.groupby("band", observed=True)]
    for name, g in groups:
        print(f"{name:>22} n {g[cols[0]].notna().sum():>3}  " + " | ".join(_stat(g[c]) for c in cols))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="a `jalapeno validate -o` CSV")
    ap.add_argument("--split", action="store_true", help="also print check 2 (the low-load split)")
    ap.add_argument("--floor", action="store_true", help="also print check 3 (the eager prompt floor what-if)")
    a = ap.parse_args(argv)
    dispatch_table(a.csv)
    if a.split:
        split_table()
    if a.floor:
        floor_table(a.csv)


if __name__ == "__main__":
    main()
