"""SGLang-ROCm before 0.5.12 decodes slower: the size of the version rule, from a gfx942 run of v0.5.9.

The ``sglang-rocm`` profile is set by rows 76-80 (MI325X DeepSeek-R1 FP8 SGLang TP8 8k/1k, image
``lmsysorg/sglang:v0.5.19-rocm700-mi30x``; row 76 TPOT within 1%). An earlier release decodes slower:
SemiAnalysisAI/InferenceX issue #890 (Klaud-Cold, 2026-03-08; runs 22811630847, 22811631118:
``dsr1-fp8-mi325x-sglang``, image ``lmsysorg/sglang:v0.5.9-rocm700-mi30x``, TP8 EP1, 1k/1k, InferenceX's
client) publishes mean TPOT 24.0 ms at C = 4 and 26.2 ms at C = 8; the profile at its newest
behaviour gives ~17 / ~21 ms.

Form (named assumption; the change between the releases is not identified): a per-step cost outside
the kernels, ``step_overhead_s`` (the efficiency set's 0.5 ms, data/stacks.toml), larger by Δ for every
decode and prefill step. A per-step cost is what the two points ask for: the gap is 6.8 / 5.5 ms at
C = 4 / 8 (not proportional to the step: 1.40x / 1.27x), and a per-kernel or per-layer slowdown of the
kernels' own work would grow with the batch, which the held-out C = 64 rows refuse.

Fit split: the two issue #890 TPOTs only (row 76's deployment, the same ``dsr1_fp8_mi325x.sh`` flags,
served with InferenceX's 1k/1k workload). Per point, Δ_C solves model TPOT(Δ) = measured (the model's
TPOT is linear in Δ: two evaluations and the line, checked at the root); Δ = mean of Δ_C.
Held out: rows 26, 28, 34, 35 (MI325X/MI300X DeepSeek-R1 FP8 SGLang, C = 64, best of the search
space, run 2026-02-27 on v0.5.9: InferenceX PR #816), throughput per GPU at 0.5.19 and at 0.5.9.

Run: python scripts/sglang_rocm_release.py [--check]   (about a minute; the last line is the value for data/stacks.toml;
``--check``: exit 1 when data/stacks.toml's rule is more than half a unit of its last written digit (5 us) from
the fit — a step of scripts/recalibrate.py)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

import numpy as np

from jalapeno.fit.fitted_files import check_copied_value
from jalapeno.fit.median_front import ISSUE_WORKLOAD
from jalapeno.fit.validate import point_stack, predict_points
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.mlperf_scenarios import priced_point
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validation_run import DEFAULT_POINTS
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.stacks import get_stack

#: SemiAnalysisAI/InferenceX issue #890 (Klaud-Cold 2026-03-08): concurrency -> mean TPOT, s; MI325X TP8
#: DeepSeek-R1 FP8 1k/1k, SGLang v0.5.9-rocm700-mi30x.
ISSUE_890_TPOT = {4: 0.0240, 8: 0.0262}
#: the validation row whose deployment (recipe flags, layout, engine) the issue's runs share
RECIPE_ROW = "inferencex_points:76"
#: the release the issue's runs used
ISSUE_RELEASE = "0.5.9"
#: held out: the v0.5.9 blog rows (C = 64)
HELD_OUT = tuple(f"inferencex_points:{r}" for r in (26, 28, 34, 35))
#: the profile and rule the fit sets
PROFILE, RULE_FIELD, RULE_BEFORE = "sglang-rocm", "step_overhead_s", "0.5.12"
#: data/stacks.toml writes the value in ms to two decimals: current when within half of that digit
CHECK_TOL_S = 5e-6


def _tpot(p, step_overhead_s: float) -> np.ndarray:
    """Model mean TPOT (s) of row ``p``'s deployment at the issue's concurrencies, 1k/1k, with the
    profile at its newest behaviour and ``step_overhead_s`` per step."""
    stack = dataclasses.replace(point_stack(p), step_overhead_s=step_overhead_s, first_wave_stall_s=0.0)
    model, pricer, dep, _ = priced_point(p, stack=stack)
    run = serve_at_concurrency(model, pricer, dep, ISSUE_WORKLOAD, sorted(ISSUE_890_TPOT))
    return np.asarray(run.tpot_s, dtype=float)


def fitted_step_overhead() -> tuple[float, float, dict]:
    """(base step overhead, fitted v0.5.9 step overhead, {C: per-point value}), s."""
    pts, _ = load_inferencex(DEFAULT_POINTS)
    recipe = next(p for p in pts if p.id == RECIPE_ROW)
    base = float(
        load_any_pricer(
            recipe.system, "calibrated", pricer="roofline", stack=point_stack(recipe)
        ).efficiency.step_overhead_s
    )
    t0, t1 = _tpot(recipe, base), _tpot(recipe, base + 0.005)
    slope = (t1 - t0) / 0.005
    meas = np.array([ISSUE_890_TPOT[c] for c in sorted(ISSUE_890_TPOT)])
    per = {c: base + float((meas[i] - t0[i]) / slope[i]) for i, c in enumerate(sorted(ISSUE_890_TPOT))}
    return base, float(np.mean(list(per.values()))), per


def shipped_rule_value() -> float:
    """The shipped value (s) of the rule this script fits (data/stacks.toml, profile ``sglang-rocm``)."""
    rule = next(r for r in get_stack(PROFILE).version_rules if r.field == RULE_FIELD and r.before == RULE_BEFORE)
    return float(rule.value)


def check() -> int:
    """0 when data/stacks.toml's rule is the fit's value (within :data:`CHECK_TOL_S`), else 1 with the fix."""
    _, s, _ = fitted_step_overhead()
    return check_copied_value(
        f"{PROFILE} {RULE_FIELD} before {RULE_BEFORE}",
        shipped_rule_value(),
        s,
        CHECK_TOL_S,
        lambda v: f"{v * 1e3:.2f} ms",
        f"write value = {s * 1e3:.2f}e-3 in data/stacks.toml (and its source text)",
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only say whether data/stacks.toml's rule is the fit's")
    if ap.parse_args().check:
        sys.exit(check())
    base, s, per = fitted_step_overhead()
    pts, _ = load_inferencex(DEFAULT_POINTS)
    recipe = next(p for p in pts if p.id == RECIPE_ROW)
    cs = sorted(ISSUE_890_TPOT)
    t_new, t_old = _tpot(recipe, base), _tpot(recipe, s)
    print(f"fit (issue #890, MI325X 1k/1k v0.5.9): step_overhead_s at 0.5.19 {base * 1e3:.3f} ms")
    for i, c in enumerate(cs):
        m = ISSUE_890_TPOT[c]
        print(
            f"  C={c}: measured TPOT {m * 1e3:.1f} ms | newest {t_new[i] * 1e3:.2f} ({t_new[i] / m - 1:+.1%}) | "
            f"per-point step overhead {per[c] * 1e3:.2f} ms | fitted {t_old[i] * 1e3:.2f} ({t_old[i] / m - 1:+.1%})"
        )
    print(f"step overhead before 0.5.12 = mean = {s * 1e3:.2f} ms (+{(s - base) * 1e3:.2f} ms per step)")
    held = [p for p in pts if p.id in HELD_OUT]
    print("held out (rows 26/28/34/35, C = 64, v0.5.9): throughput per GPU, error at 0.5.19 | at 0.5.9")
    a = predict_points([dataclasses.replace(p, engine_version="0.5.19") for p in held])
    b = predict_points([dataclasses.replace(p, engine_version=ISSUE_RELEASE) for p in held])
    ea, eb = [], []
    for p in held:
        ra = a[(a.id == p.id) & (a.metric == "throughput_per_chip")].iloc[0]
        rb = b[(b.id == p.id) & (b.metric == "throughput_per_chip")].iloc[0]
        ea.append(ra.error)
        eb.append(rb.error)
        print(
            f"  row {p.id.split(':')[1]} {p.system} {p.isl}/{p.osl}: {ra.measured:.1f} | {ra.predicted:.1f} "
            f"({ra.error:+.1%}) | {rb.predicted:.1f} ({rb.error:+.1%})"
        )
    print(
        f"  median |error| {np.median(np.abs(ea)):.1%} -> {np.median(np.abs(eb)):.1%}; "
        f"bias {np.median(ea):+.1%} -> {np.median(eb):+.1%}"
    )
    print(f"step_overhead_s = {s:.4g}")


if __name__ == "__main__":
    main()
