"""Findings of round 51's break-it pass (break51): ``-p fp8,kv=bf16 --kv-dtype fp8`` ran one of the two KV dtypes
and dropped the other, silently, under a name ('fp8,kv=bf16,kv=fp8') that --precision itself refuses;
``validate --points <(...)`` said "not found" of a pipe (and read as a file, the points read twice, a traceback)."""

from __future__ import annotations

import pytest
from cli_runner import check_error, run

from jalapeno.specs.formats import get_precision


@pytest.mark.parametrize(
    ("precision", "option", "value", "words"),
    [
        ("fp8,kv=bf16", "--kv-dtype", "fp8", ("--kv-dtype", "fp8 contradicts kv=bf16", "drop --kv-dtype")),
        ("fp8,attn=bf16", "--attention-dtype", "fp8", ("--attention-dtype", "contradicts attn=bf16", "drop attn=")),
    ],
)
def test_an_option_contradicting_the_precisions_own_override_is_refused(capsys, precision, option, value, words):
    # was: exit 0, priced with the option's format and named 'fp8,kv=bf16,kv=fp8' (the -p override dropped)
    args = ("predict", "-s", "h200", "-m", "llama-3.3-70b", "-w", "1k1k", "-c", "4", "-p", precision)
    code, out, err = run(capsys, *args, option, value)
    check_error(code, out, err, *words)
    # the same format twice (fp8 is e4m3's name) says one thing: it runs
    code, out, err = run(capsys, *args[:-1], "fp8,kv=fp8", "--kv-dtype", "fp8_e4m3", "--json")
    assert code == 0, err


def test_an_override_replaces_the_one_a_models_default_precision_records():
    # minimax-m2.5 is released at 'fp8,kv=bf16' (its KV unquantised); --kv-dtype fp8 brings the fp8 preset's own KV
    # back, so the name is the preset's: 'fp8' (was 'fp8,kv=bf16,kv=fp8', which get_precision refuses)
    p = get_precision("fp8,kv=bf16").with_options(kv="fp8")
    assert p.name == "fp8"
    assert get_precision(p.name) == p  # the name reads back to what ran
    q = get_precision("fp8,kv=bf16").with_options(kv="fp8_e5m2")
    assert q.name == "fp8,kv=fp8_e5m2" and get_precision(q.name) == q


def test_a_model_default_with_kv_and_the_kv_option_run_under_a_readable_name(capsys):
    code, out, err = run(
        capsys,
        "predict",
        "-s",
        "h200",
        "-m",
        "minimax-m2.5",
        "-w",
        "1k1k",
        "-c",
        "4",
        "--tp",
        "8",
        "--kv-dtype",
        "fp8",
        "--json",
    )
    assert code == 0, err
    assert '"precision": "fp8"' in out and "kv=bf16" not in out


def test_validate_points_from_a_pipe_is_named_not_missing(capsys, tmp_path):
    # '--points <(cat pts.csv)' said "not found" (it exists: a pipe); read as a file it ended in an AttributeError
    # traceback, the points being read twice (the pipe's second read empty). A FIFO stands in for bash's <(...)
    import os

    fifo = tmp_path / "points.csv"
    os.mkfifo(fifo)
    code, out, err = run(capsys, "validate", "--points", str(fifo), "--no-aiconfigurator", "--no-mlperf")
    check_error(code, out, err, "--points", "not a regular file", "save the points to a file")


def test_a_stack_of_another_engine_than_the_recipes_is_not_pinned_at_the_recipes_release(capsys):
    # was: 'stack trtllm@0.5.6': SGLang 0.5.6 read as a TensorRT-LLM release, so TensorRT-LLM's rule for releases
    # before 1.2.0rc3 (moe_exchange = nvlink_all_to_all_above_top_k) priced the run, silently
    args = ("predict", "-s", "b200", "-m", "deepseek-r1", "--engine", "sglang-b200-dsr1-fp4", "-w", "1k1k", "-c", "8")
    code, out, err = run(capsys, *args, "--stack", "trtllm")
    assert code == 0, err
    assert "stack trtllm " in out and "@0.5.6" not in out and "nvlink_all_to_all_above_top_k" not in out
    # a profile of the recipe's own engine (SGLang on ROCm) still takes the recipe's release
    code, out, err = run(capsys, *args, "--stack", "sglang-rocm")
    assert code == 0, err
    assert "stack sglang-rocm@0.5.6" in out


@pytest.mark.parametrize("command", ["predict", "step"])
def test_an_engine_memory_profile_of_another_engine_than_the_stack_is_refused(capsys, command):
    # was: exit 0, TensorRT-LLM's fixed costs priced over a KV pool sized by vLLM's start-up profiling
    args = (
        command,
        "-s",
        "h100",
        "-m",
        "llama-3.3-70b",
        "--tp",
        "8",
        *(("-w", "1k1k", "-c", "8") * (command == "predict")),
    )
    code, out, err = run(capsys, *args, "--stack", "trtllm", "--engine-memory", "vllm-0.11")
    check_error(
        code,
        out,
        err,
        "--engine-memory",
        "vllm-0.11 is vllm's memory profile",
        "--stack trtllm",
        "drop --engine-memory",
    )
    # the stack's own engine, and a profile of no engine (kernel: a what-if floor), run
    for stack in ("vllm", "kernel"):
        code, out, err = run(capsys, *args, "--stack", stack, "--engine-memory", "vllm-0.11")
        assert code == 0, err


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (
            ("step", "-s", "h100", "-m", "llama-3.3-70b", "--tp", "8", "--chip-model", "sliced", "--placement", "best"),
            "h100 is",
        ),
        (
            ("step", "-s", "a100-sxm", "-m", "llama-3.3-70b", "--tp", "8", "--slices", "--placement", "striped"),
            "a100-sxm is",
        ),
        (
            ("compare", "-s", "h100,h200", "-m", "llama-3.3-70b", "-w", "1k1k", "--serving", "agg", "-c", "8")
            + ("--chip-model", "sliced", "--placement", "local_first", "--html", ""),
            "h100, h200 are",
        ),
    ],
)
def test_a_placement_on_one_slice_chips_is_refused(capsys, args, names):
    # H100/H200 are one GH100 die (data/systems/h100.toml slices = 1) and A100 has no [die]: a placement spreads
    # weights and KV over slices, so there was nothing to place; it ran, named in 'chip model: sliced (h100 1 slice,
    # best)', and changed nothing
    code, out, err = run(capsys, *args)
    check_error(code, out, err, "--placement", names, "one slice", "drop --placement")


def test_a_placement_applies_where_one_compared_chip_has_slices(capsys):
    # B200 is two dies (NV-HBI): the placement moves its figures, so the comparison takes it
    args = ("compare", "-s", "h100,b200", "-m", "llama-3.3-70b", "-w", "1k1k", "--serving", "agg", "-c", "8")
    code, out, err = run(capsys, *args, "--chip-model", "sliced", "--placement", "best", "--html", "")
    assert code == 0, err


def test_results_export_into_the_stores_own_files_is_refused(capsys, tmp_path):
    pytest.importorskip("duckdb")
    pytest.importorskip("pyarrow")
    store = tmp_path / "st"
    args = ("frontier", "-s", "h100", "-m", "llama-3.3-70b", "-w", "1k1k", "--serving", "agg", "-c", "8")
    for _ in range(2):
        code, out, err = run(capsys, *args, "--store", str(store))
        assert code == 0, err
    first, second = sorted(p.name for p in (store / "runs").iterdir())
    meta = store / "runs" / second / "meta.json"
    before = meta.read_text()
    # was: exit 0, the second run's meta.json replaced by the first run's points, and the second run gone from
    # `results list`, without a word
    code, out, err = run(capsys, "results", "export", first, "--store", str(store), "-o", str(meta))
    check_error(code, out, err, "--out", "inside the results store", "outside the store's runs/ folder")
    assert meta.read_text() == before
    code, out, err = run(capsys, "results", "export", first, "--store", str(store), "-o", str(tmp_path / "x.csv"))
    assert code == 0, err


def test_simulate_refuses_an_inapplicable_option_before_loading_kernel_tables(capsys, monkeypatch):
    # '--no-prefix-cache' on a fixed-length workload was refused only after --pricer table had loaded the system's
    # measured kernel tables (32 s on a loaded machine for a one-line error): the option check now comes first, so
    # a pricer that fails when called shows it is not reached
    import jalapeno.cli.system_opts as so

    def unreachable(*a, **k):
        raise AssertionError("system_pricer reached before the option check")

    monkeypatch.setattr(so, "system_pricer", unreachable)
    code, out, err = run(capsys, "simulate", "-s", "b200", "--pricer", "table", "--no-prefix-cache", "-n", "20")
    check_error(code, out, err, "--no-prefix-cache", "fixed-length workload", "drop --no-prefix-cache")


@pytest.mark.parametrize("half", [("--mtp-acceptance", "0.5"), ("--mtp", "2")])
def test_half_an_mtp_beside_an_mtp_recipe_names_the_recipes_own(capsys, half):
    # was: "MTP needs both ... (no default acceptance is assumed)", while the recipe runs one: trtllm-b200-dsr1-fp4-mtp
    # drafts 1 or 3 tokens by load at dynamo/trtllm's fitted DeepSeek-R1 acceptance (data/stack_fits.toml)
    args = (
        "predict",
        "-s",
        "b200",
        "-m",
        "deepseek-r1",
        "--engine",
        "trtllm-b200-dsr1-fp4-mtp",
        "-w",
        "1k1k",
        "-c",
        "8",
    )
    code, out, err = run(capsys, *args, *half)
    check_error(code, out, err, "--mtp/--mtp-acceptance", "recipe trtllm-b200-dsr1-fp4-mtp runs mtp", "pass both")
    assert "no default acceptance" not in err
    code, out, err = run(capsys, *args, "--mtp", "1", "--mtp-acceptance", "0.5")  # both: the explicit MTP runs
    assert code == 0, err
    assert "MTP1@0.5" in out
