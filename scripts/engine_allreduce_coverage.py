"""Coverage of an engine's measured all-reduce table over the validation rows (issue 18, round 26, allreduce26).

Question: if a stack priced its TP all-reduces from the engine's own table (``all_reduce_table``,
cost/engine_allreduce.py), which of the all-reduces validation prices would the table cover, and which fall
back to the link-hierarchy model — a message beyond the table's largest size (1 GiB per rank), a TP size the
table lacks, a group beyond the innermost link level, a system with no table? And which points of the curves
does the running-minimum rule change (over 10% above a larger size's time, at 2 KiB or more)?

Method: ``jalapeno validate`` is run in-process with the named stacks' efficiency sets switched to the engine's
table (Stack.apply wrapped; nothing is refitted, so the fixed costs are the shipped ones) and every TP
all-reduce the pricer is asked for is counted by (engine, system, TP) with its largest message. Prints one
line per (engine, system, TP) and the running-minimum changes of the engine's curves.
Run: python scripts/engine_allreduce_coverage.py [--stack vllm=vllm --stack sglang=sglang]   (~30 s)
Findings (round 26): docs/collectives.md, "The engine's measured all-reduce".
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import tomllib
from dataclasses import replace
from importlib import resources

import numpy as np

import jalapeno.cost.engine_allreduce as ea
import jalapeno.cost.pricer as pricer_mod
from jalapeno.specs.stacks import Stack


def _running_min_changes(engine: str) -> list[str]:
    raw = tomllib.loads((resources.files("jalapeno") / "data" / "collectives" / "engine_allreduce.toml").read_text())
    out = []
    for c in raw["curve"]:
        if c["engine"] != engine:
            continue
        t = np.asarray(c["latency_ms"]) * 1e3
        mt = ea.monotone_latency(t)
        for m, a, b in zip(c["message_bytes"], t, mt):
            if m >= 2048 and a > 1.10 * b:
                out.append(f"{engine} {c['system']} TP{c['tp']} {m} B: {a:.1f} us measured, priced {b:.1f} us")
    return out


def main(pairs: list[str]) -> None:
    targets = dict(p.split("=", 1) for p in pairs)
    counts: dict[tuple, collections.Counter] = collections.defaultdict(collections.Counter)
    largest: dict[tuple, float] = collections.defaultdict(float)
    apply, collective = Stack.apply, pricer_mod.SystemPricer.collective

    def apply_with_table(self, eff, *args, **kw):
        e = apply(self, eff, *args, **kw)
        engine = targets.get(self.name.split("+")[0].split("@")[0])
        return replace(e, all_reduce_table=engine) if engine else e

    def counted(self, kind, group, message_bytes, placement="packed"):
        r = collective(self, kind, group, message_bytes, placement)
        engine = self.efficiency.all_reduce_table
        if kind == "all_reduce" and group > 1 and engine in targets.values():
            root = ea._root_name(self.system)
            m = np.atleast_1d(np.asarray(message_bytes, dtype=float))
            key = (engine, root, int(group))
            meas = np.array([str(a).endswith("_measured") for a in np.atleast_1d(r.algorithm)])
            curve = ea.engine_all_reduce_curve(root, engine, group)
            why = (
                "group beyond the innermost level"
                if group > self.system.levels[0].chips
                else "no curve (TP size or system)"
                if curve is None
                else "spread"
                if placement != "packed"
                else "beyond the largest size / variant"
            )
            counts[key]["table"] += int(meas.sum())
            counts[key][why] += int((~meas).sum())
            largest[key] = max(largest[key], float(m.max()))
        return r

    Stack.apply, pricer_mod.SystemPricer.collective = apply_with_table, counted
    try:
        from jalapeno.cli.app import main as cli

        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            cli(["validate", "--json"])
    finally:
        Stack.apply, pricer_mod.SystemPricer.collective = apply, collective
    print("engine system TP: all-reduces priced from the table / falling back (why); largest message per rank")
    for key in sorted(counts):
        c = counts[key]
        rest = ", ".join(f"{v} {k}" for k, v in c.items() if k != "table" and v)
        print(
            f"{key[0]} {key[1]} TP{key[2]}: {c['table']} table"
            + (f"; {rest}" if rest else "")
            + f"; largest {largest[key] / 2**20:.1f} MiB"
        )
    print("running minimum (no message priced slower than a larger one) changes:")
    for engine in sorted(set(targets.values())):
        print("\n".join(_running_min_changes(engine)) or f"{engine}: none")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--stack",
        action="append",
        default=None,
        metavar="STACK=ENGINE",
        help="price STACK's all-reduces from ENGINE's table (default: vllm=vllm and sglang=sglang)",
    )
    main(ap.parse_args().stack or ["vllm=vllm", "sglang=sglang"])
