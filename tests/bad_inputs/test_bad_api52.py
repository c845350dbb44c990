"""Round 52's API pass (api52): Python API entry points and variant files that break52 found lax — an
Efficiency built directly, a Batch with more prefill sequences than tokens, a decode context past the model's
maximum, a die's band ends, a variant's whole [[levels]] list, torus_congestion with no torus, DeepSeek's
expert groups. Each case below fails on main 24f8c249."""

from __future__ import annotations

import pytest

import jalapeno as jp
from jalapeno.errors import JalapenoError
from jalapeno.specs.efficiency import Efficiency


def _message(fn) -> str:
    with pytest.raises(JalapenoError) as e:
        fn()
    return str(e.value)


# ---- 1. Efficiency built directly is checked as with_overrides checks it ---------------------------------------


@pytest.mark.parametrize(
    "kw, shown",
    [
        # a negative time: the same message with_overrides gives efficiency.kernel_launch_s
        ({"kernel_launch_s": -1}, "Efficiency.kernel_launch_s: must be >= 0, got -1.0"),
        # 1 s a kernel launch is a unit slip (4 µs written as 4): the 1 ms ceiling
        ({"kernel_launch_s": 1.0}, "Efficiency.kernel_launch_s: 1 is beyond 0.001"),
        # a fraction of peak above 1
        ({"hbm_fraction": 1.5}, "Efficiency.hbm_fraction: must be in (0, 1], got 1.5"),
        ({"torus_congestion": 0.5}, "Efficiency.torus_congestion: must be >= 1, got 0.5"),
        ({"moe_exchange": "carrier_pigeon"}, "Efficiency.moe_exchange: unknown moe_exchange 'carrier_pigeon'"),
    ],
)
def test_efficiency_built_directly_is_range_checked(kw, shown):
    """Efficiency(kernel_launch_s=-1) was priced as given (a step shorter by 1 s a kernel); only with_overrides
    checked. Construction now runs the one check with_overrides runs, so the message is the same but for the key."""
    assert shown in _message(lambda: Efficiency(**kw))
    via_overrides = _message(lambda: Efficiency().with_overrides(kw))
    assert via_overrides.replace("efficiency.", "Efficiency.", 1) == _message(lambda: Efficiency(**kw))


def test_efficiency_kernel_entries_and_replace_are_checked():
    """A kernel entry's field (with_kernel) and a dataclasses.replace copy go through the same check."""
    import dataclasses

    msg = _message(lambda: Efficiency().with_kernel("gemm", "fp8", peak_fraction=2.0))
    assert "Efficiency.gemm.fp8.peak_fraction: must be in (0, 1], got 2.0" in msg, msg
    msg = _message(lambda: dataclasses.replace(Efficiency(), step_overhead_s=-0.5))
    assert "Efficiency.step_overhead_s: must be >= 0" in msg, msg
    assert Efficiency(kernel_launch_s=1e-5).kernel_launch_s == 1e-5  # 10 µs: in range, kept


def test_fit_trial_points_stay_unchecked():
    """An optimiser's trial point may stray past a ceiling before converging (fit/kernel_model.fit_efficiency):
    2 ms a launch, twice the 1 ms ceiling, is priced, not refused."""
    from jalapeno.fit.kernel_model import fit_efficiency

    eff = fit_efficiency({"kernel_launch_s": 2e-3, "gemm.fp8.peak_fraction": 1.2})
    assert eff.kernel_launch_s == 2e-3 and eff.gemm["fp8"].peak_fraction == 1.2


# ---- 2. Batch.make: every prefill sequence holds a token ------------------------------------------------------


@pytest.mark.parametrize(
    "kw, shown",
    [
        # 8 sequences sharing 4 tokens: half of them have none
        ({"prefill_tokens": 4, "prefill_seqs": 8}, "8 prefill sequence(s) hold only 4 prefill token(s)"),
        # sequences with no tokens at all
        ({"prefill_tokens": 0, "prefill_seqs": 2}, "2 prefill sequence(s) hold only 0 prefill token(s)"),
        # row 1 of two
        (
            {"prefill_tokens": [1024, 3], "prefill_seqs": [1, 4]},
            "4 prefill sequence(s) hold only 3 prefill token(s) (row 1)",
        ),
    ],
)
def test_batch_prefill_sequences_past_the_tokens_are_refused(kw, shown):
    """Batch.make(prefill_tokens=4, prefill_seqs=8) was priced: attention over 8 sequences of half a token each."""
    msg = _message(lambda: jp.Batch.make(**kw))
    assert msg.startswith("batch.prefill_seqs: ") and shown in msg, msg
    assert "give prefill_seqs <= prefill_tokens" in msg, msg


def test_batch_one_token_a_sequence_still_builds():
    """4 sequences of one token each (the bound itself), and the default of one sequence, are accepted."""
    assert jp.Batch.make(prefill_tokens=4, prefill_seqs=4).prefill_seqs[0] == 4
    assert jp.Batch.make(prefill_tokens=4).prefill_seqs[0] == 1
    # one sequence with 0.6 of a token: the expected last chunk of a prompt of mean length 819.6 at a 1-token budget
    # (serve/chunked.long_chunks; predict --max-tokens-per-step 1)
    assert jp.Batch.make(prefill_tokens=0.6, prefill_seqs=1).prefill_seqs[0] == 1


# ---- 3. step_cost: a decode context past the model's ----------------------------------------------------------


def test_step_cost_refuses_a_decode_context_past_the_model():
    """Llama-3.3-70B's config gives max_position_embeddings 131,072; `jalapeno step --context 200000` is refused
    (ModelSpec.check_context) and step_cost priced the same batch. Now the same check, named batch.decode_ctx."""
    model, pricer, p = jp.load_model("llama-3.3-70b"), jp.load_pricer("h200"), jp.get_precision("fp8")
    assert model.max_context == 131072
    msg = _message(
        lambda: jp.step_cost(model, pricer, jp.Layout(tp=8), p, jp.Batch.make(decode_seqs=4, decode_ctx=200_000))
    )
    assert msg.startswith("batch.decode_ctx: 200000 tokens exceed llama-3.3-70b's context of 131072 tokens"), msg
    # at the context itself it prices; a row without decoding sequences does not read its context
    ok = jp.Batch.make(decode_seqs=[4, 0], decode_ctx=[131_072, 10**6], prefill_tokens=[0, 512])
    assert jp.step_cost(model, pricer, jp.Layout(tp=8), p, ok).time_s(1) > 0


# ---- 4. a die's band ends: within the field's plausible range, and around the value the file states -----------


@pytest.mark.parametrize(
    "key, table, shown",
    [
        # 1e-308 TB/s: below the 1e-4 TB/s floor every die.link_bandwidth_tb_per_s value gets (plausibility.py)
        (
            "die.link_bandwidth_tb_per_s",
            {"value": 1.1, "low": 1e-308, "high": 4.4, "source": "a test"},
            "die.link_bandwidth_tb_per_s.low: 1e-308 TB/s is outside the plausible range 0.0001-500 TB/s",
        ),
        # 1e9 ns (1 s a hop) past the 1e5 ns ceiling
        (
            "die.hop_latency_ns",
            {"value": 50, "low": 20, "high": 1e9, "source": "a test"},
            "die.hop_latency_ns.high: 1e+09 ns is outside the plausible range 1-100000 ns",
        ),
        # a band that does not hold the value the same table states
        (
            "die.hop_latency_ns",
            {"value": 50, "low": 60, "high": 200, "source": "a test"},
            "die.hop_latency_ns: value 50 lies outside its band 60 to 200",
        ),
    ],
)
def test_die_band_ends_are_checked(key, table, shown):
    """Jalapeño's file states {value = 1.1, low = 0.28, high = 4.4} TB/s and {value = 50, low = 20, high = 200} ns;
    sensitivity and audit sweep those ends (newuser52), and a low of 1e-308 was accepted unchecked."""
    assert shown in _message(lambda: jp.load_system("jalapeno", ((key, table),)))


def test_a_what_if_value_outside_the_files_band_still_loads():
    """--set die.link_bandwidth_tb_per_s=5 moves the value alone (its source records the override): a what-if past
    the file's 0.28-4.4 band is allowed, the band kept (specs/sourced.Banded)."""
    s = jp.load_system("jalapeno", (("die.link_bandwidth_tb_per_s", 5),))
    assert s.chip.die.link_bandwidth_bytes_per_s == 5e12 and s.chip.die.bands["link_bandwidth_tb_per_s"] == (0.28, 4.4)


# ---- 6. efficiency.torus_congestion on a system with no torus ---------------------------------------------------


def test_torus_congestion_without_a_torus_gets_the_not_read_note(capsys):
    """cost/collectives.py multiplies only a torus3d level's all-to-all by torus_congestion; H200's levels are a
    switched NVLink node and a scale-out fabric, so --set efficiency.torus_congestion=2 priced as without it, with no
    word, where --set efficiency.all_to_all_fraction on a dense model gets 'is not read'. Jalapeño's global level is
    a 3-D torus: no note there."""
    from cli_runner import run

    args = ("predict", "-m", "llama-3.3-70b", "--concurrency", "8", "--set", "efficiency.torus_congestion=2")
    code, _, err = run(capsys, *args, "-s", "h200")
    assert code == 0, err
    assert "--set efficiency.torus_congestion is not read: h200" in err and "has no torus3d link level" in err, err
    code, _, err = run(capsys, *args, "-s", "jalapeno")
    assert code == 0 and "torus_congestion is not read" not in err, err


# ---- 5. a variant's full [[levels]] list names what it dropped -------------------------------------------------

_NODE = """
[[levels]]
name = "node"
chips = 8
scope = "scale_up"
topology = "switched"
bandwidth_gb_per_s = { value = 450, source = "a test: NVLink 4, per direction" }
latency_us = { value = 1.0, source = "a test: one switch hop" }
"""


def test_a_full_levels_list_names_the_levels_it_dropped(tmp_path, capsys):
    """h200.toml has a node level (8 chips, NVLS in-switch reduction) and an 8,192-chip scale-out cluster level; a
    variant giving the node level in full as [[levels]] replaced both, dropping the cluster and (in_network_reduction
    not stated: false) the node's in-switch reduction, with no word."""
    from cli_runner import run

    f = tmp_path / "h200_flat.toml"
    f.write_text('base = "h200"\n' + _NODE)
    code, _, err = run(capsys, "predict", "-s", str(f), "-m", "llama-3.3-70b", "--concurrency", "8")
    assert code == 0, err
    assert "h200_flat.toml: [[levels]] replaces all of h200's link levels, and leaves out cluster (8,192 chips, " in err
    assert "node's in-switch reduction (in_network_reduction)" in err and "priced on node alone" in err, err


def test_a_levels_list_that_keeps_every_level_gets_no_note(tmp_path):
    """Both of h200's levels given again, the node's reduction kept: nothing dropped, no note; a dotted key neither."""
    from jalapeno.specs.variants import levels_replaced_note

    base = jp.load_system("h200")
    kept = (
        _NODE
        + "in_network_reduction = true\n"
        + """
[[levels]]
name = "cluster"
chips = 8192
scope = "scale_out"
topology = "switched"
bandwidth_gb_per_s = { value = 50, source = "a test: one 400 Gb/s NIC per chip" }
latency_us = { value = 5.0, source = "a test" }
"""
    )
    f = tmp_path / "h200_kept.toml"
    f.write_text('base = "h200"\n' + kept)
    assert [lv.name for lv in base.levels] == ["node", "cluster"]
    assert levels_replaced_note(jp.load_system(str(f))) is None
    assert levels_replaced_note(jp.load_system("h200", (("levels.node.chips", 8),))) is None


# ---- 7. DeepSeek's grouped gate: n_group / topk_group ------------------------------------------------------------


def _deepseek(**changes) -> dict:
    import json
    from pathlib import Path

    import jalapeno.specs.model_config as mc

    cfg = json.loads((Path(mc.__file__).parent.parent / "data" / "models" / "deepseek-r1.json").read_text())
    return {**cfg, **changes}


@pytest.mark.parametrize(
    "changes, shown",
    [
        # 9 of 8 groups kept: torch.topk(group_scores, k=9) over 8 groups fails in the engines' gate
        ({"topk_group": 9}, "cfg.json: topk_group: 9 groups kept of n_group 8"),
        # 256 experts in 7 groups: 256 / 7 = 36.6, the gate's view(tokens, 7, -1) cannot split them
        ({"n_group": 7}, "cfg.json: n_group: 256 routed experts do not split into 7 equal groups"),
        # 64 groups of 256 / 64 = 4 experts, 1 kept: 4 experts for a top-8 route
        ({"n_group": 64, "topk_group": 1}, "cfg.json: topk_group: 1 kept group(s) of 4 experts hold fewer than the 8"),
        ({"topk_group": 0}, "cfg.json: topk_group: must be a positive integer, got 0"),
    ],
)
def test_deepseek_grouped_gate_that_cannot_run_is_refused(changes, shown):
    """DeepSeek-R1's config has n_group 8, topk_group 4 over 256 routed experts (a token's 8 experts come from the
    4 best of 8 groups of 32). Configs breaking that gate were accepted: nothing prices the grouping."""
    from jalapeno.specs.model_config import model_from_config

    assert shown in _message(lambda: model_from_config(_deepseek(**changes), "ds", "cfg.json"))


def test_deepseek_grouped_gate_as_released_loads():
    """DeepSeek-R1's own 8/4 and Kimi K2.5's 1/1 (one group of 384: no grouping) load; 2 kept groups of 4 experts
    hold exactly a top-8 route (the bound itself)."""
    from jalapeno.specs.model_config import model_from_config

    assert model_from_config(_deepseek(), "ds", "cfg.json").moe.num_experts == 256
    assert model_from_config(_deepseek(n_group=64, topk_group=2), "ds", "cfg.json").moe.top_k == 8
    assert jp.load_model("kimi-k2.5").moe.num_experts == 384
