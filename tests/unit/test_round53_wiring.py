"""Round 53's two switches reach the paths their commits name (review53: a one-line mutant of either call site kept
every test green).

- deploy/sglang_triton_moe.SGLANG_TRITON_MOE_ON (h200form53): fit/aic_rows.load_aiconfigurator gives an aiconfigurator
  H200 SGLang DeepSeek-R1 FP8 row's pool the ``sglang_triton`` MoE backend when on, none when off.
- serve/batch_wait.BUNCH_CONCURRENCY_ON (bunch53): serve/ttft_parts hands the prefill part the instance's own
  concurrency, (C - lambda * queue) / workers. By hand: 100 users, 10 requests/s, 2 s of queue outside the
  instances, 2 workers: (100 - 10 x 2) / 2 = 40 users an instance.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import jalapeno.deploy.sglang_triton_moe as stm
import jalapeno.serve.ttft_parts as tp
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.fit.aic_rows import load_aiconfigurator
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload


@pytest.mark.parametrize("on", [False, True])
def test_aic_sglang_h200_row_takes_the_triton_backend_only_when_on(monkeypatch, on):
    aic = pytest.importorskip("aiconfigurator_core")
    from importlib.resources import files

    frame = pd.read_csv(files(aic) / "systems" / "silicon_sample.csv")
    row = frame[frame.id == "dsr1_h200_sglang_fp8_agg_1024x1024_c16_cfg81"]
    assert len(row) == 1
    monkeypatch.setattr(stm, "SGLANG_TRITON_MOE_ON", on)
    (p,) = load_aiconfigurator(row)[0]
    assert p.deployment.decode.moe_backend == ("sglang_triton" if on else None)
    assert any("MoE backend sglang_triton" in n for n in p.notes) is on


def test_ttft_parts_passes_the_instances_own_concurrency(monkeypatch):
    seen = []

    def spy(model, pricer, dep, wl, decode_batch, users=None):
        seen.append(np.asarray(users, dtype=float))
        return np.zeros(np.shape(decode_batch))

    monkeypatch.setattr(tp, "mean_prompt_prefill_s", spy)
    dep = Deployment(get_precision("fp8"), Pool(Layout(tp=8), workers=2))
    pts = SimpleNamespace(
        ttft_s=np.array([3.0]),
        step_time_s=np.array([0.02]),
        concurrency=np.array([100.0]),
        request_rate_per_s=np.array([10.0]),
        queue_s=np.array([2.0]),
        decode_batch=np.array([30.0]),
    )
    parts = tp.ttft_parts(load_model("deepseek-r1"), load_pricer("h200"), dep, Workload("w", 1024, 1024, 0.8), pts)
    assert seen and seen[0].tolist() == [40.0]
    assert sum(v[0] for v in parts.values()) == pytest.approx(3.0)  # the parts still add up to the TTFT
