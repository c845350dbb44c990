"""A chip without kernel tables prices TensorRT-LLM's Triton MoE with the floor pooled over the measured chips.

Facts, by hand (fit/floor_transfer.py; scripts/floor_transfer_check.py prints them): the Triton MoE's per-layer
floor fitted on each system's own ``moe_torch_flow`` ``w4a16_mxfp4`` EP1 rows (aiconfigurator-core 0.12.0,
TensorRT-LLM 1.3.0rc20, gpt-oss-120b's shape), µs: H100 57.5, H200 59.1, B200 42.1, GB200 41.6, B300 39.2,
GB300 41.0. Left out, H200 (and its twin H100) takes the median of the four Blackwell floors,
(41.0 + 41.6) / 2 = 41.3 µs; a catalog chip without tables (Jalapeño) the median of all six,
(41.6 + 42.1) / 2 = 41.85 µs. The one-token block (table rows, µs): Hopper 70.7-78.5, Blackwell 46.3-70.9.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from jalapeno.cost.moe_backend import KernelMoePricer
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.pool_backends import with_moe_backend
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.kernels import moe_rows, moe_table
from jalapeno.specs.catalog import load_model
from jalapeno.specs.moe_backends import _floors, pooled_backend_floor

FLOORS_US = {"h100": 57.5, "h200": 59.1, "b200": 42.1, "gb200-nvl72": 41.6, "b300": 39.2, "gb300-nvl72": 41.0}
DERIVED = "calibrated (derived from b200; set calibrated; left-out.toml)"


def _derived_h200():
    p = load_pricer("h200", stack="trtllm")
    return replace(p, efficiency=replace(p.efficiency, source=DERIVED))


def test_shipped_floors_are_the_fits_and_split_by_generation():
    got = {s: f * 1e6 for b, s, f in _floors() if b == "triton"}
    assert got == pytest.approx(FLOORS_US, abs=0.06)
    # the same within a generation (Hopper 2.7%, Blackwell 7%), Hopper's 1.4x Blackwell's
    assert max(got[s] for s in ("h100", "h200")) < 1.05 * min(got[s] for s in ("h100", "h200"))
    assert min(got["h100"], got["h200"]) > 1.3 * max(got[s] for s in ("b200", "gb200-nvl72", "b300", "gb300-nvl72"))


def test_pooled_floor_leaves_out_the_chip_and_its_twin():
    assert pooled_backend_floor("triton", frozenset({"h100", "h200"})) == pytest.approx(41.3e-6, abs=0.06e-6)
    assert pooled_backend_floor("triton", frozenset({"jalapeno"})) == pytest.approx(41.85e-6, abs=0.06e-6)
    # B300 out with GB300: median of 57.5, 59.1, 42.1, 41.6 = (42.1 + 57.5) / 2
    assert pooled_backend_floor("triton", frozenset({"b300", "gb300-nvl72"})) == pytest.approx(49.8e-6, abs=0.06e-6)
    assert pooled_backend_floor("marlin") is None  # not transferred (specs/moe_backends.FLOOR_TRANSFERRED)
    assert pooled_backend_floor("triton", frozenset(FLOORS_US)) is None
    with pytest.raises(SpecError, match="moe_backend"):
        pooled_backend_floor("TRITON")


def test_derived_set_prices_the_pooled_floor_and_measured_set_its_own_form():
    m, lay = load_model("gpt-oss-120b"), Layout(tp=1)
    assert isinstance(with_moe_backend(load_pricer("h200", stack="trtllm"), "triton", m, lay), KernelMoePricer)
    left_out = with_moe_backend(_derived_h200(), "triton", m, lay)
    assert left_out.efficiency.moe_floor_s == pytest.approx(41.3e-6, abs=0.06e-6)
    assert with_moe_backend(_derived_h200(), "trtllm", m, lay).efficiency.moe_floor_s is None
    jal = with_moe_backend(load_pricer("jalapeno"), "triton", m, lay)
    assert jal.efficiency.moe_floor_s == pytest.approx(41.85e-6, abs=0.06e-6)


def test_one_token_block_gains_the_floor_in_place_of_three_launches():
    r = moe_rows(pd.DataFrame({"moe_dtype": "w4a16_mxfp4", "num_tokens": [1], "hidden_size": 2880, "inter_size": 2880,
                               "topk": 4, "num_experts": 128, "moe_tp_size": 1, "moe_ep_size": 1,
                               "distribution": "balanced", "latency": 1.0}),
                 "balanced", {"w4a16_mxfp4": ("bf16", 0.53125, 2.0)})
    ops = moe_table(r, "bf16")
    base = _derived_h200()
    floored = with_moe_backend(base, "triton", load_model("gpt-oss-120b"), Layout(tp=1))
    t0, t1 = base.op_times(ops).time_s[0, 0], floored.op_times(ops).time_s[0, 0]
    # by hand: the block's three kernels' launches (3 x kernel_launch_s) give way to the 41.3 µs floor
    assert t1 - t0 == pytest.approx(41.28e-6 - 3 * base.efficiency.kernel_launch_s, rel=2e-3)
    # and the one-token block lands between the Blackwell and Hopper measurements (46.3-78.5 µs)
    assert 40e-6 < t1 < 80e-6


def test_a_written_left_out_set_takes_no_floor_of_its_own_pair(tmp_path):
    """A borrowed set as fit/loso writes it (a derived calibration file): H200's own 59.1 µs and H100's 57.5 µs
    never reach it."""
    from jalapeno.fit.calibrate import to_toml

    (tmp_path / "h200.toml").write_text(to_toml({"system": "h200", "parameters": {"hbm_fraction": 0.8},
                                                 "provenance": {"derived_from": "b200"}}, "derived"))
    lent = with_moe_backend(load_pricer("h200", str(tmp_path), stack="trtllm"), "triton",
                            load_model("gpt-oss-120b"), Layout(tp=8))
    assert not isinstance(lent, KernelMoePricer)
    assert lent.efficiency.moe_floor_s == pytest.approx(41.3e-6, abs=0.06e-6)
