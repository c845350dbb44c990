"""Open-loop serving (serve/point.serve_at_rate) at any rate the CLI accepts, from
``analysis/prediction.MIN_RATE_PER_S`` to near the deployment's capacity:

- conservation: the point runs at the rate asked (λ) and its throughput per chip is
  λ·(mean ISL + mean OSL)/chips — every request's tokens pass through the chips;
- Little's law: more requests per second never leave fewer in the system (C = λ·E2E rises with λ).

Below the solver's lightest grid point (0.006 requests/s here) it once reported that floor for
any lower rate. The expected values come from the workload and the deployment, not the solver.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from jalapeno.analysis.prediction import MIN_RATE_PER_S
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.point import serve_at_rate
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload

# gpt-oss-120b on one HGX H200 at TP8 (capacity ~80 requests/s at 1k1k), two aggregated workers
# of it (16 chips), and DeepSeek-R1 disaggregated on GB200 NVL72 (a prefill TP4 and a DEP8 decode pool)
CASES = [
    ("gpt-oss-120b", "h200", lambda p: Deployment(p, Pool(Layout(tp=8)))),
    ("gpt-oss-120b", "h200", lambda p: Deployment(p, Pool(Layout(tp=8), workers=2))),
    ("deepseek-r1", "gb200-nvl72", lambda p: Deployment(p, Pool(Layout(dp=8, ep=8)), prefill=Pool(Layout(tp=4)))),
]
log_rates = st.lists(st.floats(np.log10(MIN_RATE_PER_S), 0.0), min_size=2, max_size=12)


@settings(max_examples=6, deadline=None)
@given(case=st.sampled_from(CASES), logs=log_rates)
def test_open_loop_points_run_at_the_rate_asked(case, logs):
    name, system, make = case
    model, pricer, wl = load_model(name), load_pricer(system), get_workload("1k1k")
    dep = make(get_precision(model.default_precision))
    lam = np.sort(10.0 ** np.asarray(logs))
    pts = serve_at_rate(model, pricer, dep, wl, lam)
    assert pts.feasible.all()
    np.testing.assert_allclose(pts.request_rate_per_s, lam, rtol=0.02)
    np.testing.assert_allclose(pts.throughput_per_chip, lam * (wl.mean_isl + wl.mean_osl) / pts.chips, rtol=0.02)
    assert np.all(np.diff(pts.concurrency) >= -1e-9 * pts.concurrency[1:])
