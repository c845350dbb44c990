"""vLLM V0 multi-step windows on AMD's / MangoBoost's MLPerf Llama-2-70B Offline engines
(fit/mlperf_multi_step.multi_step_spread; docs/gap_large_batch_decode.md "Round 41 (mi355x41)"): a sequence that ends
inside a window of ``num_scheduler_steps`` decode steps is computed to the window's end (vLLM's multi-step output
processor truncates past EOS / max_tokens), so the engine computes more tokens than the run delivers."""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.mlperf import load_mlperf
from jalapeno.fit.mlperf_engines import AMD_SCHEDULER_STEPS, MLPERF_ENGINES
from jalapeno.fit.mlperf_multi_step import multi_step_spread
from jalapeno.specs.workload import LengthSpread


def test_window_padding_by_hand():
    """n = 8: an output of 2 tokens is its prompt step's token + 1 decode step, run to the window's end: 1 + 8 = 9;
    20 tokens are 1 + 19 decode steps = 3 windows, 1 + 24 = 25. Delivered (ISL 100): (100 + 11) / (100 + 17)."""
    s = LengthSpread("x", np.array([100.0, 100.0]), np.array([2.0, 20.0]))
    c, share = multi_step_spread(s, 8)
    assert c.osl_tokens.tolist() == [9.0, 25.0]
    assert c.isl_tokens.tolist() == [100.0, 100.0]
    assert share == pytest.approx(111 / 117, rel=1e-12)


def test_exact_window_wastes_nothing_and_one_step_is_off():
    """An output of 1 + k·n tokens ends on a window's last step (no waste); n = 1 leaves every length as it is."""
    s = LengthSpread("x", np.array([50.0, 60.0]), np.array([20.0, 39.0]))
    c, share = multi_step_spread(s, 19)
    assert c.osl_tokens.tolist() == [20.0, 39.0] and share == 1.0
    c1, share1 = multi_step_spread(LengthSpread("y", np.array([10.0]), np.array([7.0])), 1)
    assert c1.osl_tokens.tolist() == [7.0] and share1 == 1.0


def test_mean_waste_over_a_flat_spread_is_half_a_window():
    """Outputs 2..1,901 (1,900 lengths, 100 full cycles of 19 residues): the waste per sequence runs 0..18 equally
    often, so its mean is exactly (19 - 1) / 2 = 9 tokens."""
    osl = np.arange(2, 1902, dtype=float)
    c, _ = multi_step_spread(LengthSpread("flat", np.full(osl.size, 200.0), osl), 19)
    assert float((c.osl_tokens - osl).mean()) == pytest.approx(9.0, abs=1e-12)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "19"])
def test_bad_steps_refused_naming_the_field(bad):
    s = LengthSpread("x", np.array([10.0]), np.array([5.0]))
    with pytest.raises(SpecError, match="scheduler_steps"):
        multi_step_spread(s, bad)


def test_engines_carry_their_configs_steps():
    """offline_mi300x.yaml 11, offline_mi325x.yaml 7, offline_mi355x.yaml 19, MangoBoost offline_vllm_args 19;
    the TensorRT-LLM DeepSeek-R1 engines schedule every step (1)."""
    assert AMD_SCHEDULER_STEPS == {"mi300x": 11, "mi325x": 7, "mi355x": 19, "mangoboost": 19}
    steps = {k: e.scheduler_steps for k, e in MLPERF_ENGINES.items()}
    assert steps["mlperf51_AMD_8xMI355X_2xEPYC_9575F_llama2-70b-99_Offline"] == 19
    assert steps["mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline"] == 11
    assert steps["mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Offline"] == 1


def test_amd_offline_rows_served_with_computed_lengths():
    """The AMD rows are served with the computed outputs (mean above the run's delivered mean by ~(n - 1) / 2) and
    count the delivered share; every other row, and every row with multi_step=False, delivers all it computes."""
    on = {p.id: p for p in load_mlperf()[0]}
    off = {p.id: p for p in load_mlperf(multi_step=False)[0]}
    key = "mlperf51_AMD_8xMI355X_2xEPYC_9575F_llama2-70b-99_Offline"
    p, q = on[key], off[key]
    waste = p.workload.spread.mean_osl - q.workload.spread.mean_osl
    assert 7.0 < waste < 11.0  # ~9 for n = 19 over the dataset's spread
    isl, osl = q.workload.spread.mean_isl, q.workload.spread.mean_osl
    assert p.delivered_share == pytest.approx((isl + osl) / (isl + osl + waste), rel=1e-3)
    moved = {k for k, v in on.items() if v.delivered_share != 1.0}
    assert moved == {k for k, e in MLPERF_ENGINES.items() if e.scheduler_steps > 1}
    assert all(v.delivered_share == 1.0 for v in off.values())
    assert p.measured == q.measured  # the measurement is never touched
    with pytest.raises(SpecError, match="multi_step"):
        load_mlperf(multi_step="yes")
