"""scripts/sglang_moe_config50.py: which fused-MoE config file SGLang loads by release, its nearest-row pick, the SwapAB
test, and the readers of a wheel and of aiconfigurator's reuse.yaml (docs/gap_aic_itl.md, round 50, h200int50).
Expected values by hand from SGLang's rule as read in the 0.5.9 / 0.5.14 wheels, not from the script's output."""

from __future__ import annotations

import json
import zipfile

import pytest
from script_module import load_script

s = load_script("sglang_moe_config50")

E256 = "E=256,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json"
E257 = "E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json"
#: the H200 files of the 0.5.9 / 0.5.12 wheels: E=256 only under Triton 3.1.0, E=257 under 3.2.0, 3.3.1 and 3.5.1
FOLDERS = {
    "triton_3_1_0": {E256},
    "triton_3_2_0": {E257},
    "triton_3_3_1": {E257},
    "triton_3_5_1": {E257},
    "triton_3_4_0": set(),
    "triton_3_6_0": set(),
}


def test_served_file_by_release():
    # 0.5.9 runs Triton 3.5.1 (torch 2.9.1): its own folder has the E=257 file
    assert s.resolve_config(FOLDERS, E257, "3.5.1", "list") == "triton_3_5_1"
    # 0.5.7 runs Triton 3.5.1 too but its wheel has no triton_3_5_1 file: the fixed list 3.4.0, 3.3.1, ... → 3.3.1
    assert (
        s.resolve_config({k: v for k, v in FOLDERS.items() if k != "triton_3_5_1"}, E257, "3.5.1", "list")
        == "triton_3_3_1"
    )
    # 0.5.12 runs Triton 3.6.0: no own file, every folder newest first → 3.5.1 (the fixed list would never try it)
    assert s.resolve_config(FOLDERS, E257, "3.6.0", "discover") == "triton_3_5_1"
    assert s.resolve_config(FOLDERS, E257, "3.6.0", "list") == "triton_3_3_1"


def test_collector_shape_falls_back_to_triton_3_1_0():
    # 256 routed experts alone: only triton_3_1_0 holds the file, under either rule
    assert s.resolve_config(FOLDERS, E256, "3.5.1", "list") == "triton_3_1_0"
    assert s.resolve_config(FOLDERS, E256, "3.6.0", "discover") == "triton_3_1_0"
    # no file anywhere: SGLang's default config
    assert s.resolve_config({"triton_3_1_0": set()}, E256, "3.5.1", "list") is None


def test_nearest_row_and_tie():
    cfg = {1: "a", 4: "b", 16: "c", 32: "d", 48: "e", 64: "f"}
    assert s.nearest(cfg, 8) == "b"  # |4 − 8| = 4 < |16 − 8| = 8
    assert s.nearest(cfg, 40) == "d"  # 32 and 48 both 8 away: min keeps the first key
    assert s.nearest(cfg, 1000) == "f"


def test_swap_ab_rule():
    assert s.swap_ab({"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64}) is True
    assert s.swap_ab({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128}) is False  # BLOCK_SIZE_M must be < 64
    assert s.swap_ab({"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32}) is False  # BLOCK_SIZE_N must be >= 64


def test_wheel_reader(tmp_path):
    w = tmp_path / "sglang-0.5.9-py3-none-any.whl"
    root = "sglang/srt/layers/moe/fused_moe_triton/configs"
    with zipfile.ZipFile(w, "w") as z:
        z.writestr(f"{root}/triton_3_5_1/{E257}", json.dumps({"1": {"BLOCK_SIZE_M": 16}, "64": {"BLOCK_SIZE_M": 16}}))
        z.writestr(f"{root}/triton_3_5_1/{E257[:-5]}_down.json", json.dumps({"8": {"BLOCK_SIZE_M": 16}}))
        z.writestr(f"{root}/triton_3_5_1/E=8,N=2048,device_name=NVIDIA_H200.json", "{}")
        z.writestr(f"sglang/srt/layers/moe/moe_runner/triton_utils/configs/triton_3_1_0/{E256}", json.dumps({"4": {}}))
    got = s.wheel_configs(str(w))
    assert set(got) == {"triton_3_5_1", "triton_3_1_0"}
    down = "E=257,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128]_down.json"
    assert s.down_name(E257) == down
    assert set(got["triton_3_5_1"]) == {E257, down}  # other shapes are not kept
    assert sorted(got["triton_3_5_1"][E257]) == [1, 64]  # keys read as ints


def test_reuse_yaml_reader(tmp_path):
    d = tmp_path.joinpath(*s.REPO_DATA, "h200_sxm", "moe", "sglang", "0.5.12")
    d.mkdir(parents=True)
    (d / "reuse.yaml").write_text(
        "schema_version: 1\nreuse:\n- table: moe_perf\n  from_version: 0.5.14\n"
        "  reason: x\n- table: wideep_context_moe_perf\n  from_version: 0.5.10\n"
    )
    assert s.reuse_of(str(tmp_path), "moe", "0.5.12") == {"moe_perf": "0.5.14", "wideep_context_moe_perf": "0.5.10"}
    assert s.reuse_of(str(tmp_path), "moe", "0.5.9") == {}


def test_expert_bytes_by_hand():
    # 256 experts × (gate 256 + up 256 + down 256 rows of 7168 FP8 bytes) = 1,409,286,144 B a rank at TP8
    assert s.EXPERT_BYTES_TP8 == 1_409_286_144


def test_bad_inputs_name_the_flag(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        s.main(["--aic-repo", str(tmp_path)])
    assert e.value.code == 2 and "--aic-repo" in capsys.readouterr().err
    bad = tmp_path / "x.whl"
    bad.write_text("not a zip")
    with pytest.raises(SystemExit):
        s.main(["--wheel", str(bad)])
    assert "pip download" in capsys.readouterr().err
