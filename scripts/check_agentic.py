"""Figures of docs/agentic.md: the worked comparison (coding-agent, four systems, DeepSeek-R1 and
Kimi K2.5), the same with HBM only, the host tier's lift on long-memory-chat, and the analytic session
model against the simulator.

Run: python scripts/check_agentic.py [--no-sim]   (the simulator grid takes a few minutes)
Prints Markdown tables; docs/agentic.md §4-§5 are this script's output.
"""

from __future__ import annotations

import argparse

from jalapeno.analysis.agentic import compare_agentic
from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cli.agentic_cmd import AGENTIC_STAGE_FACTOR
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.checkpoints import available_precisions
from jalapeno.deploy.layout import Layout
from jalapeno.serve.sessions import sessions_at
from jalapeno.serve.sim.run import simulate
from jalapeno.specs.agentic import AGENTIC_PRESETS, AgenticSpec
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

SYSTEMS = ("jalapeno", "gb200-nvl72", "gb300-nvl72", "vera-rubin-nvl72")
OPTS = SweepOptions(serving="agg", overlap="none", max_stage_factor=AGENTIC_STAGE_FACTOR)


def _share(x: float) -> str:
    """A share to a tenth of a percent, a small non-zero one to two significant figures (as compare prints it:
    Jalapeño's 0.036% of the task read '0.0%' here)."""
    return f"{x * 100:.2g}%" if 0 < abs(x) < 0.0005 else f"{x:.1%}"


def worked(model_name: str, use_tiers: bool = True) -> None:
    m = load_model(model_name)
    syss = [load_pricer(n) for n in SYSTEMS]
    precs = {
        s.system.name: list(available_precisions(m.name, m.default_precision, s.system.chip.formats, m, s.system.chip))
        for s in syss
    }
    d = compare_agentic(
        m, syss, AGENTIC_PRESETS["coding-agent"], precs, baseline="gb300-nvl72", options=OPTS, use_tiers=use_tiers
    ).as_dict()
    print(
        f"\n**{m.name}**, coding-agent, {'all catalog tiers' if use_tiers else 'HBM only'} "
        "(all-in power; ratios vs GB300 NVL72)\n"
    )
    print(
        "| system | peak tasks/h/chip | tasks/h/kW | $/task | task min at peak (p90) | fastest task min (p90) "
        "| tasks/h/chip @10 min | @5 min | ratio peak (kW, $) | KV tier / bound at peak | deployment at peak |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n, s in d["systems"].items():
        pk, fa, r = s["peak"], s["fastest"], d["ratios"][n]
        t10, t5 = s["tiers"]["fast"], s["tiers"]["ultra_fast"]
        print(
            f"| {n} | {pk['tasks_per_hour_per_chip']:.1f} | {pk['tasks_per_hour_per_kw']:.1f} | "
            f"{pk['usd_per_task']:.3f} | {pk['task_time_s'] / 60:.1f} ({pk['task_time_p90_s'] / 60:.1f}) | "
            f"{fa['task_time_s'] / 60:.2f} ({fa['task_time_p90_s'] / 60:.2f}) | "
            f"{t10['tasks_per_hour_per_chip']:.1f} | {t5['tasks_per_hour_per_chip']:.1f} | "
            f"{r['peak_tasks_per_hour_per_chip']:.2f}x ({r['peak_tasks_per_hour_per_kw']:.2f}x, "
            f"{r['peak_tasks_per_usd']:.2f}x) | {pk['kv_tier']} / {pk['kv_bound'] or 'none'} "
            f"({_share(pk['kv_bound_share'])}), step {pk['bound']} | {pk['deployment']} |"
        )
    print("\nper turn at peak: TTFT first/mean/last s, TPOT ms, hit rate, reload s/task\n")
    for n, s in d["systems"].items():
        pk = s["peak"]
        print(
            f"- {n}: TTFT {pk['ttft_first_turn_s']:.2f}/{pk['ttft_mean_s']:.2f}/{pk['ttft_last_turn_s']:.2f} s, "
            f"TPOT {pk['tpot_s'] * 1e3:.0f} ms, hit rate {pk['hit_rate']:.1%}, reload {pk['reload_s_per_task']:.2f} s/task,"
            f" link utilisation {pk['link_utilisation']:.2f}"
        )


def tier_lift(model_name: str, preset: str) -> None:
    """Peak tasks/h/chip with the catalog's KV tiers against HBM only, per system (§4 'Which tier binds')."""
    m = load_model(model_name)
    syss = [load_pricer(n) for n in SYSTEMS]
    precs = {
        s.system.name: list(available_precisions(m.name, m.default_precision, s.system.chip.formats, m, s.system.chip))
        for s in syss
    }
    runs = {
        t: compare_agentic(
            m, syss, AGENTIC_PRESETS[preset], precs, baseline="gb300-nvl72", options=OPTS, use_tiers=t
        ).as_dict()["systems"]
        for t in (True, False)
    }
    print(f"\n**{m.name}**, {preset}: peak tasks/h/chip with the catalog's tiers against HBM only\n")
    print("| system | tiers | HBM only | lift | KV tier / bound at peak (tiers) | reload s/task | link utilisation |")
    print("|---|---|---|---|---|---|---|")
    for n in SYSTEMS:
        a, b = runs[True][n]["peak"], runs[False][n]["peak"]
        print(
            f"| {n} | {a['tasks_per_hour_per_chip']:,.0f} | {b['tasks_per_hour_per_chip']:,.0f} | "
            f"{a['tasks_per_hour_per_chip'] / b['tasks_per_hour_per_chip'] - 1:+.1%} | "
            f"{a['kv_tier']} / {a['kv_bound'] or 'none'} | {a['reload_s_per_task']:.2f} | "
            f"{a['link_utilisation']:.2f} |"
        )


def steady_state(tasks, c):
    t0, t1 = tasks.end_s.nsmallest(c).max(), tasks.start_s.max()
    done = tasks[(tasks.end_s >= t0) & (tasks.end_s <= t1)]
    return (
        len(done) / (t1 - t0),
        float(tasks[tasks.start_s >= t0].completion_s.mean()),
        float(tasks[tasks.start_s >= t0].completion_s.quantile(0.9)),
    )


def sim_grid() -> None:
    m = load_model("deepseek-r1")
    dep = Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)))
    short = AgenticSpec("coding-8", 8, 6000, 2500, 350, 2.0)
    print(
        "\n| system | workload | sessions | task s analytic | sim | error | tasks/h analytic | sim | error "
        "| p90 s analytic | sim |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for sysn, spec, c in (
        ("gb200-nvl72", short, 8),
        ("gb200-nvl72", short, 32),
        ("gb200-nvl72", short, 64),
        ("jalapeno", short, 16),
        ("jalapeno", short, 64),
        ("gb200-nvl72", AGENTIC_PRESETS["coding-agent"], 32),
    ):
        pr = load_pricer(sysn)
        a = sessions_at(m, pr, dep, spec, [c])
        res = simulate(m, pr, dep, agentic=spec, concurrency=c, sessions=4 * c, seed=0)
        rate, t, t90 = steady_state(res.tasks, c)
        print(
            f"| {sysn} | {spec.name} | {c} | {a.task_time_s[0]:.1f} | {t:.1f} | {t / a.task_time_s[0] - 1:+.1%} | "
            f"{a.tasks_per_s[0] * 3600:.0f} | {rate * 3600:.0f} | {rate / a.tasks_per_s[0] - 1:+.1%} | "
            f"{a.task_time_p90_s[0]:.1f} | {t90:.1f} |"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-sim", action="store_true", help="skip the simulator grid")
    args = ap.parse_args()
    for name in ("deepseek-r1", "kimi-k2.5"):
        worked(name)
    worked("deepseek-r1", use_tiers=False)
    tier_lift("deepseek-r1", "long-memory-chat")
    if not args.no_sim:
        sim_grid()
