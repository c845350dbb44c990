"""Packing a fleet into boxes: trays, nodes and racks that hold each instance's groups whole.

A worker's pipeline stage (tp·dp·cp chips) is the group whose collectives the step cost prices on the smallest
packaging level that holds it, so a fleet's boxes of each level are counted with every such group inside one box
(:func:`instance_groups` lists them, :func:`packed_boxes` packs them first-fit decreasing). ceil(chips / size)
when the groups tile the box; more when they do not: 31 EP64 instances on 72-GPU NVLink racks take 31 racks,
not ceil(1,984 / 72) = 28. ``jalapeno plan --target`` (analysis/capacity.py) and ``--chips``
(analysis/fleet.py) count boxes with it. Moved from analysis/capacity.py (round 46, module budget), which imports
both back. Pure: no I/O.
"""

from __future__ import annotations


def instance_groups(dep, instances: int) -> dict[int, int]:
    """Chips of each group that must sit whole inside one packaging level → how many of them the
    fleet has: one pipeline stage of one worker (tp·dp·cp chips, ``Layout.cp_span``, whose collectives the
    step cost prices on the smallest level that holds them: the context-parallel ring spans all cp ranks),
    ``pp`` per worker, every worker of each pool. tp·dp alone (``stage_chips``) left a CP4 prefill worker's
    other 12 of 16 chips out of the rack count: 128k1k's 47,600-chip fleet was priced in 182 racks (13,104
    chips; tests/cli/test_cli_newuser46.py)."""
    out: dict[int, int] = {}
    for pool in filter(None, (dep.decode, dep.prefill)):
        g = pool.layout.cp_span
        out[g] = out.get(g, 0) + instances * pool.workers * pool.layout.pp
    return out


def packed_boxes(groups: dict[int, int], size: int) -> int:
    """Boxes of ``size`` chips (trays, nodes, racks) that hold every group of ``groups`` (chips →
    count) whole: a group larger than a box takes its whole boxes and its remainder packs as a group.
    First-fit decreasing over group sizes, with boxes kept by free space (a fleet has millions of
    groups of two sizes at most). ceil(Σ chips / size) when the groups tile the box; more when they
    do not: 31 instances of 64 chips (EP64) on 72-GPU NVLink racks need 31 racks, not ceil(1,984 / 72) = 28.

    >>> packed_boxes({64: 31}, 72), packed_boxes({8: 248}, 72), packed_boxes({16: 19, 2: 228}, 72)
    (31, 28, 11)
    >>> packed_boxes({128: 3}, 72)   # each 128-chip group: one whole rack + 56 chips in another
    6
    """
    boxes, free = 0, {}
    rest: dict[int, int] = {}
    for g, n in groups.items():
        whole, r = divmod(g, size)
        boxes += whole * n
        if r:
            rest[r] = rest.get(r, 0) + n
    for g in sorted(rest, reverse=True):
        n = rest[g]
        for f in sorted((f for f in free if f >= g and free[f]), reverse=True):
            per, have = f // g, free[f]
            full = min(have, n // per)
            if full:
                free[f] -= full
                free[f - per * g] = free.get(f - per * g, 0) + full
                n -= full * per
            if 0 < n < per and free[f]:
                free[f] -= 1
                free[f - n * g] = free.get(f - n * g, 0) + 1
                n = 0
            if not n:
                break
        if n:
            per = size // g
            new = -(-n // per)  # opened boxes are counted by their free space below
            last = n - (new - 1) * per
            free[size - per * g] = free.get(size - per * g, 0) + new - 1
            free[size - last * g] = free.get(size - last * g, 0) + 1
    return boxes + sum(free.values())
