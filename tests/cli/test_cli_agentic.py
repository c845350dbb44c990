"""``compare`` / ``frontier`` with ``--workload agentic:…``: output, JSON, user files, refused options."""

from __future__ import annotations

import json

from cli_runner import check_error, run


def test_compare_agentic_json(capsys):
    code, out, err = run(capsys, "compare", "--workload", "agentic:coding-agent", "--systems",
                         "jalapeno,gb200-nvl72", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["workload"]["agentic"] == "coding-agent" and d["baseline"] == "gb200-nvl72"
    for name in ("jalapeno", "gb200-nvl72"):
        s = d["systems"][name]
        for key in ("tasks_per_hour_per_chip", "tasks_per_hour_per_kw", "usd_per_task", "task_time_s",
                    "task_time_p90_s", "ttft_first_turn_s", "ttft_last_turn_s", "tpot_s", "hit_rate", "kv_tier",
                    "kv_bound", "bound"):
            assert key in s["peak"] and key in s["fastest"], key
        assert s["peak"]["tasks_per_hour_per_chip"] > s["fastest"]["tasks_per_hour_per_chip"] > 0
        assert s["fastest"]["task_time_s"] <= s["fastest"]["task_time_p90_s"]
        # 40 turns with 39 x 2 s of tool time: no task is shorter than the think time alone
        assert s["fastest"]["task_time_s"] > 39 * 2.0
        assert set(s["tiers"]) == {"batch", "fast", "ultra_fast"}
    assert d["systems"]["jalapeno"]["kv_tiers"]["ssd"] == "none"
    assert d["ratios"]["gb200-nvl72"]["peak_tasks_per_hour_per_chip"] == 1.0
    assert [r["task_time_min"] for r in d["ratios"]["jalapeno"]["iso_task_time"]] == [5.0, 10.0, 20.0]


def test_compare_agentic_tables_and_user_file(capsys, tmp_path):
    p = tmp_path / "triage.toml"
    p.write_text("turns = 4\nsystem_prompt_tokens = 3000\ntool_output_tokens = 1000\nreply_tokens = 200\n"
                 "think_s = 1.0\n")
    code, out, err = run(capsys, "compare", "--workload", f"agentic:{p}", "--systems", "gb300-nvl72",
                         "--at", "1,2", "--tiers", "fast=2")
    assert code == 0, err
    assert "agentic:triage" in out and "tasks/h/chip" in out and "@ 2 min/task" in out and "fast (<= 2 min)" in out


def test_hgx_node_spans_nodes_when_the_model_does_not_fit_in_one(capsys):
    # DeepSeek-R1 FP8 (671 GB of weights) does not fit in one 8 x 80 GB H100 node
    code, out, err = run(capsys, "compare", "--workload", "agentic:coding-agent", "--systems", "h100", "--json")
    assert code == 0, err
    peak = json.loads(out)["systems"]["h100"]["peak"]
    # attention TP x DP chips per stage (e.g. "attn TP8 DP2": 16 chips, two nodes)
    tp = int(peak["deployment"].split("attn TP")[1].split()[0])
    dp = int(peak["deployment"].split(" DP")[1].split()[0])
    assert tp * dp > 8


def test_frontier_agentic(capsys):
    code, out, err = run(capsys, "frontier", "--system", "gb200-nvl72", "--workload", "agentic:research-agent",
                         "--json")
    assert code == 0, err
    d = json.loads(out)
    pts = d["frontier"]
    assert len(pts) >= 3
    tph = [p["tasks_per_hour_per_chip"] for p in pts]
    assert tph == sorted(tph, reverse=True)  # ordered by task speed: throughput falls as tasks get faster


def test_agentic_refuses_fixed_length_options(capsys):
    check_error(*run(capsys, "compare", "--workload", "agentic:coding-agent", "--isl", "1000", "--osl", "100"),
                "--isl", "does not apply")
    check_error(*run(capsys, "compare", "--workload", "agentic:coding-agent", "--serving", "disagg"),
                "--serving", "aggregated")


def test_agentic_bad_names(capsys, tmp_path):
    check_error(*run(capsys, "compare", "--workload", "agentic:coder"), "unknown agentic preset", "coding-agent")
    p = tmp_path / "huge.toml"
    p.write_text("turns = 100\nsystem_prompt_tokens = 6000\ntool_output_tokens = 2000\nreply_tokens = 300\n"
                 "think_s = 1\n")
    check_error(*run(capsys, "compare", "--workload", f"agentic:{p}"), "huge's last turn", "deepseek-r1")


def test_set_reaches_the_agentic_comparison(capsys):
    code, out, err = run(capsys, "compare", "--workload", "agentic:chat-agent", "--systems", "jalapeno",
                         "--set", "kv_tiers.host.bandwidth_gb_per_s=225", "--json")
    assert code == 0, err
    (name, s), = json.loads(out)["systems"].items()
    assert "kv_tiers.host.bandwidth_gb_per_s=225" in name and "225 GB/s" in s["kv_tiers"]["host"]


def test_simulate_takes_a_user_agentic_file(capsys, tmp_path):
    p = tmp_path / "tiny-agent.toml"
    p.write_text("turns = 3\nsystem_prompt_tokens = 1000\ntool_output_tokens = 500\nreply_tokens = 20\nthink_s = 0.5\n")
    code, out, err = run(capsys, "simulate", "--system", "gb200-nvl72", "--dp", "8", "--ep", "8",
                         "--workload", f"agentic:{p}", "--concurrency", "2", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["summary"]["tasks"] == 4 and d["config"]["workload"]["turns"] == 3
