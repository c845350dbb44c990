"""The NVIDIA MoE kernel fits read under each routing rule: what the round-35 recalibration changed (issue 18).

aiconfigurator's ``moe_perf`` rows are timed under its collector's routing (fit/collector_routing.py):
``balanced_logits`` for the plain top-k kernel paths, and for TensorRT-LLM's NVFP4 ``min_latency`` rows
(B200, GB200) the DeepSeek grouped gate on those logits. Until round 35 the calibration sets read every row
with the uniform-random count of experts touched (``uniform``); since then with the rows' own routing
(``collector``, fit/kernels.CALIBRATION_TOUCHED_RULE). For every NVIDIA system with kernel tables this script
fits the MoE set both ways (fit/kernels.fit_moe, the calibration's own table and imputed kernel paths) and
prints, per compute format, the MoE HBM fraction and the fit's median / p90 error on its fit rows and on the
held-out DeepSeek shape. Nothing is written. docs/gap_aic_itl.md ("round 35") quotes its output; the
end-to-end figures are ``jalapeno validate --held-out`` before and after the recalibration.

Run: python scripts/moe_collector_reading.py [--systems b200,gb200-nvl72]   (about a minute; needs the
[calibrate] extra, aiconfigurator-core)
"""

from __future__ import annotations

import argparse

#: the two readings compared: the calibration's rule before round 35 and since
RULES = ("uniform", "collector")


def moe_fits(system_name: str) -> dict[str, tuple[dict, dict]]:
    """rule → (parameters, report) of fit/kernels.fit_moe on the system's ``moe_perf`` table read under it, with
    the kernel paths its table lacks imputed from its predecessor's as fit/calibrate.calibrate_system does."""
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, KERNEL_PATH_SIBLING, fill_missing_kernel_paths, load_table
    from jalapeno.fit.kernels import MOE_KEYS, fit_moe
    from jalapeno.specs.catalog import load_system

    sdir = AIC_SYSTEM_DIRS[system_name]
    moe, _ = load_table(sdir, "moe", "moe_perf")
    if KERNEL_PATH_SIBLING.get(sdir, sdir) != sdir:
        sib, _ = load_table(KERNEL_PATH_SIBLING[sdir], "moe", "moe_perf")
        moe, _ = fill_missing_kernel_paths(moe, sib, MOE_KEYS, "moe_dtype", KERNEL_PATH_SIBLING[sdir])
    system = load_system(system_name)
    return {rule: fit_moe(moe, system, touched_rule=rule) for rule in RULES}


def rows_of(system_name: str) -> list[dict]:
    """One row per compute format: HBM fraction and errors (%) under each rule."""
    fits = moe_fits(system_name)
    out = []
    for fmt in fits[RULES[0]][1].get("formats", {}):
        row = {"system": system_name, "format": fmt}
        for rule in RULES:
            params, rep = fits[rule]
            r = rep["formats"].get(fmt, {})
            row[f"{rule} hbm"] = params.get("moe", {}).get(fmt, {}).get("hbm_fraction")
            for part, key in (("fit", "fit"), ("held-out", "held_out_deepseek_shape")):
                e = r.get(key, {})
                row[f"{rule} {part}"] = (
                    f"{100 * e['median_ape']:.1f} / {100 * e['p90_ape']:.0f}" if "median_ape" in e else "-"
                )
        out.append(row)
    return out


def main() -> None:
    import pandas as pd

    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default=",".join(AIC_SYSTEM_DIRS), help="comma-separated system names")
    names = [s for s in ap.parse_args().systems.split(",") if s]
    unknown = sorted(set(names) - set(AIC_SYSTEM_DIRS))
    if unknown:
        raise SystemExit(
            f"--systems: no kernel tables for {', '.join(unknown)}; use some of {', '.join(AIC_SYSTEM_DIRS)}"
        )
    rows = [r for n in names for r in rows_of(n)]
    pd.set_option("display.width", 200)
    print(
        "MoE kernel fits, median / p90 |error| (%) on the fit rows and the held-out DeepSeek shape, "
        "and the fitted HBM fraction, per routing reading:"
    )
    print(pd.DataFrame(rows).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
