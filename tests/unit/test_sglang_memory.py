"""SGLang's KV pool and admission (deploy/engine_memory.py ``rule = "sglang"``, docs/model.md §7.2).

Expected values are worked by hand from SGLang's rules, not read from the code's output:
- pool = F · mem_fraction_static − weights (``ModelRunner.profile_max_num_token``), F = 137.90 GiB
  free before loading on an H200 at TP8 (InferenceX issue #2128: avail 12.25 + usage 125.65);
- a BF16 MLA latent of DeepSeek-R1 holds (512 + 64) x 61 layers x 2 B = 70,272 B per token;
- ``ignore_eos`` admission without radix cache (``add_one_req_ignore_eos``): a request is admitted
  only while, at every future completion, the free tokens cover the growth of the survivors.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.engine_memory import _profile, get_engine_memory
from jalapeno.deploy.engines import launch_limits, with_launch_kv
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.engine_pool import engine_memory_breakdown
from jalapeno.deploy.memory_fit import kv_bytes_per_seq_per_chip, weight_bytes_per_chip
from jalapeno.deploy.kv_capacity import admission_batch_cap
from jalapeno.errors import SpecError
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.serve.sim.entities import PrefixCache, Request
from jalapeno.serve.sim.scheduler import Instance
from jalapeno.specs.catalog import load_model, load_system
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import Workload

GIB = 2.0**30
TP8 = Layout(tp=8)
R1_BF16_TOKEN = (512 + 64) * 61 * 2  # 70,272 B


def _h200_pool_bytes(model, prec) -> float:
    return 137.90 * GIB * 0.82 - weight_bytes_per_chip(model, TP8, prec, 0, load_system("h200"))


def test_bf16_latent_bytes_per_token():
    prec = get_precision("fp8").with_options(kv="bf16")
    assert R1_BF16_TOKEN == 70_272
    assert float(kv_bytes_per_seq_per_chip(load_model("deepseek-r1"), TP8, prec, 1.0)) == R1_BF16_TOKEN


def test_h200_pool_is_free_memory_times_fraction_less_weights():
    m, prec = load_model("deepseek-r1"), get_precision("fp8").with_options(kv="bf16")
    b = engine_memory_breakdown(m, load_system("h200"), TP8, prec, get_engine_memory("sglang-0.5"), 0.82)
    assert b["free_before_load"] == pytest.approx((12.25 + 125.65) * GIB)
    assert b["device_total"] == pytest.approx(143_771 * 2**20, rel=1e-4)  # nvidia-smi MiB
    assert b["kv_pool"] == pytest.approx(_h200_pool_bytes(m, prec))
    assert b["max_total_tokens"] == int(_h200_pool_bytes(m, prec) // R1_BF16_TOKEN)
    # the headroom F·(1 − m) is outside the pool: activations and CUDA graphs are not subtracted
    assert b["torch_peak"] == 0.0 and b["reserve"] == pytest.approx(b["device_total"] - 0.82 * b["free_before_load"])


def test_admission_cap_counts_whole_outputs_under_ignore_eos():
    m, prec = load_model("deepseek-r1"), get_precision("fp8").with_options(kv="bf16")
    prof = get_engine_memory("sglang-0.5")
    isl, osl = 7372.8, 921.6  # InferenceX 8k1k at range ratio 0.8: means of U[0.8 L, L]
    tokens = _h200_pool_bytes(m, prec) / R1_BF16_TOKEN
    cap = admission_batch_cap(m, load_system("h200"), TP8, prec, prof, isl, osl, 0.82)
    assert cap == pytest.approx(tokens / (isl + osl), rel=1e-9)
    assert 61 < cap < 64  # below the 64 users of the c64 run: the excess queues
    # FP8 latent (the preset's own) would hold twice the tokens: no cap at 64 users
    assert admission_batch_cap(m, load_system("h200"), TP8, get_precision("fp8"), prof, isl, osl, 0.82) > 100


def test_regular_admission_keeps_ratio_of_remaining_output():
    raw = {
        "name": "t",
        "rule": "sglang",
        "engine": "sglang",
        "version": "x",
        "source": "s",
        "mem_fraction_static": 0.88,
        "context_gib": 2.5,
        "init_new_token_ratio": 0.7,
        "min_new_token_ratio_factor": 0.14,
        "clip_max_new_tokens": 4096,
        "ignore_eos_admission": False,
    }
    per, head = _profile(raw).admission_tokens(1000.0, 500.0)
    assert per == pytest.approx(1000 + 250 + 0.7 * 0.14 * 250)  # context + r·(remaining/2)
    assert head == pytest.approx(1500.0)
    per, head = _profile(raw).admission_tokens(1000.0, 9000.0)  # output clipped at 4096
    assert head == pytest.approx(1000 + 4096)


def test_malformed_sglang_profile_names_the_keys():
    with pytest.raises(SpecError, match="mem_fraction_static, context_gib"):
        _profile({"name": "bad", "rule": "sglang", "engine": "sglang", "version": "x", "source": "s"})


def test_launch_limits_apply_fraction_profile_and_kv():
    kw, note = launch_limits("h200", "deepseek-r1", "sglang", "fp8", 8, 8192, 1024, 64)
    assert kw["memory_fraction"] == 0.82 and kw["engine_memory"].name == "sglang-0.5"
    prec = with_launch_kv(get_precision("fp8"), kw)
    assert "kv_dtype" not in kw and prec.kv_cache.name == "bf16" and prec.name == "fp8,kv=bf16"
    assert "--mem-fraction-static 0.82" in note
    # a recipe whose KV equals the preset's leaves the precision as it is
    kw, _ = launch_limits("b200", "deepseek-r1", "sglang", "fp8", 8, 1024, 1024, 32)
    assert with_launch_kv(get_precision("fp8"), kw).name == "fp8"


def test_h200_8k1k_queues_for_admission_at_64_not_32():
    m, pr = load_model("deepseek-r1"), load_pricer("h200")
    kw, _ = launch_limits("h200", "deepseek-r1", "sglang", "fp8", 8, 8192, 1024, 64)
    dep = Deployment(with_launch_kv(get_precision("fp8"), kw), Pool(TP8), **kw)
    plain = Deployment(
        dep.precision, Pool(TP8), **{k: v for k, v in kw.items() if k not in ("engine_memory", "memory_fraction")}
    )
    wl = Workload("8k1k", 8192, 1024, 0.8)
    got, ref = serve_at_concurrency(m, pr, dep, wl, [32, 64]), serve_at_concurrency(m, pr, plain, wl, [32, 64])
    assert got.queue_s[0] == 0.0 and got.ttft_s[0] == pytest.approx(ref.ttft_s[0], rel=1e-6)
    assert got.queue_s[1] > 0.3 and str(got.limit[1]).startswith("kv_capacity")
    # the decode batch at the cap: n = pool tokens / (ISL + OSL) running, of which the decoding
    # share D/(D + 1) (one 8k prompt fits one chunk: a request spends 1 of D + 1 steps prefilling)
    isl, osl = wl.mean_isl, wl.mean_osl
    n = _h200_pool_bytes(m, dep.precision) / R1_BF16_TOKEN / (isl + osl)
    assert got.decode_batch[1] == pytest.approx(n * (osl - 1) / osl, rel=1e-6)
    assert got.ttft_s[1] > ref.ttft_s[1] + 0.3


def _instance(capacity: float) -> Instance:
    return Instance(
        0,
        "agg",
        lambda *a, **k: 0.01,
        8,
        capacity,
        256,
        8192,
        PrefixCache(enabled=False),
        None,
        np.random.default_rng(0),
        reserve_outputs=True,
    )


def _req(i: int, isl: int, osl: int, generated: int = 0) -> Request:
    return Request(id=i, arrival_s=0.0, isl=isl, osl=osl, generated=generated)


def test_simulator_admits_only_requests_all_can_finish():
    # capacity 1000 tokens; one running request: 400 prompt, 100 of 300 output done (holds 500,
    # 200 left). A new request of 100 prompt + 300 output: free now 1000 − 500 − 100 = 400;
    # sorted by tokens left: running (200 left, bs 2): 400 − 200·2 = 0 ≤ 2 → refused.
    inst = _instance(1000.0)
    run = _req(0, 400, 300, generated=100)
    inst.decoding[run.id] = run
    inst.used = 500.0
    assert not inst._can_finish(_req(1, 100, 300))
    # the same request with 150 output tokens: its 150 left sort first (bs 2): 400 − 300 = 100 > 2;
    # then the running one (bs 1): 400 + 100 (freed) − 200 = 300 > 1 → admitted
    assert inst._can_finish(_req(2, 100, 150))


def test_simulator_counts_a_decoding_requests_progress():
    # Two running requests of 300 prompt + 400 output tokens started decoding at step 0 with their
    # first token (generated = 1, which the simulator moves only at retirement); at step 199 each
    # has emitted 1 + 199 = 200 tokens: holds 500, 200 left. Capacity 1,500, used 1,000. A new
    # request of 100 + 100: free 1,500 − 1,000 − 100 = 400; sorted by tokens left: the new one (100
    # left, bs 3): 400 − 300 = 100 > 3; a running one (bs 2): 400 + 100 − 400 = 100 > 2; the last
    # (bs 1): 400 + 600 − 200 = 800 > 1 → admitted. Counting each running request's left as its
    # whole output (399) while its tokens so far fill the pool refused it (400 + 100 − 798 < 0).
    inst = _instance(1500.0)
    for i in (0, 1):
        run = _req(i, 300, 400, generated=1)
        inst.decoding[run.id] = run
    inst.step_index, inst.used = 199, 1000.0
    assert inst._can_finish(_req(2, 100, 100))
    inst.step_index = 1  # 2 tokens each: 398 left, holds 302 (the same pool filled by 1,000 used)
    assert not inst._can_finish(_req(3, 100, 100))


def test_simulation_runs_the_rule_with_the_profile_only():
    from jalapeno.serve.sim.simulation import Simulation

    m, pr = load_model("deepseek-r1"), load_pricer("h200")
    kw, _ = launch_limits("h200", "deepseek-r1", "sglang", "fp8", 8, 8192, 1024, 64)
    dep = Deployment(with_launch_kv(get_precision("fp8"), kw), Pool(TP8), **kw)
    sim = Simulation(m, pr, dep)
    assert all(i.reserve_outputs for i in sim.instances)
    # the pool is SGLang's max_total_num_tokens, whatever the reference context
    assert sim.instances[0].capacity == pytest.approx(_h200_pool_bytes(m, dep.precision) / R1_BF16_TOKEN)
    assert not any(i.reserve_outputs for i in Simulation(m, pr, Deployment(dep.precision, Pool(TP8))).instances)


def test_predict_refuses_another_engines_memory_profile_with_a_recipe(capsys):
    from cli_runner import check_error, run

    # an SGLang recipe's KV pool was sized by vLLM's start-up profiling, silently
    check_error(
        *run(
            capsys,
            "predict",
            "-s",
            "b200",
            "-c",
            "64",
            "--engine",
            "sglang-b200-dsr1-fp4",
            "--engine-memory",
            "vllm-0.11",
        ),
        "--engine-memory: vllm-0.11 is vllm's memory profile and recipe sglang-b200-dsr1-fp4 runs sglang",
        "drop --engine-memory",
    )
    check_error(
        *run(
            capsys,
            "predict",
            "-s",
            "h200",
            "-c",
            "64",
            "--engine",
            "trtllm-h200-dsr1-fp8-mtp",
            "--engine-memory",
            "sglang-0.5",
        ),
        "recipe trtllm-h200-dsr1-fp8-mtp runs trt",
    )


def test_predict_with_an_sglang_recipe_takes_its_mem_fraction_static(capsys):
    from cli_runner import run

    # sglang-b200-dsr1-fp4 launches with --mem-fraction-static 0.85 (data/engines.toml); B200's free memory
    # before load is 179.06 GiB (driver) less 2.5 GiB context = 176.56 GiB, x 0.85 = 150.08 GiB (by hand).
    # Before, the profile's default 0.88 ran (155.37 GiB), unlike validation's run of the same recipe.
    code, out, err = run(
        capsys, "predict", "-s", "b200", "-c", "64", "--engine", "sglang-b200-dsr1-fp4", "--engine-memory", "sglang-0.5"
    )
    assert code == 0, err
    assert "x 0.85 = 150.08" in " ".join(out.split())
    code, out, err = run(
        capsys,
        "predict",
        "-s",
        "b200",
        "-c",
        "64",
        "--engine",
        "sglang-b200-dsr1-fp4",
        "--engine-memory",
        "sglang-0.5",
        "--memory-fraction",
        "0.88",
    )
    assert code == 0, err
    assert "x 0.88 = 155.37" in " ".join(out.split())  # an explicit fraction still wins


@pytest.mark.parametrize("opt", [("--max-running", "10"), ("--max-tokens-per-step", "100000")])
def test_step_refuses_profiling_limits_the_sglang_profile_does_not_use(capsys, opt):
    from cli_runner import check_error, run

    # accepted and without effect: SGLang's pool has no start-up profiling run to size
    check_error(
        *run(capsys, "step", "-s", "h200", "--tp", "8", "--engine-memory", "sglang-0.5", *opt),
        "--max-running/--max-tokens-per-step: size vLLM's start-up profiling run",
        "sglang-0.5's KV pool does not depend on them",
        "drop them, or use --engine-memory vllm-0.11",
    )


@pytest.mark.parametrize("name", ["sglang-0.5", "vllm-0.11"])
def test_a_variant_chip_with_other_memory_does_not_keep_the_logged_figures(name):
    """h200 with 96 GB (a --set what-if) kept H200's logged 137.90 GiB free / 140.40 GiB device under
    sglang-0.5: a pool larger than the chip. The logged figures stand only for the chip they were
    logged on; the variant takes the profile's fallback: its usable HBM, 96e9 B (less the assumed
    2.50 GiB context for SGLang). vllm-0.11 logs H100: the same holds for an H100 variant."""
    m, prec = load_model("deepseek-r1"), get_precision("fp8")
    root = "h200" if name == "sglang-0.5" else "h100"
    s = load_system(root, (("chip.hbm_capacity_gb", 96),))
    b = engine_memory_breakdown(m, s, TP8, prec, get_engine_memory(name), 0.88)
    assert b["device_total"] == pytest.approx(96e9) and b["device_total_sourced"] == 0.0
    # the same what-if that also keeps the root's name (`--set name=h200`: no renaming) is still a 96 GB chip
    s = load_system(root, (("chip.hbm_capacity_gb", 96), ("name", root)))
    b = engine_memory_breakdown(m, s, TP8, prec, get_engine_memory(name), 0.88)
    assert b["device_total"] == pytest.approx(96e9) and b["device_total_sourced"] == 0.0
    if name == "sglang-0.5":
        assert b["free_before_load"] == pytest.approx(96e9 - 2.5 * GIB) and b["free_before_load_sourced"] == 0.0
    # a what-if that leaves the memory alone keeps them
    same = load_system(root, (("chip.hbm_bandwidth_tb_per_s", 6),))
    b = engine_memory_breakdown(m, same, TP8, prec, get_engine_memory(name), 0.88)
    assert b["device_total_sourced"] == 1.0


def test_gb200_pool_from_the_logged_free_memory():
    """GB200 (round 39, gbthr39): nvidia-smi prints 189,471 MiB a GPU (sirius-db/sirius
    bench/gb200-4gpu/HARDWARE.md) = 185.03 GiB; SGLang measured F = 184 GiB before loading at TP4
    (sgl-project/sglang PR #31900: '0.75 x 184 GB = 138 GB'). config_id 227's FP8 weights, by hand
    (tests/unit/test_aic_dep_pools.py): TP4 157.52 GiB, DEP4 170.06 GiB a chip. At the script's
    m = 0.95 the pool is 184 x 0.95 - weights = 174.80 - 157.52 = 17.28 GiB (TP4), 4.74 GiB (DEP4);
    before, F fell back to the catalog's 186e9 B (173.23 GiB) less the assumed 2.50 GiB."""
    m, prec, s = load_model("deepseek-r1"), get_precision("fp8"), load_system("gb200-nvl72")
    prof = get_engine_memory("sglang-0.5")
    b = engine_memory_breakdown(m, s, Layout(tp=4), prec, prof, 0.95)
    assert b["device_total"] == pytest.approx(189_471 * 2**20, rel=1e-4) and b["device_total_sourced"] == 1.0
    assert b["free_before_load"] == pytest.approx(184.0 * GIB) and b["free_before_load_sourced"] == 1.0
    assert b["kv_pool"] / GIB == pytest.approx(184.0 * 0.95 - 157.52, abs=0.01)
    dep4 = engine_memory_breakdown(m, s, Layout(dp=4), prec, prof, 0.95)
    assert dep4["kv_pool"] / GIB == pytest.approx(184.0 * 0.95 - 170.06, abs=0.01)
    # the logged GB200 figures are GB200's only: GB300 still falls back to its catalog usable HBM
    gb300 = engine_memory_breakdown(m, load_system("gb300-nvl72"), Layout(tp=4), prec, prof, 0.95)
    assert gb300["device_total_sourced"] == 0.0 and gb300["free_before_load_sourced"] == 0.0
