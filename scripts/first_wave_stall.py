"""SGLang-ROCm's one-off first-wave stall, from a gfx942 run that published mean, median and p99 TTFT.

The measured MI325X DeepSeek-R1 8k/1k SGLang rows (InferenceX rows 76-80, image v0.5.19, **mean**
TTFT) sit 0.31-0.48 s above the model at every concurrency (scripts/ttft_offset.py): flat in load.
A flat offset in a mean has two readings (docs/model.md §12): a per-request constant (mean and
median alike) or a one-off stall S that the run's first wave alone meets (its C requests of the
R·C counted, R = serve/queueing.REQUESTS_PER_USER: + S/R on the mean, nothing on the median).

SemiAnalysisAI/InferenceX issue #890 (Klaud-Cold, 2026-03-08; runs 22811630847 and 22811631118)
published one gfx942 SGLang run with all three statistics: ``dsr1-fp8-mi325x-sglang``, image
``lmsysorg/sglang:v0.5.9-rocm700-mi30x``, TP8 EP1, 1k/1k, the same client (``--num-warmups 2·C``,
``--num-prompts 10·C``):

    C = 4: mean 290.9 ms, median 114.9 ms, p99 1,305.4 ms
    C = 8: mean 418.1 ms, median 118.8 ms, p99 2,611.6 ms

The median is a tenth of a second and the mean 2.5-3.5x it, with a p99 of 1.3-2.6 s: a few requests
carry the excess — the one-off reading. What the model lacks is the measured mean − median beyond
its own (its first wave and steady skew, served with no stall), times R:

    S_i = R · [(mean − median)_measured − (mean − median)_model]

This script computes S_i at both points with the deployment of row 76 (MI325X TP8, the same
``dsr1_fp8_mi325x.sh`` flags; rows 26/34, the v0.5.9 image's, carry no deployment) served with
InferenceX's 1k/1k workload at C = 4 and 8, and S = their mean — the value
``first_wave_stall_s`` of the ``sglang-rocm`` profile in data/stacks.toml (its fit split: the two
issue #890 points; nothing of the validation rows). It then reports, held out, rows 76-80 (a later
image, 8k prompts) with S = 0 and with S, and the p99 the model gives the issue's points (not fitted).

Run: python scripts/first_wave_stall.py [--check]   (seconds; the last line is the value for data/stacks.toml;
``--check``: exit 1 when data/stacks.toml's value is more than half a unit of its last written digit (5 ms) from the
fit — a step of scripts/recalibrate.py)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

import numpy as np

from jalapeno.fit.fitted_files import check_copied_value
from jalapeno.fit.median_front import ISSUE_890_TTFT, ISSUE_WORKLOAD
from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.fit.validate import point_stack
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.queueing import REQUESTS_PER_USER
from jalapeno.specs.stacks import get_stack

#: SemiAnalysisAI/InferenceX issue #890: concurrency -> (mean, median, p99) TTFT in s (fit/median_front.ISSUE_890_TTFT)
ISSUE_890 = ISSUE_890_TTFT
#: the validation row whose deployment (recipe flags, layout, engine) the issue's runs share
RECIPE_ROW = "inferencex_points:76"
#: the issue's workload: 1k/1k, InferenceX's length range
#: the held-out rows: MI325X 8k/1k on SGLang v0.5.19 (mean TTFT)
HELD_OUT = tuple(f"inferencex_points:{r}" for r in (76, 77, 78, 79, 80))
#: the profile whose ``first_wave_stall_s`` the fit sets; data/stacks.toml writes it in s to two decimals
PROFILE, CHECK_TOL_S = "sglang-rocm", 5e-3


def _serve(p, concurrency, stall: float | None, wl=None):
    """Point ``p``'s deployment at ``concurrency`` (list), with its stack's first-wave stall set to
    ``stall`` (None: the profile's own)."""
    stack = point_stack(p)
    if stall is not None:
        stack = dataclasses.replace(stack, first_wave_stall_s=stall)
    model, pricer, dep, own_wl = priced_point(p, stack=stack)
    return serve_at_concurrency(model, pricer, dep, wl or own_wl, list(concurrency))


def fitted_stall() -> tuple[float, dict]:
    """(S, {C: S_C}) from issue #890's two points (module docstring), s."""
    pts, _ = load_inferencex(DEFAULT_POINTS)
    recipe = next(p for p in pts if p.id == RECIPE_ROW)
    cs = sorted(ISSUE_890)
    run = _serve(recipe, cs, 0.0, ISSUE_WORKLOAD)
    per = {}
    for i, c in enumerate(cs):
        mean, median, _ = ISSUE_890[c]
        per[c] = REQUESTS_PER_USER * ((mean - median) - (float(run.ttft_s[i]) - float(run.ttft_p50_s[i])))
    return float(np.mean(list(per.values()))), per


def check() -> int:
    """0 when data/stacks.toml's ``first_wave_stall_s`` is the fit's (within :data:`CHECK_TOL_S`), else 1 with the fix."""
    s, _ = fitted_stall()
    return check_copied_value(
        f"{PROFILE} first_wave_stall_s",
        get_stack(PROFILE).first_wave_stall_s,
        s,
        CHECK_TOL_S,
        lambda v: f"{v:.2f} s",
        f"write first_wave_stall_s = {s:.2f} in data/stacks.toml (and its source text)",
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only say whether data/stacks.toml's value is the fit's")
    if ap.parse_args().check:
        sys.exit(check())
    s, per = fitted_stall()
    pts, _ = load_inferencex(DEFAULT_POINTS)
    recipe = next(p for p in pts if p.id == RECIPE_ROW)
    print("fit (issue #890, MI325X 1k/1k v0.5.9): S_C = R x [(mean - median)_measured - (mean - median)_model]")
    cs = sorted(ISSUE_890)
    with_s = _serve(recipe, cs, s, ISSUE_WORKLOAD)
    for i, c in enumerate(cs):
        mean, median, p99 = ISSUE_890[c]
        print(
            f"  C={c}: measured mean {mean:.3f} median {median:.3f} p99 {p99:.3f}; S_C = {per[c]:.3f}; "
            f"model with S: mean {with_s.ttft_s[i]:.3f} median {with_s.ttft_p50_s[i]:.3f} p99 {with_s.ttft_p99_s[i]:.3f}"
        )
    print(f"S = mean of S_C = {s:.3f} s")
    print("held out (rows 76-80, MI325X 8k/1k v0.5.19, mean TTFT): measured | S = 0 (error) | S (error)")
    errs0, errs1 = [], []
    for p in pts:
        if p.id not in HELD_OUT:
            continue
        meas = p.measured["ttft_s"]
        a = float(_serve(p, [p.concurrency], 0.0).ttft_s[0])
        b = float(_serve(p, [p.concurrency], s).ttft_s[0])
        errs0.append(a / meas - 1)
        errs1.append(b / meas - 1)
        print(
            f"  row {p.id.split(':')[1]} C={p.concurrency:g}: {meas:.3f} | {a:.3f} ({a / meas - 1:+.1%}) | "
            f"{b:.3f} ({b / meas - 1:+.1%})"
        )
    print(
        f"  median |error| {np.median(np.abs(errs0)):.1%} -> {np.median(np.abs(errs1)):.1%}; "
        f"bias {np.median(errs0):+.1%} -> {np.median(errs1):+.1%}"
    )
    print(f"first_wave_stall_s = {s:.2f}")


if __name__ == "__main__":
    main()
