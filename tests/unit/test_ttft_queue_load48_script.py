"""scripts/ttft_queue_load48.py: the load sweep stops at the first capacity limit, and the prefill utilisation it
reports is λ·ISL over the pool's full-step capacity (worked by hand below)."""

from __future__ import annotations

import math

import pytest

from script_module import load_script

q48 = load_script("ttft_queue_load48")


def test_aggregated_deployments_have_no_prefill_utilisation():
    # an aggregated engine's prompts share its steps: no separate pool to load
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.specs.formats import get_precision

    dep = Deployment(get_precision("fp8"), Pool(Layout(tp=8, ep=8)))
    assert math.isnan(q48.prefill_rho(None, None, dep, None, {"request_rate_per_s": 10.0}))


def test_prefill_utilisation_is_rate_times_prompt_over_capacity(monkeypatch):
    # λ = 20 req/s of 921.6-token prompts (1k at InferenceX's [0.8, 1]·L) on 2 workers of 18,432 tokens/s each:
    # 20 · 921.6 / 36,864 = 0.5
    from types import SimpleNamespace

    monkeypatch.setattr(q48, "pool_prefill_perf", lambda *a: SimpleNamespace(tokens_per_s=18432.0))
    dep = SimpleNamespace(prefill=SimpleNamespace(workers=2))
    wl = SimpleNamespace(mean_isl=921.6)
    assert q48.prefill_rho(None, None, dep, wl, {"request_rate_per_s": 20.0}) == pytest.approx(0.5)


def test_sweep_stops_at_the_first_limit(monkeypatch, capsys):
    # C = 1, 4, 16, ...: a point with a limit is the last printed of its case; an infeasible one is not printed
    seen = []

    def fake_point(model, pricer, dep, wl, c):
        seen.append(c)
        return {
            "mean": (1.0, 1.0),
            "p50": (1.0, 1.2),
            "limit": "kv_capacity (queueing)" if c == 16 else "-",
            "rho": float("nan"),
        }

    monkeypatch.setattr(q48, "point", fake_point)
    monkeypatch.setattr(q48, "cases", lambda s: iter([("x", "deepseek-r1", "agg", None)]))
    monkeypatch.setattr(q48, "load_pricer", lambda s: None)
    out = q48.main(["h200"], ["1k1k"], 4096, None)
    assert seen == [1, 4, 16]
    assert [r["c"] for r in out] == [1, 4, 16]
    # p50 error 1.0 / 1.2 − 1 = −16.7%: flagged past 15%
    assert all(r["err_p50"] == pytest.approx(-1 / 6) for r in out)
    assert "-17%*" in capsys.readouterr().out
