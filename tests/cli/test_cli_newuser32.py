"""Round 32 new-user pass and break-it (newuser32): a capacity planner's questions, then hostile input."""

from __future__ import annotations

import re

from cli_runner import error_line, run

SIM = ("simulate", "-s", "gb200-nvl72", "--dp", "8", "--ep", "8")
ROWS = "arrival_s,input_tokens,output_tokens\n0,1000,10\n0.5,2000,20\n"


def test_simulate_reads_a_trace_whose_suffix_is_upper_case(capsys, tmp_path, monkeypatch):
    """simulate --workload TR.CSV was sent to the presets, whose error told simulate's user to run simulate."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "TR.CSV").write_text(ROWS)
    code, out, err = run(capsys, *SIM, "--workload", "TR.CSV")
    assert code == 0, err
    assert "only simulate replays" not in out + err
    # both of the file's requests replayed (review34: exit 0 alone did not show the trace was read)
    assert re.search(r"requests \(counted\)\s*│\s*2\s", out), out


def test_simulate_names_the_suffix_of_a_trace_it_does_not_read(capsys, tmp_path, monkeypatch):
    """An existing trace.tsv got 'unknown workload' and the preset list, as if the file were not there."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trace.tsv").write_text(ROWS)
    line = error_line(*run(capsys, *SIM, "--workload", "trace.tsv"))
    assert line == "error: --workload trace.tsv: unknown trace format '.tsv'. Fix: use .csv or .jsonl"


def test_a_preset_name_beats_a_file_of_that_name(capsys, tmp_path, monkeypatch):
    """A stray file called 8k1k in the working folder must not turn the preset into a trace."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "8k1k").write_text("")
    code, out, err = run(capsys, *SIM, "--workload", "8k1k", "-c", "4", "--requests", "8")
    assert code == 0, err


def test_a_json_array_trace_is_told_to_be_json_lines(capsys, tmp_path):
    """json.dump of a list of requests was refused as 'line 1: not a JSON object' (pretty-printed: malformed JSON
    at '[')."""
    for text in ('[{"arrival_s": 0, "input_tokens": 100, "output_tokens": 10}]',
                 '[\n  {"arrival_s": 0, "input_tokens": 100, "output_tokens": 10}\n]\n'):
        p = tmp_path / "trace.json"
        p.write_text(text)
        line = error_line(*run(capsys, *SIM, "--workload", str(p)))
        assert line.endswith("trace.json: is one JSON array, not JSON Lines (one request object per line). "
                             "Fix: write one JSON object per line, e.g. jq -c '.[]' FILE > trace.jsonl")


def test_a_fixed_length_command_given_a_file_says_it_is_a_file(capsys, tmp_path, monkeypatch):
    """compare/predict --workload lengths.txt (a file that exists) said 'unknown workload' as for a typo."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lengths.txt").write_text("8192 1024\n")
    line = error_line(*run(capsys, "frontier", "-s", "b200", "-m", "gpt-oss-120b", "-w", "lengths.txt"))
    assert "'lengths.txt' is a file, not a workload preset: only simulate reads a file" in line
    assert "Fix: for a trace run `jalapeno simulate --workload FILE.csv`; here give one of 1k1k" in line


def test_simulate_writes_an_upper_case_csv_it_accepted(capsys, tmp_path):
    """--out S.CSV passed the suffix check before the run and was refused after it ('unknown file type')."""
    out_path = tmp_path / "S.CSV"
    code, out, err = run(capsys, *SIM, "-c", "4", "--requests", "8", "--out", str(out_path))
    assert code == 0, err
    assert out_path.read_text().splitlines()[0].count(",") >= 2  # a CSV header, comma-separated


def _copy_of(name: str, dest) -> None:
    from pathlib import Path

    import jalapeno

    src = (Path(jalapeno.__file__).parent / "data" / "systems" / f"{name}.toml").read_text()
    dest.write_text(src.replace(f'name = "{name}"', f'name = "my-{name}"', 1))


def test_a_system_file_with_an_upper_case_suffix_is_read(capsys, tmp_path, monkeypatch):
    """hardware show MYCHIP.TOML was 'a file but not a catalog system' (agentic:A.TOML and X.CSV were read)."""
    monkeypatch.chdir(tmp_path)
    _copy_of("b200", tmp_path / "MYCHIP.TOML")
    code, out, err = run(capsys, "hardware", "show", "MYCHIP.TOML")
    assert code == 0, err
    assert "my-b200" in out


def test_hardware_show_says_a_standalone_file_gets_the_spec_set(capsys, tmp_path):
    """A copy of b200.toml printed 'efficiency: jalapeno defaults (docs/model.md)', read as the Jalapeño chip's
    defaults, with no word that the copy dropped B200's calibrated set or how to keep it."""
    p = tmp_path / "mine.toml"
    _copy_of("b200", p)
    code, out, err = run(capsys, "hardware", "show", str(p))
    text = " ".join(out.split())
    assert code == 0, err
    assert ("efficiency: jalapeno defaults (docs/model.md) — the spec set: the package's documented defaults, not "
            "fitted on this chip; a system file of its own gets no calibrated set: write base = \"NAME\"") in text
    assert "ssd: 3,456 GB/chip over pcie" in text  # 8 x 3.84 TB drives x 0.9 usable / 8 GPUs (docs/agentic.md)
    code, out, err = run(capsys, "hardware", "show", "h200", "--efficiency", "spec")
    text = " ".join(out.split())
    assert "not fitted on this chip" in text and "system file of its own" not in text
    code, out, err = run(capsys, "hardware", "show", "b200")
    assert "not fitted on this chip" not in out


def test_predict_prints_a_wide_deployment_figures_without_rounding_them_away(capsys):
    """-c 4 on 100 prefill and 100 decode workers printed 'decode batch per instance 0.0', 'chips 1200' and
    'tok/s per kW 1'."""
    code, out, err = run(capsys, "predict", "-s", "gb200-nvl72", "-c", "4", "--prefill", "tp=4,workers=100",
                         "--decode", "dp=8,ep=8,workers=100")
    assert code == 0, err
    cells = {m[1].strip(): m[2].strip() for m in re.finditer(r"^\W*([A-Za-z/ ()+]+?)\s*[│|]\s*(\S+)", out, re.M)}
    assert cells["chips"] == "1,200"  # 100 x TP4 + 100 x DP8 = 400 + 800
    # 4 requests over 100 decode instances: under 0.04 in a batch each, shown to two figures
    assert re.fullmatch(r"0\.0[1-4]\d?", cells["decode batch per instance"]), cells["decode batch per instance"]
    assert re.fullmatch(r"\d\.\d", cells["tok/s per kW (in+out)"]), cells["tok/s per kW (in+out)"]


def test_plan_without_a_speed_floor_says_it_sized_the_batch_point(capsys):
    """plan --target 1e6 (no --min-interactivity) sized 552 GB200 chips at 7.5 tok/s/user, 2 minutes a request,
    with only 'at >= 0 tok/s/user' in its title to say so."""
    args = ("plan", "-s", "gb200-nvl72", "-m", "deepseek-r1", "--target", "1e6")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    text = " ".join(out.split())
    m = re.search(r"no per-user speed floor: this is the batch \(peak-throughput\) point, ([\d.]+) tok/s/user, "
                  r"([\d,]+) s per request end to end; for an interactive service give its floor", text)
    assert m, text
    # closed loop: a request's E2E is at least its mean output length over the per-user speed (921.6 tokens:
    # OSL 1,024 uniform in [0.8, 1] -> mean 0.9 x 1,024)
    assert float(m[2].replace(",", "")) >= 921.6 / float(m[1]) * 0.99
    code, out, err = run(capsys, *args, "--min-interactivity", "50")
    assert code == 0 and "no per-user speed floor" not in out


def test_set_hbm_stacks_alone_says_bandwidth_and_capacity_stay(capsys):
    """compare --set chip.hbm_stacks=8 read as 'eight stacks of HBM' and printed Jalapeño's six-stack bandwidth
    and capacity figures with no word (README: an override changes only the key it names)."""
    from jalapeno.cli import system_notes

    system_notes._NOTED.discard("stacks-only")
    code, out, err = run(capsys, "step", "-s", "jalapeno", "--dp", "8", "--ep", "8", "--batch", "4",
                         "--set", "chip.hbm_stacks=8")
    assert code == 0, err
    text = " ".join(err.split())
    # jalapeno.toml: 15.4 TB/s and 216 GiB (6 x 36 GiB), the catalog's figures
    assert ("note: --set chip.hbm_stacks changes the stack count only (the chip's power follows it; its cost follows the capacity); the "
            "HBM bandwidth and capacity priced stay 15.4 TB/s and 216 GiB") in text
    system_notes._NOTED.discard("stacks-only")
    code, out, err = run(capsys, "step", "-s", "jalapeno", "--dp", "8", "--ep", "8", "--batch", "4",
                         "--set", "chip.hbm_stacks=8", "--set", "chip.hbm_bandwidth_tb_per_s=20.5")
    assert code == 0 and "stack count only" not in err


def test_the_estimated_peak_note_names_a_system_hardware_show_reads(capsys):
    """The BF16-estimate note of a --set variant said `jalapeno hardware show jalapeno+chip.hbm_stacks=8`, which
    hardware show refuses as an unknown system."""
    code, out, err = run(capsys, "compare", "-s", "jalapeno", "-m", "kimi-k2.5", "--set", "chip.hbm_stacks=8")
    assert code == 0, err
    text = " ".join((out + err).split())
    assert "the whole source: `jalapeno hardware show jalapeno`)" in text
    assert "hardware show jalapeno+" not in text


def test_a_variants_cost_that_follows_an_estimate_stays_an_estimate(capsys):
    """plan --set chip.hbm_stacks=8 on Jalapeño (no published price: cost.usd_per_chip_hour is an estimate) printed
    its $/chip-hour bare, as if a price, because the followed cost's source lost the '(estimate)' mark; and the
    note it gives for a catalog system named `hardware show jalapeno+chip.hbm_stacks=8`, which is no name."""
    code, out, err = run(capsys, "plan", "-s", "jalapeno", "-m", "deepseek-r1", "--target", "1e6",
                         "--min-interactivity", "50", "--set", "chip.hbm_stacks=8")
    assert code == 0, err
    text = " ".join(out.split())
    # the variant's cost source is specs/power.follow_variant's '+ HBM capex ...' over Jalapeno's estimate (mend45b)
    assert "(an estimate: the base's estimated price + HBM capex " in text
    # the pointer is a command hardware show runs, with the run's --set carried (mend54), never the variant's name
    assert "$/kWh; `jalapeno hardware show jalapeno --set chip.hbm_stacks=8`, cost.usd_per_chip_hour)" in text
    assert "hardware show jalapeno+" not in text


def test_a_power_of_two_with_a_thousands_comma_is_named(capsys):
    """review32: a list option given `16,384` ran 16 and 384 without a word (only groups opening with 0 were
    caught); a list that reads as one power of two >= 1,024 now says both readings. 65536 = 2**16."""
    code, out, err = run(capsys, "collective", "-s", "h200", "--bytes", "65,536")
    assert code == 0, err
    assert "note: --bytes 65,536 runs the values 65, 536; for 65536 write --bytes 65536" in err
    code, out, err = run(capsys, "collective", "-s", "h200", "--bytes", "64,128")
    assert code == 0, err
    assert "note: --bytes" not in err  # 64128 is no power of two: a plain list


def test_results_show_top_zero_is_refused(capsys):
    """newuser32: `results show --top 0` printed 'the first 0 points'."""
    code, out, err = run(capsys, "results", "show", "anything", "--top", "0")
    assert code != 0
    assert error_line(code, out, err) == ("error: --top: must be at least 1, got '0'. "
                                          "Fix: see `jalapeno results show --help`")


def test_a_usable_fraction_just_above_one_gets_no_percent_hint():
    """review32: usable_fraction 1.2 was told to 'write 0.012 for 1.2%'; 75 still is told 0.75."""
    import pytest
    from pydantic import ValidationError

    from jalapeno.specs.kv_tiers import TierFile

    src = {"value": 1.0, "source": "assumption: test"}
    with pytest.raises(ValidationError) as e:
        TierFile(link="pcie", capacity_gb_per_chip=src, usable_fraction={"value": 1.2, "source": "assumption: test"}, bandwidth_gb_per_s=src,
                 latency_us=src)
    assert "usable_fraction must be <= 1 (a share of the tier's capacity), got 1.2" in str(e.value)
    assert "write 0.012" not in str(e.value)
    with pytest.raises(ValidationError) as e:
        TierFile(link="pcie", capacity_gb_per_chip=src, usable_fraction={"value": 75, "source": "assumption: test"}, bandwidth_gb_per_s=src,
                 latency_us=src)
    assert "write 0.75 for 75%" in str(e.value)


def _space_with(tmp_path, old: str, new: str):
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "examples" / "explore_700w.toml").read_text()
    assert old in text
    p = tmp_path / "space.toml"
    p.write_text(text.replace(old, new))
    return p


def test_a_non_positive_constraint_limit_is_named(capsys, tmp_path):
    """newuser32: 'constraint limits must be positive' did not say which of the space's constraints."""
    p = _space_with(tmp_path, "hbm_stacks = 8", "hbm_stacks = 0")
    code, out, err = run(capsys, "explore", str(p), "--trials", "1", "--store", str(tmp_path / "store"))
    assert code != 0
    assert "constraint limits must be positive: hbm_stacks = 0" in err
    assert not (tmp_path / "store").exists()


def test_explore_reads_the_space_before_asking_for_optuna(capsys, tmp_path, monkeypatch):
    """newuser32: without the [explore] extra a broken design-space file was met with 'install optuna' first,
    then its own error after the install; the file's mistake comes first now."""
    import jalapeno.cli.explore_cmd as ec

    def no_optuna(*a, **k):
        raise AssertionError("require_extra reached before the file was read")

    monkeypatch.setattr(ec, "require_extra", no_optuna)
    p = _space_with(tmp_path, "hbm_stacks = 8", "hbm_stacks = -1")
    code, out, err = run(capsys, "explore", str(p), "--trials", "1", "--store", str(tmp_path / "store"))
    assert code != 0
    assert "hbm_stacks = -1" in err and "require_extra" not in err


def test_a_missing_upper_case_agentic_file_is_named_as_a_file(capsys, tmp_path, monkeypatch):
    """review34: agentic:NOPE.TOML (missing) was 'unknown agentic preset' where agentic:nope.toml is 'file not found'
    (54c30d2 read an existing A.TOML, through Path.exists, but not the suffix in upper case)."""
    monkeypatch.chdir(tmp_path)
    for name in ("nope.toml", "NOPE.TOML"):
        line = error_line(*run(capsys, "compare", "-s", "b200", "-w", f"agentic:{name}"))
        assert line.startswith(f"error: {name}: file not found."), line
