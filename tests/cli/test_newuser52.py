"""Round 52 new-user fixes (newuser52): a hardware architect's variants of Jalapeño.

Expected values are worked by hand in each test's comments, not read off the code's printed text.
"""

from __future__ import annotations

import json

from cli_runner import run


def _variant(tmp_path, name: str, body: str):
    path = tmp_path / f"{name}.toml"
    path.write_text(f'base = "jalapeno"\nname = "{name}"\n{body}')
    return str(path)


def test_a_variant_file_stating_a_lower_tdp_gets_the_power_cap_note(capsys, tmp_path, monkeypatch):
    """A variant TOML with chip.tdp_w = 500 / chip.sustained_w = 400 kept Jalapeño's all-in 1,150 W per chip
    (its source still 'chip 700 W + ...') and its step times, with no word; the same keys given by --set got the
    power-cap note. The file's keys now get it too, naming the file. All-in stays 1.15 kW: the catalog's figure."""
    from jalapeno.cli import system_notes

    monkeypatch.setattr(system_notes, "_NOTED", set())
    path = _variant(tmp_path, "jal-500w", "chip.tdp_w = 500\nchip.sustained_w = 400\n")
    code, out, err = run(capsys, "hardware", "show", path, "--json")
    assert code == 0, err
    assert "jal-500w.toml: chip.tdp_w, chip.sustained_w changes only the power the chip and sustained" in err
    assert "there is no power-capping (DVFS) model" in err
    data = json.loads(out)
    assert data["chip"]["tdp_w"] == 500
    assert abs(data["allin_power_w_per_chip"] - 1150) < 1e-6  # the base's 1.15 kW, unchanged: what the note says


def test_a_variant_file_without_power_keys_gets_no_power_cap_note(capsys, tmp_path, monkeypatch):
    """A variant that changes only the HBM bandwidth states no power key: no power-cap note (its power follows its
    components instead, specs/power.follow_variant)."""
    from jalapeno.cli import system_notes

    monkeypatch.setattr(system_notes, "_NOTED", set())
    path = _variant(tmp_path, "jal-bw", "chip.hbm_bandwidth_tb_per_s = 20.5\n")
    code, out, err = run(capsys, "hardware", "show", path, "--json")
    assert code == 0, err
    assert "power-capping" not in err


SPACE = """name = "tdp-space"
base = "jalapeno"
trials = 1

[objective]
metrics = ["tok_s_per_kw"]
min_interactivity = 50
power = "all-in"

[[cases]]
model = "gpt-oss-120b"
workload = "8k1k"

[params."chip.tdp_w"]
low = 600
high = 900

[derived]
"chip.sustained_w" = "{chip.tdp_w} * 550 / 700"
"""


def test_an_explore_space_searching_the_tdp_gets_the_power_cap_note(capsys, tmp_path, monkeypatch):
    """A space searching chip.tdp_w 600-900 W ranked its designs on all-in tok/s/kW, which a stated TDP never
    reaches (all-in stays the base's 1,150 W), and on chip tok/s/kW with no DVFS slowdown, with no word. The note
    names the space file and both keys (the param and the derived sustained power). The search itself is stopped
    before any trial (a stub evaluator): only the note is under test."""
    import pytest

    pytest.importorskip("optuna")
    from jalapeno.analysis import explore as explore_mod
    from jalapeno.cli import system_notes
    from jalapeno.errors import SpecError

    def stop(space):
        raise SpecError("stub", "stopped before any trial", "none: a test stub")

    monkeypatch.setattr(system_notes, "_NOTED", set())
    monkeypatch.setattr(explore_mod, "make_evaluator", stop)
    space = tmp_path / "tdp.toml"
    space.write_text(SPACE)
    code, out, err = run(capsys, "explore", str(space), "--store", str(tmp_path / "store"))
    assert code != 0
    assert "stopped before any trial" in err
    assert f"note: {space}: chip.tdp_w, chip.sustained_w changes only the power the chip and sustained" in err


def test_sensitivity_moves_a_spec_across_the_band_its_file_states(capsys):
    """Jalapeño's file states its on-die link band: link_bandwidth_tb_per_s = {value = 1.1, low = 0.28, high = 4.4}
    (1/4x to 4x; `hardware show` quotes 'band 1/4x to 4x') and hop_latency_ns {value = 50, low = 20, high = 200}.
    sensitivity moved them by the generic estimate band instead: 1.1 x 0.8 = 0.88 to 1.1 x 1.2 = 1.32 TB/s and
    50 x 0.8 = 40 to 60 ns. Now the file's band: 0.28 to 4.4 and 20 to 200. A spec the file gives no band keeps
    the generic one: the rack latency 2 us x 0.5 = 1 to 2 x 2 = 4 us."""
    code, out, err = run(capsys, "sensitivity", "--system", "jalapeno", "--json")
    assert code == 0, err
    rows = {r["parameter"]: r for r in json.loads(out)["rows"]}
    link, hop, rack = rows["die.link_bandwidth_tb_per_s"], rows["die.hop_latency_ns"], rows["levels.rack.latency_us"]
    assert (link["low"], link["high"]) == (0.28, 4.4)
    assert (hop["low"], hop["high"]) == (20, 200)
    assert (rack["low"], rack["high"]) == (1.0, 4.0)
    assert "stated band" in link["band_source"] and "0.5-2x" in rack["band_source"]


def test_explore_base_line_says_max_interactivity_is_read_at_no_floor():
    """With metrics tok_s_per_kw and max_interactivity at a 50 tok/s/user floor, the base line read
    'max_interactivity 135.1 tok/s/user (the sweep's frontier interpolated at 50 tok/s/user; ...)': the fastest
    point (135.1 tok/s/user, read at no floor: analysis/explore.case_result takes the max over feasible points)
    seemed read at 50. It now says so beside its figure; a max_interactivity-only space names no floor at all."""
    from jalapeno.cli.explore_lines import base_lines

    out = {
        "base": "jalapeno",
        "metrics": ["tok_s_per_kw", "max_interactivity"],
        "objective": {"min_interactivity": 50, "power": "all-in"},
        "sweep": {"at_floor": "interpolated"},
        "base_metrics": [
            {"model": "deepseek-r1", "workload": "8k1k", "tok_s_per_kw": 2228.0, "max_interactivity": 135.1}
        ],
    }
    line = base_lines(out)[0]
    assert "max_interactivity 135.1 tok/s/user (the sweep's fastest point, at no floor)" in line
    assert line.endswith("(the sweep's frontier interpolated at 50 tok/s/user; power all-in)")
    only = base_lines({**out, "metrics": ["max_interactivity"]})[0]
    assert "interpolated at 50" not in only and only.endswith("at no floor) (power all-in)")


def test_explore_figures_are_never_in_exponent_form_from_a_thousand_up():
    """explore's base line wrote gpt-oss-120b's 48,706 tok/s per kW as '4.871e+04' (beside DeepSeek-R1's '2,228'),
    and its designs table a 12,334 TFLOP/s FP4 peak as '1.233e+04' beside a '1697' GB/s link. Whole numbers with
    separators from 1,000 up, as audit's tables; a kernel launch of 2.5e-07 s keeps its four digits."""
    from jalapeno.cli.explore_lines import base_lines, fig

    assert fig(48706.3) == "48,706"
    assert fig(12334.2) == "12,334"
    assert fig(1697.0) == "1,697"
    assert fig(135.1) == "135.1"
    assert fig(2.5e-07) == "2.5e-07"
    out = {
        "base": "jalapeno",
        "metrics": ["tok_s_per_kw"],
        "objective": {"min_interactivity": 50, "power": "all-in"},
        "sweep": {"at_floor": "interpolated"},
        "base_metrics": [{"model": "gpt-oss-120b", "workload": "8k1k", "tok_s_per_kw": 48706.3}],
    }
    assert "tok_s_per_kw 48,706 tok/s per kW (in+out)" in base_lines(out)[0]


def test_an_fp4_only_what_if_is_told_how_to_leave_fp8_out(capsys, tmp_path):
    """An FP4-only Jalapeño written as a variant with chip.peak_dense_tflops.fp8 = 0 was told only 'give
    chip.peak_dense_tflops.fp8 a positive value': no word that a chip without FP8 units leaves the key out, nor that
    a variant cannot drop its base's key. The fix names both and the way that works: Jalapeño's own file copied
    without its fp8 line, with calibration = "jalapeno". That file loads with no fp8 peak, the FP4 13.4 PFLOP/s
    (13,400 TFLOP/s x 1e12) and Jalapeño's calibrated GEMM fractions (the same as the catalog chip's)."""
    from pathlib import Path

    from cli_runner import check_error

    path = _variant(tmp_path, "jal-fp8zero", "chip.peak_dense_tflops.fp8 = 0\n")
    check_error(
        *run(capsys, "hardware", "show", path),
        "chip.peak_dense_tflops.fp8: must be positive, got 0",
        "leave fp8 out for a chip without fp8 units",
        "a variant or --set cannot drop a format its base states",
        'calibration = "<base>"',
    )
    shipped = Path(__file__).resolve().parents[2] / "src" / "jalapeno" / "data" / "systems" / "jalapeno.toml"
    lines = shipped.read_text().splitlines()
    assert sum(ln.startswith("peak_dense_tflops.fp8") for ln in lines) == 1
    text = "\n".join(
        'name = "jal-fp4only"\ncalibration = "jalapeno"' if ln == 'name = "jalapeno"' else ln
        for ln in lines
        if not ln.startswith("peak_dense_tflops.fp8")
    )
    own = tmp_path / "jal-fp4only.toml"
    own.write_text(text + "\n")
    code, out, err = run(capsys, "hardware", "show", str(own), "--json")
    assert code == 0, err
    chip = json.loads(out)["chip"]
    assert "fp8" not in chip["peak_flop_per_s"] and chip["peak_flop_per_s"]["fp4"] == 13400e12
    code, base, err = run(capsys, "hardware", "show", "jalapeno", "--json")
    assert json.loads(out)["efficiency"]["gemm"] == json.loads(base)["efficiency"]["gemm"]


def test_a_variant_file_stating_only_more_stacks_gets_the_stacks_only_note(capsys, tmp_path, monkeypatch):
    """A variant with chip.hbm_stacks = 8 alone was priced at six stacks' 15.4 TB/s and 216 GiB (only its power
    moved: two more stacks' background watts) with no word; --set chip.hbm_stacks=8 got the note. The file's key now
    gets it, naming the file and the figures that stay: 15.4 TB/s and 216 GiB (Jalapeño's file). With a bandwidth key
    beside it (here on the command line) the stacks do add something: no note."""
    from jalapeno.cli import system_notes

    monkeypatch.setattr(system_notes, "_NOTED", set())
    path = _variant(tmp_path, "jal-8stack", "chip.hbm_stacks = 8\n")
    code, out, err = run(capsys, "hardware", "show", path, "--json")
    assert code == 0, err
    assert "jal-8stack.toml: chip.hbm_stacks = 8 changes the stack count only" in err
    assert "stay 15.4 TB/s and 216 GiB" in err
    monkeypatch.setattr(system_notes, "_NOTED", set())
    code, out, err = run(capsys, "hardware", "show", path, "--set", "chip.hbm_bandwidth_tb_per_s=20.5", "--json")
    assert code == 0, err
    assert "stack count only" not in err
    monkeypatch.setattr(system_notes, "_NOTED", set())
    same = _variant(tmp_path, "jal-6stack", "chip.hbm_stacks = 6\n")  # Jalapeño's own count: nothing to say
    code, out, err = run(capsys, "hardware", "show", same, "--json")
    assert code == 0, err
    assert "stack count only" not in err


def test_a_variant_file_with_sourced_entries_still_loads_and_gets_the_notes(capsys, tmp_path, monkeypatch):
    """A variant's override may be a {value, source} table (a dict): the notes compare keys, not (key, value) pairs,
    which a dict cannot be hashed into. Stated TDP 500 W with its source: the power-cap note, and the file loads."""
    from jalapeno.cli import system_notes

    monkeypatch.setattr(system_notes, "_NOTED", set())
    body = 'chip.tdp_w = { value = 500, source = "my cap" }\nchip.sustained_w = 400\n'
    path = _variant(tmp_path, "jal-cap", body)
    code, out, err = run(capsys, "hardware", "show", path, "--set", 'chip.hbm_stacks={value = 6, source = "same"}')
    assert code == 0, err
    assert "jal-cap.toml: chip.tdp_w, chip.sustained_w changes only the power" in err


def test_readme_says_compare_sweeps_released_precisions_and_a_user_config_its_own(tmp_path):
    """README said compare, report and plan 'sweep every precision each chip runs natively (fp8 and fp4 on
    Blackwell)': a config.json of the architect's own with an FP8 quantization_config was swept at FP8 alone on
    GB300 (its 15 PFLOP/s FP4 never used), as it has no released FP4 checkpoint (data/engines.toml
    [checkpoints]); DeepSeek-R1 has both. The README now says so; the precisions are those compare sweeps."""
    from pathlib import Path

    from jalapeno.analysis.explore_full import compare_precisions
    from jalapeno.specs.catalog import load_model, load_system

    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().replace("#", " ").split())
    assert "every precision each chip runs natively (fp8 and fp4 on Blackwell)" not in readme
    assert "a config.json of your own: its own precision alone, -p names another" in readme
    gb300 = load_system("gb300-nvl72")
    assert set(compare_precisions(load_model("deepseek-r1"), gb300, None)) == {"fp8", "fp4"}
    cfg = {
        "architectures": ["MixtralForCausalLM"],
        "model_type": "mixtral",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "vocab_size": 32000,
        "max_position_embeddings": 32768,
        "torch_dtype": "bfloat16",
        "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
    }
    (tmp_path / "my-moe").mkdir()
    (tmp_path / "my-moe" / "config.json").write_text(json.dumps(cfg))
    own = load_model(str(tmp_path / "my-moe" / "config.json"))
    assert compare_precisions(own, gb300, None) == (own.default_precision,)
    assert own.default_precision.startswith("fp8")


def test_a_rack_faster_than_the_ports_it_shares_is_said_to_cost_no_watts(capsys, monkeypatch):
    """Jalapeño's rack is reached through the tray's ~600 GB/s ports (levels.rack.shares_ports_with_inner). --set
    levels.rack.bandwidth_gb_per_s=1200 priced a 1,200 GB/s rack at the 700 W TDP (the link power counts the tray's
    own ports only), where the tray at 1,200 costs 748 W: 2 x 600 GB/s more x 8 bit x 5 pJ/bit = 48 W. The note says
    so and names the fix (with a --set value that parses: 1200, not 1,200); rack and tray set together: no note."""
    from jalapeno.cli import system_notes

    monkeypatch.setattr(system_notes, "_NOTED", set())
    code, out, err = run(
        capsys, "hardware", "show", "jalapeno", "--set", "levels.rack.bandwidth_gb_per_s=1200", "--json"
    )
    assert code == 0, err
    assert "levels.rack.bandwidth_gb_per_s 1,200 is above levels.tray's 600" in err
    assert "costs no watts; set levels.tray.bandwidth_gb_per_s=1200 too" in err
    assert json.loads(out)["chip"]["tdp_w"] == 700  # the note's point: no watts for the faster rack
    monkeypatch.setattr(system_notes, "_NOTED", set())
    both = ("--set", "levels.rack.bandwidth_gb_per_s=1200", "--set", "levels.tray.bandwidth_gb_per_s=1200")
    code, out, err = run(capsys, "hardware", "show", "jalapeno", *both, "--json")
    assert code == 0, err
    assert "costs no watts" not in err
    assert abs(json.loads(out)["chip"]["tdp_w"] - 748) < 0.5  # 700 + 2 x 600e9 x 8 x 5e-12 = 748 W
    # a faster level on ports of its own costs its watts and gets no note (review52: the note had no case where
    # shares_ports_with_inner is false): Jalapeño's global torus at 1,200 GB/s a chip, above the rack's 600, adds
    # 2 x (1,200 - 200) GB/s x 8 bit x 5 pJ/bit = 80 W: 780 W
    monkeypatch.setattr(system_notes, "_NOTED", set())
    code, out, err = run(
        capsys, "hardware", "show", "jalapeno", "--set", "levels.global.bandwidth_gb_per_s=1200", "--json"
    )
    assert code == 0, err
    assert "costs no watts" not in err
    assert abs(json.loads(out)["chip"]["tdp_w"] - 780) < 0.5
