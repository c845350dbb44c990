"""Which limit keeps the InferenceX disaggregated best rows' users before their first token: each candidate priced at
the measured operating point (issue 18, round 37, pfq37; diagnosis, nothing fitted, no prediction moves).

Rows 29 (GB200 DeepSeek-R1 FP4, 1k/1k, C 6144) and 41 (GB200 gpt-oss-120b, 8k/1k, C 512) measure a median TTFT of
7.6 s and 5.0 s where the model gives 0.3 s, with throughput within 4%. The closed loop C = λ·(TTFT + (OSL − 1)·TPOT)
puts part of the users before their first token (λ·TTFT) and the rest decoding (λ·(OSL − 1)·TPOT), a smaller batch
than the model's, which admits nearly every user to decode (docs/gap_disagg_overprediction.md, round 30). This
script prices, at the *measured* split, each limit that could hold the queue:

- **decode step at the measured batch**: the model's step at the requests the run decodes (per decode instance),
  against the measured TPOT — with the KV dtype validation prices and with FP8 (the dtype every TensorRT-LLM Dynamo
  recipe read sets: ai-dynamo/dynamo ``components/backends/trtllm/performance_sweeps/scripts/gen_yaml.py``
  @d1c4e4eeb8f9 ``generate_gpt_oss_config`` and ``generate_dsr1_config``: ``kv_cache_config.dtype: fp8`` on the
  prefill and the decode workers). Right at the measured batch means the decode side is priced and the queue is real;
- **prefill pool capacity** (H1): the model's pool capacity in requests/s and the share ρ the measured λ uses;
- **decode KV admission** (H2): TensorRT-LLM's default capacity policy (GUARANTEED_NO_EVICT) admits a request only if
  its whole length (prompt + output) fits; the model's decode-instance KV capacity at that reservation (ISL + OSL),
  against the requests the run decodes per instance;
- **KV hand-off throughput** (H3): the bytes per second each prefill worker sends (λ · ISL · KV bytes per token /
  prefill workers), to compare a saturated row with an unsaturated one of the same recipe (rows 41 and 47).

With ``--agg N``: an aggregated sibling row of the same engine and model (row 40: B200 TensorRT-LLM gpt-oss TP1
8k/1k C 256) bounds the prefill rate of one GPU from its measurements and the model's decode step: it decodes
1/TPOT steps a second, each taking the model's pure decode step τ_d at its batch, and takes in λ·ISL prompt
tokens/s in the rest of the time, so a prefill-only GPU does P ≥ λ·ISL / (1 − τ_d/TPOT).

Run: python scripts/disagg_upstream_limit37.py [41 29 30 32 47 22 23] [--agg 40]
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from importlib.resources import files

import numpy as np

from jalapeno.deploy.kv_capacity import decode_batch_cap
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import point_stack, point_workload, with_stack_mtp
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.serve.disagg import decode_curve, pool_prefill_perf
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.kv_cache import get_kv_format

#: The KV dtype the TensorRT-LLM Dynamo sweep recipes set on both pools (module docstring).
RECIPE_KV = "fp8_e4m3"


def closed_loop_split(
    tput_per_gpu: float, gpus: float, mean_isl: float, mean_osl: float, ttft_s: float, tpot_s: float
) -> tuple[float, float, float]:
    """(λ requests/s, requests decoding, requests before their first token) of a measured closed-loop point.

    λ = throughput per GPU · GPUs / (mean ISL + mean OSL); decoding = λ·(mean OSL − 1)·TPOT (Little's law over the
    decode phase); before the first token = λ·TTFT (medians, so the two add to C only within a few percent).

    >>> [round(x, 1) for x in closed_loop_split(53952.5, 4, 7372.8, 921.6, 5.0277, 0.0147)]
    [26.0, 352.1, 130.8]
    """
    lam = tput_per_gpu * gpus / (mean_isl + mean_osl)
    return lam, lam * (mean_osl - 1) * tpot_s, lam * ttft_s


def prefill_rate_bound(lam: float, mean_isl: float, tpot_s: float, decode_step_s: float) -> float:
    """Prompt tokens/s a prefill-only GPU does at least, from an aggregated run that takes in ``lam`` requests/s of
    ``mean_isl`` tokens while decoding 1/TPOT steps a second, each ``decode_step_s`` long: λ·ISL / (1 − τ_d/TPOT).

    >>> round(prefill_rate_bound(6.775, 7372.8, 0.0367, 0.018))
    98032
    """
    share = 1.0 - decode_step_s / tpot_s
    if share <= 0:
        raise SystemExit(
            f"the pure decode step {decode_step_s * 1e3:.1f} ms is not shorter than TPOT "
            f"{tpot_s * 1e3:.1f} ms: no time left for prefill (fix: check the row's decode batch)"
        )
    return lam * mean_isl / share


def lane_window(sent_saturated: float, sent_unsaturated: float) -> tuple[float, float] | None:
    """Hand-off throughput per prefill worker (bytes/s) a serial transfer lane must have for one row to saturate it
    and another not: (unsaturated row's demand, saturated row's demand]; None when the saturated row asks less
    (no lane throughput separates them).

    >>> lane_window(3.5e9, 2.9e9)
    (2900000000.0, 3500000000.0)
    """
    return (sent_unsaturated, sent_saturated) if sent_saturated > sent_unsaturated else None


def _point(points, n: str):
    pid = f"inferencex_points:{n}"
    hit = [q for q in points if q.id == pid]
    if not hit:
        raise SystemExit(f"{pid}: no such row (fix: give a line number of data/validation/inferencex_points.csv)")
    return hit[0]


def _setup(p):
    st = point_stack(p)
    dep = p.deployment if p.deployment is not None else (p.candidates or (None,))[0]
    dep = dep[0] if isinstance(dep, tuple) else dep
    if dep is None:
        raise SystemExit(f"{p.id}: validation prices no single deployment for it (fix: name a matched row)")
    return (
        load_model(p.model),
        load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st),
        point_workload(p),
        with_stack_mtp(dep, st, p.model),
    )


def _step_at(model, pricer, dep, wl, per_instance: float, kv: str | None):
    prec = dep.precision if kv is None else replace(dep.precision, kv_cache=get_kv_format(kv, "kv"))
    dc = decode_curve(model, pricer, dep.decode.layout, prec, wl, np.array([per_instance]), dep.mtp, dep)
    return float(dc.tau_s[0]) / (dep.mtp.tokens_per_step if dep.mtp else 1.0), prec


def disagg_row(model, pricer, wl, dep, p) -> dict:
    """Every candidate of the module docstring priced at row ``p``'s measured split; a dict of the figures printed."""
    m = p.measured
    lam, dec, first = closed_loop_split(
        m["throughput_per_chip"], dep.chips, wl.mean_isl, wl.mean_osl, m["ttft_s"], m["tpot_s"]
    )
    inst = dep.decode.workers
    out = {"lam": lam, "decoding": dec, "first": first, "per_instance": dec / inst}
    for key, kv in (("as_validated", None), ("recipe_kv", RECIPE_KV)):
        tpot, prec = _step_at(model, pricer, dep, wl, dec / inst, kv)
        whole = decode_batch_cap(
            model,
            pricer.system,
            dep.decode.layout,
            prec,
            wl.mean_isl + wl.mean_osl,
            pricer.efficiency,
            dep.mtp,
            memory_fraction=dep.memory_fraction,
            engine=dep.memory_profile,
        )
        sent = lam * wl.mean_isl * model.kv_bytes_per_token(prec.kv_cache, int(wl.mean_isl)) / dep.prefill.workers
        out[key] = {"kv": prec.kv_cache.name, "tpot_s": tpot, "kv_cap_whole": whole, "sent_bytes_per_s": sent}
    pre = pool_prefill_perf(model, pricer, dep, wl)
    out["prefill_cap_req_s"] = dep.prefill.workers * pre.tokens_per_s / wl.mean_isl
    out["prefill_tok_s_worker"] = pre.tokens_per_s
    return out


def _print_disagg(p, dep, r) -> None:
    m = p.measured
    print(f"== {p.id} {p.system} {p.model} {p.isl}/{p.osl} C={float(p.concurrency):g}: {dep.label}")
    print(
        f"  measured: TTFT p50 {m['ttft_s']:.2f} s, TPOT {m['tpot_s'] * 1e3:.1f} ms; lambda {r['lam']:.2f}/s, "
        f"decoding {r['decoding']:.0f} ({r['per_instance']:.0f} per decode instance), before first token "
        f"{r['first']:.0f}"
    )
    same = r["as_validated"]["kv"] == r["recipe_kv"]["kv"]
    for key in ("as_validated",) if same else ("as_validated", "recipe_kv"):
        s = r[key]
        print(
            f"  KV {s['kv']:>9}: model TPOT at the measured batch {s['tpot_s'] * 1e3:.2f} ms "
            f"({s['tpot_s'] / m['tpot_s'] - 1:+.1%}); KV cap at ISL+OSL reserved {s['kv_cap_whole']:.0f} per "
            f"instance (measured decoding / cap {r['per_instance'] / s['kv_cap_whole']:.2f}); hand-off "
            f"{s['sent_bytes_per_s'] / 1e9:.2f} GB/s per prefill worker"
        )
    print(
        f"  prefill pool (model): {r['prefill_cap_req_s']:.1f} req/s ({r['prefill_tok_s_worker']:.0f} prompt tok/s "
        f"per worker); measured lambda uses rho = {r['lam'] / r['prefill_cap_req_s']:.2f}"
    )


def decode_step_threshold(tpot_s: float, prompt_tok_s_per_gpu: float, demand_tok_s_per_gpu: float) -> float:
    """The pure decode step (s) below which an aggregated row's prefill bound (:func:`prefill_rate_bound`, per GPU)
    falls to ``demand_tok_s_per_gpu``: TPOT · (1 − measured prompt tok/s / demand).

    >>> round(decode_step_threshold(0.0367, 55000.0, 96000.0) * 1e3, 2)
    15.67
    """
    return tpot_s * (1.0 - prompt_tok_s_per_gpu / demand_tok_s_per_gpu)


def agg_sibling(p, demands: dict) -> None:
    """Print an aggregated row's prediction errors and the prefill-rate bound of :func:`prefill_rate_bound`; for
    each disaggregated row of the same model and ISL in ``demands`` (id -> (model, ISL, prompt tok/s per prefill GPU
    the measured λ asks)), the pure decode step :func:`decode_step_threshold` below which that demand could be the pool's rate."""
    model, pricer, wl, dep = _setup(p)
    m = p.measured
    lam, dec, first = closed_loop_split(
        m["throughput_per_chip"], dep.chips, wl.mean_isl, wl.mean_osl, m["ttft_s"], m["tpot_s"]
    )
    r = serve_at_concurrency(model, pricer, dep, wl, [float(p.concurrency)])
    print(f"== aggregated sibling {p.id} {p.system} {p.model} {p.isl}/{p.osl} C={float(p.concurrency):g}: {dep.label}")
    print(
        f"  model: throughput {r.throughput_per_chip[0] / m['throughput_per_chip'] - 1:+.1%}, TPOT "
        f"{r.tpot_s[0] / m['tpot_s'] - 1:+.1%}; measured lambda {lam:.2f}/s ({lam * wl.mean_isl / dep.chips:.0f} "
        f"prompt tok/s per GPU while decoding {dec:.0f})"
    )
    for kv in dict.fromkeys((None, RECIPE_KV)):
        tau, prec = _step_at(model, pricer, dep, wl, dec, kv)
        if kv is not None and prec.kv_cache == dep.precision.kv_cache:
            continue
        bound = prefill_rate_bound(lam, wl.mean_isl, m["tpot_s"], tau)
        print(
            f"  KV {prec.kv_cache.name}: pure decode step at that batch (model) {tau * 1e3:.1f} ms of the "
            f"{m['tpot_s'] * 1e3:.1f} ms TPOT: a prefill-only GPU does >= {bound / dep.chips:.0f} prompt tok/s"
        )
        for pid, (mname, isl, demand) in demands.items():
            if (mname, isl) == (p.model, p.isl):
                t = decode_step_threshold(m["tpot_s"], lam * wl.mean_isl / dep.chips, demand)
                print(
                    f"    {pid} asks {demand:.0f} prompt tok/s per prefill GPU: a pool that slow needs this row's "
                    f"pure decode step <= {t * 1e3:.1f} ms ({t / tau - 1:+.0%} on the model's)"
                )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rows", nargs="*", default=["41", "29", "30", "32", "47", "22", "23"])
    ap.add_argument("--agg", nargs="*", default=["40"], help="aggregated sibling rows (module docstring)")
    a = ap.parse_args(argv)
    points, _ = load_inferencex(files("jalapeno") / "data/validation/inferencex_points.csv")
    sent, demands = {}, {}
    for n in a.rows:
        p = _point(points, n)
        if not (p.measured.get("ttft_s") and p.measured.get("tpot_s")):
            raise SystemExit(f"{p.id}: no measured TTFT and TPOT (fix: name a row that gives both)")
        model, pricer, wl, dep = _setup(p)
        if dep.prefill is None:
            raise SystemExit(f"{p.id} is aggregated (fix: pass it with --agg)")
        r = disagg_row(model, pricer, wl, dep, p)
        _print_disagg(p, dep, r)
        sent[n] = r["recipe_kv"]["sent_bytes_per_s"]
        demands[p.id] = (p.model, p.isl, r["lam"] * wl.mean_isl / dep.prefill.chips)
    if "41" in sent and "47" in sent:
        w = lane_window(sent["41"], sent["47"])
        print(
            "hand-off lane that saturates row 41 and not row 47 (FP8 KV, per prefill worker): "
            + ("none" if w is None else f"{w[0] / 1e9:.2f} < throughput <= {w[1] / 1e9:.2f} GB/s")
        )
    for n in a.agg or ():
        agg_sibling(_point(points, n), demands)


if __name__ == "__main__":
    main()
