"""The JSON record of one operating point (the contract other tools read).

Keys: ``throughput_per_chip`` (input + output tok/s per chip), ``output_throughput_per_chip``,
``interactivity`` (tok/s/user), ``ttft_s``, ``tpot_s``, ``e2e_s`` (+ p50/p90/p99 estimates),
``concurrency``, ``chips``, ``power_w_per_chip`` and ``tok_s_per_kw`` under the chosen
convention (and ``tok_s_per_kw_by_convention`` for all three), ``j_per_token``,
``usd_per_mtok``, ``bound``, ``bound_margin``, ``bound_level`` (the link level, when a
link binds), ``limit``, ``feasible``, ``reason``,
``deployment``.
"""

from __future__ import annotations

import numpy as np

from jalapeno.analysis.power_cost import CONVENTIONS, energy_and_cost, power_w_per_chip
from jalapeno.deploy.deployment import Deployment
from jalapeno.serve.analytic import ServingPoints
from jalapeno.specs.hardware import System

_COPY = ("throughput_per_chip", "output_throughput_per_chip", "interactivity", "ttft_s", "tpot_s", "e2e_s",
         "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "e2e_p50_s", "e2e_p90_s", "e2e_p99_s", "queue_s",
         "concurrency", "decode_batch", "request_rate_per_s", "chips", "step_time_s", "kv_transfer_s",
         "bound", "bound_margin", "bound_level", "limit", "feasible", "reason")


def point_record(points: ServingPoints, i: int, dep: Deployment, system: System, convention: str) -> dict:
    """Point ``i`` of ``points`` (served by ``dep`` on ``system``) as a JSON-ready dict."""
    p = points.record(i)
    rec = {k: p[k] for k in _COPY}
    t = np.array([p["throughput_per_chip"]])
    ec = energy_and_cost(t, system, convention)
    rec.update({
        "power_convention": convention,
        "power_label": power_w_per_chip(system, convention)[1],
        "power_w_per_chip": float(ec["power_w_per_chip"][0]),
        "tok_s_per_kw": float(ec["tok_s_per_kw"][0]),
        "tok_s_per_kw_by_convention": {c: float(energy_and_cost(t, system, c)["tok_s_per_kw"][0])
                                       for c in CONVENTIONS},
        "j_per_token": float(ec["j_per_token"][0]),
        "usd_per_mtok": float(ec["usd_per_mtok"][0]),
        "system": system.name,
        "deployment": dep.as_dict(),
    })
    return rec
