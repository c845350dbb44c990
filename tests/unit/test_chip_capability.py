"""The chip's CUDA compute capability is a field of its hardware file (``chip.compute_capability``, round 49), so the
fused all-reduce + RMSNorm kernels (cost/allreduce_rms.py) follow the chip, not its name: a user's "my-h20" file of
Hopper capability gets them; a file that omits the field falls back to the name's prefix (CAPABILITY_BY_PREFIX)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jalapeno.cost.allreduce_rms import device_capability, fused_max_tokens, rule_max_tokens
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_system
from jalapeno.specs.system_load import load_system_file

SYSTEMS = Path(__file__).parents[2] / "src/jalapeno/data/systems"

# NVIDIA's CUDA GPUs table (developer.nvidia.com/cuda-gpus), typed here by hand, major x 10 + minor:
# A100 8.0 (Ampere), H100 / H200 9.0 (Hopper; H800 is H100's export variant), B200 / GB200 10.0, B300 / GB300 10.3
NVIDIA_TABLE = {
    "a100-sxm": 80,
    "h100": 90,
    "h200": 90,
    "h800": 90,
    "b200": 100,
    "gb200-nvl72": 100,
    "b300": 103,
    "gb300-nvl72": 103,
}


@pytest.mark.parametrize("system, sm", sorted(NVIDIA_TABLE.items()))
def test_every_shipped_nvidia_chip_states_its_capability_with_a_source(system, sm):
    s = load_system(system)
    assert s.chip.compute_capability == sm
    assert "developer.nvidia.com/cuda-gpus" in s.sources["chip.compute_capability"]


@pytest.mark.parametrize("system", ["mi300x", "mi325x", "mi350x", "mi355x"])
def test_amd_chips_state_none(system):
    assert load_system(system).chip.compute_capability is None
    assert device_capability(load_system(system).chip) is None  # nor does the name fallback give one


def _h20_file(tmp_path, capability_line: str | None) -> Path:
    """A user's own H20 file (a Hopper chip, compute capability 9.0 in NVIDIA's table): h200.toml's numbers under a
    name no prefix of the fallback table matches, with ``capability_line`` in place of h200's (None: omitted)."""
    lines = []
    for line in (SYSTEMS / "h200.toml").read_text().splitlines():
        if line.startswith("compute_capability"):
            if capability_line is not None:
                lines.append(capability_line)
            continue
        lines.append(line.replace('name = "h200"', 'name = "my-h20"').replace('name = "H200 SXM"', 'name = "my-h20"'))
    path = tmp_path / "my-h20.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_user_h20_of_hopper_capability_gets_the_fused_kernels(tmp_path):
    src = 'compute_capability = { value = "9.0", source = "NVIDIA CUDA GPUs table: H20 9.0 (Hopper)" }'
    chip = load_system_file(_h20_file(tmp_path, src)).chip
    assert chip.name == "my-h20" and chip.compute_capability == 90
    # vLLM's FI_ALLREDUCE_FUSION_MAX_SIZE_MB for SM90 at TP 8: 0.5 MiB; Kimi K2.5's hidden 7,168 x 2 B = 14,336 B
    # per token, so 524,288 // 14,336 = 36 tokens (as for the H200)
    assert fused_max_tokens(chip, 8, 7168) == 36
    assert rule_max_tokens("sglang", "deepseek_v3", chip, 8, 7168) == 2048  # SGLang's cap on SM90 from 0.5.7


def test_a_file_without_the_field_falls_back_to_the_name(tmp_path):
    chip = load_system_file(_h20_file(tmp_path, None)).chip
    assert chip.compute_capability is None
    assert device_capability(chip) is None and fused_max_tokens(chip, 8, 7168) == 0  # "my-h20" matches no prefix
    # the fallback itself: a name the table knows gives its family's capability
    assert device_capability("H100 SXM") == 90 and device_capability("GB300 whatever") == 103


@pytest.mark.parametrize("value", ["9.0 ", "9", "sm90", "10.10"])
def test_a_capability_not_written_major_dot_minor_is_refused(tmp_path, value):
    path = _h20_file(tmp_path, f'compute_capability = {{ value = "{value}", source = "a typo" }}')
    with pytest.raises(SpecError) as e:
        load_system_file(path)
    assert "chip.compute_capability" in e.value.field
    assert "major.minor" in e.value.problem + e.value.fix


def test_a_capability_given_as_a_number_is_refused(tmp_path):
    path = _h20_file(tmp_path, 'compute_capability = { value = 9.0, source = "NVIDIA CUDA GPUs table" }')
    with pytest.raises(SpecError) as e:
        load_system_file(path)
    assert "chip.compute_capability" in e.value.field
    assert '"major.minor"' in e.value.problem + e.value.fix
