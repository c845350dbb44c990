"""Findings of round 45's break-it pass (break45), each a silent acceptance before its fix: ``shares_ports_with_inner``
on a system's innermost link level dropped that level's ports out of the link power (Jalapeño's TDP 700 -> 652 W);
a ``--points`` column misspelt (``ttft_msec``) was dropped unread; a ``tpot_stat`` of ``p99`` was compared with the
predicted mean; an output rate above the in+out rate was taken; a design space's or ``collective --bytes``'s value
listed twice was priced twice; an upper-case trace column got no near-name hint."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_runner import check_error, run


def _json(out: str) -> dict:
    return json.loads(out[out.index("{") :])


def test_shares_ports_on_the_innermost_level_is_refused(capsys):
    args = ("predict", "-s", "jalapeno", "-m", "llama-3.3-70b", "-c", "8", "--power", "chip", "--json")
    code, out, err = run(capsys, *args, "--set", "levels.tray.shares_ports_with_inner=true")
    # was: exit 0 at 652 W a chip, Jalapeño's 700 W TDP (data/systems/jalapeno.toml) less the tray's ports
    check_error(
        code,
        out,
        err,
        "--set: levels: the innermost level 'tray' sets shares_ports_with_inner = true",
        "no level lies inside it to share ports with",
        "remove it there",
    )
    # on an outer level the flag is what it says (the rack's already shares the tray's ports in the catalog file)
    code, out, err = run(capsys, *args, "--set", "levels.global.shares_ports_with_inner=true")
    assert code == 0, err


def test_shares_ports_on_the_innermost_level_of_a_file_is_refused(capsys, tmp_path):
    p = tmp_path / "one.toml"
    p.write_text('base = "jalapeno"\nlevels.tray.shares_ports_with_inner = true\n')
    code, out, err = run(capsys, "hardware", "show", str(p))
    check_error(code, out, err, "one.toml", "innermost level 'tray'", "shares_ports_with_inner")


POINTS = Path(__file__).parents[2] / "src" / "jalapeno" / "data" / "validation" / "inferencex_points.csv"
VALIDATE = ("--no-aiconfigurator", "--no-mlperf", "--json")


def _points(tmp_path: Path, cells: dict[str, str] | None = None, rename: dict[str, str] | None = None) -> Path:
    """A points CSV of the shipped file's line 56 (H200 SGLang DeepSeek-R1 TP8, concurrency 4: TTFT and TPOT
    measured), ``cells`` changed and columns renamed by ``rename``."""
    with POINTS.open(newline="") as f:
        rows = list(csv.DictReader(f))
    row = {**rows[54], **(cells or {})}
    p = tmp_path / "pts.csv"
    with p.open("w", newline="") as f:
        names = {c: (rename or {}).get(c, c) for c in row}
        w = csv.DictWriter(f, fieldnames=list(names.values()))
        w.writeheader()
        w.writerow({names[c]: v for c, v in row.items()})
    return p


def test_the_shipped_row_is_judged_on_all_four_metrics(capsys, tmp_path):
    code, out, err = run(capsys, "validate", "--points", str(_points(tmp_path)), *VALIDATE)
    assert code == 0, err
    assert {g["metric"] for g in _json(out)["summary"]} == {"throughput_per_chip", "interactivity", "tpot_s", "ttft_s"}


@pytest.mark.parametrize(
    ("column", "typo"), [("ttft_ms", "ttft_msec"), ("point_type", "point type"), ("framework", "framwork")]
)
def test_a_misspelt_points_column_is_named_with_the_one_meant(capsys, tmp_path, column, typo):
    p = _points(tmp_path, rename={column: typo})
    code, out, err = run(capsys, "validate", "--points", str(p), *VALIDATE)
    # was: exit 0, the column dropped unread (ttft_msec: no ttft_s group; the row judged on three metrics)
    check_error(
        code,
        out,
        err,
        f"--points pts.csv: columns: '{typo}' is not a column of the points format (did you mean '{column}'?)",
        "its cells would be dropped unread",
        "or drop it (free text goes in notes)",
    )


def test_a_points_column_of_its_own_is_refused_and_a_blank_unnamed_one_is_not(capsys, tmp_path):
    p = _points(tmp_path, {"my_comment": "rerun"})
    code, out, err = run(capsys, "validate", "--points", str(p), *VALIDATE)
    check_error(code, out, err, "'my_comment' is not a column of the points format")
    lines = _points(tmp_path).read_text().splitlines()
    p.write_text(f"{lines[0]},\n{lines[1]},\n")  # a trailing comma on each line (a spreadsheet export)
    code, out, err = run(capsys, "validate", "--points", str(p), *VALIDATE)
    assert code == 0, err  # an unnamed column whose cells are blank holds nothing to drop
    p.write_text(f"{lines[0]},\n{lines[1]},rerun\n")
    code, out, err = run(capsys, "validate", "--points", str(p), *VALIDATE)
    check_error(code, out, err, "an unnamed column (a header cell left empty) is not a column of the points format")


def test_a_points_tpot_stat_that_is_no_mean_or_median_skips_the_row(capsys, tmp_path):
    p = _points(tmp_path, {"tpot_stat": "p99"})
    code, out, err = run(capsys, "validate", "--points", str(p), *VALIDATE)
    # was: a p99 TPOT compared with the predicted mean, silently (ttft_stat 'p99' was already refused)
    check_error(code, out, err, "tpot_stat 'p99' is not mean, median or unspecified", "compared with it is a mean")


def test_a_points_output_rate_above_the_in_plus_out_rate_skips_the_row(capsys, tmp_path):
    p = _points(tmp_path, {"output_tput_per_gpu": "1e9"})  # the row's tput_per_gpu is 98.83 tok/s
    code, out, err = run(capsys, "validate", "--points", str(p), *VALIDATE)
    check_error(code, out, err, "output_tput_per_gpu '1e9' exceeds tput_per_gpu '98.83'")


def test_a_design_space_batch_listed_twice_is_refused(tmp_path):
    from jalapeno.errors import SpecError
    from jalapeno.specs.design_space import load_design_space

    space = Path(__file__).parents[2] / "examples" / "explore_700w.toml"
    p = tmp_path / "s.toml"
    p.write_text(space.read_text().replace("batches = [1, 4, 16, 64, 128, 256, 512, 1024]", "batches = [1, 4, 4]"))
    # was: taken, the batch-4 point priced twice per trial (where --concurrency 4,4 is refused)
    with pytest.raises(SpecError, match=r"sweep\.batches: decode batch 4 is listed twice"):
        load_design_space(p)


def test_an_upper_case_trace_column_is_named_with_the_one_meant(capsys, tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("ARRIVAL_S,input_tokens,output_tokens\n0,1000,10\n")
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "-w", str(p), "-n", "1")
    # was: "ARRIVAL_S: unknown column" with no hint (the near-name match was case-sensitive)
    check_error(code, out, err, "t.csv: ARRIVAL_S: unknown column (did you mean 'arrival_s'?)")


def test_a_collective_size_given_twice_is_refused(capsys):
    args = ("collective", "-s", "jalapeno", "--op", "all_to_all", "--group", "8")
    code, out, err = run(capsys, *args, "--bytes", "1e6,1000000")  # was: the same row printed twice
    check_error(code, out, err, "--bytes: 1e+06 is given twice", "list each size once")
    code, out, err = run(capsys, *args, "--bytes", "1e6,1e8", "--json")
    assert code == 0, err


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        # serve/overlap_loop.lag_steps rounds: 0.5 ran as no lag at all, 1e9 as a TTFT of 3.2e7 s (a year)
        ("admission_lag_steps", "0.5", ["must be a whole number of steps 0-2, got 0.5", "write 1 for an overlap loop"]),
        ("admission_lag_steps", "1e9", ["must be a whole number of steps 0-2, got 1e+09"]),
        # 0 priced the LM head's all-gather free; 3 bytes is no dtype's size
        ("logits_bytes_per_elem", "0", ["0 is not a logit element size", "give 1 (FP8 logits), 2 (BF16/FP16"]),
        ("logits_bytes_per_elem", "3", ["3 is not a logit element size"]),
    ],
)
def test_a_set_engine_value_a_stack_profile_could_not_give_is_refused(capsys, key, value, words):
    # data/stacks.toml already refused these (specs/stacks.py); --set and a system's [efficiency] took them
    args = ("predict", "-s", "h200", "-m", "llama-3.3-70b", "-c", "8", "--json")
    code, out, err = run(capsys, *args, "--set", f"efficiency.{key}={value}")
    check_error(code, out, err, f"--set: efficiency.{key}:", *words)


@pytest.mark.parametrize(("key", "value"), [("admission_lag_steps", "1"), ("logits_bytes_per_elem", "4")])
def test_a_set_engine_value_a_stack_profile_gives_still_runs(capsys, key, value):
    args = ("predict", "-s", "h200", "-m", "llama-3.3-70b", "-c", "8", "--json")
    code, out, err = run(capsys, *args, "--set", f"efficiency.{key}={value}")
    assert code == 0, err


def test_a_set_name_prefix_on_a_one_system_command_says_to_drop_it(capsys):
    code, out, err = run(
        capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "-c", "8", "--set", "h200:chip.hbm_stacks=8"
    )
    # was: "h200:chip.hbm_stacks: unknown system field (did you mean 'chip.hbm_stacks'?)", as if the key were misspelt
    check_error(
        code,
        out,
        err,
        "--set: h200:chip.hbm_stacks: 'h200:' picks one of several systems",
        "this command prices one system",
        "drop 'h200:': --set chip.hbm_stacks=...",
    )
    # compare takes the prefix (a system of its --systems)
    code, out, err = run(
        capsys,
        "compare",
        "-s",
        "h200,b200",
        "-m",
        "llama-3.3-70b",
        "-c",
        "8",
        "--serving",
        "agg",
        "--json",
        "--set",
        "h200:chip.hbm_stacks=8",
    )
    assert code == 0, err


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        (
            "choices = [4, 6, 8]",
            "low = 4\nhigh = 8",
            ["params.chip.hbm_stacks: the value 4.5 inside the range", "whole"],
        ),
        (
            '[params."efficiency.step_overhead_s"]',
            '[params."efficiency.admission_lag_steps"]\nlow = 0\nhigh = 2\n\n[params."efficiency.step_overhead_s"]',
            ["params.efficiency.admission_lag_steps: the value 0.5 inside the range", "0-2"],
        ),
    ],
)
def test_a_continuous_range_on_a_whole_number_key_is_refused_at_load(tmp_path, old, new, words):
    from jalapeno.errors import SpecError
    from jalapeno.specs.design_space import load_design_space

    space = Path(__file__).parents[2] / "examples" / "explore_700w.toml"
    p = tmp_path / "s.toml"
    p.write_text(space.read_text().replace(old, new))
    # was: loaded, then every trial drawing a fraction (all of them) pruned as 'design: N', 0 feasible
    with pytest.raises(SpecError) as e:
        load_design_space(p)
    for w in [*words, "each trial drawing such a value would be pruned", "add integer = true"]:
        assert w in str(e.value)
    p.write_text(space.read_text().replace(old, new.replace("high = 8", "high = 8\ninteger = true")))
    if "hbm_stacks" in new:
        load_design_space(p)  # the integer range is taken
