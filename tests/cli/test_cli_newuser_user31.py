"""Round 31 new-user pass and break-it (newuser31): a capacity planner's questions, then hostile input."""

from __future__ import annotations

import re

import pytest
from cli_runner import error_line, run

from jalapeno.report.point_table import ttft_parts_text


@pytest.mark.parametrize("name, isl, osl", [
    # a preset's k is 1,024 tokens (8k1k is ISL 8192 / OSL 1024): 2k1k = 2 x 1,024 / 1 x 1,024
    ("2k1k", 2048, 1024), ("16k1k", 16384, 1024), ("4K2K", 4096, 2048), ("4k/1k", 4096, 1024),
])
def test_a_workload_named_like_a_preset_gets_its_lengths(capsys, name, isl, osl):
    """'2k1k' or '16k1k' (not presets) got 'use one of ... or --isl N --osl N': the planner had to work out
    that k is 1,024 here and type the lengths; the fix now gives them."""
    line = error_line(*run(capsys, "frontier", "-s", "b200", "-m", "gpt-oss-120b", "-w", name))
    assert f"unknown workload '{name}'. Fix: give the lengths: --isl {isl} --osl {osl} (k = 1,024 tokens" in line


@pytest.mark.parametrize("name", ["0k1k", "8k1k2", "2k"])
def test_a_workload_that_is_no_length_pair_keeps_the_preset_list(capsys, name):
    line = error_line(*run(capsys, "frontier", "-s", "b200", "-m", "gpt-oss-120b", "-w", name))
    assert "use one of 1k1k, 8k1k, 1k8k" in line and "--isl N --osl N" in line


def test_a_trace_arriving_at_once_is_not_told_to_raise_requests(capsys, tmp_path):
    """A trace replays its own arrivals: 'give --requests above --concurrency' (the closed loop's fix) named
    options a trace run does not take that way."""
    p = tmp_path / "burst.csv"
    p.write_text("arrival_s,input_tokens,output_tokens\n0,1000,10\n0,2000,20\n")
    code, out, err = run(capsys, "simulate", "-s", "gb200-nvl72", "--dp", "8", "--ep", "8", "--workload", str(p))
    assert code == 0, err
    text = " ".join(out.split())
    assert "the trace's arrival_s are all one time: spread them for one" in text.replace("│ ", "")
    assert "--requests above --concurrency" not in text


def test_ttft_parts_separate_thousands_as_the_ttft_row_does():
    """predict -s gb200-nvl72 -c 256 printed 'TTFT mean 287,285 ms' above '... wave waits 286918 ms'."""
    text = ttft_parts_text({"frontend_s": 0.197, "prefill_s": 0.153, "first_step_s": 0.018,
                            "queue_and_waits_s": 286.918})
    assert text == "front end 197 + prefill 153 + half a decode step 18 + queue, batch and wave waits 286,918 ms"
    assert not re.search(r"\d{4}", text)


def test_a_one_turn_agentic_task_is_not_timed_at_zero_minutes(capsys, tmp_path):
    """A one-turn agent file (1,100 tokens in, 2 out: a quarter of a second) printed 'task min 0.0 (0.0)' and
    'tasks/h/chip at fastest 83114.56' beside a peak of '525,773.7'."""
    from jalapeno.report.agentic_tables import _min

    assert (_min(0.25), _min(120.0), _min(30.0)) == ("0.0042", "2.0", "0.5")  # 0.25/60 = 0.00417 min
    p = tmp_path / "one.toml"
    p.write_text("turns = 1\nsystem_prompt_tokens = 1000\ntool_output_tokens = 100\nreply_tokens = 2\nthink_s = 0\n")
    code, out, err = run(capsys, "compare", "-s", "b200", "-m", "gpt-oss-120b", "--workload", f"agentic:{p}")
    assert code == 0, err
    row = next(ln for ln in out.splitlines() if ln.startswith("│ b200 ") and "min" not in ln)
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert not cells[4].startswith("0.0 ") and not cells[5].startswith("0.0 "), cells  # task min at peak, fastest
    assert re.fullmatch(r"\d{1,3}(,\d{3})*\.\d\d", cells[6]), cells  # tasks/h/chip at fastest, thousands separated


def test_a_zero_tier_floor_draws_no_line_on_the_log_axis(capsys, tmp_path):
    """--tiers slow=0 (allowed: a floor >= 0, the tier table reads the peak) crashed compare's chart with
    'ValueError: math domain error' (log10(0) for the floor's label on the log interactivity axis)."""
    html = tmp_path / "c.html"
    code, out, err = run(capsys, "compare", "-m", "gpt-oss-120b", "-s", "b200,h200", "--serving", "agg",
                         "--tiers", "slow=0,fast=100", "--html", str(html))
    assert code == 0, err
    assert "slow (peak)" in out and html.exists()
    text = html.read_text()  # plotly writes the labels JSON-escaped: '≥' as \u2265
    assert "fast \\u2265 100" in text and "slow \\u2265 0" not in text


def test_a_multimodal_wrapper_with_an_unsupported_backbone_says_so_at_once(capsys, tmp_path):
    """Llama 4's config.json: 'pass the text backbone's config (the text_config object)' led the user to a
    second refusal, of 'llama4_text'. The first error now names the backbone."""
    import json

    p = tmp_path / "llama4.json"
    p.write_text(json.dumps({"model_type": "llama4", "text_config": {"model_type": "llama4_text", "hidden_size": 5120},
                             "vision_config": {"hidden_size": 1408}}))
    line = error_line(*run(capsys, "models", "show", str(p)))
    assert ("llama4.json: text_config.model_type: 'llama4' is a multimodal wrapper whose text backbone 'llama4_text' "
            "is not supported either") in line and "model_type is one of deepseek_v2" in line
    q = tmp_path / "wrap.json"  # a supported backbone keeps the advice to pass it alone
    q.write_text(json.dumps({"model_type": "kimi_k25", "text_config": {"model_type": "deepseek_v3"}}))
    line = error_line(*run(capsys, "models", "show", str(q)))
    assert "'kimi_k25' is a multimodal wrapper. Fix: pass the text backbone's config (the text_config object)" in line


def test_results_show_of_a_compare_run_lists_every_system(capsys, tmp_path):
    """'results show' of a stored compare listed rows[:5]: the first system's five slowest points, the other
    system absent under a title saying '33 frontier points'; --html wrote its page without a word."""
    store = tmp_path / "st"
    code, out, err = run(capsys, "compare", "-m", "gpt-oss-120b", "-s", "b200,h200", "--serving", "agg",
                         "--store", str(store))
    assert code == 0, err
    name = next(p.name for p in (store / "runs").iterdir())
    html = tmp_path / "r.html"
    code, out, err = run(capsys, "results", "show", name, "--store", str(store), "--top", "2", "--html", str(html))
    assert code == 0, err
    rows = [ln.split("│")[1].strip() for ln in out.splitlines() if ln.startswith("│ ")]
    assert rows == ["b200", "b200", "h200", "h200"]  # --top 2: two of each system
    assert "the first 2 points of each system's frontier" in " ".join(out.split())
    assert f"report: {html.resolve()}" in out and html.exists()


def test_the_ratios_table_answers_per_dollar(capsys):
    """'GB300 vs Jalapeno per kW and per $': the ratios table gave per chip and per kW; per $ had to be worked
    out from the headline's $/M tok. Its peak cell gives the peak tokens-per-$ ratio: tokens per $ = throughput
    per chip / $ per chip-hour, so the ratio is the peak per-chip ratio x the baseline's $/chip-hour over the
    system's (docs/metrics.md §6)."""
    import json

    from jalapeno.specs.catalog import load_system

    args = ("compare", "-m", "gpt-oss-120b", "-s", "b200,h200", "-b", "h200", "--serving", "agg")
    code, js, err = run(capsys, *args, "--json")
    assert code == 0, err
    heads = {n: s["headline"]["peak_throughput_per_chip"] for n, s in json.loads(js)["systems"].items()}
    usd = {n: load_system(n).usd_per_chip_hour for n in heads}
    want = heads["b200"] / heads["h200"] * usd["h200"] / usd["b200"]
    code, out, err = run(capsys, *args, "--html", "")
    assert code == 0, err
    header = next(ln for ln in out.splitlines() if "@35 tok/s/user" in ln)
    assert header.split("┃")[2].strip() == "peak (kW, $)"  # round 44: per $ in the peak cell's brackets, after kW
    row = next(ln for ln in out.splitlines() if ln.startswith("│ b200 ") and "x" in ln)
    assert row.split("│")[2].strip().endswith(f", {want:.2f}x)")


def test_a_variants_missing_base_file_names_the_variant_and_where_the_path_was_read(capsys, tmp_path):
    """base = "my-base.toml" in a variant read beside the variant, not in the working folder: the error was
    '<folder>/my-base.toml: file not found', naming neither the variant nor its base key."""
    (tmp_path / "sub").mkdir()
    v = tmp_path / "sub" / "v.toml"
    v.write_text('base = "my-base.toml"\n')
    line = error_line(*run(capsys, "hardware", "show", str(v)))
    want = str(tmp_path / "sub" / "my-base.toml")
    assert f"v.toml: base: 'my-base.toml' is read as {want} (a path is relative to this file's folder): file not found" \
        in line


def test_predict_says_when_its_chosen_layout_queues_most_of_the_load(capsys):
    """'which bound limits DeepSeek-R1 on GB200 at concurrency 256': predict picked the smallest layout that
    fits (TP4 EP4) and printed TTFT 287 s with no word that its KV cache admits a tenth of the requests."""
    code, out, err = run(capsys, "predict", "-s", "gb200-nvl72", "-m", "deepseek-r1", "-c", "256")
    assert code == 0, err
    m = re.search(r"it admits (\d+) of the 256 requests \(kv_capacity\), the rest wait ([\d,.]+) s to be admitted: "
                  r"a wider layout \(more --dp/--ep\) admits more", err)
    assert m and int(m[1]) < 128, err  # fewer than half admitted: the note's condition
    code, out, err = run(capsys, "predict", "-s", "gb200-nvl72", "-m", "deepseek-r1", "-c", "4")
    assert code == 0 and "the smallest whose weights fit" in err and "admits" not in err


@pytest.mark.parametrize("cell, shown", [("true", "'true'"), ("[1000]", "'[1000]'"), ('{"n": 1}', "'{\"n\": 1}'")])
def test_a_jsonl_trace_cell_is_shown_as_json_writes_it(capsys, tmp_path, cell, shown):
    """A JSONL trace's true was reported as 'True' (Python's spelling, not the file's)."""
    p = tmp_path / "t.jsonl"
    p.write_text('{"arrival_s": 0, "input_tokens": 1000, "output_tokens": 10}\n'
                 f'{{"arrival_s": 1, "input_tokens": {cell}, "output_tokens": 10}}\n')
    line = error_line(*run(capsys, "simulate", "-s", "gb200-nvl72", "--dp", "8", "--ep", "8", "--workload", str(p)))
    assert f"t.jsonl: row 2 (line 2): input_tokens: {shown} is not a finite number" in line


def test_design_space_errors_show_values_as_the_file_writes_them(capsys, tmp_path):
    """'need low < high, got 8.0 and 4.0' for low = 8, high = 4; 'divides by zero at {'chip.hbm_stacks': 4}'."""
    head = ('name = "x"\nbase = "jalapeno"\ntrials = 2\n[objective]\nmetrics = ["tok_s_per_kw"]\n'
            '[[cases]]\nmodel = "deepseek-r1"\nworkload = "8k1k"\n')
    p = tmp_path / "a.toml"
    p.write_text(head + '[params."chip.hbm_stacks"]\nlow = 8\nhigh = 4\n')
    assert "params.chip.hbm_stacks: need low < high, got 8 and 4." in error_line(*run(capsys, "explore", str(p)))
    p.write_text(head + '[params."chip.hbm_stacks"]\nchoices = [4, 6]\n[derived]\n'
                 '"chip.hbm_bandwidth_tb_per_s" = "{chip.hbm_stacks} / 0"\n')
    line = error_line(*run(capsys, "explore", str(p)))
    assert "'{chip.hbm_stacks} / 0' divides by zero at chip.hbm_stacks = 4." in line


def test_explore_lists_each_design_once(capsys, tmp_path):
    """Four trials over two choices draw one design at least twice (pigeonhole): the best-designs table listed
    the same design on two rows as two results."""
    p = tmp_path / "tiny.toml"
    p.write_text('name = "tiny"\nbase = "jalapeno"\nseed = 1\ntrials = 4\n[objective]\nmetrics = ["tok_s_per_kw"]\n'
                 'min_interactivity = 50\npower = "chip"\n[[cases]]\nmodel = "gpt-oss-120b"\nworkload = "1k1k"\n'
                 '[params."chip.hbm_stacks"]\nchoices = [4, 8]\n')
    code, out, err = run(capsys, "explore", str(p), "--store", str(tmp_path / "st"))
    assert code == 0, err
    rows = [ln.split("│")[2].strip() for ln in out.splitlines() if ln.startswith("│ ")]
    assert rows and len(rows) == len(set(rows)) <= 2, rows  # the chip.hbm_stacks column: each value once
    assert f"(4 feasible, {len(rows)} distinct designs;" in " ".join(out.split())


@pytest.mark.parametrize("args, fix", [
    (("plan", "-s", "b200", "-m", "gpt-oss-120b", "--target", "1,000,000"), "--target 1000000"),
    (("predict", "-s", "b200", "-m", "gpt-oss-120b", "-c", "1,024"), "--concurrency 1024"),
])
def test_a_number_with_thousands_separators_gets_it_back_without(capsys, args, fix):
    """'--target 1,000,000' (as plan prints its figures) got 'give --target a number such as 0.5 or 1e6'."""
    line = error_line(*run(capsys, *args))
    assert line.endswith(f"Fix: write it without thousands separators: {fix}")


def test_a_decimal_comma_is_not_read_as_a_thousands_separator(capsys):
    line = error_line(*run(capsys, "step", "-s", "b200", "-m", "gpt-oss-120b", "--tp", "1", "--dp", "1", "--ep", "1",
                           "--batch", "1,5"))
    assert "thousands" not in line and "--batch: must be a whole number, got '1,5'" in line


def test_a_set_or_file_number_with_thousands_separators_gets_it_back_without(capsys, tmp_path):
    line = error_line(*run(capsys, "frontier", "-s", "jalapeno", "-m", "gpt-oss-120b", "--set", "chip.tdp_w=1,000"))
    assert line == ("error: --set: chip.tdp_w: must be a number, got '1,000'. Fix: write a number without thousands "
                    "separators, e.g. --set chip.tdp_w=1000")
    p = tmp_path / "v.toml"
    p.write_text('base = "jalapeno"\nchip.tdp_w = "1,200"\n')
    line = error_line(*run(capsys, "hardware", "show", str(p)))
    assert "chip.tdp_w: must be a number, got '1,200'. Fix: write a number without thousands separators" in line
    assert "1200" in line


@pytest.mark.parametrize("opt, value, meant, read", [
    ("-c", "1,024", "--concurrency 1024", "1, 24"),  # ran concurrencies 1 and 24 without a word
    ("--at", "1,000", "--at 1000", "1, 0"),  # was 'needs positive values', naming no value
])
def test_a_list_option_with_a_thousands_group_is_not_split_silently(capsys, opt, value, meant, read):
    line = error_line(*run(capsys, "compare", "-m", "gpt-oss-120b", "-s", "b200,h200", "--serving", "agg", opt, value))
    assert line.endswith(f"'{value}' reads as the list {read}: its commas separate values. Fix: write {meant} "
                         "(no thousands separators)")


def test_a_list_of_plain_values_still_runs_and_a_bad_one_is_named(capsys):
    line = error_line(*run(capsys, "compare", "-m", "gpt-oss-120b", "-s", "b200,h200", "--at", "10,0"))
    # 0 is named as the peak it would be, as --tiers NAME=0 reads it (followup51; was 'needs positive values, got 0')
    assert "--at: 0 tok/s/user is the peak" in line
    line = error_line(*run(capsys, "compare", "-m", "gpt-oss-120b", "-s", "b200,h200", "--at", "10,-5"))
    assert "--at: needs positive values, got -5." in line


def test_collective_bytes_with_thousands_groups_is_not_priced_as_zero_byte_messages(capsys):
    """--bytes 1,000,000 printed three rows, for 1, 0 and 0 bytes."""
    line = error_line(*run(capsys, "collective", "-s", "b200", "--op", "all_reduce", "--group", "8",
                           "--bytes", "1,000,000"))
    assert line.endswith("--bytes: '1,000,000' reads as the list 1, 0, 0: its commas separate values. Fix: write "
                         "--bytes 1000000 (no thousands separators)")
    code, out, err = run(capsys, "collective", "-s", "b200", "--op", "all_reduce", "--group", "8", "--bytes", "1000,1e6")
    assert code == 0, err


def test_a_kv_tier_share_written_as_a_percent_gets_its_fraction(capsys):
    line = error_line(*run(capsys, "frontier", "-s", "jalapeno", "-m", "gpt-oss-120b",
                           "--set", "kv_tiers.host.usable_fraction=75"))
    assert "usable_fraction must be <= 1 (a share of the tier's capacity), got 75: write 0.75 for 75%" in line
