"""Disaggregated aiconfigurator TTFT by load band: the analytic model against the request-level simulator run under
sa-bench's protocol, and what the measured wait left over by both asks of each candidate term (issue 18, round 49,
disaggttft49; diagnosis, nothing fitted or shipped).

Question: the held-out GB300 TTFT miss (all 28 rows disaggregated) is under at mid load (C 9-64 −17%, C 65-512
−23%) and over on the throughput sweeps (C > 512 +22%). The analytic model's loaded TTFT is its steady queue plus a
fitted idle-start burst share (fit/client_floor.DISAGG_TERMS: 0.60 SGLang, 0.30 TensorRT-LLM). The simulator
(serve/sim) runs each request through the prefill worker's token budget, its step-boundary admission, the KV
hand-off link and the decode worker's running and KV caps, with no fitted share. Does the simulator, under the
rows' own protocol, give the sign pattern? If it misses too, the term is in neither.

Per held-out row of ``--system`` (``HELD_OUT.csv``: a ``jalapeno validate --held-out --json -o`` table; its matched
disaggregated aiconfigurator TTFT rows outside the fit split, unflagged): the model's run TTFT (validation's price),
its steady TTFT (burst share 0, no idle start), and the simulator's mean TTFT under sa-bench's protocol
(``simulate(..., warmup=0)``: srt-slurm sa-bench runs its 2·C warm-up in its own process, so the 10·C counted
prompts start from an idle engine with C at once; docs/gap_aic_ttft.md round 47 §1). Then per load band
(scripts/aic_gb_ttft_axes43.c_band): the median error of each, and the wait the measured TTFT holds beyond the
simulator's (:func:`excess_wait`), in seconds and in the row's own measured decode steps (TPOT), the unit a
decode worker's per-step admission of transferred requests would cost. Nothing is fitted or written (``--out``
keeps the per-row table).

Run: python scripts/disagg_ttft_sim49.py HELD_OUT.csv [--system gb300-nvl72] [--max-c 4096] [--out ROWS.csv]
(GB300 to C 4,096: about 5 minutes; a C 8,192 row simulates 81,920 requests, a 1k/8k one 8k decode steps each)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aic_gb_ttft_axes43 import c_band  # noqa: E402  (sibling scripts)
from gb_ttft_median_need import held_out_ttft  # noqa: E402

#: sa-bench's counted prompts per user (srt-slurm ``NUM_PROMPTS_MULT`` 10; docs/gap_aic_ttft.md round 47 §1)
PROMPTS_PER_USER = 10
#: a burst share that leaves only the steady queue (serve/queueing.idle_start is linear in it; 0 is refused)
NO_BURST = 1e-12
#: the load bands in load order (c_band's labels)
BANDS = tuple(c_band(c) for c in (1, 9, 65, 513))


def excess_wait(measured_s, simulated_s, tpot_s) -> tuple[np.ndarray, np.ndarray]:
    """The measured TTFT's wait beyond the simulated one, s, and the same in the row's measured decode steps.

    Args: measured and simulated mean TTFT, s, and the measured TPOT, s, each (N,).
    Returns: (measured − simulated, (measured − simulated) / TPOT), each (N,).
    Raises: ValueError: arrays of different shapes, or a TPOT not above 0.

    >>> [a.round(2).tolist() for a in excess_wait([0.911], [0.303], [0.0137])]  # GB300 cfg576 C 512
    [[0.61], [44.38]]
    """
    m, s, t = (np.asarray(x, dtype=float) for x in (measured_s, simulated_s, tpot_s))
    if not (m.shape == s.shape == t.shape) or (t <= 0).any():
        raise ValueError(f"excess_wait: shapes {m.shape}, {s.shape}, {t.shape} must agree and TPOT be above 0")
    e = m - s
    return e, e / t


def band_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per load band (in :data:`BANDS` order, empty bands left out): n, the median signed error % of the model
    (``err_model``) and of the simulator (``err_sim``), the median excess wait s (``excess_s``) and in measured
    decode steps (``excess_steps``). ``rows``: concurrency, err_model, err_sim, excess_s, excess_steps (errors as
    fractions)."""
    d = rows.assign(band=pd.Categorical([c_band(c) for c in rows.concurrency], categories=BANDS, ordered=True))
    g = d.groupby("band", observed=True)
    return pd.DataFrame(
        {
            "n": g.size(),
            "err_model": g.err_model.median() * 100,
            "err_sim": g.err_sim.median() * 100,
            "excess_s": g.excess_s.median(),
            "excess_steps": g.excess_steps.median(),
        }
    )


def _price(p) -> dict:
    """Row ``p`` priced as validation prices it (run and steady TTFT) and simulated under sa-bench's protocol."""
    from jalapeno.fit.entries import with_stack_mtp
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS
    from jalapeno.fit.table_lookup import load_any_pricer, resolve_pricer
    from jalapeno.fit.validate import point_stack, point_workload
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.serve.sim.run import simulate
    from jalapeno.specs.catalog import load_model

    st = point_stack(p)
    model, wl, dep = load_model(p.model), point_workload(p), with_stack_mtp(p.deployment, st, p.model)
    kind = resolve_pricer(p.system, "roofline") if p.system in AIC_SYSTEM_DIRS else "roofline"
    pr = load_any_pricer(p.system, "calibrated", stack=st, pricer=kind)
    pr0 = load_any_pricer(
        p.system, "calibrated", stack=dataclasses.replace(st, prefill_burst_fraction=NO_BURST), pricer=kind
    )
    c = int(p.concurrency)
    run = serve_at_concurrency(model, pr, dep, wl, [c])
    steady = serve_at_concurrency(model, pr0, dep, wl, [c], idle_start=False)
    sim = simulate(model, pr, dep, workload=wl, concurrency=c, num_requests=PROMPTS_PER_USER * c, warmup=0).requests
    return {
        "model_s": float(run.ttft_s[0]),
        "steady_s": float(steady.ttft_s[0]),
        "sim_s": float(sim.ttft_s.mean()),
        "sim_p50_s": float(sim.ttft_s.median()),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("held_out", help="a `jalapeno validate --held-out --json -o X.csv` table")
    ap.add_argument("--system", default="gb300-nvl72")
    ap.add_argument("--max-c", type=float, default=float("inf"), help="skip rows above this concurrency")
    ap.add_argument("--out", help="write the per-row table here")
    a = ap.parse_args(argv)
    from jalapeno.fit.validate import load_aiconfigurator

    d = held_out_ttft(a.held_out, {"id", "concurrency", "mode"}, systems=(a.system,))
    ids = set(d[(d["mode"] == "disagg") & (d.concurrency <= a.max_c)].id)
    pts = sorted(
        (p for p in load_aiconfigurator()[0] if p.id in ids and p.mapping == "matched"), key=lambda p: p.concurrency
    )
    out = []
    for p in pts:
        r = {
            "id": p.id,
            "framework": p.framework,
            "isl": p.isl,
            "osl": p.osl,
            "concurrency": p.concurrency,
            "measured_s": p.measured["ttft_s"],
            "tpot_s": p.measured["tpot_s"],
            **_price(p),
        }
        out.append(r)
        print(
            f"{p.id:58s} C {int(p.concurrency):5d} measured {r['measured_s']:7.3f} model {r['model_s']:7.3f} "
            f"steady {r['steady_s']:7.3f} sim {r['sim_s']:7.3f} (p50 {r['sim_p50_s']:.3f}) s",
            flush=True,
        )
    t = pd.DataFrame(out)
    if t.empty:
        raise SystemExit(
            f"{a.held_out}: no held-out disaggregated aiconfigurator TTFT row of {a.system} at C <= {a.max_c}"
        )
    t["err_model"] = t.model_s / t.measured_s - 1
    t["err_sim"] = t.sim_s / t.measured_s - 1
    t["excess_s"], t["excess_steps"] = excess_wait(t.measured_s, t.sim_s, t.tpot_s)
    print(
        f"\n{a.system}: {len(t)} rows, median error model {t.err_model.median():+.1%}, simulator "
        f"{t.err_sim.median():+.1%}; median |error| model {t.err_model.abs().median():.1%}, simulator "
        f"{t.err_sim.abs().median():.1%}"
    )
    print(band_table(t).round(2).to_string())
    if a.out:
        t.to_csv(a.out, index=False)


if __name__ == "__main__":
    main()
