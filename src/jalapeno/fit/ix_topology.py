"""InferenceX topology strings → the pools they name (``validate --points``' ``topology`` column).

The forms read are :data:`TOPOLOGY_FORMS` (those of the shipped points, data/validation/inferencex_points.csv);
a blank cell means the row gives no deployment and validate maps it by its search space, its concurrency or
the frontier (fit/validate.py). A non-blank cell of none of these forms is mapped the same way, with the note
:func:`unread_topology` recognises, which ``jalapeno validate`` prints on stderr with the row's line.
"""

from __future__ import annotations

import re

from jalapeno.deploy.deployment import Pool
from jalapeno.deploy.engines import get_recipe
from jalapeno.deploy.layout import Layout

#: The Dynamo + TRT-LLM recipe of the InferenceX DeepSeek runs, read from the engine data
#: (data/engines.toml, deploy/engines.py: the one home of these facts, with their sources):
#: decode workers serving at most ``tep_max_seqs_per_worker`` sequences run attention
#: tensor-parallel (TEP), busier ones data-parallel (DEP); the draft length falls with the
#: sequences per attention rank (``mtp_draft_by_seqs_per_rank``).
DYNAMO_TRT_RECIPE = get_recipe("dynamo-trt-dsr1-fp4")
TEP_MAX_SEQS_PER_WORKER = DYNAMO_TRT_RECIPE.tep_max_seqs_per_worker

#: The topology forms :func:`parse_topology` reads, as a user writes them (n, m, w, g: whole numbers).
TOPOLOGY_FORMS = (
    "TPn or TPn EPm, optionally followed by a (comment): one aggregated worker",
    "prefill w workers TPn EPm DPA (g GPUs); decode w workers TPn EPm DPA",
    "config_id N: prefill TPn EPm DPA xw ... decode TPn EPm xw (and 'config_id N (same)' on a later row)",
    "prefill g GPU TP=n; decode g GPU EP=m",
)
_UNREAD = "topology {!r} not interpretable"


def unread_topology(notes) -> str | None:
    """The topology string of a point whose topology :func:`parse_topology` could not read (from its
    notes, where load_inferencex puts parse_topology's note), else None.

    >>> unread_topology(["MTP assumed k=1", _UNREAD.format("banana")])
    'banana'
    >>> unread_topology(["prefill 'TP=4' read as DEP4 (recipe dp-attn)"]) is None
    True
    """
    for n in notes:
        m = re.fullmatch(r"topology (['\"])(.*)\1 not interpretable", n)
        if m:
            return m.group(2)
    return None


def parse_topology(
    text: str, moe: bool, concurrency: float | None = None, prefill_dp_attention: bool = False
) -> tuple[Pool | None, Pool | None, str]:
    """(prefill pool, decode/aggregated pool, note) from an InferenceX topology string.

    "decode N GPU EP=n" does not say how attention is split: with the concurrency known, a decode
    worker of at most one node (n <= 8) serving <= :data:`TEP_MAX_SEQS_PER_WORKER` sequences is
    read as TEP (attention TP n, experts EP n), a busier or wider one as DEP (attention DP n),
    as the InferenceX Dynamo recipes do; without it, DEP. "prefill N GPU TP=n" is TPn EPn, or
    with ``prefill_dp_attention`` DEPn (every Dynamo + TRT-LLM DeepSeek prefill recipe sets
    "dp-attn: true" beside "tp: n").
    """
    t = text.strip()
    bad = (None, None, _UNREAD.format(t))
    m = re.fullmatch(r"TP(\d+)(?: EP(\d+))?(?: \(.*\))?", t)
    if m:
        tp, ep = int(m.group(1)), int(m.group(2) or 1)
        if tp < 1 or ep < 1:
            return bad
        return None, Pool(Layout(tp=tp, ep=ep if moe else 1)), ""
    m = re.match(
        r"prefill (\d+) workers TP(\d+) EP(\d+) DPA \((\d+) GPUs\); decode (\d+) workers TP(\d+) EP(\d+) DPA", t
    )
    if m:
        pw, ptp, pep, _, dw, dtp, dep_ = (int(x) for x in m.groups())
        if min(pw, ptp, pep, dw, dtp, dep_) < 1:
            return bad
        return (Pool(Layout(tp=1, dp=ptp, ep=pep), pw), Pool(Layout(tp=1, dp=dtp, ep=dep_), dw), "")
    m = re.match(r"config_id \d+: prefill TP(\d+) EP(\d+) DPA x(\d+).*decode TP(\d+) EP(\d+) x(\d+)", t)
    if m:
        ptp, pep, pw, dtp, dep_, dw = (int(x) for x in m.groups())
        if min(ptp, pep, pw, dtp, dep_, dw) < 1:
            return bad
        return Pool(Layout(tp=1, dp=ptp, ep=pep), pw), Pool(Layout(tp=dtp, ep=dep_), dw), ""
    m = re.match(r"prefill (\d+) GPU TP=(\d+); decode (\d+) GPU EP=(\d+)", t)
    if m:
        pg, ptp, dg, dep_ = (int(x) for x in m.groups())
        split = not (ptp == pg and ptp in (1, 2, 4, 8))  # read as DEP4 workers
        if min(pg, ptp, dep_) < 1 or dg < dep_ or dg % dep_ or (split and (pg < 4 or pg % 4)):
            return bad
        note = ""
        if not split and prefill_dp_attention and moe and ptp > 1:
            pre = Pool(Layout(tp=1, dp=ptp, ep=ptp), 1)
            note = f"prefill 'TP={ptp}' read as DEP{ptp} (recipe dp-attn)"
        elif not split:
            pre = Pool(Layout(tp=ptp, ep=ptp if moe else 1), 1)
        else:  # e.g. "12 GPU TP=12": 3 workers of 4 (128 heads do not split 12 ways)
            pre = Pool(Layout(tp=1, dp=4, ep=4 if moe else 1), pg // 4)
            note = f"prefill '{pg} GPU TP={ptp}' read as {pg // 4} DEP4 workers"
        workers = dg // dep_
        if concurrency and dep_ <= 8 and concurrency / workers <= TEP_MAX_SEQS_PER_WORKER:
            note = "; ".join(x for x in (note, f"decode 'EP={dep_}' read as TEP{dep_} (light load)") if x)
            return pre, Pool(Layout(tp=dep_, ep=dep_), workers), note
        return pre, Pool(Layout(tp=1, dp=dep_, ep=dep_), workers), note
    return bad
