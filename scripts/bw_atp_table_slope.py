"""Blackwell disaggregated attention-TP decode: does the measured-kernel pricer get the batch slope? (issue 18, round 34, gbtp34)

Round 32 (scripts/bw_atp_decode_terms.py) found the decode step of aiconfigurator's disaggregated attention-TP rows on
B200, GB200 and GB300 priced too slow by a per-sequence slope that the model puts in the routed experts
(``moe.experts``): measured slope 0.65-0.87 of the model's. This script asks the brief's three questions of it:

1. *The routed experts a rank reads.* Under attention TP (DP 1) every TP rank holds the whole batch (the all-reduce
   before the MoE leaves B tokens on every rank) and an EP rank runs its E/ep local experts over the tokens routed to
   them; a grouped-GEMM MoE launches tiles only for experts with tokens, so the weights read are the touched
   experts'. The serving op table (cost/moe.experts_touched_on_rank) counts a uniform-random draw:
   n·(1 − (1 − k/E)^B) of a rank's n = E/ep experts. aiconfigurator's collectors route their kernel tables by
   ``balanced_logits`` (fit/kernels.MOE_TOUCHED_RULES): min(n, B·k/ep) per rank. Printed for DeepSeek-R1 at EP8.
2. *The measured-kernel pricer.* Every row re-served with ``--pricer table`` (fit/table_lookup: the MoE surface is the
   log ratio of the measured ``moe_perf`` time to the roofline's op, the op read with the calibration sets' ``uniform``
   rule), and, as a what-if, with the surface read by the collector's own ``balanced`` rule (fit/kernels.moe_rows
   patched inside this process only; nothing written). Per (system, engine) the measured / model slope of TPOT
   against B, and the error by B band (all, held out, fit), per expert format.
3. *The aggregated rows with attention TP* (same kernels, no disaggregation): interactivity error of aiconfigurator's
   B200/B300/GB200/GB300 DeepSeek-R1 and Kimi K2.5 aggregated rows whose attention runs TP (DP 1), no MTP, by
   concurrency, from the validate CSVs (roofline and, if given, ``--pricer table``).

Usage (about 3 min):
  jalapeno validate --json -o ALL.csv
  jalapeno validate --pricer table -s b200,b300,gb200-nvl72,gb300-nvl72 --json -o TABLE.csv   (optional, item 3)
  python scripts/bw_atp_table_slope.py ALL.csv [TABLE.csv]
  python scripts/bw_atp_table_slope.py --validate {roofline-balanced,table-balanced} OUT.csv   (about 1 min each)

Since round 35 the shipped calibration sets and table pricer read the rows with their own collector routing
(``collector``, fit/kernels.CALIBRATION_TOUCHED_RULE; scripts/moe_collector_reading.py), not ``uniform``: the figures
docs/gap_aic_itl.md quotes from this script were made before, and "roofline" / "table" here now mean that reading.

``--validate`` writes a validate CSV under one what-if (nothing else written): ``roofline-balanced``, every NVIDIA
system's MoE set refitted under the balanced rule (:func:`balanced_moe_everywhere`); ``table-balanced``, the table
pricer of the four Blackwell systems read so (:func:`balanced_table_reading`). Judge them as any validate CSV.
``--fit-stacks`` (about 4 min) refits the stacks under ``roofline-balanced`` and WRITES data/stack_fits.toml, so that a
following ``--validate roofline-balanced`` judges the refit with its stacks; restore the shipped file afterwards with
``git checkout src/jalapeno/data/stack_fits.toml``.
"""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bw_atp_decode_terms as terms  # noqa: E402

#: B bands of the round-32 table (sequences per decode instance)
BANDS = [0, 2, 8, 1e9]
BAND_LABELS = ["B <= 2", "2 < B <= 8", "B > 8"]


def touched_per_rank(b, num_experts: int = 256, top_k: int = 8, ep: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """(uniform, balanced) distinct experts of one EP rank that ``b`` tokens touch: n·(1 − (1 − k/E)^b) and
    min(n, b·k/ep), n = E/ep (DeepSeek-R1: E 256, k 8)."""
    b = np.asarray(b, dtype=float)
    n = num_experts / ep
    return n * (1.0 - (1.0 - top_k / num_experts) ** b), np.minimum(n, b * top_k / ep)


@contextlib.contextmanager
def balanced_table_reading():
    """The what-if: inside the block fit/table_lookup reads the ``moe_perf`` rows with the ``balanced`` touched rule
    (the collector's routing) instead of ``uniform``; the built surfaces are dropped on entry and exit."""
    from jalapeno.fit import kernels, table_lookup

    orig = table_lookup.moe_rows
    table_lookup.moe_rows = lambda df, _rule=None, **kw: kernels.moe_rows(df, "balanced", **kw)
    table_lookup._cached.cache_clear()
    try:
        yield
    finally:
        table_lookup.moe_rows = orig
        table_lookup._cached.cache_clear()


def balanced_moe_params(system_name: str) -> dict:
    """The system's MoE kernel parameters (``{"moe": {fmt: {...}}}``) refitted as fit/calibrate.py fits them (its
    ``moe_perf`` table, kernel paths it lacks from its predecessor's) but with the ``balanced`` touched rule; returned,
    not written."""
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, KERNEL_PATH_SIBLING, fill_missing_kernel_paths, load_table
    from jalapeno.fit.kernels import MOE_KEYS, fit_moe
    from jalapeno.specs.catalog import load_system

    sdir = AIC_SYSTEM_DIRS[system_name]
    moe, _ = load_table(sdir, "moe", "moe_perf")
    if KERNEL_PATH_SIBLING.get(sdir, sdir) != sdir:
        sib, _ = load_table(KERNEL_PATH_SIBLING[sdir], "moe", "moe_perf")
        moe, _ = fill_missing_kernel_paths(moe, sib, MOE_KEYS, "moe_dtype", KERNEL_PATH_SIBLING[sdir])
    return fit_moe(moe, load_system(system_name), touched_rule="balanced")[0]


@contextlib.contextmanager
def balanced_roofline_moe(systems=terms.SYSTEMS):
    """The roofline what-if: inside the block the rows' roofline pricer carries the MoE parameters of
    :func:`balanced_moe_params` (stack fixed costs as shipped, not refitted)."""
    from jalapeno.specs.catalog import load_system

    params = {load_system(n).name: balanced_moe_params(load_system(n).name) for n in systems}
    orig = terms.load_any_pricer

    def patched(system, *args, **kwargs):
        pr = orig(system, *args, **kwargs)
        return pr.with_efficiency(pr.efficiency.with_overrides(params[load_system(system).name]))

    terms.load_any_pricer = patched
    try:
        yield params
    finally:
        terms.load_any_pricer = orig


@contextlib.contextmanager
def balanced_moe_everywhere(systems: tuple | None = None):
    """The roofline what-if for a whole ``jalapeno validate``: inside the block cost/pricer.load_pricer gives every
    NVIDIA system with kernel tables (fit/kernel_tables.AIC_SYSTEM_DIRS) its calibrated set with the MoE parameters
    of :func:`balanced_moe_params` (``systems``: only these); other systems, bands and the stacks as shipped."""
    from jalapeno.cost import pricer as pricer_mod
    from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS

    params = {n: p for n in (systems or AIC_SYSTEM_DIRS) if (p := balanced_moe_params(n)).get("moe")}
    orig = pricer_mod.load_pricer

    def patched(system, efficiency="calibrated", overrides=(), stack=None):
        pr = orig(system, efficiency, overrides, stack)
        if efficiency == "calibrated" and pr.system.name in params:
            pr = pr.with_efficiency(pr.efficiency.with_overrides(params[pr.system.name]))
        return pr

    pricer_mod.load_pricer = patched
    try:
        yield params
    finally:
        pricer_mod.load_pricer = orig


#: the what-ifs ``--validate`` runs: (context, extra validate arguments)
WHAT_IFS = {
    "roofline-balanced": (balanced_moe_everywhere, []),
    "table-balanced": (balanced_table_reading, ["--pricer", "table", "-s", "b200,b300,gb200-nvl72,gb300-nvl72"]),
}


def validate_what_if(name: str, out: str) -> None:
    """``jalapeno validate --json -o out`` under the what-if ``name`` (:data:`WHAT_IFS`), in this process."""
    import runpy

    ctx, extra = WHAT_IFS[name]
    argv = sys.argv
    sys.argv = ["jalapeno", "validate", "--json", "-o", out, *extra]
    try:
        with ctx():
            runpy.run_module("jalapeno", run_name="__main__", alter_sys=False)
    except SystemExit as e:
        if e.code not in (0, None):
            raise
    finally:
        sys.argv = argv


def slope_table(s: pd.DataFrame) -> pd.DataFrame:
    """Per (system, engine) of the attention-TP rows: n, error median, measured / model TPOT slope against B."""
    out = []
    for k, g in s[s.lay == "ATP"].groupby(["system", "engine"]):
        _, sm = terms.line(g.B, g.measured)
        _, sp = terms.line(g.B, g.model)
        out.append(
            {
                "system": k[0],
                "engine": k[1],
                "n": len(g),
                "err%": round(float(g["err%"].median()), 1),
                "s_ratio": round(sm / sp, 2) if sp else np.nan,
            }
        )
    return pd.DataFrame(out).set_index(["system", "engine"])


def band_table(s: pd.DataFrame) -> pd.DataFrame:
    """Attention-TP interactivity error medians (%) by B band, all / held out / fit, and per expert format."""
    atp = s[s.lay == "ATP"].copy()
    atp["band"] = pd.cut(atp.B, BANDS, labels=BAND_LABELS)
    cols = {"all": atp, "held-out": atp[atp.split != "fit"], "fit": atp[atp.split == "fit"]}
    cols.update({f"{f} all": atp[atp.fmt == f] for f in sorted(atp.fmt.unique())})
    return pd.DataFrame({c: d.groupby("band", observed=True)["err%"].median().round(1) for c, d in cols.items()})


def agg_rows(csv: str, disagg: bool = False) -> pd.DataFrame:
    """aiconfigurator interactivity rows of Blackwell DeepSeek-R1 / Kimi K2.5 whose (decode) attention runs TP (DP 1),
    no MTP, no quality flag: aggregated ones, or with ``disagg`` the disaggregated ones (the decode pool's layout)."""
    d = pd.read_csv(csv)
    d = d[
        (d.source == "aiconfigurator")
        & (d.metric == "interactivity")
        & ((d["mode"] == "disagg") == disagg)
        & d.quality.isna()
        & d.model.isin(["deepseek-r1", "kimi-k2.5"])
        & d.system.isin(["b200", "b300", "gb200-nvl72", "gb300-nvl72"])
        & ~d.deployment.str.contains("MTP")
    ]
    tp = d.deployment.map(lambda s: re.search(("D \\d+x\\(" if disagg else "") + r"attn TP(\d+) DP(\d+)", s))
    d = d[tp.map(lambda m: m is not None and int(m.group(1)) > 1 and int(m.group(2)) == 1)]
    return d


def disagg_table(all_csv: str, table_csv: str) -> pd.DataFrame:
    """Error medians (%) per system of the disaggregated attention-TP rows, roofline and ``--pricer table`` (the
    validate CSVs)."""
    d = agg_rows(all_csv, disagg=True)
    t = pd.read_csv(table_csv)[["source", "id", "metric", "error"]]
    d = d.merge(t, on=["source", "id", "metric"], how="left", suffixes=("", "_table"))
    g = d.groupby("system")
    return pd.DataFrame(
        {"n": g.size(), "roofline": (g.error.median() * 100).round(1), "table": (g.error_table.median() * 100).round(1)}
    )


def agg_table(all_csv: str, table_csv: str | None) -> pd.DataFrame:
    """Error medians (%) of :func:`agg_rows` by concurrency band; the 1.3.0rc1 harness job left out (docs/gap_aic_itl.md:
    its TPOT is flat at many times its byte floor)."""
    d = agg_rows(all_csv)
    d = d[~d.framework.str.contains("1.3.0rc1")]
    if table_csv:
        t = pd.read_csv(table_csv)[["source", "id", "metric", "error"]]
        d = d.merge(t, on=["source", "id", "metric"], how="left", suffixes=("", "_table"))
    d["band"] = pd.cut(d.concurrency, [0, 8, 32, 64, 1e9], labels=["C <= 8", "8 < C <= 32", "32 < C <= 64", "C > 64"])
    g = d.groupby("band", observed=True)
    out = pd.DataFrame({"n": g.size(), "roofline": (g.error.median() * 100).round(1)})
    if table_csv:
        out["table"] = (g.error_table.median() * 100).round(1)
    return out


def fit_stacks_balanced() -> None:
    """scripts/fit_stacks.py run inside :func:`balanced_moe_everywhere`: it WRITES data/stack_fits.toml (the what-if's
    stacks; put the shipped file back with ``git checkout src/jalapeno/data/stack_fits.toml``)."""
    import runpy

    argv = sys.argv
    sys.argv = ["fit_stacks.py"]
    try:
        with balanced_moe_everywhere():
            runpy.run_path(str(Path(__file__).resolve().parent / "fit_stacks.py"), run_name="__main__")
    finally:
        sys.argv = argv


def main() -> None:
    if sys.argv[1:] == ["--fit-stacks"]:
        fit_stacks_balanced()
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--validate":
        if sys.argv[2] not in WHAT_IFS:
            raise SystemExit(f"--validate: unknown what-if {sys.argv[2]!r}; use one of {', '.join(WHAT_IFS)}")
        validate_what_if(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) < 2:
        raise SystemExit(
            "usage: python scripts/bw_atp_table_slope.py ALL.csv [TABLE.csv] "
            "(write them with: jalapeno validate --json -o ALL.csv; "
            "jalapeno validate --pricer table -s b200,b300,gb200-nvl72,gb300-nvl72 --json -o TABLE.csv)"
        )
    csv = sys.argv[1]
    pd.set_option("display.width", 250)
    u, b = touched_per_rank([1, 2, 4, 8, 16, 32, 64])
    print("== 1. DeepSeek-R1 EP8: experts of one rank (32) touched by B tokens, B = 1 2 4 8 16 32 64")
    print("   uniform draw (serving op table):", " ".join(f"{x:.1f}" for x in u))
    print("   collector's balanced_logits:    ", " ".join(f"{x:.1f}" for x in b))
    runs = {"roofline": terms.rows(csv, "roofline"), "table": terms.rows(csv, "table")}
    with balanced_table_reading():
        runs["table, balanced reading"] = terms.rows(csv, "table")
    with balanced_roofline_moe() as params:
        runs["roofline, MoE refit balanced"] = terms.rows(csv, "roofline")
    print(
        "   MoE HBM fractions refitted under the balanced rule (calibrated sets: the uniform rule): "
        + "; ".join(
            f"{n} " + ", ".join(f"{f} {v['hbm_fraction']:.3f}" for f, v in p["moe"].items() if "hbm_fraction" in v)
            for n, p in params.items()
        )
    )
    runs = {k: v[v.q == ""] for k, v in runs.items()}
    print("\n== 2. attention-TP rows per (system, engine): error median % and measured / model slope, by pricer")
    print(pd.concat({k: slope_table(v) for k, v in runs.items()}, axis=1).to_string())
    for k, v in runs.items():
        print(
            f"\n-- {k}: attention-TP error median % by B band (n {int((v.lay == 'ATP').sum())}); "
            f"attention-DP rows median {v[v.lay == 'ADP']['err%'].median():.1f}"
        )
        print(band_table(v).to_string())
    if len(sys.argv) > 2:
        print("\n-- the validate CSVs: disaggregated attention-TP rows (decode pool TP, DP 1; no MTP), error median %")
        print(disagg_table(csv, sys.argv[2]).to_string())
    print(
        "\n== 3. aggregated attention-TP rows (B200/B300/GB200/GB300 DeepSeek-R1, Kimi K2.5; no MTP): error median % "
        "by concurrency"
    )
    print(agg_table(csv, sys.argv[2] if len(sys.argv) > 2 else None).to_string())


if __name__ == "__main__":
    main()
