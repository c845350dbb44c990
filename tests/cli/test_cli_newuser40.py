"""Round-40 new-user pass (compare/predict/plan on Jalapeño vs GB200/GB300 NVL72): messages a new user misread."""

from __future__ import annotations

from cli_runner import run


def test_predict_caption_is_one_sentence_naming_what_lists_the_steady_state(capsys):
    # the caption ended '... higher than the steady state `frontier` lists', which rich centred so that
    # '`frontier` lists' stood alone on the last line and read as a stray fragment
    code, out, err = run(
        capsys, "predict", "-s", "gb200-nvl72", "-m", "deepseek-r1", "--dp", "8", "--ep", "8", "-c", "64"
    )
    assert code == 0, err
    text = " ".join(out.split())
    assert (
        "so throughput is a little lower and mean TTFT higher than in the steady state that `frontier` and "
        "`compare` list at the same concurrency" in text
    )
    assert "steady state `frontier` lists" not in text


def test_a_ratio_claim_near_miss_is_told_the_ratio_name(capsys):
    # 'what would Jalapeño need to match GB300 per chip': peak_throughput_ratio=1 was answered
    # 'did you mean peak_throughput_per_chip?', a name that, typed back, claims an absolute tok/s/chip of 1
    code, out, err = run(
        capsys, "audit", "--system", "jalapeno", "--baseline", "gb300-nvl72", "--claim", "peak_throughput_ratio=1"
    )
    assert code != 0
    text = " ".join(err.split())
    assert "unknown metric 'peak_throughput' (did you mean peak_throughput_per_chip_ratio?)" in text
    # without _ratio the hint stays the plain metric
    code, out, err = run(capsys, "audit", "--system", "jalapeno", "--claim", "peak_throughput=1")
    assert "(did you mean peak_throughput_per_chip?)" in " ".join(err.split())


def test_a_ratio_claim_in_per_watt_words_is_not_told_to_convert_units(capsys):
    # a ratio of tokens-per-watt figures is the ratio of tok/s/kW figures: the '... figure x 1,000' advice of the
    # absolute claim would turn a 1.7x claim into 1,700x; the cost ratio keeps its reading (baseline $/token over ours)
    code, out, err = run(
        capsys, "audit", "-s", "jalapeno", "--baseline", "gb300-nvl72", "--claim", "tokens_per_watt_ratio=1.7"
    )
    text = " ".join(err.split())
    assert code != 0
    assert "(did you mean peak_tok_s_per_kw_ratio? a _ratio is unit-free: keep the value as given)" in text
    assert "x 1,000" not in text
    code, out, err = run(capsys, "audit", "-s", "jalapeno", "--baseline", "gb300-nvl72", "--claim", "cost_ratio=2")
    assert "(did you mean peak_tokens_per_usd_ratio? its _ratio is the baseline's $ per token over this system's)" in (
        " ".join(err.split())
    )
