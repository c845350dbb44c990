#!/usr/bin/env python3
"""Generate docs/op_table.md: the per-op accounting of one decode step for two reference cases.

Every number comes from the package API: ``jalapeno.cost.step.step_cost(...)`` and its
``op_rows(0)`` / ``collective_rows(0)`` / ``summary(0)``, so the page shows exactly what the
model computes (docs/model.md derives the formulas and checks some rows by hand).

Cases (decode only, no prefill in the step, default efficiencies of each system):
- DeepSeek-R1, ``fp8`` preset, on ``gb200-nvl72``, Layout(tp=1, dp=8, ep=8), 64 decoding
  sequences (whole instance) at a mean context of 8,192 tokens;
- gpt-oss-120b, ``mxfp4`` preset, on ``h100``, Layout(tp=1), 16 decoding sequences at 2,048.

Usage:
    python scripts/gen_op_table_doc.py [--out docs/op_table.md] [--check]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from _docgen import write_or_check

from jalapeno.cost.step import Batch, StepCost, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "docs" / "op_table.md"


@dataclass(frozen=True)
class Case:
    model: str
    precision: str
    system: str
    layout: Layout
    batch: int
    context: int


CASES = (
    Case("deepseek-r1", "fp8", "gb200-nvl72", Layout(tp=1, dp=8, ep=8), 64, 8192),
    Case("gpt-oss-120b", "mxfp4", "h100", Layout(tp=1), 16, 2048),
)


def _g(x: float, scale: float, digits: int = 3) -> str:
    """``x / scale`` with ``digits`` significant digits, or ``0``."""
    if x == 0:
        return "0"
    v = x / scale
    if abs(v) >= 10**digits:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def _run(c: Case) -> StepCost:
    m = load_model(c.model)
    s = load_pricer(c.system, "spec")
    return step_cost(m, s, c.layout, get_precision(c.precision), Batch.make(decode_seqs=c.batch, decode_ctx=c.context))


def _case_md(c: Case) -> list[str]:
    sc = _run(c)
    s = load_pricer(c.system, "spec")
    summ = sc.summary(0)
    ops = sc.op_rows(0)
    colls = sc.collective_rows(0)
    per_rank = c.batch / c.layout.dp
    lines = [
        f"## {c.model} ({c.precision}) on {c.system}, {c.layout.label}, batch {c.batch} x context {c.context:,}",
        "",
        "```python",
        f'step_cost(load_model({c.model!r}), load_pricer({c.system!r}, "spec"), Layout(tp={c.layout.tp}, '
        f"dp={c.layout.dp}, ep={c.layout.ep}, pp={c.layout.pp}),",
        f"          get_precision({c.precision!r}), Batch.make(decode_seqs={c.batch}, decode_ctx={c.context}))",
        "```",
        "",
        f"Per chip of the instance ({c.layout.chips} chip{'s' if c.layout.chips > 1 else ''}; "
        f"{per_rank:g} sequences per attention-DP rank). "
        f"Efficiencies: {s.efficiency.source}. Every row is one op summed over the layers it "
        "occurs in (FLOPs and bytes per step, per chip); time = max(compute, memory) + launch "
        "overhead; `bound` is the larger of the two roofline terms and reads `overhead` where the "
        "launch cost exceeds both.",
        "",
        "| op | kind | format | GFLOP | weights MB | KV MB | act. MB | compute µs | memory µs | launch µs | time µs | bound |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    tot = dict(flop=0.0, w=0.0, kv=0.0, act=0.0, c=0.0, m=0.0, o=0.0, t=0.0)
    for r in ops:
        bound = "overhead" if r["overhead_s"] > max(r["compute_s"], r["memory_s"]) else r["bound"]
        lines.append(
            f"| `{r['op']}` | {r['kind']} | {r['format']} | {_g(r['flop'], 1e9)} | "
            f"{_g(r['weight_bytes'], 1e6)} | {_g(r['kv_bytes'], 1e6)} | {_g(r['act_bytes'], 1e6)} | "
            f"{_g(r['compute_s'], 1e-6)} | {_g(r['memory_s'], 1e-6)} | {_g(r['overhead_s'], 1e-6)} | "
            f"{_g(r['time_s'], 1e-6)} | {bound} |"
        )
        for k, f in (
            ("flop", "flop"),
            ("w", "weight_bytes"),
            ("kv", "kv_bytes"),
            ("act", "act_bytes"),
            ("c", "compute_s"),
            ("m", "memory_s"),
            ("o", "overhead_s"),
            ("t", "time_s"),
        ):
            tot[k] += r[f]
    lines.append(
        f"| **all ops** | | | {_g(tot['flop'], 1e9)} | {_g(tot['w'], 1e6)} | {_g(tot['kv'], 1e6)} | "
        f"{_g(tot['act'], 1e6)} | {_g(tot['c'], 1e-6)} | {_g(tot['m'], 1e-6)} | {_g(tot['o'], 1e-6)} | "
        f"{_g(tot['t'], 1e-6)} | |"
    )
    lines.append("")
    if colls:
        lines += [
            "Collectives (bytes per call per chip, conventions of `cost/collectives.py`; time = all calls):",
            "",
            "| collective | kind | group | bytes/call | calls | time µs | algorithm | level |",
            "|---|---|---:|---:|---:|---:|---|---|",
        ]
        for r in colls:
            lines.append(
                f"| `{r['collective']}` | {r['kind']} | {r['group']} | {_g(r['bytes_per_call'], 1e3)} kB | "
                f"{r['calls']:g} | {_g(r['time_s'], 1e-6)} | {r['algorithm']} | {r['level']} ({r['scope']}) |"
            )
        lines.append("")
    else:
        lines += ["No collectives (one chip).", ""]
    att = summ["attribution_s"]
    mem = summ["memory"]
    gib = 2.0**30
    lines += [
        f"Step time **{summ['step_time_s'] * 1e3:.2f} ms** (interval {summ['interval_s'] * 1e3:.2f} ms), "
        f"bound **{summ['bound']}** ({summ['bound_margin']:.2f}x the next). Attribution: "
        + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in att.items())
        + ".",
        "",
        f"Memory per chip: weights {mem['weights_bytes'] / gib:.1f} GiB + KV {mem['kv_bytes'] / gib:.2f} GiB + "
        f"activations {mem['activation_bytes'] / gib:.2f} GiB + reserve {mem['reserve_bytes'] / gib:.1f} GiB "
        f"of {mem['usable_bytes'] / gib:.1f} GiB usable; feasible: {summ['feasible']}"
        + (f" ({summ['reason']})" if summ["reason"] else "")
        + ".",
        "",
    ]
    return lines


def render() -> str:
    lines = [
        "# Op table of one decode step",
        "",
        "<!-- Generated by scripts/gen_op_table_doc.py from jalapeno.cost.step.step_cost(...).op_rows(0) "
        "and .collective_rows(0); do not edit by hand. -->",
        "",
        "Generated by `python scripts/gen_op_table_doc.py` from `jalapeno.cost.step.step_cost(...)`: the",
        "rows are `StepCost.op_rows(0)` and `StepCost.collective_rows(0)`, the footer",
        "`StepCost.summary(0)`. Formulas behind each row: `docs/model.md` §3-§7. Units: GFLOP = 1e9 FLOP,",
        "MB = 1e6 B, kB = 1e3 B, µs = 1e-6 s. Spec-only prediction (default efficiencies, not calibrated).",
        "",
    ]
    for c in CASES:
        lines += _case_md(c)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    return write_or_check(render, DEFAULT_OUT, __doc__, "gen_op_table_doc.py", argv)


if __name__ == "__main__":
    raise SystemExit(main())
