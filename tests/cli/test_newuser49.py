"""Round 49 new-user fixes (newuser49): a ratio flag that names its side, the precision and power of a sensitivity,
an audit's verdict and physical limit said under the table, the bound names of compare's headline explained, the
agentic comparison's chart in --help, and what `step`'s op rows count.

Expected values are worked by hand in each test's comments, not read from the code's output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runner import run, run_captured

BOX = "│┃┏┓┗┛┡┩└┘┳┻╇━─"


@pytest.fixture(scope="module")
def audit_jalapeno_100():
    """(exit code, stdout, stderr) of ``audit --system jalapeno --claim max_interactivity=100``, run once for the two
    tests that read its text (stdout is printed at the CLI console's fixed 160 columns when not a terminal,
    cli/common.py, so a test's COLUMNS setting does not change it)."""
    return run_captured("audit", "--system", "jalapeno", "--claim", "max_interactivity=100")


def _text(out: str) -> str:
    """The printed text with the table borders gone and every run of blanks one blank (captions wrap)."""
    return " ".join(re.sub(f"[{BOX}]", " ", out).split())


def test_below_frontier_start_names_the_side_below_its_start(capsys, tmp_path, monkeypatch):
    """gpt-oss-120b 1k8k: Jalapeño's frontier starts at 39 tok/s/user, GB300's at 21 (each frontier's slowest point,
    read from the JSON below), so at 35 tok/s/user only Jalapeño (the row's system, 'this') is below its start and
    reads its peak. The cell said '[below a frontier's start: its peak]' without saying whose."""
    monkeypatch.chdir(tmp_path)
    args = ("compare", "-m", "gpt-oss-120b", "-w", "1k8k", "--systems", "jalapeno,gb300-nvl72", "--at", "35")
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    rec = json.loads(js)
    start = {n: min(p["interactivity"] for p in s["frontier"]) for n, s in rec["systems"].items()}
    assert start["jalapeno"] > 35.0 > start["gb300-nvl72"], start
    code, out, err = run(capsys, *args, "--html", "")
    assert code == 0, err
    ratios = out.split("ratios vs")[1].split("operating tiers")[0]
    row = next(ln for ln in ratios.splitlines() if ln.startswith("│ jalapeno"))
    assert "[below frontier start: this]" in row
    assert "below a frontier's start" not in out
    assert "[below frontier start: who]: slower than that frontier's first (slowest) point" in _text(out)
    assert "who: this, baseline or both; unreachable (who)" in _text(out)


def test_sensitivity_titles_name_the_precision_and_power_they_price(capsys, tmp_path, monkeypatch):
    """`sensitivity --system jalapeno` prices DeepSeek-R1's released precision, fp8 (its config.json's
    quantization_config: fp8 block-scaled weights), at the default all-in power; compare's headline for the same system
    is its fp4 frontier's. The title said 'jalapeno · deepseek-r1 · 8k1k: max_interactivity = ...' with neither, so
    its figure read as a disagreement with compare's. The tornado page's title names both too."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = run(capsys, "sensitivity", "--system", "jalapeno", "--html", "t.html")
    assert code == 0, err
    assert "jalapeno · deepseek-r1 · 8k1k · fp8 · power all-in: max_interactivity = " in _text(out)
    page = (tmp_path / "t.html").read_text()
    title = re.search(r"<title>(.*?)</title>", page).group(1)
    assert title.startswith("jalapeno · deepseek-r1 · 8k1k · fp8 · power all-in: max_interactivity (tok/s/user)")


def test_audit_says_what_its_verdict_and_physical_limit_mean(audit_jalapeno_100):
    """The claim table printed 'HOLDS' / 'REQUIRES' and a 'physical limit' column with no word of either outside
    --help and docs/audit.md. Jalapeño's DeepSeek-R1 8k1k fp8 frontier reaches 135.1 tok/s/user (docs/audit.md §5's
    worked example), so a claim of 100 holds: the prediction alone meets it, and the line under the table says so."""
    code, out, err = audit_jalapeno_100
    assert code == 0, err
    text = _text(out)
    assert "HOLDS" in text
    assert (
        "verdict HOLDS: the prediction meets the claim; physical limit: the metric with every fixed cost at 0 and "
        "every efficiency at its limit, under the stated specs (docs/audit.md §2)"
    ) in text


def test_every_audit_verdict_has_its_meaning():
    """The four verdicts analysis/audit.audit_claim returns (holds, plausible, requires, impossible) each have a line;
    a fifth would raise KeyError here before a user saw a blank."""
    import jalapeno.analysis.audit as audit_module
    from jalapeno.cli.audit_tables import verdict_caption

    assert "a change inside the parameters' bands meets it" in verdict_caption("plausible")
    assert verdict_caption("impossible").startswith("verdict IMPOSSIBLE: not even the physical limit meets it")
    returned = set(re.findall(r'verdict = "(\w+)"', Path(audit_module.__file__).read_text()))
    assert returned == {"holds", "plausible", "requires", "impossible"}
    for v in returned:
        assert verdict_caption(v).startswith(f"verdict {v.upper()}: ")


def test_compare_headline_says_what_each_bound_it_prints_means(capsys, tmp_path, monkeypatch):
    """The headline's 'bound at peak' / 'bound at max' cells ('overhead' on every row of the main job at max
    tok/s/user) had no legend: the caption now gives each bound name the table prints, and only those. The names are
    read from the JSON headline (decode and prefill, at peak and at max), not from the caption's own code."""
    from jalapeno.report.cell_notes import BOUND_MEANING

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    args = ("compare", "--systems", "jalapeno,gb300-nvl72")
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    keys = (
        "bound_at_peak",
        "prefill_bound_at_peak",
        "bound_at_max_interactivity",
        "prefill_bound_at_max_interactivity",
    )
    printed = {s["headline"][k] for s in json.loads(js)["systems"].values() for k in keys if s["headline"].get(k)}
    assert "overhead" in printed  # the fastest point of a frontier: batch 1 per rank, launches and fixed costs
    code, out, err = run(capsys, *args, "--html", "")
    assert code == 0, err
    text = _text(out.split("ratios vs")[0])
    assert "bound: the largest share of the step's time — " in text
    assert "overhead: kernel launches and the step's fixed cost (efficiency.kernel_launch_s, step_overhead_s" in text
    for name in BOUND_MEANING:
        assert (f"{name}: {BOUND_MEANING[name]}" in text) == (name in printed), name
    code, out, err = run(capsys, "report", *args[1:], "--html", "r.html")
    assert code == 0, err
    page = (tmp_path / "r.html").read_text()
    assert "bound: the largest share of the step&#x27;s time — " in page


def test_compare_help_says_an_agentic_workload_writes_no_chart(capsys, tmp_path, monkeypatch):
    """--help said the chart defaults to jalapeno-compare.html without --json; `compare -w agentic:coding-agent` wrote
    none and said nothing (cli/agentic_cmd refuses an explicit --html). The help now says so, and the run indeed
    leaves no page behind."""
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = run(capsys, "compare", "--help")
    assert code == 0, err
    assert "Fixed-length workloads only: -w agentic:... prints its tables and writes no chart." in _text(out)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "compare", "-w", "agentic:coding-agent", "--systems", "jalapeno")
    assert code == 0, err
    assert not (tmp_path / "jalapeno-compare.html").exists() and "frontier chart:" not in out


def test_step_says_what_one_op_row_counts(capsys, monkeypatch):
    """`step` (DeepSeek-R1 on Jalapeño, DEP8, batch 64 x ctx 8192) printed attn.qkv_a_proj at '14.8 G' FLOP with no
    word of what that counts. By hand: one chip's 64 / 8 = 8 sequences x 2 FLOP x hidden 7,168 x (q_lora_rank 1,536 +
    kv_lora_rank 512 + rope 64 = 2,112) x 61 layers = 14,775,484,416 FLOP; the caption now says so: the rank's 8 of the
    64 sequences, over the model's 61 layers. With --pp 2 a chip runs one stage's share of them."""
    monkeypatch.setenv("COLUMNS", "200")
    code, js, err = run(capsys, "step", "--json")
    assert code == 0, err
    qkv = next(o for o in json.loads(js)["ops"] if o["op"] == "attn.qkv_a_proj")
    assert abs(qkv["flop"] - 8 * 2 * 7168 * 2112 * 61) <= 1e-9 * qkv["flop"]
    code, out, err = run(capsys, "step")
    assert code == 0, err
    assert (
        "each op row: one chip's part of the step (its attention-DP rank's 8 of the 64 sequences), summed over "
        "the layers that run the op (of the model's 61)"
    ) in _text(out)
    code, out, err = run(capsys, "step", "--pp", "2")
    assert code == 0, err
    assert "(one pipeline stage's share of the model's 61)" in _text(out)


def test_frontier_table_says_what_each_bound_it_prints_means(capsys, monkeypatch):
    """`frontier` (the README's gpt-oss-120b on GB200 line) printed a bound column ('decode hbm_bandwidth; prefill
    compute') with no legend; its caption now explains each bound name of its rows (read from the JSON), and only
    those."""
    from jalapeno.report.cell_notes import BOUND_MEANING

    monkeypatch.setenv("COLUMNS", "200")
    args = ("frontier", "--system", "gb200-nvl72", "--model", "gpt-oss-120b")
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    printed = {p[k] for p in json.loads(js)["frontier"] for k in ("bound", "prefill_bound") if p.get(k)}
    assert printed, "no bound in the frontier's JSON"
    code, out, err = run(capsys, *args)
    assert code == 0, err
    text = _text(out)
    assert "bound: the largest share of the step's time — " in text
    for name in BOUND_MEANING:
        assert (f"{name}: {BOUND_MEANING[name]}" in text) == (name in printed), name


def test_hardware_list_groups_thousands_as_every_other_table(capsys, monkeypatch):
    """`hardware list` printed TDP '1800' and Jalapeño's scale-up '2048' where every other table prints '1,800 W'
    (`hardware show`) and '2,048'. By hand: Vera Rubin's catalog TDP is 1,800 W; Jalapeño's scale-up is 16 racks x 128
    chips = 2,048."""
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = run(capsys, "hardware", "list")
    assert code == 0, err
    cells = {
        ln.split("│")[1].strip(): [c.strip() for c in ln.split("│")[1:-1]]
        for ln in out.splitlines()
        if ln.startswith("│ ")
    }
    assert cells["vera-rubin-nvl72"][6] == "1,800" and cells["jalapeno"][7] == "2,048"
    assert cells["h100"][6] == "700" and cells["h100"][7] == "8"


def test_audit_title_writes_a_ratio_claim_as_a_ratio(capsys, monkeypatch, audit_jalapeno_100):
    """A ratio claim's title read '= 1 x' (the unit 'x' after a blank) where every table writes a ratio '1x'. A GB300
    vs GB200 peak ratio of 1.0 holds (GB300's FP8 peak per chip is above GB200's), so the audit needs no search."""
    monkeypatch.setenv("COLUMNS", "200")
    args = (
        "audit",
        "--system",
        "gb300-nvl72",
        "--baseline",
        "gb200-nvl72",
        "--claim",
        "peak_throughput_per_chip_ratio=1.0",
    )
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "claim: peak_throughput_per_chip_ratio = 1x for gb300-nvl72 vs gb200-nvl72" in _text(out)
    code, out, err = audit_jalapeno_100
    assert code == 0, err
    assert "claim: max_interactivity = 100 tok/s/user for jalapeno" in _text(out)


def test_as_deployed_mtp_hint_suggests_the_acceptance_the_recipes_are_priced_at(
    capsys, tmp_path, monkeypatch, cli_once
):
    """compare --as-deployed labels GB300's deployments 'MTP3@0.8' / 'MTP1@0.8' (dynamo-trtllm's fitted acceptance on
    DeepSeek-R1, data/stack_fits.toml: single = chain = 0.8), but the line that says Jalapeño runs without MTP told
    the user to price it with '--mtp-acceptance 0.75' (the recipe's assumed fallback, data/engines.toml): not like
    for like either. The suggestion now reads every MTP acceptance of the JSON's frontier (0.8)."""
    monkeypatch.chdir(tmp_path)
    args = ("compare", "--as-deployed", "-s", "jalapeno,gb300-nvl72")
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    acc = {
        p["deployment"]["mtp"]["acceptance"]
        for p in json.loads(js)["systems"]["gb300-nvl72"]["frontier"]
        if p["deployment"].get("mtp")
    }
    assert acc == {0.8}
    code, out, err, _ = cli_once(*args, "--html", "")  # run once for this test and test_cli_newuser38's (conftest)
    assert code == 0, err
    assert "`jalapeno compare -s jalapeno --mtp 3 --mtp-acceptance 0.8` prices it with MTP" in _text(out)


def test_predict_engine_lists_an_uncharged_rule_without_its_source(capsys, monkeypatch):
    """`predict --engine sglang-b200-dsr1-fp4` (a README line) listed the release's two version rules, both NOT
    CHARGED (their switches SGLANG_AR_RMS_ON and PREBUILT_SKIP_ON are shipped off), each with its whole source: about
    2,500 characters of wheel dates and PR numbers under a table none of them moves. The listing now names each rule,
    its value, its span and that it is not charged; the sources stay in --json."""
    monkeypatch.setenv("COLUMNS", "200")
    args = (
        "predict",
        "--system",
        "b200",
        "--model",
        "deepseek-r1",
        "--tp",
        "8",
        "--ep",
        "8",
        "-c",
        "64",
        "--engine",
        "sglang-b200-dsr1-fp4",
    )
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    rules = json.loads(js[js.index("{") :])["version_rules"]
    assert [r["charged"] for r in rules] == [False, False] and all(len(r["source"]) > 200 for r in rules)
    code, out, err = run(capsys, *args)
    assert code == 0, err
    line = _text(out.split("engine release ")[1].split("engine memory")[0])
    assert line == (
        "0.5.6: allreduce_rms_rule = sglang_sm100 (NOT CHARGED: jalapeno.specs.stacks.SGLANG_AR_RMS_ON is off; "
        "sglang < 0.5.7; its source in --json); disagg_prebuilt = skip (NOT CHARGED: "
        "jalapeno.serve.prebuilt_skip.PREBUILT_SKIP_ON is off; sglang < 0.5.10rc0; its source in --json)"
    )


def test_agentic_title_names_the_precisions_swept(capsys, tmp_path, monkeypatch):
    """The fixed-length comparison's title names the presets each system swept ('int4 (each system)'); the agentic
    one named the model, the workload and the power, not the precision. Kimi K2.5 is released in INT4 (its
    config.json's compressed-tensors int4 experts), the one preset Jalapeño and GB300 both sweep for it, as the
    deployments' '[int4]' tags in the JSON say."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    args = ("compare", "-m", "kimi-k2.5", "-w", "agentic:coding-agent", "--systems", "jalapeno,gb300-nvl72")
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    assert {p["precision"] for s in json.loads(js)["systems"].values() for p in s["frontier"]} == {"int4"}
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "(40 turns, context -> 120,000 tokens, think 2 s) · int4 (each system) · power: all-in" in _text(out)
