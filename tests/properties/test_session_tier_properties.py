"""Agentic sessions (serve/sessions.py): a KV tier below HBM never lowers the result.

With a host (or SSD, remote) tier the engine may still recompute every prefix it would
recompute without it — it reloads only where the reload is faster — so at any decode batch the
tiered point finishes tasks at least as fast (tasks/s no lower, task time no longer), and the
best tasks/s over any set of batches is no lower. Round 39 found the HBM-only DeepSeek-R1 peak on
GB200 (86.2 tasks/h/chip) above the tiered one (81.2): recomputed prefixes asked 170K prompt
tokens of every step while a step carried its 8192-token budget, and only the budget was charged.
Each step's prompt tokens never exceed that budget (checked by hand from the point's fields).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.sessions import sessions_by_batch
from jalapeno.specs.agentic import AGENTIC_PRESETS
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

SYSTEMS = ["gb200-nvl72", "gb300-nvl72", "jalapeno", "vera-rubin-nvl72"]
LAYOUTS = [("fp4", 16), ("fp8", 8), ("fp4", 4)]
MODEL = load_model("deepseek-r1")


@settings(max_examples=8, deadline=None)
@given(
    system=st.sampled_from(SYSTEMS),
    layout=st.sampled_from(LAYOUTS),
    think=st.floats(1.0, 30.0),
    log_b=st.lists(st.floats(0.0, 3.5), min_size=1, max_size=8),
)
def test_a_host_tier_never_lowers_the_session_optimum(system, layout, think, log_b):
    pr = load_pricer(system)
    prec, dp = layout
    dep = Deployment(get_precision(prec), Pool(Layout(dp=dp, ep=dp)))
    spec = dataclasses.replace(AGENTIC_PRESETS["coding-agent"], think_s=think)
    b = 10.0 ** np.asarray(log_b)
    tier = sessions_by_batch(MODEL, pr, dep, spec, b)
    hbm = sessions_by_batch(MODEL, pr, dep, spec, b, use_tiers=False)
    x_tier = np.where(tier.feasible, tier.tasks_per_s, 0.0)
    x_hbm = np.where(hbm.feasible, hbm.tasks_per_s, 0.0)
    assert np.all(x_tier >= x_hbm * (1 - 1e-6)), (b, x_tier, x_hbm)
    both = tier.feasible & hbm.feasible
    assert np.all(tier.task_time_s[both] <= hbm.task_time_s[both] * (1 + 1e-6))
    assert x_tier.max() >= x_hbm.max() * (1 - 1e-6)
    # prompt tokens a step asks: decode batch × (new + recomputed tokens per turn) / decode steps per turn
    a = dep.mtp.tokens_per_step if dep.mtp else 1.0
    steps_per_turn = (spec.reply_tokens - 1) / a
    for p in (tier, hbm):
        per_turn = spec.turn_new_tokens().mean() + p.recompute_tokens_per_task / spec.turns
        asked = p.decode_batch * per_turn / steps_per_turn
        assert np.all(asked <= dep.prefill_budget(dep.decode.layout) * (1 + 1e-6)), asked
