"""Round 53's UX leftovers (ux53): plan, predict and frontier say where their watts come from, as compare does."""

from __future__ import annotations

import json

from cli_runner import run

#: one small case every command runs: llama-3.3-70b on h200 at 1k1k
CASE = ("-m", "llama-3.3-70b", "-w", "1k1k", "-s", "h200")
#: h200.toml read by hand: power.allin_kw_per_chip = 1.73 (InferenceX constants.ts GPU_SPECS), chip.tdp_w = 700
#: ("MLPerf v5.1 hw_notes 'H200 TGP 700W'"), no chip.sustained_w
H200_POWER = (
    "all-in 1,730 W (power.allin_kw_per_chip): published: InferenceX constants.ts GPU_SPECS (all-in provisioned kW "
    "per GPU, SemiAnalysis Datacenter Industry Model); chip TDP 700 W (chip.tdp_w): published: MLPerf v5.1 hw_notes "
    "'H200 TGP 700W'; sustained: the chip TDP (no sustained figure published); its sources in full: "
    "`jalapeno hardware show h200`"
)


def _power_lines(out: str) -> list[str]:
    return [ln.strip().removeprefix("power basis: ") for ln in out.splitlines() if ln.strip().startswith("power basis")]


def test_plan_predict_frontier_print_compares_power_basis_line(capsys):
    """compare prints a 'power basis' line under its per-kW figures; plan, predict and frontier printed the same
    watts (power per chip, tok/s per kW) with no source. Each now prints compare's line for the same system, and its
    --json carries it as power_basis (a field added; price_basis still there)."""
    code, out, err = run(capsys, "compare", "-m", "llama-3.3-70b", "-w", "1k1k", "-s", "b200,h200")
    assert code == 0, err
    compared = next(ln for ln in out.splitlines() if ln.startswith("power basis of h200: "))
    assert compared == f"power basis of h200: {H200_POWER}"
    for cmd in (("predict", "-c", "16"), ("plan", "--chips", "8"), ("frontier",)):
        code, out, err = run(capsys, *cmd, *CASE)
        assert code == 0, err
        assert _power_lines(out) == [H200_POWER], cmd
        code, out, err = run(capsys, *cmd, *CASE, "--json")
        assert code == 0, err
        d = json.loads(out)
        assert d["power_basis"] == H200_POWER and "price_basis" in d, cmd


def test_sensitivity_and_audit_json_name_the_chip_model(capsys):
    """sensitivity and audit took --chip-model (arch52) and said it under their tables, but their --json did not say
    which chip model priced the figures. jalapeno has 6 slices and places local_first by default (jalapeno.toml
    die.*, docs/chip.md); h200 is one slice and places striped. Under the flat model the die.* rows' note is the
    terminal's line; the fields are added (the old ones are all still there)."""
    far = ("--model", "gpt-oss-120b", "--workload", "8k1k", "--serving", "agg")
    code, out, err = run(capsys, "sensitivity", "--system", "jalapeno", *far, "--chip-model", "sliced", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["chip_model"] == "sliced" and d["placement"] == {"jalapeno": "local_first"}
    assert d["chip_model_notes"] == ["chip model: sliced (jalapeno 6 slices, local_first); docs/chip.md"]
    assert "rows" in d and "value" in d
    code, out, err = run(capsys, "sensitivity", "--system", "jalapeno", *far, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["chip_model"] == "flat" and d["placement"] == {}
    assert d["chip_model_notes"][0].startswith("die.link_bandwidth_tb_per_s, die.hop_latency_ns: read by the sliced")
    claim = ("--claim", "max_interactivity_ratio=2", "--baseline", "h200")
    code, out, err = run(capsys, "audit", "--system", "jalapeno", *far, *claim, "--chip-model", "sliced", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["chip_model"] == "sliced" and d["placement"] == {"jalapeno": "local_first", "h200": "striped"}
    assert d["chip_model_notes"][0].startswith("chip model: sliced (jalapeno 6 slices, local_first; h200 1 slice, ")


def test_compare_twice_with_a_store_says_each_run_is_computed_afresh(capsys, tmp_path):
    """compare (and frontier) --store only write the store: the same arguments twice sweep twice and store two runs
    (results_store.new_run_dir: ...-1, ...-2). The line said 'stored as run X in S' and nothing under --json; it now
    says the figures were computed afresh and how to read the run back, on stderr under --json."""
    import pytest

    pytest.importorskip("pyarrow")
    store = str(tmp_path / "st")
    small = ("compare", "-m", "llama-3.3-70b", "-w", "1k1k", "-s", "b200,h200", "--store", store)
    code, out, err = run(capsys, *small)
    assert code == 0, err
    first = "compare-llama-3.3-70b-1k1k-1"
    assert (
        f"stored as run {first} in {store}; computed afresh (compare never reads a stored run back: the same "
        f"arguments again sweep again and store a new run); read it back: `jalapeno results show {first} --store "
        f"{store}`"
    ) in out.replace("\n", "")
    code, out, err = run(capsys, *small, "--json")
    assert code == 0, err
    json.loads(out)  # stdout stays one JSON document
    assert "stored as run compare-llama-3.3-70b-1k1k-2 in " in err and "computed afresh" in err
    code, out, err = run(capsys, "results", "show", first, "--store", store)
    assert code == 0, err


def test_every_command_names_a_points_bound_in_compares_words(capsys, tmp_path):
    """The analyst's why, on one real point: b200, llama-3.3-70b 1k1k, the frontier point compare reads nearest 100
    tok/s/user, disaggregated P 1x(TP1) + D 1x(TP4) fp8-tensor at ~133 requests. compare names its bound 'decode
    hbm_bandwidth; prefill compute (20% of chips)' (the prefill pool is 1 chip of 1 + 4: 20%). predict said 'bound
    (decode step): hbm_bandwidth' and 'prefill pool's bound: compute' for it, frontier --json only the raw fields:
    both now print compare's words (analysis/bound_words.point_bound), the report page's why table the same cell, and
    step prices each pool's step to the same words (the decode step's hbm_bandwidth, the prefill step's compute)."""
    import html

    lm = ("-m", "llama-3.3-70b", "-w", "1k1k")
    words = "decode hbm_bandwidth; prefill compute (20% of chips)"
    code, out, err = run(capsys, "compare", *lm, "-s", "b200,h200", "--at", "100", "--json")
    assert code == 0, err
    d = json.loads(out)
    row = d["comparisons"]["b200"]["iso_interactivity"]["throughput_per_chip"][0]
    point = d["systems"]["b200"]["frontier"][row["point_a"]]
    label = "disagg P 1x(attn TP1 DP1 · FFN TP1) + D 1x(attn TP4 DP1 · FFN TP4) [fp8-tensor]"
    assert row["bound_a"] == words and point["deployment"]["label"] == label
    code, out, err = run(capsys, "frontier", *lm, "-s", "b200", "-p", "fp8-tensor", "--json")
    assert code == 0, err
    same = [
        p
        for p in json.loads(out)["frontier"]
        if p["deployment"]["label"] == label and abs(p["concurrency"] - point["concurrency"]) < 1e-6
    ]
    assert [p["bound_text"] for p in same] == [words]
    pools = ("-s", "b200", "-p", "fp8-tensor", "--prefill", "tp=1,workers=1", "--decode", "tp=4,workers=1")
    conc = str(round(point["concurrency"]))
    code, out, err = run(capsys, "predict", *lm, *pools, "-c", conc)
    assert code == 0, err
    bound_row = next(ln for ln in out.splitlines() if ln.startswith("│ bound "))
    assert f"│ {words}; the decode step " in bound_row
    code, out, err = run(capsys, "predict", *lm, *pools, "-c", conc, "--json")
    assert code == 0, err
    assert json.loads(out)["bound_text"] == words
    page = tmp_path / "r.html"
    code, out, err = run(
        capsys, "report", *lm, "-s", "b200,h200", "--at", "100", "--measured", "none", "--html", str(page)
    )
    assert code == 0, err
    assert f"{words}, at {point['interactivity']:.0f}" in html.unescape(page.read_text())
    # step prices one step: the decode pool's at the point's batch and mean context (ISL 922 + OSL 922 / 2), the
    # prefill pool's full 8,192-token step
    mean_context = str(922 + 922 // 2)
    for pool, word in (
        (("--tp", "4", "-b", "128", "-c", mean_context), "hbm_bandwidth"),
        (("--tp", "1", "-b", "0", "--prefill-tokens", "8192", "-c", "0"), "compute"),
    ):
        code, out, err = run(capsys, "step", "-m", "llama-3.3-70b", "-s", "b200", "-p", "fp8-tensor", *pool, "--json")
        assert code == 0, err
        assert json.loads(out)["bound"] == word


def test_the_agentic_plan_and_frontier_print_the_power_basis_line_too(capsys):
    """plan and frontier with an agentic workload (cli/agentic_cmd) print tasks per kW on the same watts: the same
    line and field as the fixed-length forms."""
    agentic = ("-m", "llama-3.3-70b", "-w", "agentic:chat-agent", "-s", "h200")
    for cmd in (("plan", "--chips", "8"), ("frontier",)):
        code, out, err = run(capsys, *cmd, *agentic)
        assert code == 0, err
        assert _power_lines(out) == [H200_POWER], cmd
        code, out, err = run(capsys, *cmd, *agentic, "--json")
        assert code == 0, err
        assert json.loads(out)["power_basis"] == H200_POWER, cmd
