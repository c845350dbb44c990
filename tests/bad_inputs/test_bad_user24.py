"""Round 24 break-it pass (user24): bad input a newcomer typed, each refused with one line that
names the key as the file has it and the fix."""

from __future__ import annotations

import pytest
from cli_runner import check_error, run

SHOW = ["hardware", "show"]


def _variant(tmp_path, body: str) -> str:
    p = tmp_path / "v.toml"
    p.write_text('base = "jalapeno"\n[chip]\n' + body)
    return str(p)


def test_a_capacity_unit_slip_is_named_as_a_unit_slip(capsys, tmp_path):
    """hbm_capacity_gib = 0.001 (a unit slip) was 'chip.hbm_usable: usable 216.0 GiB exceeds
    nominal 0.0 GiB. Fix: make usable HBM <= nominal': a key the file does not have, a rounded 0.0,
    and no word on the unit. The range check (0.0931-9313 GiB: 0.1-1e4 GB) now runs first."""
    check_error(*run(capsys, *SHOW, _variant(tmp_path, "hbm_capacity_gib = 0.001\n")),
                "v.toml: chip.hbm_capacity_gib:", "0.001 gib is outside the plausible range", "check the unit")


def test_usable_above_capacity_names_both_keys(capsys, tmp_path):
    """Jalapeño's base file gives hbm_usable_gib = 216: lowering the capacity alone leaves it above."""
    check_error(*run(capsys, *SHOW, _variant(tmp_path, "hbm_capacity_gib = 100\n")), "v.toml: chip.hbm_usable_gib:",
                "usable 216 gib exceeds chip.hbm_capacity_gib, 100 gib",
                "make chip.hbm_usable_gib <= chip.hbm_capacity_gib", "sets chip.hbm_usable_gib too")


def test_usable_above_capacity_in_gb_keys(capsys, tmp_path):
    """In GB keys: 150 GB usable over H200's 141 GB nominal (139.7 and 131.3 GiB)."""
    p = tmp_path / "h.toml"
    p.write_text('base = "h200"\n[chip]\nhbm_usable_gb = 150\n')
    check_error(*run(capsys, *SHOW, str(p)), "h.toml: chip.hbm_usable_gb:",
                "usable 139.7 gib exceeds chip.hbm_capacity_gb, 131.3 gib",
                "make chip.hbm_usable_gb <= chip.hbm_capacity_gb")


# ---- trace files in another dialect or unit -------------------------------------------------------

SIM = ["simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-w"]


@pytest.mark.parametrize("sep, word", [(";", "semicolons"), ("\t", "tabs"), ("|", "bars")])
def test_a_trace_separated_by_something_else_says_so(capsys, tmp_path, sep, word):
    """A European-locale export (``arrival_s;input_tokens;output_tokens``) was 'arrival_s;input_tokens;
    output_tokens: unknown column': one column whose name holds the separator."""
    p = tmp_path / "t.csv"
    p.write_text(sep.join(["arrival_s", "input_tokens", "output_tokens"]) + "\n" + sep.join(["0", "100", "10"]) + "\n")
    check_error(*run(capsys, *SIM, str(p)), "t.csv: header:", f"separated by {word}, not commas",
                "write the trace comma-separated")


@pytest.mark.parametrize("suffix, col, unit, factor", [
    ("csv", "arrival_ms", "milliseconds", "1e3"), ("csv", "arrival_us", "microseconds", "1e6"),
    ("jsonl", "arrival_ns", "nanoseconds", "1e9"),
])
def test_arrival_times_named_in_another_unit(capsys, tmp_path, suffix, col, unit, factor):
    """``arrival_ms`` was 'unknown column (did you mean 'arrival_s'?)': renaming it as told would have
    replayed milliseconds as seconds, a trace 1,000x slower, silently."""
    p = tmp_path / f"t.{suffix}"
    p.write_text(f"{col},input_tokens,output_tokens\n0,100,10\n" if suffix == "csv"
                 else f'{{"{col}": 0, "input_tokens": 100, "output_tokens": 10}}\n')
    check_error(*run(capsys, *SIM, str(p)), f"t.{suffix}: ", f"{col}: arrival times in {unit}",
                "the trace reads seconds", f"divide the times by {factor} and name them arrival_s")


# ---- validate --points: a user's file of which no row maps -------------------------------------------

def test_points_file_with_no_mappable_row_is_refused_with_aiconfigurator_on(capsys, tmp_path):
    """With aiconfigurator installed (the default ``validate``), ``--points`` whose every row was skipped
    (an unknown hardware name here) printed aiconfigurator's 1,800-line table and exited 0; the one line
    about the user's file was the last but ten. Refused only when the file's own rows map to nothing."""
    from importlib import resources

    lines = (resources.files("jalapeno") / "data" / "validation" / "inferencex_points.csv").read_text().splitlines()
    p = tmp_path / "mine.csv"
    p.write_text(lines[0] + "\n" + lines[1].replace("GB200 NVL72", "GB999", 1) + "\n")
    check_error(*run(capsys, "validate", "--points", str(p)), "--points mine.csv:",
                "no measured point could be mapped; 1 row(s) skipped", "mine:2", "'gb999'", "not in the catalog")


def test_a_fraction_out_of_range_is_not_called_a_fraction_of_peak(capsys):
    """memory_reserve_fraction = 0 said 'Fix: give a fraction of peak between 0 and 1' (it is a share of HBM)."""
    check_error(*run(capsys, "step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8",
                     "--set", "efficiency.memory_reserve_fraction=0"),
                "efficiency.memory_reserve_fraction: must be in (0, 1], got 0.0", "give a fraction above 0 and at most 1")


# ---- the tile model's chip keys: whole counts and plausible ranges ------------------------------------

@pytest.mark.parametrize("kv, words", [
    # was read as int(0.5) = 0 SMs and blamed on a key the user did not touch ('chip.sram_per_unit_kib: H200
    # SXM's 228 KiB per unit holds no tile'); 132.5 SMs was run as 132, silently
    ("chip.compute_units=0.5", ["chip.compute_units: must be a whole number (a count of sms / cus), got 0.5"]),
    ("chip.compute_units=132.5", ["chip.compute_units: must be a whole number", "got 132.5"]),
    ("chip.mma_tile_m=64.5", ["chip.mma_tile_m: must be a whole number (a count of tile rows), got 64.5"]),
    # accepted without a word: 1e30 SMs, 1e30-row tiles, 233,472 KiB (bytes typed as KiB) per SM
    ("chip.compute_units=1e30", ["chip.compute_units: 1e+30 units is outside the plausible range 1-1e+06 units"]),
    ("chip.mma_tile_m=1e30", ["chip.mma_tile_m: 1e+30 rows is outside the plausible range 1-4096 rows"]),
    ("chip.sram_per_unit_kib=233472", ["chip.sram_per_unit_kib: 2.335e+05 kib is outside the plausible range",
                                       "228 for h100, not 233472 (bytes)"]),
])
def test_tile_model_keys_are_counts_in_range(capsys, kv, words):
    check_error(*run(capsys, "step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "--set", kv), "--set", *words)


def test_a_huge_stack_count_on_a_sliced_chip_is_refused_at_once(capsys):
    """Jalapeño's die has one slice per HBM stack: --set chip.hbm_stacks=1e30 laid the die out before the
    range check and searched 1e15 mesh shapes (killed after 60 s); 1e5 stacks was refused in 0.4 s."""
    import time

    t0 = time.perf_counter()
    check_error(*run(capsys, "hardware", "show", "jalapeno", "--set", "chip.hbm_stacks=1e30"),
                "--set: chip.hbm_stacks: 1e+30 stacks is outside the plausible range 1-64 stacks")
    assert time.perf_counter() - t0 < 10
