"""scripts/mlperf_enqueue44.py: the enqueue readings of an eager TensorRT step, by hand, and the kernel count of the
MLPerf Llama steps from the model's op list."""

from __future__ import annotations

import pytest
from script_module import load_script

me = load_script("mlperf_enqueue44")


def test_enqueue_terms_by_hand():
    # 1,000 kernels at 4 us: 4 ms of enqueue under a 20 ms GPU step -> the host runs ahead, nothing exposed;
    # serially 4 - 2.6 = 1.4 ms beyond the launches already charged; to add 6 ms the max reading needs
    # (20 + 6) ms / 1,000 = 26 us a kernel, the serial one (2.6 + 6) ms / 1,000 = 8.6 us
    r = me.enqueue_terms(1000, 0.020, 0.0026, 0.006, 4e-6)
    assert r["kh_s"] == pytest.approx(0.004)
    assert r["max_adds_s"] == 0.0
    assert r["serial_adds_s"] == pytest.approx(0.0014)
    assert r["h_max_s"] == pytest.approx(26e-6)
    assert r["h_serial_s"] == pytest.approx(8.6e-6)
    # an enqueue longer than the GPU step is exposed by its excess
    assert me.enqueue_terms(1000, 0.003, 0.0026, 0.0)["max_adds_s"] == pytest.approx(1000 * me.LAUNCH_S - 0.003)


def test_rows_kernel_count_and_readings():
    rows = {r["row"]: r for r in me.row_table()}
    assert len(rows) == 11  # every TensorRT Llama Server / Interactive row with a declared engine
    h200 = rows["Nebius_H200-SXM-141GBx8_TRT_llama2-70b-99_Interactive"]
    # Llama-2-70B, FP8 on H200: per layer QKV, norm + RoPE/KV write (2), attention, o_proj, residual/norm (2),
    # gate_up, SwiGLU, down = 10 kernels x 80 layers, + embedding (1) + lm_head (2) = 803
    assert h200["kernels"] == 80 * 10 + 1 + 2
    # the trtllm stack's 2.6 us a kernel (data/stack_fits.toml), every op's floor below it
    assert h200["charged_s"] == pytest.approx(803 * 2.6e-6, rel=1e-9)
    b200 = rows["NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Interactive"]
    assert b200["kernels"] == 803 + 80 * 4  # NVFP4: an activation quantiser before each of the 4 GEMMs a layer
    for r in rows.values():
        assert r["max_adds_s"] == 0.0  # K·h under T on every row: the enqueue-bound reading adds nothing
        assert r["serial_adds_s"] == pytest.approx(r["kernels"] * me.LAUNCH_S - r["charged_s"], rel=1e-9)
    # the serial reading supplies under a third of every H200 row's need
    for key in (
        "llama2-70b-99_Interactive",
        "llama2-70b-99_Server",
        "llama3p1-405b_Interactive",
        "llama3p1-405b_Server",
    ):
        r = rows[f"Nebius_H200-SXM-141GBx8_TRT_{key}"]
        assert 0 < r["serial_adds_s"] < r["need_s"] / 3


def test_offline_rows_hide_the_enqueue():
    rows = me.offline_table()
    assert len(rows) == 6
    for r in rows:
        assert r["kh_s"] < r["gpu_s"] / 10  # the Offline steps run 10x longer than the enqueue
