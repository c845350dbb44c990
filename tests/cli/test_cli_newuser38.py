"""Round 38 new-user pass (newuser38): a capacity planner's and a chip architect's reading of the shipped catalog."""

from __future__ import annotations

from cli_runner import run


def test_an_agentic_kv_share_under_a_twentieth_of_a_percent_is_not_printed_as_zero():
    """compare --workload agentic:coding-agent printed Jalapeño's peak as 'kv_capacity:hbm (0.0% of task; KV in host
    53.5% of returns)': its 0.93 s of host reloads over a 43.5-minute task is 0.93 / 2610 = 0.036% of the task, a
    cost the label names, not none. Small shares now keep two significant figures."""
    from jalapeno.report.agentic_tables import _kv

    p = {"kv_bound": "kv_capacity:hbm", "kv_bound_share": 0.93 / 2610.0, "kv_tier": "host", "kv_tier_share": 0.535}
    assert _kv(p) == "kv_capacity:hbm (0.036% of task; KV in host 53.5% of returns)"
    p.update(kv_bound_share=0.25)  # the ordinary case keeps one decimal
    assert _kv(p) == "kv_capacity:hbm (25.0% of task; KV in host 53.5% of returns)"
    p.update(kv_bound="", kv_tier="hbm", kv_tier_share=1.0)
    assert _kv(p) == "none (KV in hbm 100.0% of returns)"


def test_models_list_gives_a_sliding_window_models_kv_per_token_at_8k(capsys):
    """models list gave gpt-oss-120b 73,728 KV bytes per token, every layer's: its 18 sliding-window layers keep only
    128 tokens, so a sequence of 8K tokens averages half that, and a planner sizing KV from the list doubled it.

    By hand (config.json: 36 layers, every other one sliding, 8 KV heads of 64 dims, BF16 K and V):
    one layer 8 x 64 x 2 x 2 B = 2,048 B; all layers 36 x 2,048 = 73,728; at 8,192 tokens
    18 x 2,048 + 18 x 2,048 x 128 / 8,192 = 36,864 + 576 = 37,440."""
    code, out, err = run(capsys, "models", "list")
    assert code == 0, err
    row = next(ln for ln in out.splitlines() if "gpt-oss-120b" in ln)
    assert "73,728 (bf16); 37,440 at 8K" in row
    dsr1 = next(ln for ln in out.splitlines() if "deepseek-r1" in ln)
    assert "35,136 (fp8)" in dsr1 and "at 8K" not in dsr1  # 61 x 576 B, no window: one figure
    assert "a sliding-window layer keeps only its window" in " ".join(out.split())


def test_results_show_ranks_the_importances_as_explore_does(capsys, monkeypatch):
    """results show printed a study's importances in the store's key order ('chip.hbm_stacks 0.00' first) where
    explore had printed them largest first ('levels.rack.bandwidth_gb_per_s 0.34' first): the summary both print
    now ranks them, so the first name is the parameter that matters most."""
    from jalapeno.cli.explore_cmd import _print_summary

    monkeypatch.setenv("COLUMNS", "300")
    imp = {"chip.hbm_stacks": 0.0, "chip.peak_dense_tflops.fp8": 0.13, "efficiency.kernel_launch_s": 0.26,
           "levels.rack.bandwidth_gb_per_s": 0.34}  # name order, as the results store gives them back
    _print_summary({"name": "n", "trials": 1, "feasible": 1, "base": "jalapeno", "pruned_by": {},
                    "importance": {"tok_s_per_kw": imp},
                    "designs": [{"trial": 0, "param:chip.hbm_stacks": 6, "score:tok_s_per_kw": 1.25,
                                 "chip_power_w": 700.0, "usd_per_chip_hour": 1.4}]})
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("importance for"))
    assert line == ("importance for tok_s_per_kw: levels.rack.bandwidth_gb_per_s 0.34, efficiency.kernel_launch_s "
                    "0.26, chip.peak_dense_tflops.fp8 0.13, chip.hbm_stacks 0.00")


def test_an_option_that_is_a_system_field_names_the_set_key(capsys):
    """compare --cost 2 answered 'No such option: --cost (Possible options: --osl, --set, --store)': a planner
    pricing Jalapeño at another $/chip-hour was offered --osl. An option that names a catalog field now gives the
    --set key (and compare's NAME: form); the key runs (cost.usd_per_chip_hour=2.0 gives 2.0 $/chip-hour)."""
    from cli_runner import error_line

    line = error_line(*run(capsys, "compare", "--cost", "2"))
    assert line == ("error: --cost: no such option; a system's cost is a catalog field (its value and source: "
                    "`jalapeno hardware show NAME`). Fix: write --set cost.usd_per_chip_hour=VALUE ($ per chip-hour, "
                    "total cost of ownership), or --set NAME:cost.usd_per_chip_hour=VALUE for one of --systems "
                    "(see `jalapeno compare --help`)")
    line = error_line(*run(capsys, "plan", "--tdp=800"))  # one system: no NAME: form
    assert "Fix: write --set chip.tdp_w=VALUE (W) (see `jalapeno plan --help`)" in line and "NAME:" not in line
    assert "--set power.allin_kw_per_chip=VALUE" in error_line(*run(capsys, "predict", "--allin-kw", "1.3"))
    line = error_line(*run(capsys, "models", "list", "--cost", "2"))  # no --set there: click's own words
    assert line == "error: No such option: --cost. Fix: see `jalapeno models list --help`"
    assert "Possible options" in error_line(*run(capsys, "compare", "--nope", "2"))  # other names as before


def test_simulate_says_the_window_its_throughput_is_counted_over(capsys, tmp_path):
    """simulate printed 'throughput per chip (in+out) 1,700.6 tok/s' beside 'simulated / wall time 449.4 s' and a
    369.4 s steady-state window: neither reproduces it (640 requests x ~8,318 tokens / 449.4 s / 8 chips = 1,481).
    The row now names its window, the counted requests' first arrival to their last completion (391.4 s there),
    and its chips, so tokens / window / chips checks by hand."""
    import csv

    f, out_csv = tmp_path / "two.csv", tmp_path / "req.csv"
    f.write_text("arrival_s,input_tokens,output_tokens\n0,1000,100\n1.5,2000,50\n")
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "gpt-oss-120b", "--tp", "8", "-w", str(f),
                         "--out", str(out_csv))
    assert code == 0, err
    rows = list(csv.DictReader(out_csv.open()))
    window = max(float(r["done_s"]) for r in rows) - 0.0  # first arrival at 0 s
    per_chip = (1000 + 100 + 2000 + 50) / window / 8
    line = next(ln for ln in out.splitlines() if "throughput per chip (in+out)" in ln)
    assert f"{per_chip:,.1f} tok/s (the counted requests' tokens over the {window:.1f} s from their first " in line
    # the cell folds at 160 columns wherever the label column's width puts the break: read it unfolded
    cells = " ".join(ln.split("│")[2].strip() for ln in out.splitlines() if ln.count("│") >= 3)
    assert "from their first arrival to the last completion, 8 chips)" in " ".join(cells.split())


def test_the_agentic_ratio_table_says_which_way_a_task_time_ratio_reads(capsys):
    """compare --workload agentic:coding-agent printed 'fastest task time 0.94x' for Vera Rubin beside peak and
    iso-task-time ratios where above 1x wins: 0.94x is Rubin's 3.4 min over GB300's 3.6 min, a task finished 6%
    sooner, read as a loss. The header and the caption now say a time ratio below 1x is sooner."""
    from jalapeno.report.agentic_tables import agentic_tables
    from rich.console import Console

    peak = {"tasks_per_hour_per_chip": 2.0, "tasks_per_hour_per_kw": 1.0, "usd_per_task": 1.0, "task_time_s": 600.0,
            "task_time_p90_s": 660.0, "bound": "compute", "kv_bound": "", "kv_tier": "hbm", "kv_tier_share": 1.0,
            "deployment": "agg", "ttft_first_turn_s": 1.0, "ttft_mean_s": 1.0, "ttft_last_turn_s": 1.0,
            "tpot_s": 0.01, "hit_rate": 0.9, "reload_s_per_task": 0.0}
    fast = peak | {"task_time_s": 3.4 * 60}
    base = peak | {"task_time_s": 3.6 * 60}
    sys_ = {n: {"peak": peak, "fastest": f, "kv_tiers": {}, "tiers": {"batch": {"status": "ok", "ceiling_min": None,
            "tasks_per_hour_per_chip": 2.0, "task_time_s": 600.0, "deployment": "agg"}}}
            for n, f in (("rubin", fast), ("gb300", base))}
    ratio = {"peak_tasks_per_hour_per_chip": 1.0, "peak_tasks_per_hour_per_kw": 1.0, "peak_tasks_per_usd": 1.0,
             "iso_task_time": [{"task_time_min": 5.0, "ratio": 1.5, "at_frontier_end": True}]}
    d = {"model": "m", "convention": "all-in", "baseline": "gb300", "systems": sys_,
         "workload": {"agentic": "coding-agent", "turns": 2, "final_context_tokens": 1000, "think_s": 2.0},
         "ratios": {"rubin": ratio | {"fastest_task_time": 3.4 / 3.6}, "gb300": ratio | {"fastest_task_time": 1.0}}}
    con = Console(width=250, record=True, markup=False)  # as the CLI's console ('[at frontier end]' is no markup)
    for t in agentic_tables(d):
        con.print(t)
    text = " ".join(con.export_text().split())  # the caption folds to the table's width
    assert "fastest task time (lower: sooner)" in text and "0.94x" in text
    assert "below 1x finishes a task sooner (0.94x: 6% less time)" in text
    # compare's spelling of the flag since round 45 (was '(at frontier end)')
    assert "[at frontier end: who]: within 10% of a frontier's last point" in text


def test_the_agentic_headline_says_what_its_kv_bound_cell_means(capsys):
    """The headline's 'KV bound at peak' cell, 'kv_capacity:hbm (0.036% of task; KV in host 53.5% of returns)',
    had no legend: which share is of what. The table's caption names the three bounds (the 95% HBM rule of
    serve/sessions.py) and both shares."""
    code, out, err = run(capsys, "compare", "-w", "agentic:coding-agent", "-s", "jalapeno,gb300-nvl72", "--html", "")
    assert code == 0, err
    text = " ".join(out.split())
    assert "KV bound at peak: kv_capacity:hbm (HBM holds the prefix of under 95% of returning sessions" in text
    assert "with the share of task time it costs; 'KV in T S of returns'" in text


def test_results_commands_say_where_a_relative_store_was_looked_for(capsys, tmp_path, monkeypatch):
    """After explore in one folder, `results show 700w-r1-kimi` from another said "no run '700w-r1-kimi' in
    'jalapeno-results'" (as though the store existed and lacked the run), and `results list` named only the
    relative folder. Both now say the store is missing and where a relative --store was read from."""
    from cli_runner import error_line

    monkeypatch.chdir(tmp_path)
    want = (f"error: --store: no results store at 'jalapeno-results' ({tmp_path.resolve() / 'jalapeno-results'}: a "
            "relative --store is read from the current directory). Fix: run explore (or compare --store) first, or "
            "give --store the folder a run wrote")
    for args in (("results", "list"), ("results", "show", "700w-r1-kimi"), ("results", "export", "700w-r1-kimi",
                                                                           "--out", "x.csv")):
        assert error_line(*run(capsys, *args)) == want
    line = error_line(*run(capsys, "results", "list", "--store", str(tmp_path / "abs")))
    assert f"no results store at '{tmp_path / 'abs'}'. Fix:" in line  # an absolute path is already where


def test_as_deployed_says_a_stated_system_runs_without_the_recipes_mtp(cli_once):
    """compare --as-deployed ran GB300 by its Dynamo-TRT recipe, MTP up to 3 draft tokens (data/engines.toml
    dynamo-trt-dsr1-fp4), and Jalapeño (no recipe) as stated, without MTP: Jalapeño's max 138.9 tok/s/user read
    0.43x GB300's 321.4 and 0.11x at 100 tok/s/user, with only 'as stated: jalapeno' to say why (with MTP 3 at
    the recipe's chain acceptance 0.75 Jalapeño reaches 326.1). The line now says the speeds are not like for like
    and gives the command that prices it with MTP."""
    code, out, err, _ = cli_once("compare", "--as-deployed", "-s", "jalapeno,gb300-nvl72", "--html", "")  # run once
    # for this test and test_newuser49's (tests/conftest.py)
    assert code == 0, err
    text = " ".join(out.split())
    assert ("as stated: jalapeno. The recipes of gb300-nvl72 run MTP (speculative decoding, up to 3 draft tokens); "
            "jalapeno runs without it, so per-user speeds and the ratios at them are not like for like: `jalapeno "
            "compare -s jalapeno --mtp 3 --mtp-acceptance 0.8` prices it with MTP") in text  # round 49: the acceptance
    # the recipe is priced at (data/stack_fits.toml's dynamo-trtllm fit, 0.8), not its assumed fallback 0.75
