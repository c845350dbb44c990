"""Round 38's break pass (break38): inputs that ran, crashed or were misnamed, each now one error naming its
field and fix. Expected figures are worked by hand in each docstring."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from cli_runner import check_error, error_line, run

from jalapeno.cost.batch import Batch
from jalapeno.errors import SpecError

B200 = (resources.files("jalapeno") / "data" / "systems" / "b200.toml").read_text()
DIE_LINK = 'link_bandwidth_tb_per_s = { value = 5.0, low = 5.0, high = 10.0,'
CLUSTER = "chips = 8192\n"


def _edit(tmp_path, old: str, new: str) -> str:
    assert B200.count(old) == 1, old
    p = tmp_path / "edited.toml"
    p.write_text(B200.replace(old, new).replace('name = "b200"', 'name = "b200-edited"', 1))
    return str(p)


@pytest.mark.parametrize("new, field, shown", [
    ('link_bandwidth_tb_per_s = { value = 5.0, low = 5.0, high = inf,', "die.link_bandwidth_tb_per_s.high", "inf"),
    ('link_bandwidth_tb_per_s = { value = 5.0, low = -inf, high = 10.0,', "die.link_bandwidth_tb_per_s.low", "-inf"),
    ('link_bandwidth_tb_per_s = { value = 5.0, low = 5.0, high = nan,', "die.link_bandwidth_tb_per_s.high", "nan"),
])
def test_a_band_end_must_be_finite(capsys, tmp_path, new, field, shown):
    """``high = inf`` is a TOML float: it passed ``gt=0`` and the band a sensitivity sweep reads ran to inf
    (``value = inf`` was refused already); nan read 'must be positive'."""
    path = _edit(tmp_path, DIE_LINK, new)
    check_error(*run(capsys, "hardware", "show", path), field, "must be a finite number", f"got {shown}",
                "not nan or inf")


def test_a_level_of_1e18_chips_is_refused(capsys, tmp_path):
    """levels.cluster.chips = 10^18 priced a 1 MB all-reduce over 10^18 chips (178 µs) without a word: the level is
    held to the plan's fleet bound, 10^9 chips (~100x the accelerators installed by 2025)."""
    path = _edit(tmp_path, CLUSTER, "chips = 1000000000000000000\n")
    check_error(*run(capsys, "collective", "-s", path, "-g", "8", "-b", "1e6"), "levels[cluster].chips",
                "1e+18 chips", "plausible range 1-1e+09 chips")


def test_set_a_level_past_the_bound(capsys):
    """The same bound through --set (10^11 > 10^9); 10^9 itself is in range."""
    check_error(*run(capsys, "hardware", "show", "b200", "--set", "levels.cluster.chips=100000000000"),
                "levels[cluster].chips", "1e+11 chips")
    code, out, err = run(capsys, "hardware", "show", "b200", "--set", "levels.cluster.chips=1000000000")
    assert code == 0, err


def test_plan_power_budget_past_float_range_prints_a_short_count(capsys):
    """--power-mw 1e300 on b200 (2,170 W all-in a chip, 8 a node): floor(1e306 W / 17,360 W) nodes x 8 =
    1e306 / 2,170 = 4.61e302 chips, printed before as a 303-digit number with commas."""
    line = error_line(*run(capsys, "plan", "-s", "b200", "--power-mw", "1e300", "-w", "1k1k"))
    assert "4.61e+302 chips is above the 1,000,000,000-chip plausibility bound" in line
    assert len(line) < 300, line


def test_a_nan_literal_in_a_jsonl_trace_is_not_a_missing_value(capsys, tmp_path):
    """json.loads reads NaN as float nan, which the column check took for a blank cell ('missing value. Fix: give
    arrival_s for every row', though the row gives one)."""
    p = tmp_path / "t.jsonl"
    p.write_text('{"arrival_s": 0, "input_tokens": 100, "output_tokens": 10}\n'
                 '{"arrival_s": NaN, "input_tokens": 100, "output_tokens": 10}\n')
    check_error(*run(capsys, "simulate", "-s", "b200", "-w", str(p), "--tp", "8", "-n", "2"),
                "row 2 (line 2): arrival_s", "'NaN' is not a finite number")


@pytest.mark.parametrize("field, value", [
    ("decode_seqs", "abc"),          # numpy's ValueError: could not convert string to float
    ("decode_seqs", "64"),           # read as 64.0, silently
    ("decode_seqs", True),           # read as 1.0, silently
    ("decode_ctx", {"a": 1}),        # TypeError: float() argument must be ...
    ("decode_ctx", [[1, 2], [3]]),   # ValueError: inhomogeneous shape
    ("prefill_tokens", [1, "x"]),    # raised before any field was named (prefill_seqs' default)
    ("pad_seqs", "x"),
    ("decode_seqs", np.array(["8"])),
])
def test_batch_fields_must_be_numbers(field, value):
    """Python API (README: ``jp.Batch.make(decode_seqs=64, decode_ctx=8192)``): a field that holds no numbers is a
    SpecError naming it, not numpy's error or a silent conversion."""
    kw = {"decode_seqs": 4, "decode_ctx": 100, field: value}
    with pytest.raises(SpecError) as ei:
        Batch.make(**kw)
    assert ei.value.field == f"batch.{field}"
    assert "must be a number or a 1-D array of numbers" in str(ei.value)


def test_batch_numbers_still_run():
    """Lists, tuples, integer and float arrays are numbers: 2 rows, prefill_seqs defaulted to 1 where tokens > 0."""
    b = Batch.make(decode_seqs=[1, 2], decode_ctx=np.array([10, 20]), prefill_tokens=(0, 4))
    assert b.n == 2 and b.prefill_seqs.tolist() == [0.0, 1.0] and b.decode_ctx.tolist() == [10.0, 20.0]


def test_a_points_row_of_1e20_gpus_is_skipped_with_its_reason(capsys, tmp_path):
    """validate --points: num_gpus '1e20' is a whole number >= 1, so the row was priced and only flagged, its
    closed-loop identity residual printed as '12281640720895338496.00x'; it is now skipped, past the 1e9-chip bound."""
    import csv

    src = resources.files("jalapeno") / "data" / "validation" / "inferencex_points.csv"
    rows = list(csv.DictReader(src.read_text().splitlines()))
    row = dict(next(r for r in rows if r["hardware"] == "H200"), num_gpus="1e20")
    p = tmp_path / "points.csv"
    with p.open("w", newline="") as f:
        w = csv.DictWriter(f, list(row))
        w.writeheader()
        w.writerow(row)
    check_error(*run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--no-mlperf"),
                "num_gpus '1e20' is above the 1,000,000,000-GPU plausibility bound")


@pytest.mark.parametrize("key, value", [("efficiency.hbm_fraction", "1e-300"),
                                        ("efficiency.moe.fp8.peak_fraction", "1e-9"),
                                        ("efficiency.link_fraction", "0.0005")])
def test_a_share_of_peak_below_the_floor_is_refused(capsys, key, value):
    """hbm_fraction = 1e-300 divides every HBM time by 1e-300: predict printed a TTFT of a 300-digit number of ms.
    A share of a peak below 0.001 (the least calibrated share is 0.089) is refused, naming the key."""
    check_error(*run(capsys, "predict", "-s", "b200", "-c", "64", "--set", f"{key}={value}"), key,
                "below the 0.001 plausibility floor", "e.g. 0.6 for 60%")


def test_a_share_of_peak_at_the_floor_runs(capsys):
    """0.001 itself is accepted (the floor is inclusive)."""
    code, out, err = run(capsys, "predict", "-s", "b200", "-c", "64", "--set", "efficiency.hbm_fraction=0.001")
    assert code == 0, err


def test_explore_refuses_a_decode_batch_past_the_concurrency_bound(capsys, tmp_path):
    """[sweep] batches = [1, 4, 10^30] ran: no layout held 10^30 sequences and the point was dropped silently. A decode
    batch is requests in flight, bounded as --concurrency is (1,000,000)."""
    text = (Path(__file__).resolve().parents[2] / "examples" / "explore_700w.toml").read_text()
    old = "batches = [1, 4, 16, 64, 128, 256, 512, 1024]"
    assert old in text
    p = tmp_path / "space.toml"
    p.write_text(text.replace(old, "batches = [1, 4, 2000000]"))
    check_error(*run(capsys, "explore", str(p), "-n", "1", "--store", str(tmp_path / "store")), "sweep.batches",
                "decode batch 2e+06 is above 1,000,000")


DEEP = "[" * 5000 + "]" * 5000  # past Python's recursion limit (1,000 frames) in tomllib's array parser


@pytest.mark.parametrize("kind", ["system", "variant-of", "agentic", "explore", "calibration"])
def test_toml_nested_past_the_recursion_limit_is_a_toml_error(capsys, tmp_path, kind):
    """x = [[[...]]] 5,000 deep: tomllib raised RecursionError, a traceback, from every TOML a user gives."""
    deep = tmp_path / "deep.toml"
    deep.write_text(f'base = "b200"\nname = "deep"\n[chip]\nx = {DEEP}\n')
    if kind == "system":
        args = ("hardware", "show", str(deep))
    elif kind == "variant-of":  # a variant whose base is the deep file
        (tmp_path / "v.toml").write_text(f'base = "{deep}"\nname = "v"\n')
        args = ("predict", "-s", str(tmp_path / "v.toml"), "-c", "4")
    elif kind == "agentic":
        args = ("simulate", "-s", "b200", "-w", f"agentic:{deep}", "--tp", "8", "-c", "2")
    elif kind == "explore":
        args = ("explore", str(deep), "-n", "1", "--store", str(tmp_path / "store"))
    else:
        args = ("predict", "-s", "b200", "-c", "4", "--efficiency", str(deep))
    line = error_line(*run(capsys, *args))
    assert "nested too deeply" in line or "TOMLDecodeError" in line, line
    assert "deep.toml" in line


def test_set_a_value_nested_past_the_recursion_limit(capsys):
    """--set KEY=VALUE reads VALUE as TOML: 5,000 nested brackets raised RecursionError."""
    check_error(*run(capsys, "predict", "-s", "b200", "-c", "4", "--set", f"chip.hbm_stacks={DEEP}"),
                "--set", "chip.hbm_stacks", "must be a whole number")



def test_a_long_value_in_a_schema_error_is_shortened(capsys, tmp_path):
    """A schema error quoted its input whole: a 10,000-character source string past its type echoed every
    character. Now 60 characters and the length ('x' * 10,000 + 2 quotes = 10,002 characters as written)."""
    p = tmp_path / "long.toml"
    p.write_text('base = "b200"\nname = "long"\n[chip]\nhbm_stacks = { value = "' + "x" * 10_000 + '", source = "abc" }\n')
    line = error_line(*run(capsys, "hardware", "show", str(p)))
    assert "chip.hbm_stacks" in line and "(10,002 characters)" in line, line
    assert len(line) < 400, line


@pytest.mark.parametrize("kw, shown", [
    ({"batches": (float("nan"),)}, "nan is not"),      # was reported as batch.decode_seqs
    ({"batches": ()}, "is empty"),                      # was 'no feasible point ...: unknown'
    ({"concurrency": ()}, "is empty"),                  # numpy: cannot reshape array of size 0
    ({"concurrency": (1e30,)}, "1e+30 is not"),         # priced 1e30 requests in flight
    ({"batches": ("4",)}, "'4' is not"),
])
def test_sweep_options_name_a_grid_no_sweep_can_price(kw, shown):
    """Python API (README: jp.system_frontier(..., options)): the grids of SweepOptions are checked where they are
    given, bounded as --concurrency is (1 to 1,000,000)."""
    from jalapeno.analysis.sweep import SweepOptions

    with pytest.raises(SpecError) as ei:
        SweepOptions(**kw)
    assert ei.value.field == f"options.{next(iter(kw))}" and shown in str(ei.value)


@pytest.mark.parametrize("acceptance", ["0.5", True])
def test_mtp_acceptance_must_be_a_number(acceptance):
    """MTP(1, '0.5') raised TypeError from the range comparison; MTP(1, True) ran at acceptance 1 (outside [0, 1))."""
    from jalapeno.deploy.mtp import MTP

    with pytest.raises(SpecError, match=r"must be a number in \[0, 1\)"):
        MTP(1, acceptance)


@pytest.mark.parametrize("group, nbytes, field", [(2.5, 1e6, "group"), ("8", 1e6, "group"), (True, 1e6, "group"),
                                                  (8, "1e6", "bytes"), (8, [1, "x"], "bytes")])
def test_collective_time_takes_whole_chips_and_numbers_of_bytes(group, nbytes, field):
    """Python API jp.collective_time: a group of 2.5 chips was priced, '8' raised TypeError, '1e6' bytes was read as
    a number and [1, 'x'] raised numpy's ValueError."""
    import jalapeno as jp
    from jalapeno.cost.collectives import collective_time

    pr = jp.load_pricer("b200")
    with pytest.raises(SpecError) as ei:
        collective_time("all_reduce", group, nbytes, pr.system, pr.efficiency)
    assert ei.value.field == field
