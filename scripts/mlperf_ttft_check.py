"""Cross-check of the Poisson TTFT tail (serve/open_loop.py) at the MLPerf Server / Interactive rows'
own measured load: each NVIDIA TensorRT-LLM Llama row is served open loop (serve/point.serve_at_rate)
at its measured request rate (output tok/s / the run's mean output, per instance) on the
submissions' instance shape (Llama-3.1-405B: TP8 per 8 GPUs; Llama-2-70B: TP1 per GPU), at the
sweep's default engine limits (the submissions' own token budgets are not read here), and its
modelled p50 / p99 TTFT and mean TPOT are printed beside the measured mean / p99 TTFT and mean TPOT
(mlperf_points.csv). Nothing is fitted. Run: ``python scripts/mlperf_ttft_check.py``.
"""

from __future__ import annotations

import csv
import re

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.fit.mlperf import DEFAULT_MLPERF, load_mlperf
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import point_stack
from jalapeno.serve.open_loop import poisson_ttft_s
from jalapeno.serve.point import serve_at_rate
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision


def rows() -> list[dict]:
    """One dict per NVIDIA Llama Server / Interactive row on 8 GPUs: id, rate per instance (1/s), model
    p50 / p99 TTFT (s), measured mean / p99 TTFT (s), model / measured mean TPOT (s); ``overloaded``
    where the modelled instance cannot sustain the measured rate."""
    p99 = {}
    with DEFAULT_MLPERF.open(newline="", encoding="utf-8-sig") as f:
        for r in csv.DictReader(f):
            if r["metric"] == "TTFT_p99":
                p99[re.sub(r"_TTFT_p99$", "", r["id"])] = float(r["value"]) / 1e3
    out = []
    for p in load_mlperf(server_mapping="frontier@limits")[0]:
        if p.model == "deepseek-r1" or p.id.endswith("Offline") or p.framework != "trt" or "x72" in p.id:
            continue
        tp = 8 if p.model == "llama-3.1-405b" else 1
        pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=point_stack(p))
        model, wl = load_model(p.model), p.workload
        dep = Deployment(get_precision(p.precision), Pool(Layout(tp=tp)))
        out_tps = p.measured["throughput_per_chip"] * 8 * wl.mean_osl / (wl.mean_isl + wl.mean_osl)
        lam = out_tps / wl.mean_osl / (8 // tp)
        sp = serve_at_rate(model, pricer, dep, wl, [lam])
        row = {
            "id": p.id,
            "rate": lam,
            "ttft_mean": p.measured["ttft_s"],
            "ttft_p99": p99.get(p.id),
            "tpot": p.measured["tpot_s"],
            "overloaded": not bool(sp.feasible[0]),
        }
        if not row["overloaded"]:
            row.update(
                m_p50=float(poisson_ttft_s(model, pricer, dep, wl, sp, q=0.5)[0]),
                m_p99=float(poisson_ttft_s(model, pricer, dep, wl, sp, q=0.99)[0]),
                m_tpot=float(sp.tpot_s[0]),
            )
        out.append(row)
    return out


if __name__ == "__main__":
    for r in rows():
        head = f"{r['id'].removeprefix('mlperf51_'):70s} {r['rate']:7.3f}/s"
        if r["overloaded"]:
            print(head, "the modelled instance cannot sustain the measured rate")
            continue
        print(
            head,
            f"TTFT model p50 {r['m_p50']:.2f} / p99 {r['m_p99']:.2f} s, measured mean {r['ttft_mean']:.2f} / "
            f"p99 {r['ttft_p99']:.2f} s; TPOT model {r['m_tpot'] * 1e3:.0f} vs {r['tpot'] * 1e3:.0f} ms",
        )
