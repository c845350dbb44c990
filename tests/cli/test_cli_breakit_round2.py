"""Findings of the break-it pass on the options added with the pricer seam and the deployed
configurations (issues 10-11): each refused with one line naming the option and the fix, or run
the way the user asked."""

from __future__ import annotations

import json

import pytest

from cli_runner import check_error, run


@pytest.mark.parametrize("args, words", [
    # a recipe is one engine's settings for one model on some systems
    (("predict", "-s", "h200", "-c", "64", "--engine", "sglang-b200-dsr1-fp4"), ["--engine", "b200", "not h200"]),
    (("predict", "-s", "b200", "-m", "gpt-oss-120b", "-c", "64", "--engine", "sglang-b200-dsr1-fp4"),
     ["--engine", "deepseek-r1", "not gpt-oss-120b"]),
    (("frontier", "-s", "b200", "--engine", "sglang-mi355x-dsr1-fp4"), ["--engine", "not b200"]),
    # --as-deployed runs each system's recipe: stated options would be silently overridden
    (("compare", "-s", "h200,b200", "--as-deployed", "--serving", "agg"), ["--as-deployed", "--serving"]),
    (("compare", "-s", "h200", "--as-deployed", "-p", "bf16", "--max-running", "8"),
     ["--as-deployed", "--precision", "--max-running"]),
    # measured routing skew is published for aux-loss-free routers only
    (("predict", "-s", "gb200-nvl72", "-m", "gpt-oss-120b", "-c", "8", "--routing", "measured"),
     ["--routing", "auxiliary-loss router", "uniform"]),
    (("step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "8", "--dp", "1", "--routing", "measured"),
     ["--routing", "dense"]),
    # a cached prefix without prefill tokens, contexts beyond the model's
    (("step", "-s", "gb200-nvl72", "--prefix", "4096"), ["--prefix", "--prefill-tokens"]),
    (("step", "-s", "gb200-nvl72", "--batch", "8", "--context", "1000000"), ["--context", "163840"]),
    (("predict", "-s", "b200", "--tp", "8", "--ep", "8", "-c", "8", "--mtp", "0"), ["--mtp", ">= 1", "leave --mtp out"]),
])
def test_refused_with_one_line(capsys, args, words):
    check_error(*run(capsys, *args), *words)


def test_compare_on_a_dense_model_sweeps_its_runnable_precisions(capsys):
    """Llama-3.3-70B's FP4 checkpoint is NVFP4 in every linear layer: B200 runs nvfp4 (and FP8),
    H200 only FP8 — no error about the MoE-only fp4 preset the user never asked for. Its FP8
    checkpoint (nvidia/Llama-3.3-70B-Instruct-FP8, ModelOpt) is per-tensor: fp8-tensor."""
    code, out, err = run(capsys, "compare", "-m", "llama-3.3-70b", "-s", "b200,h200", "--serving", "agg",
                         "-c", "16", "--json")
    assert code == 0, err
    d = json.loads(out)
    precs = {n: {p["deployment"]["precision"] for p in s["frontier"]} for n, s in d["systems"].items()}
    assert precs["h200"] <= {"fp8-tensor", "bf16"} and "fp4" not in precs["b200"]


def test_frontier_with_an_engine_uses_its_overlap(capsys):
    """The recipe says no two-batch overlap; without --overlap the frontier follows it."""
    code, out, err = run(capsys, "frontier", "-s", "b200", "--engine", "sglang-b200-dsr1-fp4", "--serving", "agg",
                         "--json")
    assert code == 0, err
    assert not any("TBO" in p["deployment"]["label"] for p in json.loads(out)["frontier"])


def test_api_refuses_a_bad_memory_fraction_and_lists_its_names():
    import jalapeno as jp
    from jalapeno.errors import SpecError

    with pytest.raises(SpecError, match="memory-fraction"):
        jp.step_cost(jp.load_model("gpt-oss-120b"), jp.load_pricer("h200"), jp.Layout(), jp.get_precision("mxfp4"),
                     jp.Batch.make(decode_seqs=1, decode_ctx=10), memory_fraction=2.0)
    assert {"load_pricer", "step_cost", "compare_systems"} <= set(dir(jp))


def test_api_wrong_types_get_one_clear_error():
    import jalapeno as jp
    from jalapeno.errors import JalapenoError

    m, p, prec = jp.load_model("gpt-oss-120b"), jp.load_pricer("h200"), jp.get_precision("mxfp4")
    calls = [
        lambda: jp.step_cost("gpt-oss-120b", p, jp.Layout(), prec, jp.Batch.make(decode_seqs=1, decode_ctx=8)),
        lambda: jp.step_cost(m, p, jp.Layout(), "mxfp4", jp.Batch.make(decode_seqs=1, decode_ctx=8)),
        lambda: jp.collective_time("all_reduce", 8, 1e6, p, p.efficiency),
        lambda: jp.system_frontier(m, p, jp.get_workload("1k1k"), None),
        lambda: jp.load_model(None),
        lambda: jp.load_system(42),
    ]
    for call in calls:
        with pytest.raises(JalapenoError) as e:
            call()
        assert e.value.fix


def test_frontier_takes_the_engine_memory_fraction(capsys):
    """A smaller engine share of HBM leaves less KV cache: the frontier's peak throughput cannot
    rise, every point records the fraction, and an impossible fraction is refused."""
    def frontier(*extra):
        code, out, err = run(capsys, "frontier", "-s", "h100", "-m", "gpt-oss-120b", "--serving", "agg", *extra,
                             "--json")
        assert code == 0, err
        pts = json.loads(out)["frontier"]
        return max(p["throughput_per_chip"] for p in pts), {p["deployment"]["memory_fraction"] for p in pts}

    peak0, fr0 = frontier()
    peak, fr = frontier("--memory-fraction", "0.85")
    assert fr0 == {None} and fr == {0.85}
    assert peak <= peak0 * (1 + 1e-9)
    check_error(*run(capsys, "compare", "-s", "h100", "-m", "gpt-oss-120b", "--memory-fraction", "0"),
                "memory-fraction", "(0, 1]")


@pytest.mark.parametrize("pools, words", [
    (("--prefill", "tp=4,ep=4,workers=1", "--decode", "dp=8,ep=8,eplb=5"), ["--decode eplb", "eplb="]),
    (("--prefill", "tp=0,workers=1", "--decode", "dp=8,ep=8"), ["--prefill tp", "tp >= 1"]),
    (("--prefill", "tp=4,ep=4", "--decode", "dp=8,ep=8,pp=0"), ["--decode pp"]),
])
def test_pool_errors_name_the_pool(capsys, pools, words):
    code, out, err = run(capsys, "predict", "-s", "gb200-nvl72", "-c", "64", *pools)
    check_error(code, out, err, *words)
    assert "--eplb " not in err  # the fix is written as a pool key


@pytest.mark.parametrize("args, words", [
    (("predict", "-s", "b200", "--dp", "8", "--ep", "8", "-c", "8", "--engine", "dynamo-trt-dsr1-fp4"),
     ["--engine", "disaggregated", "--prefill"]),
    (("compare", "-s", "h200", "--as-deployed", "--overlap", "tbo"), ["--as-deployed", "--overlap"]),
    (("compare", "-s", "h200", "--as-deployed", "--memory-fraction", "0.5"), ["--as-deployed", "--memory-fraction"]),
    (("collective", "-s", "h100", "-g", "1"), ["--group", ">= 2"]),
    # 1e30 bytes used to be priced silently; h100 holds 80 GB per chip (datasheet) = 80e9 / 2^30 = 74.5 GiB
    (("collective", "-s", "h100", "--bytes", "1e30"), ["--bytes", "1e+30", "74.5 GiB", "at most 8e+10"]),
    (("collective", "-s", "h100", "--bytes", "1e6,9e10"), ["--bytes", "9e+10", "74.5 GiB"]),
    (("collective", "-s", "h100", "--bytes", "inf"), ["--bytes", "finite"]),
])
def test_second_pass_refusals(capsys, args, words):
    check_error(*run(capsys, *args), *words)


def test_a_recipes_workload_settings_do_not_depend_on_how_lengths_are_spelled(capsys):
    """-w 8k1k, the default workload and --isl 8192 --osl 1024 are one workload: the Dynamo-TRT
    recipe's 8k1k prefill budget (16,640 per rank) applies to all three."""
    base = ("predict", "-s", "gb200-nvl72", "-c", "64", "--prefill", "dp=4,ep=4,workers=2", "--decode",
            "dp=16,ep=16", "--engine", "dynamo-trt-dsr1-fp4", "--json")
    budgets = set()
    for extra in (("-w", "8k1k"), (), ("--isl", "8192", "--osl", "1024")):
        code, out, err = run(capsys, *base, *extra)
        assert code == 0, err
        budgets.add(json.loads(out)["deployment"]["token_budget"])
    assert budgets == {16640}


def test_api_second_pass_type_errors():
    import jalapeno as jp
    from jalapeno.cost.pricer import band_pricers
    from jalapeno.errors import JalapenoError

    m, p, prec = jp.load_model("gpt-oss-120b"), jp.load_pricer("h200"), jp.get_precision("mxfp4")
    wl = jp.get_workload("1k1k")
    h100 = jp.load_pricer("h100")
    calls = [
        lambda: jp.step_cost(jp.load_model("deepseek-r1"), jp.load_pricer("b200"), jp.Layout(dp=8, ep=8),
                             jp.get_precision("fp8"), jp.Batch.make(decode_seqs=8, decode_ctx=64), mtp=(1, 0.8)),
        lambda: jp.sweep(m, p, "1k1k", prec),
        lambda: jp.sweep(m, p, wl, "mxfp4"),
        lambda: jp.compare_systems(m, [p], wl, prec, bands={"h200": {"low": p}}),
        lambda: jp.compare_systems(m, [p], wl, prec, bands=[p, p]),
        lambda: jp.compare_systems(m, [p], wl, prec, bands={"h200": band_pricers(h100)}),
    ]
    for call in calls:
        with pytest.raises(JalapenoError):
            call()
