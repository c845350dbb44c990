"""Agentic workloads (specs/agentic.py): per-turn shapes by hand, presets, user TOML, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.errors import SpecError, UnknownNameError
from jalapeno.specs.agentic import AGENTIC_PRESETS, AgenticSpec, get_agentic
from jalapeno.specs.workload import get_workload

SMALL = AgenticSpec("small", turns=3, system_prompt_tokens=100, tool_output_tokens=50, reply_tokens=10, think_s=1.0)


def test_turn_shapes_by_hand():
    # ISL_k = S + (k+1)u + k r: 150, 210, 270; new: S+u, u, u; prefix: 0, 160, 220
    assert SMALL.turn_isl().tolist() == [150, 210, 270]
    assert SMALL.turn_new_tokens().tolist() == [150, 50, 50]
    assert SMALL.turn_prefix_tokens().tolist() == [0, 160, 220]
    assert SMALL.final_context_tokens == 100 + 3 * 60


def test_hit_rate_of_a_session_that_never_evicts_by_hand():
    # tokens seen for the first time: 150 + 50 + 50 = 250 of 150 + 210 + 270 = 630 prefilled
    assert SMALL.hit_rate_no_eviction() == pytest.approx(1 - 250 / 630)


def test_presets_have_sources_and_fit_the_models():
    for name, spec in AGENTIC_PRESETS.items():
        assert spec.source, name
    coding = get_agentic("agentic:coding-agent")
    assert coding.turns == 40 and coding.final_context_tokens == 6000 + 40 * 2850
    assert coding.final_context_tokens <= 163_840  # DeepSeek-R1's context (config.json max_position_embeddings)


def test_long_context_single_shot_presets():
    for name, isl in (("32k1k", 32768), ("64k1k", 65536), ("128k1k", 131072)):
        wl = get_workload(name)
        assert wl.isl == isl and wl.osl == 1024
    assert get_workload("128k1k").isl + 1024 <= 163_840


def test_user_toml(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text('turns = 5\nsystem_prompt_tokens = 2000\ntool_output_tokens = 800\nreply_tokens = 200\n'
                 'think_s = 1.5\njitter = 0.1\n')
    spec = get_agentic(f"agentic:{p}")
    assert (spec.name, spec.turns, spec.think_s, spec.jitter) == ("mine", 5, 1.5, 0.1)
    assert np.allclose(spec.turn_isl(), 2000 + 800 * np.arange(1, 6) + 200 * np.arange(5))


@pytest.mark.parametrize("body, words", [
    ("turns = 5\nsystem_prompt_tokens = 1\ntool_output_tokens = 1\nreply_tokens = 2\n", ["think_s", "missing"]),
    ("turns = 5\nsystem_prompt_tokens = 1\ntool_output_tokens = 1\nreply_tokens = 2\nthink_s = 1\nthinks = 2\n",
     ["thinks", "unknown key"]),
    ("turns = 0\nsystem_prompt_tokens = 1\ntool_output_tokens = 1\nreply_tokens = 2\nthink_s = 1\n",
     ["turns", "positive integer"]),
    ("turns = 2.5\nsystem_prompt_tokens = 1\ntool_output_tokens = 1\nreply_tokens = 2\nthink_s = 1\n",
     ["turns", "must be a whole number"]),
    ("turns = 2\nsystem_prompt_tokens = 1\ntool_output_tokens = 1\nreply_tokens = 2\nthink_s = -1\n",
     ["think_s", ">= 0"]),
    ("turns = 2\nsystem_prompt_tokens = 1\ntool_output_tokens = 1\nreply_tokens = 2\nthink_s = 1\njitter = 1\n",
     ["jitter", "[0, 1)"]),
    ("turns = [\n", ["malformed TOML"]),
])
def test_bad_user_toml_names_the_field(tmp_path, body, words):
    p = tmp_path / "bad.toml"
    p.write_text(body)
    with pytest.raises(SpecError) as e:
        get_agentic(str(p))
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_unknown_preset():
    with pytest.raises(UnknownNameError, match="coding-agent"):
        get_agentic("agentic:codeing-agent")


def test_presets_against_published_agent_traces():
    """Round 53 (agentic53): the presets' aggregate shapes against published traces (sources in specs/agentic.py)."""
    coding, research = AGENTIC_PRESETS["coding-agent"], AGENTIC_PRESETS["research-agent"]
    # TraceLab's public pool: 52.6B of 54.9B input tokens were cache reads = 95.8%; the coding agent's hit rate
    # by hand: 1 − (6,000 + 40 × 2,500) / (40 × 6,000 + 2,500 × 820 + 350 × 780) = 1 − 106,000 / 2,563,000 = 95.86%
    assert coding.hit_rate_no_eviction() == pytest.approx(52.6 / 54.9, abs=0.005)
    # TraceLab's Codex exec_command calls: 97.8 h end to end over 184k calls = 1.91 s each; the preset's tool time 2 s
    assert coding.think_s == pytest.approx(97.8 * 3600 / 184_000, rel=0.1)
    # Manus: ~100 input tokens per output token; research agent by hand: (20 × 3,000 + 4,000 × 210 + 500 × 190)
    # / (20 × 500) = 995,000 / 10,000 = 99.5
    ratio = research.turn_isl().sum() / (research.turns * research.reply_tokens)
    assert ratio == pytest.approx(100, rel=0.05)
    assert "2606.30560" in coding.source and "Manus" in research.source
