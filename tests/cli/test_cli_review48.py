"""Findings of round 48's review (review48) of break48's input checks: a points CSV whose header ends in a comma (an
unnamed column, which break45 lets through while its cells are blank) was refused as "a row cut short" when the rows
do not end in one; ``compare --stack NAME+ar_rms`` over systems that each fuse nothing for a different reason named
only the first system's reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import check_error, run

DATA = Path(__file__).parents[2] / "src" / "jalapeno" / "data"


def test_a_header_with_a_trailing_comma_over_rows_without_one_still_reads(capsys, tmp_path):
    lines = (DATA / "validation" / "inferencex_points.csv").read_text().splitlines()
    h200 = [ln for ln in lines if ln.startswith("H200,")][:2]
    path = tmp_path / "p.csv"
    path.write_text("\n".join([lines[0] + ",", *h200]) + "\n")  # the header's unnamed last column, no cell for it
    code, out, err = run(capsys, "validate", "--no-aiconfigurator", "--points", str(path), "-s", "h200")
    # was (break48): "p.csv: line 2: 25 cell(s) where the header has 26 columns: a row cut short"; at b9dbd02 it read
    assert code == 0, err
    # a named column without its cell is still a row cut short: 24 of the 25 named columns given, the unnamed
    # 26th absent too
    short = ",".join(h200[0].split(",")[:-1])
    path.write_text("\n".join([lines[0] + ",", h200[1], short]) + "\n")
    code, out, err = run(capsys, "validate", "--no-aiconfigurator", "--points", str(path), "-s", "h200")
    check_error(code, out, err, "p.csv: line 3: 24 cell(s) where the header has 26 columns", "a row cut short")


def test_csv_rows_keeps_a_row_short_only_of_an_unnamed_column():
    from jalapeno.specs.files import csv_rows

    # header a,b,<unnamed>: the row "1,2" lacks only the unnamed cell, read as blank (None, as before break48)
    assert csv_rows("a,b,\n1,2\n", "x.csv") == [{"a": "1", "b": "2", "": None}]


def test_a_comparison_names_each_systems_reason_the_fusion_is_idle(capsys):
    code, out, err = run(
        capsys, "compare", "-s", "mi300x,h200", "-m", "llama-3.3-70b", "--html", "", "--stack", "sglang+ar_rms"
    )
    # MI300X runs no NVIDIA kernel; the H200 would, but SGLang's rule lists no Llama: both reasons, each system named
    # (was: MI300X's alone, as if the H200 fused a step)
    check_error(
        code,
        out,
        err,
        "--stack: +ar_rms (the all-reduce + rmsnorm fusion) covers no step here",
        "mi300x: its fused kernel runs on nvidia sm90 / sm100-family chips",
        "h200: sglang fuses it for",
        "llama-3.3-70b is llama",
        "drop +ar_rms: --stack sglang",
    )


@pytest.mark.parametrize(
    ("system", "fuses"),
    [  # CUDA compute capability (developer.nvidia.com/cuda-gpus): Hopper 9.0, Blackwell 10.0, Blackwell Ultra 10.3
        # are in vLLM's FI_ALLREDUCE_FUSION_MAX_SIZE_MB table; the A100 (8.0) and AMD's chips are not
        ("h100", True),
        ("h800", True),
        ("b200", True),
        ("gb200-nvl72", True),
        ("b300", True),
        ("gb300-nvl72", True),
        ("a100-sxm", False),
        ("mi355x", False),
    ],
)
def test_vllm_ar_rms_is_refused_only_where_no_chip_of_the_family_runs_the_kernel(system, fuses):
    from jalapeno.cli.serving_opts import refuse_idle_ar_rms
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.errors import SpecError
    from jalapeno.specs.catalog import load_model

    pr, llama = load_pricer(system, stack="vllm+ar_rms"), load_model("llama-3.3-70b")
    if fuses:
        refuse_idle_ar_rms("vllm+ar_rms", llama, pr)
    else:
        with pytest.raises(SpecError, match="fused kernel runs on NVIDIA SM90 / SM100-family chips"):
            refuse_idle_ar_rms("vllm+ar_rms", llama, pr)


def test_a_user_model_of_a_listed_type_fuses_under_sglangs_rule(tmp_path):
    import json

    from jalapeno.cli.serving_opts import refuse_idle_ar_rms
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.model_file import load_model_file

    # a user's config.json of model_type deepseek_v3 (DeepseekV3ForCausalLM: on SGLang's list, PR #14764)
    path = tmp_path / "my-v3" / "config.json"
    path.parent.mkdir()
    path.write_text((DATA / "models" / "deepseek-r1.json").read_text())
    assert json.loads(path.read_text())["model_type"] == "deepseek_v3"
    refuse_idle_ar_rms("sglang+ar_rms", load_model_file(path), load_pricer("gb300-nvl72", stack="sglang+ar_rms"))


def test_ar_rms_whose_all_reduce_table_moves_the_price_is_not_refused(capsys):
    import json

    # With an engine's all-reduce table other than TensorRT-LLM's (here SGLang's measured custom all-reduce on the
    # H200), the pricer prices the fused messages from TensorRT-LLM's table by vLLM's size cap, whatever the rule
    # (cost/pricer.SystemPricer.collective -> cost/allreduce_rms.fused_all_reduce): +ar_rms moves the price even for
    # a model SGLang's list leaves out, so "would price exactly as 'sglang'" is not true and nothing is refused
    args = ("predict", "-s", "h200", "-m", "llama-3.3-70b", "-c", "16", "--tp", "8", "--json")
    table = ("--set", "efficiency.all_reduce_table=sglang")
    code, out, err = run(capsys, *args, *table, "--stack", "sglang+ar_rms")
    assert code == 0, err  # was (break48): refused, "'sglang+ar_rms' would price exactly as 'sglang'"
    fused = json.loads(out)["tpot_s"]
    code, out, err = run(capsys, *args, *table, "--stack", "sglang")
    assert code == 0, err
    assert fused != json.loads(out)["tpot_s"]


def test_a_user_gh200_variant_gets_the_fusion_from_its_capability(capsys, tmp_path):
    # GH200 is SM90 (NVIDIA's CUDA GPUs table, compute capability 9.0). Until round 49 the pricer knew the fused
    # kernel's chips by their names' prefixes and refused this variant; its chip now inherits h200's
    # chip.compute_capability "9.0" (data/systems/h200.toml), so vLLM's pass fuses the small steps as on an H200
    import json

    path = tmp_path / "gh200.toml"
    path.write_text('base = "h200"\nname = "my-gh200"\nchip.name = "GH200 (Grace Hopper)"\n')
    args = ("predict", "-s", str(path), "-m", "llama-3.3-70b", "-c", "4", "--tp", "4", "--json")
    code, out, err = run(capsys, *args, "--stack", "vllm+ar_rms")
    assert code == 0, err
    fused = json.loads(out)["tpot_s"]
    code, out, err = run(capsys, *args, "--stack", "vllm")
    assert code == 0, err
    assert fused < json.loads(out)["tpot_s"]  # the fused steps drop their add + RMSNorm kernels


def test_a_user_chip_without_a_capability_is_told_how_chips_are_known(capsys, tmp_path):
    # a whole file of its own that states no chip.compute_capability and whose name matches no prefix of the
    # fallback table (cost/allreduce_rms.CAPABILITY_BY_PREFIX): refused, naming the key that fixes it
    text = (Path(__file__).parents[2] / "src/jalapeno/data/systems/h200.toml").read_text()
    text = "\n".join(line for line in text.splitlines() if not line.startswith("compute_capability"))
    path = tmp_path / "gh200.toml"
    text = text.replace('name = "H200 SXM"', 'name = "GH200 (Grace Hopper)"').replace('name = "h200"', 'name = "my-gh200"')
    text = text.replace("schema_version = 1\n", 'schema_version = 1\ncalibration = "h200"\n')  # no note on stderr
    path.write_text(text)
    code, out, err = run(
        capsys, "predict", "-s", str(path), "-m", "llama-3.3-70b", "-c", "4", "--tp", "4", "--stack", "vllm+ar_rms"
    )
    check_error(
        code,
        out,
        err,
        "'gh200 (grace hopper)' states no chip.compute_capability",
        "starting with one of gb300, b300, gb200, b200, h100, h200, h800",
        'set chip.compute_capability, e.g. "9.0"',
        "drop +ar_rms: --stack vllm",
    )


@pytest.mark.parametrize(
    "system, model, words",
    [
        # before 0.5.7 SGLang set the fusion only under is_sm100_supported() (the 0.5.5.post2-0.5.6.post2 wheels'
        # server_args): an H200 (SM90) is refused for its chip, not for a size cap it never reaches
        ("h200", "deepseek-r1", ("sglang fuses it on sm100 chips only", "'h200 sxm' is sm90")),
        # and only for DeepseekV3 / GptOss there (Kimi K2.5 by its DeepSeek-V3 class): Qwen3-MoE came with 0.5.7
        ("b200", "qwen3-235b-a22b", ("deepseek_v3, gpt_oss, kimi_k2 models only", "is qwen3_moe")),
    ],
)
def test_an_idle_fusion_under_the_pre_0_5_7_rule_names_that_rules_reason(capsys, system, model, words):
    # the reason read only the 'sglang' rule: under 'sglang_sm100' both said "no step ... within the fused
    # kernel's size cap", which no size explains
    code, out, err = run(capsys, "predict", "-s", system, "-m", model, "--stack", "sglang@0.5.6+ar_rms", "-c", "8")
    # the --stack NAME@VERSION note (its version rules) comes first, then the one error line
    notes = [ln for ln in err.strip().splitlines() if ln.startswith("note: ")]
    check_error(code, out, "\n".join(ln for ln in err.splitlines() if ln not in notes),
                "covers no step here", "before 0.5.7", *words)
