"""Round 25 new-user pass and break-it (newuser25): what a newcomer typed and what it did."""

from __future__ import annotations

import pytest
from cli_runner import run


@pytest.mark.parametrize("tiers, says", [("fast=0", "fast=0: a task-time ceiling must be a finite number of minutes > 0"),
                                         ("fast=-1", "fast=-1: a task-time ceiling must be a finite number of minutes > 0")])
def test_agentic_tier_ceiling_zero_is_refused(capsys, tiers, says):
    """`compare -w agentic:coding-agent --tiers fast=0` divided 60 / 0 (ZeroDivisionError traceback);
    agentic tiers are task-time ceilings in minutes, so the words say ceiling, not floor."""
    code, out, err = run(capsys, "compare", "-w", "agentic:coding-agent", "-s", "jalapeno", "--tiers", tiers)
    assert code == 2
    assert "Traceback" not in err + out
    assert "--tiers" in err and says in err


def test_compare_agentic_api_refuses_a_zero_ceiling():
    import jalapeno as jp
    from jalapeno.analysis.agentic import compare_agentic
    from jalapeno.errors import SpecError
    from jalapeno.specs.agentic import get_agentic

    m = jp.load_model("deepseek-r1")
    with pytest.raises(SpecError, match="task-time ceiling"):
        compare_agentic(m, [jp.load_pricer("jalapeno")], get_agentic("coding-agent"),
                        {"jalapeno": ["fp8"]}, tier_ceilings_min={"fast": 0.0})


def test_plan_above_the_max_prints_a_maximum_below_the_floor(capsys):
    """compare prints Jalapeño's max tok/s/user on DeepSeek-R1 8K/1K as 139.5; `plan --min-interactivity
    139.5` then said 'reaches at most 139.5 tok/s/user ..., below 139.5'. The maximum now carries the
    decimals that show it below the floor asked."""
    import re

    code, out, err = run(capsys, "plan", "--system", "jalapeno", "--target", "1e6", "--min-interactivity", "139.5")
    assert code == 2, out
    m = re.search(r"reaches at most ([0-9.]+) tok/s/user on this workload, below 139.5", err)
    assert m, err
    assert float(m.group(1)) < 139.5 and m.group(1) != "139.5"


def _peak(out: str) -> float:
    import json

    return max(p["throughput_per_chip"] for p in json.loads(out)["frontier"])


def test_a_power_cap_is_said_to_change_the_power_figures_only(capsys, monkeypatch):
    """`--set chip.sustained_w=400` (a power-cap what-if) left throughput unchanged and raised the
    sustained tok/s/kW by 550/400 with no word: the model has no DVFS model. The frontier is the
    same; the note says so once, and the sustained tok/s/kW is the same throughput over 0.4 kW."""
    from jalapeno.cli import system_notes

    monkeypatch.setattr(system_notes, "_NOTED", set())
    args = ("frontier", "--system", "jalapeno", "-p", "fp4", "--power", "sustained", "--json")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "power-capping" not in err
    base = _peak(out)
    code, out, err = run(capsys, *args, "--set", "chip.sustained_w=400")
    assert code == 0, err
    assert "note: --set chip.sustained_w changes only the power the chip and sustained conventions divide by" in err
    assert "there is no power-capping (DVFS) model" in err and "lower chip.peak_dense_tflops.*" in err
    assert _peak(out) == base
    import json

    best = max(json.loads(out)["frontier"], key=lambda p: p["throughput_per_chip"])
    assert best["tok_s_per_kw"] == pytest.approx(best["throughput_per_chip"] / 0.4)


def test_a_lower_tdp_alone_names_sustained_w_as_the_fix(capsys):
    """`--set chip.tdp_w=500` on Jalapeño (550 W sustained) said 'check both are in W'; the fix a user
    lowering the TDP needs is to lower chip.sustained_w with it."""
    from cli_runner import check_error

    check_error(*run(capsys, "frontier", "--system", "jalapeno", "--set", "chip.tdp_w=500"),
                "chip.sustained_w: sustained 550 W exceeds the TDP 500 W (chip.tdp_w)",
                "needs chip.sustained_w at most it too, e.g. chip.sustained_w = 500")


def test_explore_prints_the_base_figures_its_scores_are_ratios_of(capsys, tmp_path):
    """explore printed '2.58 (x base)' with the base's own figure only in meta.json; a user asking
    "what beats GB300 at 50 tok/s/user" had nothing to multiply by. The base's figure per case now
    prints under the table (as stored in meta.json) with the floor and the coarse sweep it came from,
    and `results show` re-prints it."""
    import json

    pytest.importorskip("optuna")
    pytest.importorskip("duckdb")
    f = tmp_path / "space.toml"
    f.write_text('name = "nu25"\nbase = "jalapeno"\nseed = 1\ntrials = 2\n'
                 '[objective]\nmetrics = ["tok_s_per_chip"]\nmin_interactivity = 20\npower = "chip"\n'
                 '[[cases]]\nmodel = "gpt-oss-120b"\nworkload = "1k1k"\n'
                 '[params."chip.hbm_stacks"]\nchoices = [6, 8]\n[sweep]\nbatches = [1, 16, 256]\n')
    store = tmp_path / "store"
    code, out, err = run(capsys, "explore", str(f), "--store", str(store))
    assert code == 0, err
    meta = json.loads((store / "runs" / "explore-nu25" / "meta.json").read_text())
    b = meta["base_metrics"][0]["tok_s_per_chip"]
    assert b >= 1e3  # written whole with separators from 1,000 up (newuser52: '2.527e+04' before)
    bs = f"{round(b):,}"
    text = " ".join(out.split())
    # round 42: the floor figure is the coarse sweep's frontier interpolated at the floor ([sweep] at_floor)
    assert (f"base jalapeno on gpt-oss-120b 1k1k: tok_s_per_chip {bs} tok/s/chip (in+out) (the sweep's frontier "
            "interpolated at 20 tok/s/user; power chip)") in text  # the unit since round 45
    assert "sweep: serving agg, decode batches [1, 16, 256], no TBO" in text
    assert "a design's figure on one case = its score x the base's" in text
    code, out2, err = run(capsys, "results", "show", "explore-nu25", "--store", str(store))
    assert code == 0, err
    assert f"tok_s_per_chip {bs} tok/s/chip (in+out) (the sweep's frontier interpolated" in " ".join(out2.split())


def test_simulate_notes_an_overloaded_rate_with_predicts_capacity(capsys):
    """`predict --rate 20` refuses (the deployment sustains at most ~8.7 requests/s); `simulate --rate 20`
    ran with no word, its queue growing all run, and printed a 'steady state' (at --rate 1e6 one over
    0.0 s). It now notes the same capacity predict refuses past; a sustainable rate gets no note."""
    import re

    lay = ("--system", "jalapeno", "--dp", "8", "--ep", "8")
    code, out, err = run(capsys, "predict", *lay, "--rate", "20")
    assert code == 2
    cap = re.search(r"sustains at most ([0-9.]+) requests/s", err).group(1)
    code, out, err = run(capsys, "simulate", *lay, "--rate", "20", "--requests", "40")
    assert code == 0, err
    assert (f"note: --rate 20 requests/s is above the {cap} requests/s this deployment sustains" in err
            and "there is no steady state" in err)
    code, out, err = run(capsys, "simulate", *lay, "--rate", f"{float(cap) / 4:g}", "--requests", "40")
    assert code == 0, err
    assert "no steady state" not in err


@pytest.mark.parametrize("groups, size, boxes", [
    ({64: 31}, 72, 31),          # one EP64 instance per NVL72 rack (8 GPUs idle in each)
    ({8: 248}, 72, 28),          # 9 eight-GPU instances per rack: ceil(248 / 9) = 28 = ceil(1,984 / 72)
    ({32: 5}, 72, 3),            # two 32-chip groups per rack: ceil(5 / 2)
    ({16: 19, 2: 228}, 72, 11),  # decode 16s with prefill pairs: worked in the docstring
    ({128: 3}, 72, 6),           # each: one whole rack + 56 chips; two 56s never share a rack: 3 + 3
    ({2: 4}, 8, 1),
])
def test_packed_boxes_by_hand(groups, size, boxes):
    """The last-but-two case by hand: racks 1-4 hold 4 x 16 + 4 x 2 (72); rack 5 holds the 3 remaining
    16-chip groups (48) + 12 pairs (24); pairs left: 228 - 16 - 12 = 200 = 400 chips = 5 racks of 36
    pairs and one of 20 -> 5 + 6 = 11 = ceil(760 / 72)."""
    from jalapeno.analysis.packing import packed_boxes

    assert packed_boxes(groups, size) == boxes


def test_plan_counts_racks_that_hold_each_group_whole(capsys):
    """plan printed 'racks: ceil(1,984 / 72) = 28' for 31 instances of GB300 agg TP2 DP32 EP64 (64 GPUs
    each): an EP64 group priced inside one NVLink domain cannot share a 72-GPU rack with another, so the
    fleet needs 31 racks (the 8 spare GPUs of each rack stay idle). Rounds 27-34 checked it on the FP4 point at
    >= 60 tok/s/user (TP4 DP32 EP128); since round 35's MoE recalibration a 4-chip instance leads there, so the
    case is the FP8 point at >= 56, TP2 DP64 EP128: each 128-GPU group takes one whole rack and 56 GPUs of
    another, which no other group's remainder can share (72 // 56 = 1), so 2 racks per instance."""
    import re

    code, out, err = run(capsys, "plan", "--system", "gb300-nvl72", "--target", "1e6", "--min-interactivity", "56",
                         "--serving", "agg", "-p", "fp8")
    assert code == 0, err
    text = " ".join(out.split())
    assert "attn TP2 DP64 · MoE TP1 EP128 [fp8] (128 chips per instance)" in text  # the case described
    inst = int(re.search(r"instances: ceil\([0-9,]+ / [0-9,.]+\) = ([0-9,]+)", text).group(1).replace(",", ""))
    assert (f"racks: {2 * inst:,} (each worker's 128-chip group whole in a rack of 72, where its collectives are "
            f"priced; ceil({inst * 128:,} / 72) = {-(-inst * 128 // 72):,} would split groups across racks)") in text


def test_audit_says_why_a_claim_beyond_every_frontier_is_impossible(capsys):
    """`audit --claim throughput_per_chip@1e9=5` printed predicted '-', band '---', physical limit '-'
    and IMPOSSIBLE with no reason (sensitivity refuses the same @X, naming the frontier's reach)."""
    code, out, err = run(capsys, "audit", "--system", "jalapeno", "--claim", "throughput_per_chip@1e9=5")
    assert code == 0, err
    text = " ".join(out.split())
    assert "IMPOSSIBLE" in text and "---" not in text
    assert ("why: throughput_per_chip@1e+09 is undefined at every parameter value tried: no frontier reaches 1e+09 "
            "tok/s/user, not even the physical limit's (zero fixed costs, peak efficiencies)") in text
    # and stops there: no parameter, spec or joint move defines the metric at 1e9 tok/s/user (the tables under the
    # why were 47 rows of 'none in range' and a joint table of 'not reachable')
    assert "none in range" not in text and "not reachable" not in text and "each parameter alone" not in text
    assert text.endswith("no parameter alone, headline spec alone (0.5-4x) or joint change reaches 1e+09 tok/s/user "
                         "either: no tables of what the claim needs")


def test_api_names_a_model_or_frontier_of_the_wrong_type():
    """In a notebook, system_frontier("deepseek-r1", ...) and compare_systems("deepseek-r1", ...) raised
    AttributeError: 'str' object has no attribute 'moe' (step_cost and sweep already named the argument),
    and plan_capacity(system_frontier(...), ...) without .record() AttributeError on numpy.int64."""
    import jalapeno as jp
    from jalapeno.errors import SpecError

    pr, w, p = jp.load_pricer("jalapeno"), jp.get_workload("8k1k"), jp.get_precision("fp8")
    with pytest.raises(SpecError, match="system_frontier: model: expected a ModelSpec, got str") as e:
        jp.system_frontier("deepseek-r1", pr, w, p)
    assert "load_model(name)" in e.value.fix
    with pytest.raises(SpecError, match="compare_systems: model: expected a ModelSpec, got str"):
        jp.compare_systems("deepseek-r1", [pr], w, p)
    sf = jp.system_frontier(jp.load_model("gpt-oss-120b"), pr, jp.get_workload("1k1k"), jp.get_precision("mxfp4"))
    with pytest.raises(SpecError, match="expected a FrontierRecord, got SystemFrontier") as e:
        jp.plan_capacity(sf, sf.system, 1e6)
    assert ".record()" in e.value.fix


def test_audit_band_with_one_undefined_end_is_not_a_single_value(capsys):
    """Jalapeño's calibrated frontier on DeepSeek-R1 8K/1K stops near 136 tok/s/user, so
    throughput_per_chip@200 is undefined at the prediction and at the low band end; only the
    high end reaches 200. The band printed '4527-4527' (the one defined value twice); its
    unfavourable end is now undefined: '- to 4527' in the table, null in --json."""
    import json
    import re

    claim = ("audit", "--system", "jalapeno", "--claim", "throughput_per_chip@200=500")
    code, out, err = run(capsys, *claim, "--json")
    assert code == 0, err
    pred = json.loads(out)["predicted"]
    assert pred["value"] is None and pred["low"] is None and pred["high"] > 0
    code, out, err = run(capsys, *claim)
    assert code == 0, err
    assert re.search(r"│ - +│ - to [0-9.,e+]+ tok/s/chip +│", out), out  # 4,527 (separators: newuser29; unit: plan49)


def test_plan_counts_nodes_of_a_system_with_one_level(capsys, tmp_path):
    """A user's 8-GPU node without a scale-out level (the catalog H100 with its cluster level cut):
    plan printed chips and power but no node count (packaging dropped the outermost level, the only
    one). 109 TP2 instances = 218 GPUs = ceil(218 / 8) = 28 nodes (2-GPU groups tile 8-GPU nodes)."""
    import re
    from pathlib import Path

    src = (Path(__file__).resolve().parents[2] / "src/jalapeno/data/systems/h100.toml").read_text()
    cut = src[:src.index('[[levels]]\nname = "cluster"')] + src[src.index("[power]"):]
    f = tmp_path / "one.toml"
    f.write_text(cut.replace('name = "h100"', 'name = "h100-one"', 1))
    code, out, err = run(capsys, "plan", "--system", str(f), "-m", "llama-3.3-70b", "--target", "1e5")
    assert code == 0, err
    m = re.search(r"chips: [0-9,]+ x (\d+) = ([0-9,]+)", out)
    per, chips = int(m.group(1)), int(m.group(2).replace(",", ""))
    assert 8 % per == 0  # the groups tile the node, so the count is the plain ceiling
    assert f"nodes: ceil({chips:,} / 8) = {-(-chips // 8):,}" in out
