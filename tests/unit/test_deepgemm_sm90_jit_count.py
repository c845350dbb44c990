"""scripts/deepgemm_sm90_jit_count.py: the SM90 DeepGEMM configuration rule, checked on hand-worked shapes."""

from script_module import load_script

jit = load_script("deepgemm_sm90_jit_count")


def test_o_proj_below_1024_rows_by_hand():
    # o_proj at TP8, N 7168, K 2048, M 1000 on 132 SMs: 8 row blocks of 128. block_n 112 -> 8*64 = 512 tiles,
    # 4 waves, last wave 512 - 396 = 116 (120: 480 tiles, 84; 128: 448, 52; 104: 552, 5 waves). 128 % 112 != 0 ->
    # stages from (6, 5, 4): 6 stages = 28,672 + 6*(16,384 + 512 + 14,336) + 128 + 96 = 216,288 <= 232,448.
    # M < 1024 -> no multicast.
    assert jit.kernel_key(1000, 7168, 2048) == (7168, 2048, 128, 112, 6, 1)


def test_o_proj_above_1024_rows_by_hand():
    # M 1100: 9 row blocks. block_n 128 -> 504 tiles, 4 waves (every smaller block_n needs 5). Stages from 8 down:
    # 6 stages = 32,768 + 6*33,280 + 64 + 96 = 232,608 > 232,448; 5 stages = 199,312 fits. M >= 1024 and
    # 7168 % 256 == 0 -> multicast 2. A different kernel from M 1000's.
    assert jit.kernel_key(1100, 7168, 2048) == (7168, 2048, 128, 128, 5, 2)


def test_warm_up_batch_covers_more_of_the_long_prompts():
    # The 8k warm-up batch (~8.3k rows) sits among the served prompts' sizes; the 1k one (1.1-1.2k rows) above them.
    long = [jit.first_wave_new_kernels(8192, 16, seed) for seed in range(10)]
    short = [jit.first_wave_new_kernels(1024, 16, seed) for seed in range(10)]
    assert max(long) < min(short)
