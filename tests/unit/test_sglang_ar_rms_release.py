"""SGLang's default all-reduce + residual add + RMSNorm fusion by release (round 48, sglrel48): the ``sglang``
profile's version rule ``allreduce_rms_rule = "sglang_sm100"`` before 0.5.7 (data/stacks.toml), the
``sglang_sm100`` rule of cost/allreduce_rms.py and its price (cost/ops.py).

Expected values by hand, from the released wheels' python/sglang/srt/server_args.py
(``_handle_model_specific_adjustments``): 0.5.5.post2, 0.5.6 and 0.5.6.post2 set ``enable_flashinfer_allreduce_fusion``
only for DeepseekV3ForCausalLM under ``is_sm100_supported()`` (compute capability major 10) and GptOssForCausalLM
under ``is_blackwell_supported()``; 0.5.7 is the first with sgl-project/sglang PR #14764's block (DeepseekV3, GptOss,
Glm4Moe, Qwen3Moe on ``is_sm90_supported() or is_blackwell_supported()``). So: 0.5.6.post2 -> sglang_sm100, 0.5.7 ->
sglang; under sglang_sm100 H200 (SM90) and Qwen3-MoE run unfused, B200 (10.0) and GB300 (10.3) DeepSeek-V3 fused up
to 2,048 tokens (``FUSE_ALLREDUCE_MAX_BATCH_SIZE``, unchanged across these releases).
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.allreduce_rms import rule_max_tokens
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.formats import get_precision
from jalapeno.specs.stacks import get_stack


@pytest.mark.parametrize(
    ("version", "rule"),
    [
        ("0.5.5.post2", "sglang_sm100"),  # the oldest CUDA release of the data (aiconfigurator GB200)
        ("0.5.6", "sglang_sm100"),
        ("0.5.6.post2", "sglang_sm100"),  # built 2025-12-11, before PR #14764 reached a release
        ("0.5.7rc0", "sglang_sm100"),  # a pre-release of 0.5.7 orders before it (PEP 440)
        ("0.5.7", "sglang"),  # the first release with PR #14764
        ("0.5.12", "sglang"),
    ],
)
def test_release_boundary_by_hand(version, rule):
    assert get_stack(f"sglang@{version}").allreduce_rms_rule == rule


def test_unpinned_profile_is_the_newest_behaviour():
    assert get_stack("sglang").allreduce_rms_rule == "sglang"


def _chip(system: str) -> str:
    return load_system(system).chip.name


@pytest.mark.parametrize(
    ("model_type", "system", "tp", "expected"),
    [
        ("deepseek_v3", "h200", 8, 0),  # no Hopper before 0.5.7
        ("deepseek_v3", "b200", 8, 2048),  # is_sm100_supported(): capability 10.0
        ("deepseek_v3", "gb300-nvl72", 4, 2048),  # 10.3: major 10
        ("kimi_k2", "gb200-nvl72", 4, 2048),  # Kimi K2.5's config names DeepseekV3ForCausalLM
        ("gpt_oss", "b200", 2, 2048),
        ("qwen3_moe", "b200", 4, 0),  # Qwen3-MoE joined the list with PR #14764
        ("qwen3_moe", "h200", 4, 0),
        ("deepseek_v3", "b200", 1, 0),  # no TP all-reduce
        ("deepseek_v3", "mi355x", 8, 0),
    ],
)
def test_pre_057_rule_by_hand(model_type, system, tp, expected):
    assert rule_max_tokens("sglang_sm100", model_type, _chip(system), tp, 7168) == expected


def _step(system: str, model: str, stack: str, tp: int, seqs) -> np.ndarray:
    return step_cost(
        load_model(model),
        load_pricer(system, stack=get_stack(stack)),
        Layout(tp=tp),
        get_precision("fp8"),
        Batch.make(decode_seqs=np.asarray(seqs, dtype=float), decode_ctx=1024.0),
    ).step_time_s


def test_h200_qwen3_fuses_from_057_only():
    seqs = [8.0, 64.0]
    plain = _step("h200", "qwen3-235b-a22b", "sglang", 4, seqs)
    old = _step("h200", "qwen3-235b-a22b", "sglang@0.5.6.post2+ar_rms", 4, seqs)
    new = _step("h200", "qwen3-235b-a22b", "sglang@0.5.7+ar_rms", 4, seqs)
    np.testing.assert_array_equal(old, plain)  # 0.5.6.post2: no fusion on SM90 nor for Qwen3-MoE
    assert (new < plain).all()


def test_b200_deepseek_fuses_at_both_releases():
    seqs = [16.0]
    plain = _step("b200", "deepseek-r1", "sglang", 8, seqs)
    old = _step("b200", "deepseek-r1", "sglang@0.5.6+ar_rms", 8, seqs)
    new = _step("b200", "deepseek-r1", "sglang@0.5.12+ar_rms", 8, seqs)
    assert old[0] < plain[0]
    assert old[0] == pytest.approx(new[0], rel=1e-12)


def test_switch_on_reads_the_rule_by_release(monkeypatch):
    import jalapeno.specs.stacks as stacks_mod

    monkeypatch.setattr(stacks_mod, "SGLANG_AR_RMS_ON", True)
    on = stacks_mod.build_stacks({})["sglang"]
    old, new = on.at_version("0.5.6.post2"), on.at_version("0.5.7")
    assert (old.allreduce_rms_fusion, old.allreduce_rms_rule) == (True, "sglang_sm100")
    assert (new.allreduce_rms_fusion, new.allreduce_rms_rule) == (True, "sglang")


def test_bad_rule_value_in_a_version_rule_names_the_field():
    from jalapeno.specs.stacks import _version_rules

    raw = [{"field": "allreduce_rms_rule", "value": "sm90", "before": "0.5.7", "source": "x"}]
    with pytest.raises(SpecError, match="allreduce_rms_rule") as e:
        _version_rules(raw, "stack[0]")
    assert "sglang_sm100" in str(e.value)


def test_rule_is_not_charged_without_the_fusion():
    """predict --engine / --stack notes: sglang@0.5.6 takes the rule, but with SGLANG_AR_RMS_ON off (shipped) and no
    ``+ar_rms`` the profile fuses nothing, so the rule changes no price; with ``+ar_rms`` it does."""
    from jalapeno.cli.engine_opts import engine_rules

    plain = {r["field"]: r for r in engine_rules(object(), "sglang@0.5.6")}
    fused = {r["field"]: r for r in engine_rules(object(), "sglang@0.5.6+ar_rms")}
    assert plain["allreduce_rms_rule"]["charged"] is False
    assert "SGLANG_AR_RMS_ON is off" in plain["allreduce_rms_rule"]["span"]
    assert fused["allreduce_rms_rule"]["charged"] is True
    assert "allreduce_rms_rule" not in {r["field"] for r in engine_rules(object(), "sglang@0.5.7")}
