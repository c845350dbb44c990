"""Rule F's figures (fit/aic_bounds.admission): every aggregated aiconfigurator row's decoding requests per
instance (Little's law on its measured TTFT and TPOT) against what its concurrency and KV cache admit.

Prints, per campaign (system, model, framework and release, measured date) at concurrency 256 and above, the
median share of its concurrency that decodes, then every row rule F flags (ratio below
:data:`jalapeno.fit.aic_bounds.ADMIT_FACTOR` with prefill under ``PREFILL_SHARE`` of peak) and the next-lowest unflagged rows,
then every row of a campaign and concurrency with two or more such rows and whether its campaign clause
(fit/aic_admission_campaign.py) flags it. The cost model is never consulted. Run: python scripts/aic_admission_check.py   (needs the aiconfigurator-core package: the calibrate
extra; about 10 s)
"""

from __future__ import annotations

import numpy as np

from jalapeno.fit.aic_admission_campaign import MIN_CAPPED_ROWS, SAME_B, campaign_key
from jalapeno.fit.aic_bounds import ADMIT_FACTOR, PREFILL_SHARE, admission, aic_admission_flags


def main() -> None:
    from jalapeno.fit.validate import load_aiconfigurator

    pts, _ = load_aiconfigurator()
    rows = sorted(((p, a) for p in pts if (a := admission(p)) is not None), key=lambda pa: pa[1]["ratio"])
    camp: dict[tuple, list[float]] = {}
    for p, a in rows:
        if a["concurrency"] >= 256:
            camp.setdefault((p.system, p.model, p.framework), []).append(a["batch"] / a["concurrency"])
    print(
        f"{len(rows)} aggregated rows; rule F factor {ADMIT_FACTOR:g}, prefill share {PREFILL_SHARE:g}; "
        f"{sum(a['ratio'] < ADMIT_FACTOR and a['prefill_share'] < PREFILL_SHARE for _, a in rows)} flagged"
    )
    print("\n| campaign (concurrency >= 256) | rows | median decoding / concurrency |\n|---|---|---|")
    for k, v in sorted(camp.items(), key=lambda kv: np.median(kv[1])):
        print(f"| {' '.join(k)} | {len(v)} | {np.median(v):.2f} |")
    print("\n| row | ISL/OSL | C | layout | decoding | KV room | admitted | ratio | prefill share | flag |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    flag = lambda a: a["ratio"] < ADMIT_FACTOR and a["prefill_share"] < PREFILL_SHARE  # noqa: E731
    shown = [r for r in rows if r[1]["ratio"] < ADMIT_FACTOR] + [r for r in rows if r[1]["ratio"] >= ADMIT_FACTOR][:8]
    for p, a in shown:
        print(
            f"| {p.id} | {p.isl}/{p.osl} | {p.concurrency:g} | {p.deployment.decode.layout.label} "
            f"| {a['batch']:.1f} | {a['kv_room']:.0f} | {a['admitted']:.0f} | {a['ratio']:.2f} | "
            f"{a['prefill_share']:.1%} | {'F' if flag(a) else ''} |"
        )
    flags = aic_admission_flags(pts)
    keys = {campaign_key(p) for p, a in rows if flag(a)}
    keys = {k for k in keys if sum(campaign_key(p) == k and flag(a) for p, a in rows) >= MIN_CAPPED_ROWS}
    print(f"\ncampaign clause (>= {MIN_CAPPED_ROWS} rule-F rows at one concurrency; B within {SAME_B:.0%}):")
    print(
        "| row | ISL/OSL | C | layout | decoding | admitted | ratio | prefill share | flag |\n|---|---|---|---|---|---|---|---|---|"
    )
    for p, a in sorted(((p, a) for p, a in rows if campaign_key(p) in keys), key=lambda pa: pa[0].id):
        tag = "F" if flag(a) else ("clause" if p.id in flags else "")
        print(
            f"| {p.id} | {p.isl}/{p.osl} | {p.concurrency:g} | {p.deployment.decode.layout.label} | {a['batch']:.1f} "
            f"| {a['admitted']:.0f} | {a['ratio']:.2f} | {a['prefill_share']:.1%} | {tag} |"
        )


if __name__ == "__main__":
    main()
