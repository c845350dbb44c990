"""Findings of round 48's break-it pass (break48): ``plan -w agentic:…`` sized a fleet for any ``--target``
(``1e30`` output tok/s planned 7e27 H200s, where the fixed-length plan refuses 1e12 tok/s and 1e9 chips); its
``--max-task-min`` and agentic ``compare --tiers`` took a ceiling of 1e9 minutes where ``--at`` refuses one past a
day; a config.json with a DSA ``index_topk`` but no indexer heads priced the indexer at no cost; a points CSV with a
line of blanks or a row of one cell raised a traceback, and a row cut short was read with blank cells; ``simulate -w agent.toml`` was called an unknown trace format; ``--stack
sglang+ar_rms@0.5.6`` was an unknown stack 'sglang+ar_rms'."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import check_error, run

DATA = Path(__file__).parents[2] / "src" / "jalapeno" / "data"
PLAN = ("plan", "-s", "h200", "-m", "llama-3.3-70b", "-w", "agentic:coding-agent")


def test_an_agentic_target_above_the_token_rate_bound_is_refused(capsys):
    code, out, err = run(capsys, *PLAN, "--target", "1e30")
    # was: exit 0, 7,368,744,947,536,041,721,320,177,664 chips
    check_error(code, out, err, "--target: 1e+30 output tok/s is above the 1e+12 tok/s plausibility bound")
    # coding-agent: 40 turns x 350 reply tokens = 14,000 output tokens a task, so 1e12 tasks/h is
    # 1e12 x 14,000 / 3,600 = 3.89e12 output tok/s, above the same bound
    code, out, err = run(capsys, *PLAN, "--target", "1e12", "--target-kind", "tasks")
    check_error(
        code,
        out,
        err,
        "--target: 1e+12 tasks/h (3.89e+12 output tok/s at 14,000 output tokens per task)",
        "plausibility bound",
        "--target-kind tasks",
    )


def test_an_agentic_target_whose_fleet_is_above_the_chip_bound_is_refused(capsys):
    # 1e11 tasks/h at ~35 tasks/h/chip (the plan's own H200 batch point, 34.9) is ~2.9e9 chips > 1e9
    code, out, err = run(capsys, *PLAN, "--target", "1e11", "--target-kind", "tasks")
    check_error(code, out, err, "--target: 1e+11 tasks/h needs", "above the 1,000,000,000-chip plausibility bound")
    code, out, err = run(capsys, *PLAN, "--target", "10000", "--target-kind", "tasks", "--json")
    assert code == 0, err
    assert json.loads(out)["chips"] < 1000  # 10,000 / 34.9 ~ 287 chips


def test_a_task_time_ceiling_past_a_day_is_refused(capsys):
    code, out, err = run(capsys, *PLAN, "--target", "1e5", "--max-task-min", "1e9")
    # was: exit 0, a plan with no ceiling in effect; --at 1e9 was refused already
    check_error(
        code,
        out,
        err,
        "--max-task-min: task time 1e+09 minutes is past the bound of 1,440 minutes",
        "--max-task-min 10",
    )
    code, out, err = run(
        capsys,
        "compare",
        "-s",
        "h200",
        "-m",
        "llama-3.3-70b",
        "-w",
        "agentic:coding-agent",
        "--tiers",
        "fast=10,slow=2000",
    )
    check_error(code, out, err, "--tiers: task time 2000 minutes is past the bound of 1,440 minutes")


def test_a_day_long_ceiling_still_plans(capsys):
    from jalapeno.cli.agentic_cmd import check_task_minutes

    check_task_minutes([1440.0], "--max-task-min")  # one day exactly is at the bound, not past it
    check_task_minutes([float("nan")], "--tiers")  # not finite: check_task_ceiling's and _floors' error, not this one


def _dsv32(tmp_path: Path, **change) -> str:
    cfg = json.loads((DATA / "models" / "deepseek-v3.2.json").read_text())
    for k, v in change.items():
        if v is None:
            cfg.pop(k)
        else:
            cfg[k] = v
    path = tmp_path / "dsa.json"
    path.write_text(json.dumps(cfg))
    return str(path)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            {"index_n_heads": None},
            ("index_n_heads: is missing while index_head_dim, index_topk set a dsa indexer", "priced at no cost"),
        ),
        ({"index_head_dim": 0}, ("index_head_dim: is 0 while index_n_heads, index_topk",)),
        ({"index_n_heads": None, "index_head_dim": None}, ("index_n_heads: is missing while index_topk",)),
        ({"model_type": "deepseek_v3", "index_topk": None}, ("index_topk: is missing", "would be dropped")),
    ],
)
def test_a_dsa_indexer_given_in_part_is_refused(capsys, tmp_path, change, words):
    code, out, err = run(capsys, "models", "show", _dsv32(tmp_path, **change))
    # was: exit 0, 'MLA + DSA top-2048' with the indexer's GEMMs, FLOPs and index cache at 0 (or dropped)
    check_error(code, out, err, *words, "give all three of index_n_heads, index_head_dim and index_topk")


def test_a_dsa_indexer_given_whole_or_not_at_all_loads(capsys, tmp_path):
    code, out, err = run(capsys, "models", "show", _dsv32(tmp_path, model_type="deepseek_v3"))
    assert code == 0 and "DSA top-2048" in out, err  # V3 architecture with the three fields: the indexer is read
    code, out, err = run(
        capsys,
        "models",
        "show",
        _dsv32(tmp_path, model_type="deepseek_v3", index_topk=0, index_n_heads=0, index_head_dim=0),
    )
    assert code == 0 and "DSA" not in out, err  # every field 0: no indexer


def test_a_points_row_cut_short_is_named(capsys, tmp_path):
    lines = (DATA / "validation" / "inferencex_points.csv").read_text().splitlines()
    h200 = [ln for ln in lines if ln.startswith("H200,")][:2]
    short = ",".join(h200[0].split(",")[:5])
    path = tmp_path / "p.csv"
    path.write_text("\n".join([lines[0], h200[1], short, "  "]) + "\n")
    code, out, err = run(capsys, "validate", "--no-aiconfigurator", "--points", str(path), "-s", "h200")
    # was: a traceback (AttributeError: 'NoneType' object has no attribute 'strip', from the line of blanks;
    # a row of one cell gave the same), and without it the short row skipped as "isl/osl None/None missing"
    ncols = len(lines[0].split(","))  # 25 columns in the shipped header
    check_error(code, out, err, f"p.csv: line 3: 5 cell(s) where the header has {ncols} columns", "a row cut short")


def test_a_line_of_blanks_is_still_skipped():
    from jalapeno.specs.files import csv_rows

    assert csv_rows("a,b\n1,2\n \n", "x.csv") == [{"a": "1", "b": "2"}]


@pytest.mark.parametrize("conc", [[], ["-c", "4"]])
def test_an_agentic_file_without_its_prefix_is_named_in_simulate(capsys, tmp_path, conc):
    path = tmp_path / "agent.toml"
    path.write_text(
        "turns = 10\nsystem_prompt_tokens = 2000\ntool_output_tokens = 500\nreply_tokens = 200\nthink_s = 2.0\n"
    )
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "-w", str(path), "--tp", "4", *conc)
    # was: "unknown trace format '.toml'. Fix: use .csv or .jsonl" (with -c: "--concurrency: does not apply
    # to a trace workload")
    check_error(code, out, err, "--workload", "is a toml file", f"write --workload agentic:{path}")


@pytest.mark.parametrize(
    ("stack", "words"),
    [
        ("sglang+ar_rms@0.5.6", ("puts +ar_rms before the version", "write --stack sglang@0.5.6+ar_rms")),
        ("vllm@0.18.0+AR_RMS", ("the modifier is written in lower case", "write --stack vllm@0.18.0+ar_rms")),
    ],
)
def test_a_stack_modifier_out_of_place_is_named(capsys, stack, words):
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", "llama-3.3-70b", "-c", "4", "--stack", stack)
    # was: "unknown software stack 'sglang+ar_rms' (did you mean 'sglang'?)" / "'0.18.0+AR_RMS' is not a release"
    check_error(code, out, err, "--stack", *words)


def test_a_tasks_target_on_a_fixed_length_workload_names_the_agentic_spelling(capsys):
    code, out, err = run(
        capsys, "plan", "-s", "gb200-nvl72", "-m", "llama-3.3-70b", "--racks", "1", "--target-kind", "tasks"
    )
    # was: "unknown kind 'tasks'. Fix: use output or total", not saying where tasks is a kind
    check_error(
        code,
        out,
        err,
        "--target-kind: tasks (agent tasks per hour) counts an agentic workload's tasks",
        "give --workload agentic:preset",
    )


@pytest.mark.parametrize(
    ("cmd", "words"),
    [
        (  # SGLang's rule fuses DeepSeek-V3 / Kimi / gpt-oss / Qwen3-MoE only (cost/allreduce_rms.SGLANG_MODEL_TYPES)
            ["predict", "-s", "h200", "-m", "llama-3.3-70b", "-c", "4", "--tp", "4", "--stack", "sglang+ar_rms"],
            (
                "llama-3.3-70b is llama",
                "'sglang+ar_rms' would price exactly as 'sglang'",
                "drop +ar_rms: --stack sglang",
            ),
        ),
        (["step", "-s", "h200", "-m", "llama-3.3-70b", "--stack", "sglang+ar_rms"], ("llama-3.3-70b is llama",)),
        (["frontier", "-s", "h200", "-m", "llama-3.3-70b", "--stack", "sglang+ar_rms"], ("llama-3.3-70b is llama",)),
        (
            ["compare", "-s", "h200", "-m", "llama-3.3-70b", "-w", "agentic:coding-agent", "--stack", "sglang+ar_rms"],
            ("llama-3.3-70b is llama",),
        ),
        (
            ["frontier", "-s", "h200", "-m", "llama-3.3-70b", "-w", "agentic:coding-agent", "--stack", "sglang+ar_rms"],
            ("llama-3.3-70b is llama",),
        ),
        (  # the fused kernel is NVIDIA's (SM90 / SM100 families): an MI300X runs none
            ["predict", "-s", "mi300x", "-m", "llama-3.3-70b", "-c", "4", "--tp", "4", "--stack", "vllm+ar_rms"],
            ("'mi300x' states no chip.compute_capability", "'vllm+ar_rms' would price exactly as 'vllm'"),
        ),
        (
            ["compare", "-s", "mi300x,mi325x", "-m", "llama-3.3-70b", "--html", "", "--stack", "vllm+ar_rms"],
            ("'mi300x' states no chip.compute_capability",),
        ),
    ],
)
def test_ar_rms_that_fuses_no_step_is_refused(capsys, cmd, words):
    code, out, err = run(capsys, *cmd)
    # was: exit 0 with every figure equal to the stack's without +ar_rms (predict TPOT 15.62 ms both ways)
    check_error(code, out, err, "--stack: +ar_rms (the all-reduce + rmsnorm fusion) covers no step here", *words)


def test_ar_rms_that_fuses_a_step_still_runs(capsys):
    from jalapeno.cli.serving_opts import refuse_idle_ar_rms
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_model

    llama, oss = load_model("llama-3.3-70b"), load_model("gpt-oss-120b")
    refuse_idle_ar_rms("sglang+ar_rms", oss, load_pricer("h200", stack="sglang+ar_rms"))  # gpt_oss is listed
    refuse_idle_ar_rms("vllm+ar_rms", llama, load_pricer("h200", stack="vllm+ar_rms"))  # vLLM's pass: any model
    refuse_idle_ar_rms("sglang", llama, load_pricer("h200", stack="sglang"))  # no +ar_rms: nothing to refuse
    # a comparison with one system that fuses a step runs (h200 does, mi300x does not)
    prs = [load_pricer(n, stack="vllm+ar_rms") for n in ("mi300x", "h200")]
    refuse_idle_ar_rms("vllm+ar_rms", llama, prs)


def test_a_toml_or_empty_file_given_as_a_model_is_named(capsys, tmp_path):
    system = DATA / "systems" / "h200.toml"
    code, out, err = run(capsys, "predict", "-s", "h200", "-m", str(system), "-c", "4")
    # was: "malformed JSON at line 1 column 1: Expecting value. Fix: fix the JSON syntax of the config file"
    check_error(
        code,
        out,
        err,
        "--model",
        "is a toml file, and a model is read from a hugging face config.json",
        "a system toml goes to --system",
    )
    empty = tmp_path / "config.json"
    empty.write_text("\n")
    code, out, err = run(capsys, "models", "show", str(empty))
    check_error(code, out, err, "config.json", "is empty", "give the model's hugging face config.json")
