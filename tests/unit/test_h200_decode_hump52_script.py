"""scripts/h200_decode_hump52.py: the per-prompt cost read from two output lengths, the goal figures and the what-if
shift (docs/gap_aic_itl.md, round 52). Expected values by hand from hand-made rows, not the script's output."""

from __future__ import annotations

import pytest
from script_module import load_script

from jalapeno.errors import SpecError

h = load_script("h200_decode_hump52")


def test_prompt_cost_from_two_output_lengths():
    # v0.5.9 C = 32: gaps -0.02 ms (1k/1k) and +1.94 ms (1k/8k); InferenceX's mean outputs are 0.9 x OSL = 921.6 and
    # 7,372.8 tokens, so the 1k/1k sweep admits 32 / 921.6 prompts a step and the 1k/8k one 32 / 7,372.8:
    # P = 1.96 / (32 x (1/921.6 - 1/7372.8)) = 1.96 / (32 x 7/7372.8) = 1.96 x 7372.8 / 224 = 64.512 ms.
    assert h.MEAN_OUTPUT_FRACTION == 0.9
    assert h.prompt_cost_ms(-0.02, 1.94, 32, 921.6, 7372.8) == pytest.approx(64.512)
    # A cost paid once per prompt: 70 ms at C = 8 adds 70 x 8/1024 = 0.546875 ms at mean output 1,024 and
    # 70 x 8/8192 = 0.068359375 ms at 8,192; the script reads 70 back from that difference.
    assert h.prompt_cost_ms(0.0, 0.546875 - 0.068359375, 8, 1024, 8192) == pytest.approx(70.0)
    with pytest.raises(SpecError, match="osl"):
        h.prompt_cost_ms(0.0, 1.0, 8, 8192, 1024)
    with pytest.raises(SpecError, match="concurrency"):
        h.prompt_cost_ms(0.0, 1.0, 0, 1024, 8192)


def test_goal_figures_match_goals_definition():
    # The eight held-out InferenceX H200 interactivity errors of round 51's end (%): sorted -17.4 -13.8 -9.6 -6.4 -5.8
    # -2.5 6.1 8.6; bias = mean of the middle pair (-6.4 - 5.8) / 2 = -6.1; |e| sorted 2.5 5.8 6.1 6.4 8.6 9.6 13.8 17.4:
    # median (6.4 + 8.6) / 2 = 7.5; p90 at rank 0.9 x 7 = 6.3: 13.8 + 0.3 x (17.4 - 13.8) = 14.88.
    errs = [-17.4, -13.8, -9.6, -6.4, -5.8, -2.5, 6.1, 8.6]
    med, p90, bias = h.goal_figures(errs)
    assert (med, p90, bias) == pytest.approx((7.5, 14.88, -6.1))
    with pytest.raises(SpecError):
        h.goal_figures([])


def _row(stack, c, measured, predicted, split="held_out", model="deepseek-r1"):
    return {
        "source": "inferencex",
        "system": "h200",
        "metric": "tpot_s",
        "model": model,
        "stack": stack,
        "concurrency": f"{c}.0",
        "measured": str(measured),
        "predicted": str(predicted),
        "split": split,
    }


def test_what_if_shifts_only_held_out_v0512_deepseek_rows():
    rows = [
        _row("sglang@0.5.12", 32, 0.0218, 0.0233),  # shifted by 1.5 ms: 21.8 / 21.8 - 1 = 0
        _row("sglang@0.5.7", 32, 0.0256, 0.0233),  # another release: not shifted
        _row("sglang@0.5.12", 16, 0.0150, 0.0160, split="fit"),  # fit row: not counted
        _row("trtllm", 32, 0.0313, 0.0379, model="gpt-oss-120b", split="none"),  # counted, not shifted
    ]
    base, shifted = h.what_if_errors(rows, {32: 1.5})
    assert base == pytest.approx([21.8 / 23.3 - 1, 25.6 / 23.3 - 1, 31.3 / 37.9 - 1])
    assert shifted == pytest.approx([0.0, 25.6 / 23.3 - 1, 31.3 / 37.9 - 1])


def test_implied_experts_take_the_other_terms_as_priced():
    # Model step 17.0 ms of which the routed experts 9.0 ms (0.6 ms of it per-kernel), 30 GB of expert weights;
    # predicted TPOT 17.5 (prompt share 0.5), measured 16.0: implied step 16.0 - 0.5 = 15.5, implied experts
    # 15.5 - (17.0 - 9.0) = 7.5 ms, streamed in 7.5 - 0.6 = 6.9 ms: 30e9 B / 6.9e-3 s = 4.3478 TB/s.
    step = {"step": 17.0, "experts": 9.0, "experts_overhead": 0.6, "experts_bytes": 30e9}
    r = h.implied_experts(16.0, 17.5, step)
    assert r["share"] == pytest.approx(0.5)
    assert r["step"] == pytest.approx(15.5)
    assert r["experts"] == pytest.approx(7.5)
    assert r["tb_s"] == pytest.approx(30e9 / 6.9e-3 / 1e12)
    with pytest.raises(SpecError, match="experts"):
        h.implied_experts(8.0, 17.5, step)  # 8.0 - 0.5 - 8.0 = -0.5 ms left for the experts
