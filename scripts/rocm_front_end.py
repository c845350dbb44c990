"""InferenceX's TTFT on the ROCm profiles with and without their server program's front end (issue 18, round 31).

SGLang-ROCm and ATOM fit no front end of their own; since round 31 InferenceX's own points on them take the front end
of the server program they run (fit/stack_fit.SAME_SERVER: SGLang's, fitted on InferenceX's own SGLang points; vLLM's
exports' entry for ATOM, an assumption by architecture; docs/stacks.md). This script prices every InferenceX point of
those two profiles twice — with the shipped profile (its ``clients.inferencex`` entry) and with that entry removed
(the efficiency set's global 0.15 s + 6.4 us per prompt token, what they took before) — and prints each TTFT row's
measured value and both errors, then the median |error| and bias per system over the rows no fit saw (split
``held_out`` / ``none``, fit/heldout.py) and over all rows. Nothing is fitted or written.
Run: python scripts/rocm_front_end.py
"""

from __future__ import annotations

from dataclasses import replace
from importlib.resources import files
from types import MappingProxyType

import numpy as np

from jalapeno.fit.heldout import split_labels
from jalapeno.fit.stack_fit import SAME_SERVER
from jalapeno.fit.validate import point_stack, predict_points
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.specs.stacks import stack_for_framework


def without_server_front_end(p):
    """The point's stack as before round 31: its profile without the ``inferencex`` client entry."""
    st = stack_for_framework(p.framework, p.system)
    bare = replace(st, clients=MappingProxyType({k: v for k, v in st.clients.items() if k != "inferencex"}))
    return point_stack(p, {st.name: bare})


def main() -> None:
    points, _ = load_inferencex(files("jalapeno") / "data/validation/inferencex_points.csv")
    mine = [p for p in points if stack_for_framework(p.framework, p.system).name in SAME_SERVER]
    labels = split_labels(points)
    now = predict_points(mine).set_index(["id", "metric"])
    before = predict_points(mine, stack_of=without_server_front_end).set_index(["id", "metric"])
    rows = []
    print(f"{'row':>22} {'system':7} {'profile':19} {'ISL':>5} {'C':>5} {'measured':>9} {'before':>8} {'now':>8} split")
    for p in mine:
        key = (p.id, "ttft_s")
        if key not in now.index or not np.isfinite(now.loc[key, "error"]):
            continue
        e0, e1 = before.loc[key, "error"], now.loc[key, "error"]
        sp = labels.get(p.id, "none")
        rows.append((p.system, sp, e0, e1))
        print(
            f"{p.id:>22} {p.system:7} {now.loc[key, 'stack']:19} {p.isl:5d} {p.concurrency or 0:5g} "
            f"{p.measured['ttft_s']:9.3f} {e0:+8.1%} {e1:+8.1%} {sp}"
        )
    for title, keep in (("no fit saw (held_out / none)", lambda s: s != "fit"), ("all rows", lambda s: True)):
        print(f"\nTTFT median |error| (bias), {title}: before -> now")
        for sysn in sorted({r[0] for r in rows}) + ["ALL"]:
            sel = [r for r in rows if keep(r[1]) and sysn in (r[0], "ALL")]
            if not sel:
                continue
            e0, e1 = np.array([r[2] for r in sel]), np.array([r[3] for r in sel])
            print(
                f"  {sysn:7} n={len(sel):2d}  {np.median(np.abs(e0)):6.1%} ({np.median(e0):+6.1%}) -> "
                f"{np.median(np.abs(e1)):6.1%} ({np.median(e1):+6.1%})"
            )


if __name__ == "__main__":
    main()
