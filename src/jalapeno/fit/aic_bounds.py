"""Data quality of aiconfigurator's measured rows, rules E and F (split from fit/aic_quality.py, round 38): two physical
bounds a row's measured times must respect, from the catalog's model and chip alone (the cost model is never
consulted). fit/aic_quality.aic_decode_flags joins rule E's flags with rules D, F, G and H; aic_ttft_flags takes rule
F's; the other rules and the shared notation (Little's law's B, C_inst) are fit/aic_quality.py's.

**Rule E — a decode step is no faster than its bytes over the chips' bandwidth.** A decode step reads every
weight it multiplies and the KV cache of every sequence it decodes; however the row's ``n`` decode chips
(one decode instance, :attr:`Layout.chips`) share them, the busiest chip reads at least the average, so
for the row's decoding requests per instance B (Little's law, as rule D, at most C_inst):

    floor = [W_dense + W_experts · (1 − (1 − k/E)^B) + B · KV(r · ISL)] / (n · BW_peak · (1 + d))

W_dense: every weight but the routed experts and the embedding (a gather of B rows), counted once (replicas
only add) in the row's precision; W_experts: the routed experts at their checkpoint layout (no engine
padding), touched in the fraction uniform top-k routing of B tokens over E experts touches (rule D's form;
routing skew touches fewer: :data:`FLOOR_FACTOR` allows for it); KV(r · ISL): one sequence's KV cache at the
shortest prompt either client sends (r = INFERENCEX_RANGE_RATIO, the decoded tokens' KV left out) in the
row's KV format; BW_peak: the catalog chip's datasheet HBM bandwidth (achieved is lower); d: the draft tokens
of the row's MTP (each step yields at most 1 + d tokens). The row's layout is not used, only its chip count,
so a mis-stated TP/DP cannot raise the floor. A row is flagged when TPOT < :data:`FLOOR_FACTOR` · floor; only
its TPOT and interactivity are flagged, as rule D's.

**Rule F — a closed loop with room for its requests runs them.** An aggregated engine admits every request
of a closed loop at concurrency C up to its running cap (the recipe's, at least C where the recipe sets it to
C) or its KV cache, whichever binds first; a request waits only for that. Little's law on the measured
times gives the requests past their first token per instance, B (rule D's form), and the KV cache holds

    K = (n · HBM · u − W) / KV(ISL + OSL)

requests (n chips of HBM capacity each, u = :data:`ADMIT_MEMORY_FRACTION`, W every weight once, KV of one
sequence at its longest context in the row's KV format; a sliding window holds its window only). Admitted
requests may still wait for prefill compute when the engine is saturated; the prefill the row's own request
rate λ = C_inst / (TTFT + (OSL − 1)·TPOT) asks for is λ · 2 · N_active · ISL FLOP/s (N_active: the weights
one token multiplies, experts at k/E; attention left out), against the n chips' dense peak in their slowest
listed format. A row is flagged when B < :data:`ADMIT_FACTOR` · min(C_inst, K) and that prefill takes under
:data:`PREFILL_SHARE` of the peak: its requests queued behind a cap the row does not record (neither its
memory, nor its prefill compute, nor its stated recipe), so its TTFT measures that queue and its TPOT the
smaller batch. Every metric of such a row is flagged (its TTFT with rules A and B, its TPOT and interactivity with
D and E). Of aiconfigurator-core 0.12.0's aggregated rows the cap shows in one campaign alone (gpt-oss-120b,
H100, vLLM 0.11.2 and its release-less rows of 2025-12-05/08, concurrency 512): B = 96-106 at TP2, TP4 and
TP8 and at 1k/1k, 1k/8k and 8k/1k, whose KV room differs by 9x, while every other campaign at concurrency
256 and above decodes 0.86-1.0 of C; the two other rows below the factor are GB200 DeepSeek-R1 SGLang rows
stated as TP72 at concurrency 2048 and 4096 (scripts/aic_admission_check.py). A cap that rule F finds in two
rows of one campaign and concurrency binds its other rows there that decode as many (fit/aic_admission_campaign.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from jalapeno.fit.aic_admission_campaign import campaign_admission_flags

#: Rule E: a row is flagged when its TPOT is below this fraction of its decode-step floor. The floor takes the
#: datasheet bandwidth (achieved HBM reads run at ~80-90% of it) and uniform routing; a row passes unless its
#: batch touched under ~70% of the experts uniform routing touches AND its chips read at full peak, so only a
#: clearly impossible TPOT is flagged. Of aiconfigurator-core 0.12.0's rows (scripts/aic_floor_check.py) one
#: falls below it (0.58 of its floor); the next are at 0.81 and 0.86.
FLOOR_FACTOR = 0.7
#: Rule F: a row is flagged when its decoding requests are below this fraction of what its memory and
#: concurrency admit. An engine with room decodes nearly all of them (0.86-1.0 of C at concurrency >= 256 in
#: every campaign but one, scripts/aic_admission_check.py); prefill-heavy rows near saturation reach 0.44-0.6
#: (8k/1k at concurrency 512), so the factor sits below them: only a queue no prefill explains is flagged.
ADMIT_FACTOR = 0.35
#: Rule F: a row's prefill demand (module docstring) under this share of its chips' dense peak cannot be what its
#: requests waited for (a prefill runs at tens of percent of peak; an engine that needs a quarter of it for
#: prefill alone is near saturation, where admitted requests do queue for compute).
PREFILL_SHARE = 0.25
#: Rule F: the share of HBM the KV cache and weights may fill: vLLM's default and InferenceX's
#: ``--gpu-memory-utilization`` 0.9, less 0.1 of HBM for activations, CUDA graphs and the runtime (named
#: assumption; a lower share only admits fewer, so flags fewer rows).
ADMIT_MEMORY_FRACTION = 0.8


def _decoding_batch(p, instances: int) -> float:
    """Decoding requests per decode instance of a point, by Little's law on its measured times (rules D
    and E, module docstring): C_inst · (OSL − 1)·TPOT / (TTFT + (OSL − 1)·TPOT), at most C_inst."""
    m = p.measured
    dec = (p.osl - 1) * m["tpot_s"]
    return p.concurrency / instances * dec / (m["ttft_s"] + dec)


def _catalog_chip(system: str):
    from jalapeno.errors import JalapenoError
    from jalapeno.specs.catalog import load_system

    try:
        return load_system(system).chip
    except (JalapenoError, FileNotFoundError):
        return None


def _floor_catalog(p):
    """(model spec, chip) of a point from the catalog, or None where either is missing."""
    from jalapeno.errors import JalapenoError
    from jalapeno.specs.catalog import load_model

    chip = _catalog_chip(p.system)
    try:
        return (load_model(p.model), chip) if chip is not None else None
    except (JalapenoError, FileNotFoundError):
        return None


def _catalogued(p, catalog) -> tuple | None:
    """(model spec, chip, decode pool, instances) of a point with TTFT, TPOT, concurrency, an OSL above 1
    and a deployment whose model and chip ``catalog(p)`` holds; None otherwise (rules E and F's points)."""
    m, d = p.measured, p.deployment
    if d is None or not (m.get("ttft_s") and m.get("tpot_s") and p.concurrency and p.osl > 1):
        return None
    found = catalog(p)
    if found is None:
        return None
    pool = d.decode
    return (*found, pool, max(int(getattr(pool, "workers", 1) or 1), 1))


def decode_floor(p, catalog=_floor_catalog) -> dict | None:
    """Rule E's floor of one point (module docstring): ``batch`` (B, decoding requests per instance),
    ``chips`` (n), ``weight_bytes`` (W_dense + touched experts), ``kv_bytes`` (B · KV), ``floor_s`` and
    ``ratio`` (TPOT / floor); None for a point without TTFT, TPOT, concurrency, an OSL above 1 or a
    deployment, or whose model or chip the catalog lacks.

    ``p``: fit/validate.MeasuredPoint; ``catalog(p)``: (specs/model.ModelSpec, specs/hardware.Chip) or None.
    Units: bytes, seconds.
    """
    from jalapeno.cost.moe import touched_fraction
    from jalapeno.deploy.layout import Layout
    from jalapeno.deploy.memory_fit import (
        ROUTER_BYTES,
        kv_bytes_per_seq_per_chip,
        weight_bytes_per_chip,
        weight_elems_per_chip,
    )
    from jalapeno.specs.workload import INFERENCEX_RANGE_RATIO

    got = _catalogued(p, catalog)
    if got is None:
        return None
    model, chip, pool, inst = got
    m, d = p.measured, p.deployment
    batch = _decoding_batch(p, inst)
    one = Layout(tp=1, dp=1, ep=1)  # every weight and KV head once: the least any sharding reads in total
    prec = d.precision
    elems = weight_elems_per_chip(model, one)
    total = weight_bytes_per_chip(model, one, prec)
    experts = total - sum(
        n * (ROUTER_BYTES if k == "router" else prec.weight_bytes(k)) for k, n in elems.items() if k != "routed_experts"
    )
    dense = total - experts - elems["embedding"] * prec.weight_bytes("embedding")
    touched = float(touched_fraction(batch, model.moe.num_experts, model.moe.top_k)) if model.moe else 0.0
    kv = batch * float(kv_bytes_per_seq_per_chip(model, one, prec, INFERENCEX_RANGE_RATIO * p.isl))
    weights = dense + experts * touched
    draft = d.mtp.draft_tokens if getattr(d, "mtp", None) is not None else 0
    n = pool.layout.chips
    floor = (weights + kv) / (n * chip.hbm_bandwidth_bytes_per_s * (1 + draft))
    return {
        "batch": batch,
        "chips": n,
        "weight_bytes": weights,
        "kv_bytes": kv,
        "floor_s": floor,
        "ratio": m["tpot_s"] / floor,
    }


def aic_floor_flags(points: Sequence, catalog=_floor_catalog) -> dict[str, str]:
    """Point id → reason for every aiconfigurator point whose TPOT is below :data:`FLOOR_FACTOR` × its
    decode-step floor (rule E, module docstring); its TPOT and interactivity are flagged. Points of other
    sources, and points :func:`decode_floor` cannot bound, are passed over. ``catalog``: as decode_floor's.
    """
    out: dict[str, str] = {}
    for p in points:
        f = decode_floor(p, catalog) if p.source == "aiconfigurator" else None
        if f is not None and f["ratio"] < FLOOR_FACTOR:
            out[p.id] = (
                f"TPOT {p.measured['tpot_s'] * 1e3:.2f} ms is {f['ratio']:.2f}x the {f['floor_s'] * 1e3:.2f} ms "
                f"floor of a decode step at its {f['batch']:.1f} decoding requests per instance (Little's law): "
                f"{f['weight_bytes'] / 1e9:.1f} GB of weights and {f['kv_bytes'] / 1e9:.1f} GB of KV cache over "
                f"{f['chips']} chips at the datasheet HBM bandwidth: a decode step is no faster than its bytes "
                "(aiconfigurator rule E, fit/aic_quality.py)"
            )
    return out


def admission(p, catalog=_floor_catalog) -> dict | None:
    """Rule F's figures of one aggregated point (module docstring): ``batch`` (B, requests past their first
    token per instance), ``concurrency`` (C_inst), ``kv_room`` (K, requests the KV cache holds at ISL + OSL),
    ``admitted`` (min(C_inst, K)), ``ratio`` (B / admitted) and ``prefill_share`` (the prefill FLOP/s its request
    rate asks for over its chips' dense peak); None for a point that is not aggregated, lacks
    TTFT, TPOT, concurrency, an OSL above 1 or a deployment, or whose model or chip the catalog lacks.

    ``p``: fit/validate.MeasuredPoint; ``catalog(p)``: as :func:`decode_floor`'s. Units: requests.
    """
    from jalapeno.deploy.layout import Layout
    from jalapeno.deploy.memory_fit import kv_bytes_per_seq_per_chip, weight_bytes_per_chip, weight_elems_per_chip

    got = _catalogued(p, catalog) if p.mode == "agg" else None
    if got is None:
        return None
    model, chip, pool, inst = got
    m, d = p.measured, p.deployment
    one = Layout(tp=1, dp=1, ep=1)  # every weight and KV head once (replicas only take room)
    free = pool.layout.chips * chip.hbm_capacity_bytes * ADMIT_MEMORY_FRACTION - weight_bytes_per_chip(
        model, one, d.precision
    )
    kv = float(kv_bytes_per_seq_per_chip(model, one, d.precision, p.isl + p.osl))
    room = max(free, 0.0) / kv if kv > 0 else float("inf")
    admitted = min(p.concurrency / inst, room)
    batch = _decoding_batch(p, inst)
    elems = weight_elems_per_chip(model, one)
    k_of_e = model.moe.top_k / model.moe.num_experts if model.moe else 1.0
    active = sum(elems.values()) - elems["embedding"] - elems["routed_experts"] * (1.0 - k_of_e)
    rate = p.concurrency / inst / (m["ttft_s"] + (p.osl - 1) * m["tpot_s"])
    peak = pool.layout.chips * min(chip.peak_flop_per_s.values())
    return {
        "batch": batch,
        "concurrency": p.concurrency / inst,
        "kv_room": room,
        "admitted": admitted,
        "ratio": batch / admitted if admitted > 0 else float("inf"),
        "prefill_share": rate * 2.0 * active * p.isl / peak,
    }


def aic_admission_flags(points: Sequence, catalog=_floor_catalog) -> dict[str, str]:
    """Point id → reason for every aggregated aiconfigurator point that decodes under :data:`ADMIT_FACTOR` of
    the requests its memory and concurrency admit (rule F, module docstring, and its campaign
    clause); every metric is flagged (through aic_ttft_flags and aic_decode_flags). ``catalog``: as decode_floor's.

    >>> from types import SimpleNamespace as P
    >>> from jalapeno.specs.catalog import load_model
    >>> from jalapeno.specs.formats import get_precision
    >>> def pt(ttft, tpot):  # gpt-oss-120b on 8 H100 (80 GB), BF16 KV, 1k/8k at concurrency 512
    ...     dep = P(decode=P(layout=P(chips=8), workers=1), precision=get_precision("mxfp4"))
    ...     return P(id="r", source="aiconfigurator", mode="agg", isl=1024, osl=8192, concurrency=512,
    ...              deployment=dep, measured={"ttft_s": ttft, "tpot_s": tpot})
    >>> cat = lambda p: (load_model("gpt-oss-120b"), P(hbm_capacity_bytes=80e9, peak_flop_per_s={"bf16": 989e12}))
    >>> list(aic_admission_flags([pt(117.8, 0.00357)], cat)), aic_admission_flags([pt(1.0, 0.015)], cat)
    (['r'], {})
    """
    out: dict[str, str] = {}
    for p in points:
        a = admission(p, catalog) if p.source == "aiconfigurator" else None
        if a is not None and a["ratio"] < ADMIT_FACTOR and a["prefill_share"] < PREFILL_SHARE:
            out[p.id] = (
                f"{a['batch']:.0f} requests decoding per instance (Little's law on TTFT "
                f"{p.measured['ttft_s']:.1f} s, TPOT {p.measured['tpot_s'] * 1e3:.2f} ms) of the "
                f"{a['admitted']:.0f} its concurrency {a['concurrency']:g} and KV cache ({a['kv_room']:.0f} "
                f"requests at ISL + OSL in {ADMIT_MEMORY_FRACTION:.0%} of HBM) admit, with prefill asking "
                f"{a['prefill_share']:.0%} of the chips' peak: the requests queued behind a cap the row does "
                "not record (aiconfigurator rule F, fit/aic_quality.py)"
            )
    return {**out, **campaign_admission_flags(points, out, lambda p: admission(p, catalog))}
