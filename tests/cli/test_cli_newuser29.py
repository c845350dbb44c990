"""Round 29 new-user pass and break-it (newuser29): what a capacity planner typed and what it did."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runner import error_line, run, run_captured

PLAN_GB300 = ("plan", "--system", "gb300-nvl72", "--target", "5e5", "--min-interactivity", "50")
PLAN_JALAPENO = ("plan", "--system", "jalapeno", "--target", "5e5", "--min-interactivity", "50")


@pytest.fixture(scope="module")
def plan_gb300():
    """(exit code, stdout, stderr) of PLAN_GB300, run once for the two tests that read its text."""
    return run_captured(*PLAN_GB300)


@pytest.fixture(scope="module")
def plan_jalapeno():
    """(exit code, stdout, stderr) of PLAN_JALAPENO, run once for the two tests that read its text."""
    return run_captured(*PLAN_JALAPENO)


def test_plan_states_the_mean_lengths_its_rates_count(plan_gb300):
    """`plan -w 8k1k` printed 'ISL 8192 / OSL 1024' and rates that count InferenceX's mean lengths
    (uniform in [0.8·L, L]: 7,372.8 / 921.6): a planner multiplying users by 1,024 tokens was 11% off."""
    code, out, _ = plan_gb300
    assert code == 0
    # by hand: (1 + 0.8) / 2 x 8192 = 7,372.8, (1 + 0.8) / 2 x 1024 = 921.6
    assert ("lengths: uniform in [0.8·L, L] (InferenceX --random-range-ratio 0.8): mean ISL 7,373 / OSL 921.6 "
            "tokens per request") in out


def test_plan_with_fixed_lengths_says_so(capsys):
    code, out, _ = run(capsys, "plan", "--system", "gb300-nvl72", "--target", "5e5", "--isl", "1000", "--osl", "100")
    assert code == 0, out
    assert "lengths:" in out


def test_plan_says_how_many_users_it_serves_and_the_target_for_n_users(capsys, plan_gb300):
    """The planner's question is 'N users at >= 50 tok/s/user'; plan took only a token rate and never
    said how many users its fleet holds. Its users line must agree with Little's law on its own point:
    users per instance = concurrency, one user's output rate = mean OSL / E2E = instance rate / users."""
    code, out, _ = run(capsys, *PLAN_GB300, "--json")
    assert code == 0
    d = json.loads(out)
    p = d["point"]
    assert d["users_per_instance"] == p["concurrency"]
    assert d["users"] == p["concurrency"] * d["instances"]
    assert abs(d["output_tok_per_s_per_user"] - 921.6 / p["e2e_s"]) < 1e-6 * d["output_tok_per_s_per_user"]
    assert d["mean_osl"] == 921.6 and abs(d["mean_isl"] - 7372.8) < 1e-9
    # below the speed while decoding (TTFT counts in a request's time)
    assert d["output_tok_per_s_per_user"] < p["interactivity"]
    code, out, _ = plan_gb300
    m = re.search(r"users: ([\d,.]+) concurrent per instance .* x (\d+) = ([\d,]+); one user averages ([\d.]+) "
                  r"output tok/s .* so N users need --target N x ([\d.]+) --target-kind output", out.replace("\n", " "))
    assert m, out
    assert m.group(4) == m.group(5) == f"{d['output_tok_per_s_per_user']:.1f}"


def test_plan_prints_chips_per_instance_with_separators(plan_jalapeno):
    """'(1310 chips per instance)' and 'whole instances of 1310' beside '1,310 chips' in the same plan."""
    code, out, _ = plan_jalapeno
    assert code == 0
    assert not re.search(r"\b\d{4,} chips per instance|whole instances of \d{4,}", out), out
    assert re.search(r"\(\d{1,3}(,\d{3})* chips per instance\)", out)


def _qwen(tmp_path, name, **fields):
    base = json.loads((Path(__file__).resolve().parents[2] / "src/jalapeno/data/models/qwen3-32b.json").read_text())
    base.update(fields)
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(base))
    return str(p)


@pytest.mark.parametrize(("qc", "msg"), [
    ({"quant_method": "gptq", "bits": "4", "group_size": 128},
     "quantization_config.bits: must be a whole number of bits, got \"4\". Fix: write \"bits\": 4 (a whole number: not "
     "a string, no decimal point)"),
    ({"quant_method": "awq", "w_bit": 4.0},
     "quantization_config.w_bit: must be a whole number of bits, got 4.0. Fix: write \"w_bit\": 4 (a whole number: "
     "not a string, no decimal point)"),
    ({"quant_method": "awq", "w_bit": 8},  # review29: named 'bits', a key this file does not have
     "quantization_config.w_bit: awq with 8-bit weights is not modelled (4-bit only)."),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "load_in_8bit": True},
     "quantization_config.load_in_4bit: and load_in_8bit are both true: a checkpoint is one or the other. Fix: keep "
     "the one the checkpoint was saved with (only load_in_4bit is modelled)"),
    ({"quant_method": "bitsandbytes", "load_in_4bit": "false"},
     "quantization_config.load_in_4bit: must be true or false, got \"false\". Fix: write \"load_in_4bit\": true or false"),
    ({"quant_method": "bitsandbytes"},
     "quantization_config.load_in_4bit: a bitsandbytes quantization_config with neither load_in_4bit nor load_in_8bit "
     "true names no storage. Fix: set \"load_in_4bit\": true for a 4-bit (NF4/FP4) checkpoint, or remove "
     "quantization_config for 16-bit weights"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g0": {"weights": {"type": "float"}}}},
     "quantization_config.config_groups.weights.num_bits: is missing, so the weights' storage is unknown."),
    ({"quant_method": "compressed-tensors", "config_groups": {"g0": {"weights": {"num_bits": 8}}}},
     "quantization_config.config_groups.weights.type: is missing, so the weights' storage is unknown."),
])
def test_odd_quantization_configs_name_the_field(capsys, tmp_path, qc, msg):
    """gptq bits "4" printed 'gptq with 4-bit weights is not modelled (4-bit only)'; bitsandbytes with both
    flags true ran as 4-bit, "false" (a string, truthy) as 4-bit, neither flag blamed load_in_8bit;
    compressed-tensors without num_bits printed 'float None-bit weights are not modelled'."""
    path = _qwen(tmp_path, "q", quantization_config=qc)
    line = error_line(*run(capsys, "models", "show", path))
    assert line.startswith(f"error: {path}: {msg}"), line


def test_a_yarn_rope_scaling_extends_the_context_as_vllm_does(capsys, tmp_path):
    """Qwen3's model card's long-context recipe adds rope_scaling yarn factor 4 over 32,768 tokens to its
    config.json; vLLM then serves 32,768 x 4 = 131,072 tokens (_get_and_verify_max_len). jalapeno read
    only max_position_embeddings (40,960) and refused `-w 64k1k` on the planner's own config."""
    path = _qwen(tmp_path, "qy", rope_scaling={"rope_type": "yarn", "factor": 4.0,
                                                "original_max_position_embeddings": 32768})
    code, out, _ = run(capsys, "models", "show", path, "--json")
    assert code == 0
    d = json.loads(out)
    assert d["max_context"] == 32768 * 4
    assert d["max_context_from"] == "rope_scaling yarn: original_max_position_embeddings 32,768 x factor 4"
    code, out, err = run(capsys, "step", "--system", "h200", "--model", path, "--tp", "8", "--batch", "1",
                         "--context", str(64 * 1024 + 1024))
    assert code == 0, err
    line = error_line(*run(capsys, "step", "--system", "h200", "--model", path, "--tp", "8", "--batch", "1",
                           "--context", "131073"))
    assert "context of 131072 tokens (rope_scaling yarn: original_max_position_embeddings 32,768 x factor 4)" in line


@pytest.mark.parametrize(("name", "tokens"), [("deepseek-r1", 163840), ("gpt-oss-120b", 131072),
                                              ("kimi-k2.5", 262144), ("llama-3.1-405b", 131072)])
def test_shipped_rope_scalings_give_their_stated_context(capsys, name, tokens):
    """Every shipped config's yarn (original x factor: 4,096 x 40 / 32 / 64) or llama3 scaling gives its
    max_position_embeddings, so no shipped figure moves and the messages keep naming that field."""
    code, out, _ = run(capsys, "models", "show", name, "--json")
    d = json.loads(out)
    assert d["max_context"] == tokens and "max_context_from" not in d


@pytest.mark.parametrize(("rs", "msg"), [
    ("yarn", "rope_scaling: must be an object or null, got 'yarn'."),
    ({"factor": 4}, "rope_scaling.rope_type: is missing or not a name (got None)"),
    ({"rope_type": "wibble", "factor": 4}, "rope_scaling.rope_type: unknown type 'wibble'"),
    ({"rope_type": "yarn", "factor": -4, "original_max_position_embeddings": 4096},
     "rope_scaling.factor: must be a positive number, got -4."),
    ({"rope_type": "linear", "factor": "2"}, "rope_scaling.factor: must be a positive number, got '2'."),
    ({"rope_type": "yarn", "factor": 4.0}, "rope_scaling.original_max_position_embeddings: must be a positive "
     "integer for yarn scaling, got None."),
])
def test_a_malformed_rope_scaling_is_refused(capsys, tmp_path, rs, msg):
    """rope_scaling was never read: 'yarn' as a string, a negative or string factor, no type all ran."""
    path = _qwen(tmp_path, "qr", rope_scaling=rs)
    line = error_line(*run(capsys, "models", "show", path))
    assert line.startswith(f"error: {path}: {msg}"), line


@pytest.mark.parametrize("args", [
    ("compare", "--systems", "jalapeno,gb300-nvl72", "--html", ""),
    ("frontier", "--system", "jalapeno"),
    ("compare", "--systems", "jalapeno,gb300-nvl72", "-w", "agentic:coding-agent", "--html", ""),
])
def test_a_sliced_chip_run_says_so(capsys, args):
    """compare --chip-model sliced printed the same tables as flat with other figures (Jalapeño's peak
    14,610 -> 13,368 tok/s/chip) and no word of the chip model or the placement each system used."""
    code, out, _ = run(capsys, *args, "--chip-model", "sliced")
    assert code == 0
    # jalapeno.toml [die]: 6 slices, local_first (its own placement); gb300: 2 dies, striped (a GPU's)
    assert "chip model: sliced (jalapeno 6 slices, local_first" in out.replace("\n", " ")
    code, out, _ = run(capsys, *args)
    assert "chip model:" not in out


def test_a_user_file_named_like_a_catalog_system_gets_neither_its_band_nor_its_recipe(capsys, tmp_path):
    """`base = "b200"; name = "gb300-nvl72"` printed B200's figures as gb300-nvl72 with GB300's measured
    band (15,874 tok/s/chip, band 14,364-18,103: GB300's p10/p90 factors 0.905/1.140 on B200's peak), with
    no word. Now: one note naming the clash, no band (a user file is not what validate measured), and
    --as-deployed does not deploy it with the catalog system's engine recipe."""
    from jalapeno.analysis.measured_bands import band_of
    from jalapeno.cli.as_deployed import deployed_recipes
    from jalapeno.cost.pricer import load_pricer

    f = tmp_path / "mine.toml"
    f.write_text('base = "b200"\nname = "gb300-nvl72"\n')
    pr = load_pricer(str(f))
    assert pr.system.name == "gb300-nvl72"
    assert band_of(pr) is None
    assert band_of(load_pricer("gb300-nvl72")) is not None  # the catalog system keeps its own
    assert deployed_recipes([pr], "deepseek-r1", "8k1k", None, None, None) == {}
    assert deployed_recipes([load_pricer("b200")], "deepseek-r1", "8k1k", None, None, None)  # b200 has one
    code, out, err = run(capsys, "plan", "--system", str(f), "--target", "1e6")
    assert code == 0
    notes = [ln for ln in err.splitlines() if "a catalog system's name" in ln]
    assert len(notes) == 1 and "names itself 'gb300-nvl72'" in notes[0] and "own name" in notes[0]
    code, out, err = run(capsys, "plan", "--system", "gb300-nvl72", "--target", "1e6")
    assert "a catalog system's name" not in err


@pytest.mark.parametrize(("args", "fix"), [
    (("--set", "chip.tdp_w=550W"), "Fix: write a number without its unit (the key's name gives the unit), e.g. "
                                   "--set chip.tdp_w=550"),
    (("--set", "chip.hbm_bandwidth_tb_per_s=8 TB/s"), "e.g. --set chip.hbm_bandwidth_tb_per_s=8"),
])
def test_a_number_typed_with_its_unit_gets_its_own_number_back(capsys, args, fix):
    """--set chip.tdp_w=550W answered 'write a number, e.g. --set chip.tdp_w=4.8' (4.8 W)."""
    line = error_line(*run(capsys, "plan", "--system", "jalapeno", "--target", "1e6", *args))
    assert line.endswith(fix), line


def test_a_unit_in_a_system_file_gets_its_own_number_back(capsys, tmp_path):
    f = tmp_path / "u.toml"
    f.write_text('base = "jalapeno"\nname = "u"\nchip.tdp_w = "550 W"\n')
    line = error_line(*run(capsys, "plan", "--system", str(f), "--target", "1e6"))
    assert line.endswith("chip.tdp_w: must be a number, got '550 W'. Fix: write a number without its unit (the "
                         "key's name gives the unit), e.g. chip.tdp_w = 550"), line


@pytest.mark.parametrize(("kind", "fix"), [
    ("system", 'this is JSON (TOML is read here): write it as TOML, e.g. base = "jalapeno"'),
    ("agentic", "this is JSON (TOML is read here): write it as TOML, e.g. turns = 40 (docs/agentic.md)"),
])
def test_a_json_file_where_toml_is_read_is_named(capsys, tmp_path, kind, fix):
    """--system my.json (JSON) answered 'malformed TOML: Invalid statement ... Fix: fix the TOML syntax'."""
    f = tmp_path / "my.json"
    f.write_text('{"base": "jalapeno", "name": "j"}' if kind == "system" else '{"turns": 4}')
    args = (("plan", "--system", str(f), "--target", "1e6") if kind == "system" else
            ("compare", "-w", f"agentic:{f}", "--html", ""))
    line = error_line(*run(capsys, *args))
    assert "malformed TOML" in line and f"Fix: {fix}" in line, line


def test_plan_says_how_sure_and_its_audit_command_prices_the_same_point(capsys, plan_jalapeno):
    """plan printed one calibrated figure with no word of its uncertainty; a planner who then ran audit
    at the same speed got DeepSeek-R1's released FP8 (6,562 tok/s/chip) where plan had run FP4 (11,496).
    The 'how sure' line names the audit command with the plan's precision; that audit predicts the
    plan's own point (in+out tok/s/chip) and prints it with separators as plan does."""
    code, out, _ = run(capsys, *PLAN_JALAPENO, "--json")
    p = json.loads(out)["point"]
    code, out, _ = plan_jalapeno
    m = re.search(r"how sure: .*`jalapeno (audit [^`]*)--claim throughput_per_chip@([\d.]+)=\d+`", out.replace("\n", " "))
    assert m, out
    assert "-p fp4" in m.group(1) and "-w 8k1k" in m.group(1)
    args = m.group(1).split()
    code, out, _ = run(capsys, *args, "--claim", f"throughput_per_chip@{m.group(2)}=1e4", "--json")
    assert code == 0
    d = json.loads(out)
    assert abs(d["predicted"]["value"] / p["throughput_per_chip"] - 1) < 0.01, (d["predicted"], p["throughput_per_chip"])
    code, out, _ = run(capsys, *args, "--claim", f"throughput_per_chip@{m.group(2)}=1e4")
    # with separators, as plan prints (not '1.15e+04'); since plan49 the plan leads with its fewest-chips point, which
    # the audit at its speed prices within 1% (above: the frontier's best there), so the check is the audit's own figure
    assert f"{d['predicted']['value']:,.0f} tok/s/chip" in out


AGENT = "turns = 40\nsystem_prompt_tokens = 8000\ntool_output_tokens = 2000\nreply_tokens = 500\nthink_s = 2\n"


@pytest.mark.parametrize(("extra", "msg"), [
    ('name = ""', "name: is empty (''). Fix: write name = \"a\", or leave it out for the file's name"),
    ('name = "  "', "name: is empty ('  ')."),
])
def test_an_agentic_file_with_an_empty_name_is_refused(capsys, tmp_path, extra, msg):
    """name = "" ran, and every table was titled 'agentic: (40 turns, ...)' with no name."""
    f = tmp_path / "a.toml"
    f.write_text(AGENT + extra + "\n")
    line = error_line(*run(capsys, "compare", "-w", f"agentic:{f}", "--systems", "jalapeno", "--html", ""))
    assert line.startswith(f"error: a.toml: {msg}"), line


def test_an_agentic_boolean_prints_as_toml_writes_it(capsys, tmp_path):
    """turns = true printed 'got True' (Python's spelling) in a TOML file's error."""
    f = tmp_path / "b.toml"
    f.write_text(AGENT.replace("turns = 40", "turns = true"))
    line = error_line(*run(capsys, "compare", "-w", f"agentic:{f}", "--systems", "jalapeno", "--html", ""))
    assert line == "error: b.toml: turns: must be a whole number, got true. Fix: write e.g. turns = 40", line


@pytest.mark.parametrize(("cmd", "opt", "value", "want"), [
    ("audit", "--claim", "tok_s_per_chip@50=100", "throughput_per_chip"),
    ("audit", "--claim", "peak_tok_s_per_chip=100", "peak_throughput_per_chip"),
    ("sensitivity", "--metric", "max_interactivty", "max_interactivity"),
])
def test_a_near_miss_metric_name_gets_a_hint(capsys, cmd, opt, value, want):
    """compare's columns say tok/s/chip; audit --claim tok_s_per_chip@50=... listed every metric without
    saying which one was meant."""
    line = error_line(*run(capsys, cmd, "--system", "jalapeno", opt, value))
    assert f"(did you mean {want}?)" in line, line


@pytest.mark.parametrize(("args", "fix"), [
    (("--set", "chip.tdp_w=1.2kW"), "Fix: write the number in the unit the key's name gives (chip.tdp_w), without a "
                                    "unit: 'kW' is not it, so convert first, e.g. --set chip.tdp_w=<number>"),
    (("--set", "chip.hbm_bandwidth_tb_per_s=8000 GB/s"), "'GB/s' is not it, so convert first, e.g. "
                                                         "--set chip.hbm_bandwidth_tb_per_s=<number>"),
])
def test_a_number_in_another_unit_is_not_handed_back_as_the_keys(capsys, args, fix):
    """review29: --set chip.tdp_w=1.2kW answered 'e.g. --set chip.tdp_w=1.2' — 1.2 W, a thousandth of what was meant;
    the typed number is the key's only when the typed unit is the one its name ends with (W for tdp_w)."""
    line = error_line(*run(capsys, "plan", "--system", "jalapeno", "--target", "1e6", *args))
    assert line.endswith(fix), line
