"""mend46: usability leads left by newuser46 and break46, each error or label asserted as the user reads it.

Expected texts are written by hand from the brief: a dense model (llama-3.3-70b, no experts) with an explicit
``--eplb 8``; a folder that does not exist as ``--efficiency``; a positional argument's value named before its
argument; an agentic ``--at`` task time past one day (1,440 minutes); B300 and GB300 $/chip-hour as InferenceX's
"temporary - 1.2x B200/GB200 pricing" rule (data/systems/b300.toml, gb300-nvl72.toml; /work/shared hardware specs
table: B300 2.34 = 1.2 x B200 1.95, GB300 2.652 = 1.2 x GB200 2.21).
"""

from __future__ import annotations

import json

import pytest
from cli_runner import check_error, run

from jalapeno.analysis.capacity import is_price_estimate
from jalapeno.analysis.price_reason import system_basis
from jalapeno.specs.catalog import load_system


@pytest.mark.parametrize(
    "args",
    [
        ("compare", "-s", "h200", "-w", "1k1k", "--html", ""),
        ("compare", "-s", "h200", "-w", "agentic:coding-agent"),
        ("frontier", "-s", "h200", "-w", "1k1k"),
    ],
)
def test_an_explicit_eplb_on_a_dense_model_is_refused(capsys, args):
    """``--eplb 8`` on llama-3.3-70b ran as if not given (the default 32 could not be told from it)."""
    check_error(
        *run(capsys, *args, "-m", "llama-3.3-70b", "--eplb", "8"),
        "error: --eplb:",
        "llama-3.3-70b is a dense model",
        "--eplb 8 would be ignored",
        "drop --eplb",
    )


def test_eplb_off_on_a_dense_model_and_the_default_still_mean_what_they_did():
    from jalapeno.cli.serving_opts import refuse_dense_eplb, sweep_eplb
    from jalapeno.specs.catalog import load_model

    dense = load_model("llama-3.3-70b")
    refuse_dense_eplb("off", dense)  # nothing to refuse: EPLB off is what a dense model runs
    refuse_dense_eplb(None, dense)  # not given
    refuse_dense_eplb("8", load_model("deepseek-r1"))  # a MoE model takes it
    assert sweep_eplb(None) == 32 and sweep_eplb("off") is None and sweep_eplb("8") == 8


def test_a_missing_efficiency_folder_is_named_as_a_folder(capsys, tmp_path):
    """``--efficiency DIR`` (no such folder) said 'DIR/h200.toml not found'."""
    gone = tmp_path / "no_such_dir"
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "-c", "8", "--efficiency", str(gone))
    check_error(code, out, err, f"the folder {gone} does not exist")
    assert "h200.toml" not in err


def test_a_positional_argument_is_named_after_its_value(capsys, tmp_path):
    """Fields read 'NAME dup.toml:' and 'SPACE.toml x.toml:', as if one field."""
    dup = tmp_path / "dup.toml"
    dup.write_text('name = "x"\nname = "y"\n')
    code, out, err = run(capsys, "hardware", "show", str(dup))
    check_error(code, out, err, f"error: {dup} (the NAME argument): malformed TOML")
    assert f"NAME {dup}" not in err


def test_an_implausible_agentic_task_time_is_refused(capsys):
    code, out, err = run(
        capsys, "compare", "-s", "h200", "-m", "llama-3.3-70b", "-w", "agentic:coding-agent", "--at", "10,1e9"
    )
    check_error(code, out, err, "error: --at:", "task time 1e+09 minutes", "1,440 minutes (one day)", "--at 5,10,20")


@pytest.mark.parametrize("name, base, base_file", [("b300", "B200", "b200"), ("gb300-nvl72", "GB200", "gb200-nvl72")])
def test_the_1_2x_rule_prices_are_estimates(name, base, base_file):
    s = load_system(name)
    assert is_price_estimate(s)
    basis = system_basis(s)
    assert basis.startswith(f"estimated: InferenceX's temporary 1.2x {base} rule"), basis
    assert s.usd_per_chip_hour == pytest.approx(1.2 * load_system(base_file).usd_per_chip_hour)
    assert not is_price_estimate(load_system(base_file))  # the base's own figure stays published


def test_plan_says_when_a_set_moved_the_tdp(capsys):
    """``plan --set chip.hbm_bandwidth_tb_per_s=20`` priced Jalapeño at a TDP above its file's 700 W without a word
    (specs/power.follow_variant: more HBM bandwidth costs HBM watts); ``hardware show`` states it in its TDP row."""
    args = (
        "plan",
        "-s",
        "jalapeno",
        "-m",
        "llama-3.3-70b",
        "-w",
        "1k1k",
        "-p",
        "fp8",
        "--serving",
        "agg",
        "--chips",
        "64",
    )
    code, out, err = run(capsys, *args, "--set", "chip.hbm_bandwidth_tb_per_s=20")
    assert code == 0, err
    flat = " ".join(err.split())
    assert "note: the TDP moved to " in flat and "(--set chip.hbm_bandwidth_tb_per_s=20)" in flat
    assert "component power model (specs/power.py): jalapeno 700 W + " in flat
    moved = float(flat.split("note: the TDP moved to ", 1)[1].split(" W", 1)[0].replace(",", ""))
    assert moved > 700  # 20 TB/s is above the file's HBM bandwidth: more HBM watts, a higher TDP
    assert f"64 x {moved:,.0f} W" in " ".join(out.split())  # the plan's power line prices that TDP
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "TDP moved" not in err  # the file's own TDP: no note


def test_audit_of_a_dollar_claim_carries_the_price_basis(capsys):
    code, out, err = run(
        capsys,
        "audit",
        "-s",
        "b300",
        "-m",
        "llama-3.3-70b",
        "-w",
        "1k1k",
        "-p",
        "fp8",
        "--serving",
        "agg",
        "--claim",
        "peak_tokens_per_usd=1e6",
        "--json",
    )
    assert code == 0, err
    d = json.loads(out)
    assert d["price_basis"].startswith("estimated: InferenceX's temporary 1.2x B200 rule")
    code, out, err = run(
        capsys,
        "audit",
        "-s",
        "h200",
        "-m",
        "llama-3.3-70b",
        "-w",
        "1k1k",
        "-p",
        "fp8",
        "--serving",
        "agg",
        "--claim",
        "peak_throughput_per_chip=1e3",
        "--json",
    )
    assert code == 0, err
    assert "price_basis" not in json.loads(out)  # no $ in the claim


def test_the_explore_report_states_the_price_basis():
    from jalapeno.report.explore_html import explore_page

    meta = {"name": "s", "base": "jalapeno", "versions": {}, "metrics": ["m"], "directions": ["maximize"]}
    page = explore_page(meta, [], {}, "estimated: jalapeno publishes no price")
    assert "<p>price basis: estimated: jalapeno publishes no price</p>" in page
    assert "price basis" not in explore_page(meta, [], {})


def test_validate_systems_lists_only_their_own_skips(capsys):
    """``validate --mlperf -s gb200-nvl72`` listed the two MI355X open-division results it skipped (fit/mlperf.py's
    MLPERF_SKIPPED: fine-tuned and pruned Llama-3.1-405B), which are no GB200 rows."""
    code, out, err = run(capsys, "validate", "--no-aiconfigurator", "--mlperf", "-s", "gb200-nvl72")
    assert code == 0, err
    assert "MI355X" not in out and "skipped" not in out
    from jalapeno.fit.mlperf import load_mlperf
    from jalapeno.fit.skipped import of_systems

    _, skipped = load_mlperf()
    assert [s.system for s in skipped if "MI355X" in s[0]] == ["mi355x", "mi355x"]
    assert of_systems(skipped, ("mi355x",)) == skipped and of_systems(skipped, ("gb200-nvl72",)) == []
    assert of_systems(skipped, None) == skipped
