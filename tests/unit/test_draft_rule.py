"""The MTP draft rule (deploy/recipe.DraftRule): every recipe that runs MTP runs drafts, keyed by layout and
load as its launch script says; the aiconfigurator sweeps read the same rule (issue 18, recipes8)."""

from __future__ import annotations

import json
import math
import re

import pytest
from cli_runner import check_error, run

from jalapeno.deploy.engines import get_recipe, recipes
from jalapeno.deploy.recipe import DraftRule, _recipe
from jalapeno.errors import SpecError

#: an MTP flag in a recipe's cited source: TRT-LLM (MTP=, num_nextn_predict_layers, mtpK recipe names),
#: SGLang (--speculative-*, EAGLE/NEXTN), ATOM (--method mtp)
MTP_FLAG = re.compile(r"mtp|speculative|eagle|nextn", re.I)


def _runs_mtp(r) -> bool:
    return "mtp" in r.name.lower() or bool(MTP_FLAG.search(r.source))


def test_every_recipe_with_mtp_in_its_name_or_source_runs_drafts():
    flagged = [r for r in recipes().values() if _runs_mtp(r)]
    assert len(flagged) >= 9  # the MTP recipes shipped today; a new one joins the check by its name or source
    for r in flagged:
        assert r.draft_rule is not None, f"{r.name} cites MTP but runs no drafts"
        for adp in (1, 8):  # attention TP and attention DP layouts, light and heavy load
            for seqs in (1.0, 4096.0):
                m = r.mtp_at(seqs, adp)
                assert m is not None and m.draft_tokens >= 1, (r.name, adp, seqs)
    for r in recipes().values():  # and a recipe that names no MTP runs none
        if not _runs_mtp(r):
            assert r.draft_rule is None and r.draft_lengths == (), r.name


@pytest.mark.parametrize("name", ["trtllm-b200-dsr1-fp4-mtp", "trtllm-h200-dsr1-fp8-mtp"])
def test_single_node_trtllm_scripts_run_mtp3_or_mtp1_with_attention_dp(name):
    # dsr1_fp4_b200_trt_mtp.sh / dsr1_fp8_h200_trt_mtp_slurm.sh: MTP=3; MTP=1 when DP_ATTENTION is true
    r = get_recipe(name)
    for seqs in (1, 4, 64, 512):
        assert r.mtp_at(seqs, 1).draft_tokens == 3
        assert r.mtp_at(seqs, 8).draft_tokens == 1
    assert r.draft_lengths == (3, 1)


def test_h100_fp8_dynamo_trt_drafts_follow_its_recipe_files():
    # (decode workers, attention-DP ranks per worker, concurrency, K of the entry's file name ..._mtpK), from
    # nvidia-master.yaml @2767db504 key dsr1-fp8-h100-dynamo-trt; TEP16 = 1 attention rank per worker
    entries = [(3, 1, 6, 3), (3, 1, 117, 3), (3, 1, 462, 3), (2, 1, 78, 3),  # ctx*_gen*_tep16_*_mtp3
               (3, 16, 231, 3), (1, 16, 77, 3), (1, 16, 154, 3),  # ctx*_gen*_dep16_batch{4,8}_*_mtp3
               (1, 16, 615, 2), (1, 16, 1229, 1)]  # ctx1_gen1_dep16_batch32_*_mtp2, _batch64_*_mtp1
    r = get_recipe("dynamo-trt-dsr1-fp8")
    for workers, dp, conc, k in entries:
        assert r.mtp_at(conc / (workers * dp), dp).draft_tokens == k, (workers, dp, conc)


def test_mori_dep_recipe_has_an_mtp_sibling_and_launch_recipe_picks_by_mtp():
    from jalapeno.deploy.engines import launch_recipe

    args = ("mi355x", "deepseek-r1", "sglang-disagg", "quark-mxfp4", "disagg", 1)
    assert launch_recipe(*args, mtp=False).name == "sglang-mori-mi355x-dsr1-fp4-dep"
    mtp = launch_recipe(*args, mtp=True)
    assert mtp.name == "sglang-mori-mi355x-dsr1-fp4-dep-mtp"
    # DECODE_MTP_SIZE=1 on every DEP entry: --speculative-num-steps 1 --speculative-num-draft-tokens 2
    assert mtp.mtp_at(2048 / 8, 8).draft_tokens == 1
    assert get_recipe("sglang-mori-mi355x-dsr1-fp4-dep").token_budget == mtp.token_budget == 16384


def test_draft_rule_lookup_and_its_load_free_case():
    r = DraftRule(((48, 3), (100, 2), (math.inf, 1)))
    assert [r.draft_at(x) for x in (1, 48, 48.5, 100, 101)] == [3, 3, 2, 2, 1]
    assert r.draft_at(None) is None  # depends on the load
    adp = DraftRule(((math.inf, 3),), ((10, 3), (math.inf, 1)))
    assert (adp.draft_at(None, 1), adp.draft_at(5, 16), adp.draft_at(50, 16), adp.draft_at(None, 16)) == (3, 3, 1, None)


def test_aiconfigurator_sweeps_read_the_same_rule():
    from jalapeno.fit.aic_sweeps import load_sweeps

    mtp = [s for s in load_sweeps() if s.spec == "mtp"]
    assert mtp
    for s in mtp:
        assert isinstance(s.draft_rule, DraftRule)
        assert (s.draft_tokens(1), s.draft_tokens(8)) == (s.mtp_draft, s.mtp_draft_dp_attention)
    assert all(s.draft_rule is None and s.draft_tokens(8) == 0 for s in load_sweeps() if s.spec == "none")


def test_an_attention_dp_table_alone_is_refused():
    good = {"name": "x", "engine": "trt", "version": "1", "systems": ["b200"], "model": "deepseek-r1",
            "source": "s", "precision": "fp4", "serving": "agg"}
    with pytest.raises(SpecError, match="mtp_draft_attention_dp_by_seqs_per_rank.*without mtp_draft_by_seqs_per_rank"):
        _recipe({**good, "mtp_draft_attention_dp_by_seqs_per_rank": [[math.inf, 1]]}, 0)
    with pytest.raises(SpecError, match="bounds must ascend"):
        _recipe({**good, "mtp_draft_by_seqs_per_rank": [[math.inf, 3]],
                 "mtp_draft_attention_dp_by_seqs_per_rank": [[8, 1]]}, 0)


def _mtp_of(capsys, *layout):
    code, out, err = run(capsys, "predict", "-s", "h200", "-w", "1k1k", "-c", "64", *layout,
                         "--engine", "trtllm-h200-dsr1-fp8-mtp", "--json")
    assert code == 0, err
    return json.loads(out)["deployment"]["mtp"]["draft_tokens"]


def test_predict_with_the_h200_trtllm_recipe_runs_its_drafts(capsys):
    assert _mtp_of(capsys, "--tp", "8", "--ep", "8") == 3
    assert _mtp_of(capsys, "--dp", "8", "--ep", "8") == 1


def test_open_loop_rate_with_a_layout_keyed_rule(capsys):
    # the B200 TRT-LLM recipe's draft length depends on the layout only, so a rate needs no load; the
    # Dynamo recipe's depends on the load, which a rate does not give
    code, out, err = run(capsys, "predict", "-s", "b200", "-w", "1k1k", "-r", "2", "--max-running", "64",
                         "--dp", "8", "--ep", "8", "--engine", "trtllm-b200-dsr1-fp4-mtp", "--json")
    assert code == 0, err
    assert json.loads(out)["deployment"]["mtp"]["draft_tokens"] == 1
    check_error(*run(capsys, "predict", "-s", "b200", "-w", "1k1k", "-r", "2", "--prefill", "dp=4,ep=4",
                     "--decode", "dp=8,ep=8", "--engine", "dynamo-trt-dsr1-fp4"),
                "sets the MTP draft length by load")


def test_frontier_with_a_layout_keyed_rule_prices_each_layout_at_its_draft_length(capsys):
    # analysis/deployed.sweep_by_load: attention-DP layouts at MTP1, attention-TP ones at MTP3 (the B200 script)
    code, out, err = run(capsys, "frontier", "-s", "b200", "-w", "1k1k", "--engine", "trtllm-b200-dsr1-fp4-mtp", "--json")
    assert code == 0, err
    labels = set(re.findall(r"attn TP\d+ DP(\d+) [^\"]*?MTP(\d)", out))
    assert {dp for dp, _ in labels} >= {"1", "8"}
    assert all(k == ("1" if int(dp) > 1 else "3") for dp, k in labels), labels


def _published_drafts(precision: str, systems: tuple[str, ...]):
    """(sequences per decode attention rank, attention-DP degree, K of the entry's ..._mtpK file name) of every
    MTP entry and concurrency of the shipped Dynamo-TRT search spaces (data/validation/inferencex_search.toml)."""
    import tomllib
    from importlib import resources

    text = (resources.files("jalapeno") / "data" / "validation" / "inferencex_search.toml").read_text()
    out = set()
    for s in tomllib.loads(text)["space"]:
        if (s["framework"], s["precision"], s["model"]) != ("dynamo-trt", precision, "deepseek-r1") or s["system"] not in systems:
            continue
        for e in s["entries"]:
            if e.get("mtp") and e.get("mtp_draft"):
                dec = e["decode"]
                out |= {(c / (dec["workers"] * dec["dp"]), dec["dp"], e["mtp_draft"], s["key"], s["isl"], dec["workers"], c)
                        for c in e["conc"]}  # each entry and concurrency once over the spaces' dates
    return sorted(out)


@pytest.mark.parametrize(("recipe", "precision", "systems", "agree", "total"), [
    ("dynamo-trt-dsr1-fp4", "fp4", ("b200", "b300", "gb200-nvl72", "gb300-nvl72"), 103, 106),  # 86 of 88 before the 2025 inline-cap entries (kimidp25)
    ("dynamo-trt-dsr1-fp8", "fp8", ("h100",), 14, 14),
])
def test_dynamo_trt_draft_rules_agree_with_the_published_entries(recipe, precision, systems, agree, total):
    r = get_recipe(recipe)
    rows = _published_drafts(precision, systems)
    assert len(rows) == total
    assert sum(r.mtp_at(x, dp).draft_tokens == k for x, dp, k, *_ in rows) == agree
