"""The CLI reads ``--stack NAME[@VERSION][+ar_rms]`` with specs/stacks.split_stack_name, the parse get_stack uses.

Before (round 38, hygiene38) cli/common.note_stack_version and cli/engine_opts.engine_rules split at '@' by hand and
took ``1.1.0rc2.post2+ar_rms`` as the release: the note went silent and ``predict --engine ... --stack
trtllm@1.1.0rc2.post2+ar_rms`` failed with "'1.1.0rc2.post2+ar_rms' is not a release number" although get_stack
takes that name. Expected values from data/stacks.toml: trtllm's one version rule, moe_exchange =
nvlink_all_to_all_above_top_k before 1.2.0rc3.
"""

from jalapeno.cli.common import note_stack_version, stack_label
from jalapeno.cli.engine_opts import engine_rules
from jalapeno.deploy.engines import get_recipe


def test_the_version_note_reads_a_fused_name(capsys):
    assert note_stack_version("trtllm@1.1.0rc2.post2+ar_rms") == "trtllm@1.1.0rc2.post2+ar_rms"
    err = " ".join(capsys.readouterr().err.split())
    # round 43's prompt-step rule holds at 1.1.0rc2 too, its switch shipped off (cost/step.PROMPT_TOKEN_STEP_ON)
    assert ("trtllm@1.1.0rc2.post2 takes the version rules prompt_step_s_per_token = 1.56e-05 (NOT CHARGED: its "
            "switch is off; trtllm >= 1.1.0rc2, < 1.2.0rc2); moe_exchange = nvlink_all_to_all_above_top_k") in err


def test_engine_rules_read_a_fused_name():
    rec = get_recipe("trtllm-h200-dsr1-fp8-mtp")
    rules = engine_rules(rec, "trtllm@1.1.0rc2.post2+ar_rms")
    assert [(r["field"], r["value"]) for r in rules] == [("prompt_step_s_per_token", 1.56e-5),
                                                          ("moe_exchange", "nvlink_all_to_all_above_top_k")]
    assert rules == engine_rules(rec, "trtllm@1.1.0rc2.post2")
    assert engine_rules(rec, "trtllm@1.2.0rc3+ar_rms") == []


def test_the_title_label_keeps_the_switch():
    assert stack_label(" vllm @ 0.18.0 +ar_rms") == " · stack vllm@0.18.0+ar_rms"
    assert stack_label("trtllm@ 1.1.0") == " · stack trtllm@1.1.0"
    assert stack_label("sglang") == " · stack sglang" and stack_label(None) == ""
