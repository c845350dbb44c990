"""Bad input that robust42 left (break42): ``--set efficiency.*`` keys no op reads, a DP dispatch with no ranks to
dispatch over, and a Chip / LinkLevel / System built through the API with values no chip has. Each is named:
a note for a what-if that changes nothing, one error naming the field and the fix for the rest."""

import dataclasses
import json

import pytest
from typer.testing import CliRunner

from jalapeno.analysis.unread_keys import unread_efficiency_keys
from jalapeno.deploy.layout import Layout, validate_layout
from jalapeno.errors import InfeasibleDeployment, SpecError
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.formats import get_precision

# ---- --set efficiency.* that no op of the model reads ------------------------------------------------------------

R1_KEYS = [
    "efficiency.moe.bf16.peak_fraction",
    "efficiency.moe.bf16.half_rows",
    "efficiency.moe.fp8.peak_fraction",
    "efficiency.moe.w4a16.peak_fraction",
    "efficiency.gemm.fp4.peak_fraction",
    "efficiency.kernel_launch_s",
]


def test_an_entry_shadowed_by_the_experts_own_entry_is_unread_and_a_fallback_is_read():
    # DeepSeek-R1 FP8: routed experts compute in FP8. Efficiency._lookup reads moe[fp8].field, else moe[bf16].field:
    # with moe[fp8] setting its own peak fraction but no half rows, bf16's peak is shadowed and bf16's half rows read
    eff = Efficiency().with_overrides({"moe": {"fp8": {"peak_fraction": 0.3}}})
    unread = unread_efficiency_keys(R1_KEYS, load_model("deepseek-r1"), get_precision("fp8"), load_system("h200"), eff)
    # w4a16: no INT4 experts; fp4: no op computes in FP4 (nor falls back to it); kernel_launch_s: no claim made
    assert unread == [
        "efficiency.moe.bf16.peak_fraction",
        "efficiency.moe.w4a16.peak_fraction",
        "efficiency.gemm.fp4.peak_fraction",
    ]
    # without an FP8 entry every moe[fp8] field falls back to moe[bf16]: the BF16 peak is read
    plain = unread_efficiency_keys(
        R1_KEYS[:1], load_model("deepseek-r1"), get_precision("fp8"), load_system("h200"), Efficiency()
    )
    assert plain == []


def test_on_a_dense_model_the_moe_and_all_to_all_keys_are_unread():
    keys = [
        "efficiency.all_to_all_fraction",
        "efficiency.moe.bf16.token_passes",
        "efficiency.gemm.bf16.peak_fraction",
        "efficiency.hbm_fraction",
        "efficiency.in_switch_fraction",
    ]
    unread = unread_efficiency_keys(
        keys, load_model("llama-3.3-70b"), get_precision("bf16"), load_system("h100"), Efficiency()
    )
    # H100's NVSwitch level reduces in the switch (in_network_reduction): its in-switch fraction is read
    assert unread == ["efficiency.all_to_all_fraction", "efficiency.moe.bf16.token_passes"]
    assert unread_efficiency_keys(
        ["efficiency.in_switch_fraction"],
        load_model("llama-3.3-70b"),
        get_precision("bf16"),
        load_system("mi300x"),
        Efficiency(),
    ) == ["efficiency.in_switch_fraction"]  # Infinity Fabric full mesh: no switch to reduce in


def test_the_note_names_the_keys_and_the_step_it_notes_is_unchanged(capsys):
    from jalapeno.cli.app import _register, app
    from jalapeno.cli.system_notes import note_unread_efficiency
    from jalapeno.cost.pricer import load_pricer

    pr = load_pricer("h200", "calibrated", (), None)
    assert pr.efficiency.moe["fp8"].peak_fraction is not None  # the premise: H200's set has its own FP8 MoE peak
    note_unread_efficiency(
        ["efficiency.moe.bf16.peak_fraction=0.3", "efficiency.moe.fp8.half_rows=40"],
        load_model("deepseek-r1"),
        get_precision("fp8"),
        pr,
    )
    err = capsys.readouterr().err
    assert "--set efficiency.moe.bf16.peak_fraction is not read: deepseek-r1 at fp8 on h200" in err
    assert "moe[fp8]" in err and "moe.fp8.half_rows" not in err
    _register()
    args = [
        "step",
        "-m",
        "deepseek-r1",
        "-s",
        "h200",
        "--batch",
        "64",
        "--context",
        "2048",
        "--prefill-tokens",
        "512",
        "--tp",
        "8",
        "--ep",
        "8",
        "--json",
    ]
    times = []
    for extra in (
        [],
        ["--set", "efficiency.moe.bf16.peak_fraction=0.3"],
        ["--set", "efficiency.moe.fp8.peak_fraction=0.3"],
    ):
        out = CliRunner().invoke(app, [*args, *extra])
        assert out.exit_code == 0, out.output
        times.append(json.loads(out.stdout)["step_time_s"])
    assert times[1] == times[0] and times[2] != times[0]  # the noted key changes nothing; the read one does


# ---- a DP dispatch with no ranks to choose ----------------------------------------------------------------------


@pytest.mark.parametrize("dispatch", ["random", "refill"])
def test_dispatch_on_one_rank_or_a_prefill_pool_is_refused(dispatch):
    m, s = load_model("deepseek-r1"), load_system("gb200-nvl72")
    with pytest.raises(InfeasibleDeployment, match=r"dp_dispatch.*one attention-DP rank.*would change nothing") as e:
        validate_layout(Layout(tp=8, ep=8, dp_dispatch=dispatch), m, s)
    assert "dp > 1" in e.value.fix
    with pytest.raises(InfeasibleDeployment, match=r"dp_dispatch.*on a prefill pool"):
        validate_layout(Layout(dp=8, ep=8, dp_dispatch=dispatch), m, s, "prefill")
    validate_layout(Layout(dp=8, ep=8, dp_dispatch=dispatch), m, s)  # a decode pool of 8 ranks: priced
    validate_layout(Layout(tp=8, ep=8), m, s, "prefill")  # balanced is every pool's


# ---- Chip, LinkLevel, System built through the API ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("hbm_capacity_bytes", -1.0, "above 0"),
        ("hbm_bandwidth_bytes_per_s", 0.0, "above 0"),
        ("tdp_w", float("inf"), "finite"),
        ("sram_bytes", -5.0, "above 0"),
        ("hbm_usable_bytes", "80e9", "finite"),
        ("dense_clock_ratio", 1.5, "at most 1"),
        ("dense_clock_ratio", 0.0, "above 0"),
        ("dense_clock_ratio", float("nan"), "finite"),
        ("hbm_stacks", -2, "integer at least 0"),
        ("hbm_stacks", 5.5, "integer"),
    ],
)
def test_a_chip_built_with_a_value_no_chip_has_is_refused(field, value, message):
    with pytest.raises(SpecError, match=rf"Chip\.{field}: must be .*{message}"):
        dataclasses.replace(load_system("h100").chip, **{field: value})


def test_a_chip_peak_a_level_and_a_system_are_checked_too():
    s = load_system("h100")
    with pytest.raises(SpecError, match=r"Chip\.peak_flop_per_s\['bf16'\]: must be a finite number above 0"):
        dataclasses.replace(s.chip, peak_flop_per_s={"bf16": -1.0})
    with pytest.raises(SpecError, match=r"LinkLevel\.chips: must be an integer at least 1"):
        dataclasses.replace(s.levels[0], chips=0)
    with pytest.raises(SpecError, match=r"LinkLevel\.latency_s: must be a finite number at least 0"):
        dataclasses.replace(s.levels[0], latency_s=-1e-6)
    with pytest.raises(SpecError, match=r"System\.allin_power_w_per_chip: must be a finite number above 0"):
        dataclasses.replace(s, allin_power_w_per_chip=-1.0)
    # what a chip can have: MI300X's power-held clock, a free chip-hour, a zero-latency level
    assert dataclasses.replace(s.chip, dense_clock_ratio=0.84).dense_clock_ratio == 0.84
    assert dataclasses.replace(s, usd_per_chip_hour=0.0).usd_per_chip_hour == 0.0
    assert dataclasses.replace(s.levels[0], latency_s=0.0).latency_s == 0.0


# ---- explore: the at-floor rule and floor given through the API ---------------------------------------------------


def test_throughput_at_floor_refuses_an_unknown_rule_and_a_floor_that_is_not_one():
    import numpy as np

    from jalapeno.analysis.explore import throughput_at_floor

    x, y = np.array([50.0, 200.0]), np.array([1000.0, 250.0])
    # a typo was read as "interpolated": 500 (the log-log frontier at 100 between (50, 1000) and (200, 250))
    with pytest.raises(SpecError, match=r"at_floor: 'Point' is not one of interpolated, point"):
        throughput_at_floor(x, y, 100.0, "Point")
    for floor in (float("nan"), -5.0, float("inf")):  # NaN read as "no point reaches it"; -5 as the peak
        with pytest.raises(SpecError, match=r"min_interactivity: the floor must be a finite number"):
            throughput_at_floor(x, y, floor)
    assert throughput_at_floor(x, y, np.float64(0.0)) == 1000.0  # 0: the peak


# ---- the W4A16 form's band (audit / sensitivity band_source) -------------------------------------------------------


FORM = """[[form]]
system = "b200"
kernel = "mxint4"
peak_fraction = 0.33
half_rows = 53.7
hbm_fraction = 0.62
floor_s = 2.8e-05
"""


@pytest.mark.parametrize(
    "line",
    [
        "",
        "held_out_median_ape = -0.07",
        'held_out_median_ape = "0.07"',
        "held_out_median_ape = 7.6",
        "held_out_median_ape = nan",
    ],
)
def test_a_form_without_a_usable_band_error_is_refused(line):
    from jalapeno.specs.w4a16_moe import parse_w4a16_forms

    # the band's error is the audit's W4A16 band (w4a16_band): a missing one raised KeyError there, -0.07 swapped
    # the band's ends, 7.6 (a percentage) divided every fraction by 8.6
    with pytest.raises(SpecError, match=r"form b200/mxint4\.held_out_median_ape: must be the held-out median error"):
        parse_w4a16_forms(FORM + line + "\n", "forms.toml")
    assert parse_w4a16_forms(FORM + "held_out_median_ape = 0.076\n")[("b200", "mxint4")]["held_out_median_ape"] == 0.076
