"""Round 54's new-user pass (newuser54: a hardware architect comparing Jalapeño with GB300 NVL72 on Kimi K2.5 and
DeepSeek-R1 at 8K/1K, then trying variants with --set)."""

from __future__ import annotations

import re

from cli_runner import run

KIMI_STEP = (
    "step",
    "--system",
    "jalapeno",
    "--model",
    "kimi-k2.5",
    "--dp",
    "8",
    "--ep",
    "8",
    "--batch",
    "64",
    "--context",
    "8192",
)


def _moe_us(out: str) -> float:
    (row,) = [x for x in out.splitlines() if "moe.experts" in x]
    return float(row.split("│")[7])


def test_step_footer_names_the_rows_that_price_int4_experts(capsys):
    """Kimi K2.5's INT4 experts on Jalapeño are priced by the calibrated set's own ``moe[w4a16]`` form (borrowed from
    GB300's measured MXINT4 kernels), yet step's footer (and audit's 'formats:' line) told the user
    'efficiency.moe.bf16.* are their rows'. Followed, ``--set efficiency.moe.bf16.half_rows=5`` moved nothing. The
    footer now names ``moe.w4a16``, and that is the row that moves the op: at 5 rows (not 56) the few-row rule
    m / (m + half_rows) no longer holds the expert GEMMs far under peak, so the routed experts' time must drop."""
    code, out, err = run(capsys, *KIMI_STEP)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "efficiency.moe.w4a16.* are their rows" in flat
    assert "efficiency.moe.bf16.* are their rows" not in flat
    base = _moe_us(out)
    code, out5, err = run(capsys, *KIMI_STEP, "--set", "efficiency.moe.w4a16.half_rows=5")
    assert code == 0, err
    assert _moe_us(out5) < 0.8 * base


def test_audit_formats_line_names_the_w4a16_rows(capsys):
    code, out, err = run(
        capsys, "audit", "--system", "jalapeno", "--model", "kimi-k2.5", "--claim", "max_interactivity=100"
    )
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("formats: routed experts")]
    assert re.search(r"efficiency\.moe\.w4a16\.\* are their rows", line)


def test_a_plain_set_in_compare_says_it_changes_the_baseline_too(capsys):
    """``compare -s jalapeno,gb300-nvl72 --set chip.hbm_bandwidth_tb_per_s=20`` (the README's --set example, read as
    'a Jalapeño with 20 TB/s') priced GB300 at 20 TB/s too (its catalog 8 TB/s), so every ratio was against a
    changed baseline; the only word was '+chip.hbm_bandwidth_tb_per_s=20' in the baseline's name. A note now says a
    plain KEY=VALUE sets every compared system and gives the NAME:KEY=VALUE spelling; the targeted one says nothing."""
    args = ("compare", "-m", "llama-3.3-70b", "-w", "1k1k", "-s", "jalapeno,gb300-nvl72", "--serving", "agg")
    code, out, err = run(capsys, *args, "--set", "chip.hbm_bandwidth_tb_per_s=20")
    assert code == 0, err
    flat = " ".join(err.split())
    assert "--set chip.hbm_bandwidth_tb_per_s=20 applies to every compared system (jalapeno, gb300-nvl72)" in flat
    assert "--set jalapeno:chip.hbm_bandwidth_tb_per_s=20" in flat
    code, out, err = run(capsys, *args, "--set", "jalapeno:chip.hbm_bandwidth_tb_per_s=20")
    assert code == 0, err
    assert "applies to every compared system" not in err


def test_tiled_refusal_offers_the_set_what_if(capsys):
    """``--chip-model tiled`` on Jalapeño (no published SM count, SRAM per unit or MMA tile) was refused with
    'use a chip that gives them ... or add them to its TOML': an architect's what-if is the --set route, which works
    (predict below). The Fix now names each missing key as a --set, and the run with them is priced."""
    args = (
        "predict",
        "--system",
        "jalapeno",
        "--model",
        "deepseek-r1",
        "--dp",
        "8",
        "--ep",
        "8",
        "-c",
        "64",
        "--chip-model",
        "tiled",
    )
    code, out, err = run(capsys, *args)
    assert code != 0
    flat = " ".join((out + err).split())
    assert "--set chip.compute_units=N --set chip.sram_per_unit_kib=N --set chip.mma_tile_m=N" in flat
    sets = ("--set", "chip.compute_units=128", "--set", "chip.sram_per_unit_kib=256", "--set", "chip.mma_tile_m=128")
    code, out, err = run(capsys, *args, *sets)
    assert code == 0, err
    assert "throughput per chip" in out
