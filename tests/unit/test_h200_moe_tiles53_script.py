"""scripts/h200_moe_tiles53.py: SGLang's nearest-key pick, the expected expert blocks under uniform routing, the launched
grid of moe_align_block_size, the CTAs an SM holds and one layer's schedule (docs/gap_aic_itl.md, round 53, h200moe53).
Expected values by hand from the kernel's rules as read in the sglang 0.5.9 wheel, not from the script's output."""

from __future__ import annotations

import json
import zipfile

import pytest
from script_module import load_script

from jalapeno.errors import SpecError

t = load_script("h200_moe_tiles53")


def test_nearest_key_ties_go_to_the_smaller_key():
    # keys 1, 2, 4, 8, 16, 24, 32, 48, 64, ...: M = 20 is 4 from both 16 and 24; SGLang's min() over the ascending keys
    # keeps 16 (gate/up BN 64, 3 stages), M = 28 keeps 24 (BN 128), M = 40 keeps 32 (5 stages)
    assert t.nearest(t.GATE_UP, 20) == (16, 64, 128, 4, 3)
    assert t.nearest(t.GATE_UP, 28) == (16, 128, 128, 4, 3)
    assert t.nearest(t.GATE_UP, 40) == (16, 64, 128, 4, 5)
    # the down file's M = 32 entry is its one BN 256 / BK 64 row
    assert t.nearest(t.DOWN, 32) == (16, 256, 64, 4, 3)
    with pytest.raises(SpecError, match="rows"):
        t.nearest(t.GATE_UP, 0)


def test_expected_blocks_uniform_top8():
    # an expert is missed by one token with probability 248/256 = 31/32; at M = 4: 0.96875^2 = 0.9384765625,
    # ^4 = 0.88073..., so 256 x (1 - 0.880738) = 30.53 experts; every one holds <= 4 rows: one 16-row block each
    touched, blocks = t.expected_blocks(4, 16)
    assert touched == pytest.approx(256 * (1 - 0.9384765625**2))
    assert touched == pytest.approx(30.531, abs=1e-3)
    assert blocks == pytest.approx(touched)
    # a single 16-row block holds any expert at M <= 16; with 2-row blocks and 4 tokens on 2 experts (top-1): an
    # expert's rows are Binomial(4, 1/2): blocks 0 (k=0), 1 (k=1, 2), 2 (k=3, 4): 2 x (4/16 + 6/16 + 2 x 5/16) = 2.5
    assert t.expected_blocks(4, 2, experts=2, top_k=1)[1] == pytest.approx(2.5)


def test_launched_grid_switches_form_at_e_plus_one():
    # M = 4: numel 36 < 258 -> sorted list 36 x 16 -> 36 blocks; M = 32: numel 288 -> 288 + 258 x 15 = 4,158 -> 260
    assert t.launched_m_blocks(4, 16, 9, 257) == 36
    assert t.launched_m_blocks(32, 16, 9, 257) == 260
    assert t.launched_m_blocks(28, 16, 9, 257) == 252  # numel 252 < 258


def test_ctas_per_sm_by_shared_memory():
    # 5 x (16 x 128 + 128 x 64) = 51,200 B: 232,448 // 51,200 = 4; 3 stages: 30,720 B -> 7; down BN 256 BK 64:
    # 3 x (16 x 64 + 64 x 256) = 52,224 -> 4; 1-stage toy 16 x 16 x 16: 512 B would fit 454, the 64-warp limit keeps 16
    assert t.ctas_per_sm((16, 64, 128, 4, 5)) == 4
    assert t.ctas_per_sm((16, 64, 128, 4, 3)) == 7
    assert t.ctas_per_sm((16, 256, 64, 4, 3)) == 4
    assert t.ctas_per_sm((16, 16, 16, 4, 1)) == 16


def test_schedule_at_four_rows():
    s = t.schedule(4)
    blocks = 256 * (1 - 0.9384765625**2) + 1  # routed + the shared expert's 4 rows in one block
    assert s["blocks"] == pytest.approx(blocks)
    assert s["g_live"] == pytest.approx(8 * blocks)  # N 512 / BN 64
    assert s["g_waves"] == pytest.approx(8 * blocks / (132 * 4))
    assert s["d_live"] == pytest.approx(56 * blocks)  # N 7,168 / BN 128
    assert s["g_launched"] == 36 * 8
    # one block per touched expert: padded MACs / weight bytes = 16 rows x 2 FLOP a byte; at 1,979 TFLOPS against
    # 4.8 TB/s their times stand at 32 x 4.8 / 1,979 = 0.0776
    assert s["mac_us"] / s["mem_us"] == pytest.approx(32 * 4.8e12 / 1.979e15)


def test_wheel_tables_read_and_refused(tmp_path):
    wheel = tmp_path / "sglang-x.whl"
    entry = {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128, "num_warps": 4, "num_stages": 5}
    folder = "sglang/srt/layers/moe/moe_runner/triton_utils/configs/triton_3_5_1/"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(folder + t.CONFIG_FILE + ".json", json.dumps({"4": entry, "512": entry}))
        z.writestr(folder + t.CONFIG_FILE + "_down.json", json.dumps({"8": {**entry, "num_stages": 2}}))
    g, d = t.wheel_tables(wheel)
    assert g == {4: (16, 64, 128, 4, 5)}  # keys above 128 dropped
    assert d == {8: (16, 64, 128, 4, 2)}
    empty = tmp_path / "empty.whl"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("x.txt", "")
    with pytest.raises(SpecError, match="--wheel"):
        t.wheel_tables(empty)
    assert t.main([str(tmp_path / "missing.csv")]) == 2


def test_main_prints_the_schedule(capsys):
    assert t.main([]) == 0
    out = capsys.readouterr().out
    assert "Part 2." in out and "Part 3." not in out


def test_balanced_routing_expert_count():
    # aiconfigurator's balanced_logits, stride cdiv(256, 8) = 32: T = 4 tokens start at 0, 8, 16, 24 and step 32, so
    # 4 x 8 = 32 distinct experts; T = 16 starts at even offsets 0-30: 128; T = 32 takes (t + 32 i) mod 256: all 256;
    # T = 64 repeats them (every expert twice): 256
    assert [t.balanced_experts(n) for n in (1, 4, 16, 32, 64)] == [8, 32, 128, 256, 256]
    # a toy with 8 experts, top-2 (stride 4): 2 tokens start at 0 and 2 -> {0, 4, 2, 6}
    assert t.balanced_experts(2, experts=8, top_k=2) == 4


def test_form_shift_moves_by_the_latency_times_the_moe_layers():
    # priced as stream + L a layer, the routed experts of DeepSeek-R1's 58 MoE layers cost 58 x L more: raising L from
    # 10 to 30 us lowers the saving at every C by 58 x 20 us = 1.16 ms
    lo, hi = t.form_shift_ms(10.0), t.form_shift_ms(30.0)
    assert set(lo) == set(t.ROWS)
    for c in t.ROWS:
        assert lo[c] - hi[c] == pytest.approx(1.16)
