"""Is the Dynamo-served TensorRT-LLM disaggregated TTFT error a fixed per-request term missing and a per-token term
overcounted? (issue 18, round 36; diagnosis, nothing shipped)

Every aiconfigurator TensorRT-LLM disaggregated row ran in a Dynamo runtime image (its label is a
fit/aic_release.DYNAMO_RUNTIME_TRTLLM tag), served through Dynamo's front end and two worker hops, while the
aggregated TensorRT-LLM rows of the same client ran `trtllm-serve`; the client front end a + b·ISL they share
(data/stack_fits.toml ``[fits."trtllm"] clients."inferencex-db"``) is fitted by fit/stack_fit.py at concurrency <= 4,
where nearly all of that client's fit rows are aggregated. Each unflagged row of a validate CSV (``jalapeno validate
--json -o FILE``: all rows, with ``split`` and ``quality``) is predicted three times, as scripts/gb_trt_disagg_residual.py
does: as shipped, without the idle-start burst, and without the burst and the front end; the differences are the
burst and the front end, the rest (``core``) is the accelerator's part (prefill, hand-off, decode-side waits). The
front end and the burst enter the TTFT as sums (serve/ttft_parts.py), so each what-if recomposes them:

1. ``c<=4``: a Dynamo-path front end (a, b) refitted as fit/stack_fit.py fits one (fit-split rows at concurrency <= 4,
   grid argmin of the mean |log(predicted / measured)|; a plain argmin, not fit/bagging.py's bagged one), the burst
   share as shipped;
2. ``all loads``: (a, b) refitted on the fit split's rows at every load, the burst share as shipped (the shape asked
   about; fit/stack_fit.py keeps the front end to C <= 4 so that it does not absorb the queue);
3. ``+ share``: as 2 with the client's prefill burst share refitted too (over fit/stack_fit.BURST_GRID).

Every fit leaves out the rows timed without a client warm-up (fit/client_warmup.cold_client_ids), as fit/stack_fit.py
does; the errors keep them.

It prints the parts of the low-load rows, each what-if's values, and per system the median |error| / median error
of the TensorRT-LLM disaggregated rows (fit split and held out) and of every held-out aiconfigurator TTFT row (the
issue's judgement: not in the fit split, unflagged). Rows whose TTFT carries no front end (a saturated closed
loop's cycle sets it) keep their prediction; the cycle's own shift (tens of ms in cycles of seconds) is left out.
Run: python scripts/dynamo_disagg_front_end36.py VALIDATE.csv (a few minutes: three predictions of 151 rows)
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
import pandas as pd

#: the fitted front end's search box (fit/stack_fit.BOUNDS: request_overhead_s (0, 1) s is cut to 0.3 s, where no
#: argmin here lies; prompt_overhead_s_per_token (0, 50) µs), on a 2.5 ms x 0.1 µs grid
A_GRID_S = np.round(np.arange(0.0, 0.3001, 0.0025), 4)
B_GRID_S_PER_TOKEN = np.round(np.arange(0.0, 50.001, 0.1), 1) * 1e-6
#: the prefill burst share the shipped TensorRT-LLM ``inferencex-db`` client carries (data/stack_fits.toml)
SHIPPED_SHARE = 0.35
#: fit/stack_fit.FRONTEND_MAX_CONCURRENCY
FRONT_MAX_C = 4
#: InferenceX's prompts are uniform in [0.8 L, L] (specs/workload.INFERENCEX_RANGE_RATIO): mean 0.9 L
MEAN_ISL = 0.9
_NO_BURST = 1e-12
SYSTEMS = ("b200", "gb200-nvl72", "gb300-nvl72", "h100", "h200")


def recompose(d: pd.DataFrame, a_s: float, b_s_per_token: float, share_scale: float = 1.0) -> np.ndarray:
    """The TTFT of rows with columns ``core``, ``burst``, ``front`` (s, the parts) and ``isl`` (the nominal length L)
    with the front end a + b·0.9·L and the burst scaled by ``share_scale`` (a new share over the shipped one); rows
    whose ``front`` is 0 (no front end in their TTFT) keep core + burst·share_scale.

    >>> d = pd.DataFrame({"core": [0.1, 1.0], "burst": [0.2, 0.0], "front": [0.03, 0.0], "isl": [1000, 1000]})
    >>> recompose(d, 0.05, 1e-6, 0.5).round(4).tolist()  # 0.1 + 0.1 + 0.05 + 0.0009; the second row unchanged
    [0.2509, 1.0]
    """
    has = d.front.to_numpy() > 0
    front = a_s + b_s_per_token * MEAN_ISL * d.isl.to_numpy()
    return d.core.to_numpy() + share_scale * d.burst.to_numpy() + np.where(has, front, 0.0)


def fit_front_end(d: pd.DataFrame, share_scale: float = 1.0) -> tuple[float, float, float]:
    """(a s, b s/token, loss): the grid argmin over :data:`A_GRID_S` x :data:`B_GRID_S_PER_TOKEN` of the mean
    |log(recomposed / measured)| of rows ``d`` (columns of :func:`recompose` plus ``meas``) that carry a front end."""
    d = d[d.front > 0]
    if d.empty:
        raise SystemExit(
            "no row with a front end to fit: the rows' 'front' column is 0 everywhere (fix: pass the "
            "disaggregated TensorRT-LLM rows of a validate CSV)"
        )
    base = (d.core + share_scale * d.burst).to_numpy()
    x, m = MEAN_ISL * d.isl.to_numpy(), d.meas.to_numpy()
    pred = base[None, None, :] + A_GRID_S[:, None, None] + B_GRID_S_PER_TOKEN[None, :, None] * x[None, None, :]
    loss = np.mean(np.abs(np.log(pred / m)), axis=2)
    i, j = np.unravel_index(np.argmin(loss), loss.shape)
    return float(A_GRID_S[i]), float(B_GRID_S_PER_TOKEN[j]), float(loss[i, j])


def fit_share(d: pd.DataFrame, a_s: float, b_s_per_token: float) -> float:
    """The prefill burst share over fit/stack_fit.BURST_GRID minimising the mean |log| of rows ``d`` with front end
    (a, b)."""
    from jalapeno.fit.stack_fit import BURST_GRID

    loss = [
        np.mean(np.abs(np.log(recompose(d, a_s, b_s_per_token, w / SHIPPED_SHARE) / d.meas.to_numpy())))
        for w in BURST_GRID
    ]
    return float(BURST_GRID[int(np.argmin(loss))])


def trt_disagg_points(validate_csv: str) -> tuple[list, pd.Series]:
    """(points, split): the unflagged TensorRT-LLM disaggregated aiconfigurator points of ``validate_csv`` (``jalapeno
    validate --json -o FILE``, all rows) and each one's split by id; one clear error naming the file and the fix when it
    cannot be read or lacks a column (also scripts/adp_prefill_floor37.py's reading)."""
    from jalapeno.fit.validate import load_aiconfigurator

    fix = "(fix: write it with `jalapeno validate --json -o FILE`, all rows)"
    try:
        csv = pd.read_csv(validate_csv)
    except (FileNotFoundError, pd.errors.EmptyDataError) as err:
        raise SystemExit(f"{validate_csv}: cannot read it ({err.__class__.__name__}) {fix}") from None
    need = {"source", "id", "metric", "quality", "split"}
    if need - set(csv.columns):
        raise SystemExit(f"{validate_csv}: missing column(s) {sorted(need - set(csv.columns))} {fix}")
    csv = csv[(csv.source == "aiconfigurator") & (csv.metric == "ttft_s") & csv.quality.isna()]
    split = csv.set_index("id").split
    pts = [
        p
        for p in load_aiconfigurator()[0]
        if p.mode == "disagg" and p.framework.startswith("trtllm") and p.id in split.index
    ]
    return pts, split


def parts(validate_csv: str) -> pd.DataFrame:
    """The unflagged TensorRT-LLM disaggregated aiconfigurator rows of ``validate_csv`` with their measured TTFT, the
    shipped prediction and its parts (``core``, ``front``, ``burst``, s), the row's split and whether its client ran
    without a warm-up (``cold``)."""
    from jalapeno.fit.validate import point_stack, predict_points

    pts, split = trt_disagg_points(validate_csv)

    def ttft(stack_of) -> pd.Series:
        got = predict_points(pts, stack_of=stack_of)
        return got[got.metric == "ttft_s"].set_index("id").predicted

    full = ttft(point_stack)
    no_burst = ttft(lambda p: dataclasses.replace(point_stack(p), prefill_burst_fraction=_NO_BURST))
    bare = ttft(
        lambda p: dataclasses.replace(
            point_stack(p), prefill_burst_fraction=_NO_BURST, request_overhead_s=0.0, prompt_overhead_s_per_token=0.0
        )
    )
    from jalapeno.fit.client_warmup import cold_client_ids

    cold = cold_client_ids(pts)
    return pd.DataFrame(
        [
            {
                "id": p.id,
                "system": p.system,
                "framework": p.framework,
                "isl": p.isl,
                "osl": p.osl,
                "C": p.concurrency,
                "cold": p.id in cold,
                "prefill_dp": p.deployment.prefill.layout.dp,
                "split": split[p.id],
                "meas": p.measured["ttft_s"],
                "full": full[p.id],
                "burst": full[p.id] - no_burst[p.id],
                "front": no_burst[p.id] - bare[p.id],
                "core": bare[p.id],
            }
            for p in pts
        ]
    )


def _med(pred, meas) -> str:
    e = np.asarray(pred) / np.asarray(meas) - 1
    return f"{np.median(np.abs(e)) * 100:5.1f} / {np.median(e) * 100:+5.1f}" if len(e) else "    -"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("validate_csv", help="`jalapeno validate --json -o FILE` (all rows)")
    args = ap.parse_args()
    d = parts(args.validate_csv)
    fit = d[(d.split == "fit") & ~d.cold]  # fit/stack_fit.py: no cold row in the front-end and burst fits
    low = d[(d.C <= 96) & (d.front > 0) & (d.osl == 1024)].copy()
    low["need_front"] = low.meas - low.core - low.burst  # what the front end would have to be
    cols = ["system", "framework", "isl", "C", "prefill_dp", "split", "meas", "core", "burst", "front", "need_front"]
    with pd.option_context("display.width", 200, "display.max_rows", 200, "display.float_format", "{:.3f}".format):
        print("rows with ISL/OSL x/1024 at C <= 96 carrying a front end (s; need_front = measured - core - burst)")
        print(low.sort_values(["system", "prefill_dp", "isl", "C"])[cols].to_string(index=False))
    a1, b1, _ = fit_front_end(fit[fit.C <= FRONT_MAX_C])
    a2, b2, _ = fit_front_end(fit)
    w3 = fit_share(fit, a2, b2)
    a3, b3, _ = fit_front_end(fit, w3 / SHIPPED_SHARE)
    w3 = fit_share(fit, a3, b3)
    cases = {
        "shipped": (None, None, SHIPPED_SHARE),
        "c<=4": (a1, b1, SHIPPED_SHARE),
        "all loads": (a2, b2, SHIPPED_SHARE),
        "+ share": (a3, b3, w3),
    }
    print(f"\nfit rows at C <= {FRONT_MAX_C} with a front end: {int(((fit.C <= FRONT_MAX_C) & (fit.front > 0)).sum())}")
    for name, (a, b, w) in cases.items():
        if a is None:
            print(f"{name:>9}: a + b·L as data/stack_fits.toml, share {w}")
            d[name] = d.full
        else:
            print(f"{name:>9}: a = {a * 1e3:.1f} ms, b = {b * 1e6:.1f} µs/token, share {w}")
            d[name] = recompose(d, a, b, w / SHIPPED_SHARE)
    print("\nTensorRT-LLM disaggregated TTFT, median |error| / median error % (" + " | ".join(cases) + ")")
    for sp in ("fit", "held_out"):
        for sysname in ("ALL", *SYSTEMS):
            g = d[d.split == sp] if sysname == "ALL" else d[(d.split == sp) & (d.system == sysname)]
            if len(g):
                print(f"  {sp:8} {sysname:12} n {len(g):3}  " + " | ".join(_med(g[c], g.meas) for c in cases))
    csv = pd.read_csv(args.validate_csv)
    ho = csv[(csv.source == "aiconfigurator") & (csv.metric == "ttft_s") & csv.quality.isna() & (csv.split != "fit")]
    print("\nevery held-out aiconfigurator TTFT row (the issue's judgement), with the what-if on the rows above")
    for sysname in ("ALL", *SYSTEMS):
        g = ho if sysname == "ALL" else ho[ho.system == sysname]
        g = g[g.error.notna()]
        out = []
        for c in cases:
            pred = g.set_index("id").predicted.copy()
            sub = d.set_index("id")[c]
            pred.loc[pred.index.intersection(sub.index)] = sub
            out.append(_med(pred.to_numpy(), g.measured.to_numpy()))
        print(f"  {sysname:12} n {len(g):4}  " + " | ".join(out))


if __name__ == "__main__":
    main()
