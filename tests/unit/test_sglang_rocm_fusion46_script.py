"""scripts/sglang_rocm_fusion46.py: the sweep table, per-user slopes and the shared expert's share of the decode step
(docs/gap_aic_itl.md, round 46, sgldsr46). Expected values by hand from hand-made rows and the profiles' per-kernel
costs, not the script's output."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from jalapeno.errors import SpecError
from jalapeno.specs.stacks import get_stack

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import sglang_rocm_fusion46 as s  # noqa: E402

#: DeepSeek-R1's MoE layers (61, the first 3 dense)
MOE_LAYERS = 58


def _row(
    rid,
    conc,
    measured,
    predicted,
    *,
    system="mi325x",
    stack="sglang-rocm@0.5.19",
    split="fit",
    metric="tpot_s",
    framework="sglang",
    deployment="agg attn TP8 DP1 · MoE TP8 EP1 [fp8]",
):
    return {
        "source": "inferencex",
        "model": "deepseek-r1",
        "framework": framework,
        "mode": "agg",
        "quality": "",
        "deployment": deployment,
        "system": system,
        "stack": stack,
        "id": f"inferencex_points:{rid}",
        "isl": "8192",
        "concurrency": f"{conc}.0",
        "split": split,
        "metric": metric,
        "measured": str(measured),
        "predicted": str(predicted),
    }


def test_sweep_gap_and_error_by_hand():
    rows = [
        _row(77, 8, 0.02156, 0.02303, split="held_out"),
        _row(76, 4, 0.01853, 0.01839),
        _row(77, 8, 46.38, 43.41, metric="interactivity"),  # another metric: left out
        _row(90, 8, 0.02, 0.02, framework="vllm"),
        _row(91, 8, 0.02, 0.02, deployment="agg attn TP1 DP8"),
    ]
    t = s.sweeps(rows, {})
    assert list(t) == [("mi325x", "0.5.19", 8192)]
    a, b = t[("mi325x", "0.5.19", 8192)]
    assert (a["conc"], b["conc"], b["split"]) == (4, 8, "held_out")
    # 23.03 - 21.56 = 1.47 ms; 23.03 / 21.56 - 1 = +6.82%
    assert b["gap_ms"] == pytest.approx(1.47)
    assert b["error_pct"] == pytest.approx(6.818, abs=1e-3)


def test_h200_release_comes_from_the_points_file_map():
    rows = [_row(58, 16, 0.01528, 0.01691, system="h200", stack="sglang")]
    assert list(s.sweeps(rows, {"inferencex_points:58": "0.5.12"})) == [("h200", "v0.5.12", 8192)]
    assert list(s.sweeps(rows, {})) == [("h200", "sglang", 8192)]


def test_per_user_slopes_by_hand_and_mixed_images_refused():
    sw = [{"conc": 4, "measured_ms": 18.53}, {"conc": 8, "measured_ms": 21.56}, {"conc": 16, "measured_ms": 26.75}]
    # (21.56 - 18.53) / 4 = 0.7575; (26.75 - 21.56) / 8 = 0.64875
    assert s.per_user_slopes(sw, "measured_ms") == pytest.approx([0.7575, 0.64875])
    with pytest.raises(SpecError, match="one engine release"):
        s.per_user_slopes([{"conc": 8, "measured_ms": 1.0}, {"conc": 8, "measured_ms": 2.0}], "measured_ms")


@pytest.mark.parametrize("system, stack", [("mi325x", "sglang-rocm@0.5.19"), ("h200", "sglang")])
def test_shared_expert_launches_and_the_fused_step(system, stack):
    # by hand: the unfused shared expert is three kernels a layer (gate/up GEMM, SiLU-and-quantise, down GEMM) at the
    # profile's per-kernel cost; fusing it leaves the step shorter by at least those launches less one more expert
    # slice a layer (5.5 MB at TP8: at most 3.9 us a layer at >= 0.3 of H200's 4.8 TB/s, 3.1 us on MI325X's 6.0 TB/s)
    launch = get_stack(stack).kernel_launch_s
    r = s.step_split(system, stack, 8, 8704)
    assert r["shared_per_kernel"] == pytest.approx(3 * MOE_LAYERS * launch, rel=1e-9)
    assert r["step"] - r["fused_step"] > 3 * MOE_LAYERS * launch - MOE_LAYERS * 3.9e-6
    assert r["shared_ops"] >= r["shared_per_kernel"]
