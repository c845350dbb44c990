"""scripts/mlperf_server_operating_point.py: the measured Server operating point (by hand from the published
figures) and the ordering the diagnosis rests on (the model's TPOT at the engine cap within the 80 ms limit)."""

from __future__ import annotations

import pytest
from script_module import load_script

op = load_script("mlperf_server_operating_point")
NVIDIA_B200 = "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server"


def test_measured_point_is_littles_law_and_the_models_cap_fits_the_limit():
    o = op.operating_points(NVIDIA_B200)
    # published 18,592.24 output tok/s over 8 GPUs x mean TPOT 66.46 ms = 154.5 decoding per GPU (= per rank, DEP8)
    assert o["per_rank"] == pytest.approx(18592.24 / 8 * 0.06646, rel=2e-3)
    assert o["tpot_limit_s"] == 0.080  # loadgen/mlperf.conf deepseek-r1.Server.tpot_latency 80 ms
    at, cap = o["model_at_load"], o["model_at_cap"]
    assert at["per_rank"] == pytest.approx(o["per_rank"]) and cap["per_rank"] == 512  # gpu_batch_size 512
    # the diagnosis: the modelled step at the measured load is under the measured one, and at the cap the modelled
    # p99 TPOT is still within the limit, so the model's best point within the limits is the cap
    assert at["tpot_s"] < o["tpot_s"] / 1.5
    assert cap["tpot_p99_s"] < o["tpot_limit_s"]
    assert cap["throughput_per_chip"] > 3 * o["throughput_per_chip"]
