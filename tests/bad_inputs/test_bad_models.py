"""Bad model, batch and deployment input: each case raises one JalapenoError whose message names
the field and the fix (DESIGN.md §6), or is reported infeasible with the reason."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.errors import (
    InfeasibleDeployment,
    JalapenoError,
    SpecError,
    UnknownNameError,
    UnsupportedModelError,
)
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision


def _config(name: str) -> dict:
    text = (resources.files("jalapeno") / "data" / "models" / f"{name}.json").read_text()
    return json.loads(text)


def _write(tmp_path, cfg, name: str = "model.json") -> str:
    p = tmp_path / name
    p.write_text(cfg if isinstance(cfg, str) else json.dumps(cfg))
    return str(p)


def _expect(path: str, field: str, exc=SpecError) -> JalapenoError:
    with pytest.raises(exc) as ei:
        load_model(path)
    err = ei.value
    msg = str(err)
    assert isinstance(err, JalapenoError)
    assert field in msg, msg
    assert "Fix:" in msg, msg
    return err


def test_good_copy_loads(tmp_path):
    m = load_model(_write(tmp_path, _config("llama-3.3-70b")))
    assert m.hidden_size == 8192


def test_malformed_json(tmp_path):
    text = json.dumps(_config("llama-3.3-70b"))[:-1] + ",,}"
    err = _expect(_write(tmp_path, text, "broken.json"), "broken.json")
    assert "malformed JSON" in str(err)


def test_json_not_an_object(tmp_path):
    _expect(_write(tmp_path, "[1, 2, 3]", "list.json"), "list.json")


def test_missing_hidden_size(tmp_path):
    cfg = _config("llama-3.3-70b")
    del cfg["hidden_size"]
    err = _expect(_write(tmp_path, cfg), "hidden_size")
    assert "hidden_size" in err.field


def test_unsupported_model_type(tmp_path):
    cfg = _config("llama-3.3-70b")
    cfg["model_type"] = "mamba"
    err = _expect(_write(tmp_path, cfg), "model_type", UnsupportedModelError)
    assert "mamba" in str(err)


def test_missing_model_type(tmp_path):
    cfg = _config("llama-3.3-70b")
    del cfg["model_type"]
    _expect(_write(tmp_path, cfg), "model_type", UnsupportedModelError)


def test_unknown_model_name_suggests_closest():
    with pytest.raises(UnknownNameError) as ei:
        load_model("deepseek-r2")
    msg = str(ei.value)
    assert "deepseek-r2" in msg and "deepseek-r1" in msg
    assert "did you mean 'deepseek-r1'" in msg
    assert "Fix:" in msg


def test_missing_model_file(tmp_path):
    _expect(str(tmp_path / "nope.json"), "nope.json")


@pytest.mark.parametrize("value", [-61, 0, 6.5, "61", True])
def test_bad_num_hidden_layers(tmp_path, value):
    cfg = _config("deepseek-r1")
    cfg["num_hidden_layers"] = value
    err = _expect(_write(tmp_path, cfg), "num_hidden_layers")
    assert "positive integer" in str(err)


def test_top_k_above_expert_count(tmp_path):
    cfg = _config("deepseek-r1")
    cfg["num_experts_per_tok"] = 300  # 256 routed experts
    err = _expect(_write(tmp_path, cfg), "num_experts_per_tok")
    assert "300" in str(err) and "256" in str(err)


def test_kv_heads_not_dividing_heads(tmp_path):
    cfg = _config("llama-3.3-70b")
    cfg["num_key_value_heads"] = 7
    _expect(_write(tmp_path, cfg), "num_key_value_heads")


@pytest.mark.parametrize("key", ["num_key_value_heads", "head_dim"])
def test_zero_kv_heads_or_head_dim_is_refused_not_derived(tmp_path, key):
    """0 is not "absent": Qwen3-32B with ``num_key_value_heads: 0`` was priced as MHA (64 KV heads, 8x its KV cache)."""
    cfg = _config("qwen3-32b")
    cfg[key] = 0
    err = _expect(_write(tmp_path, cfg), key)
    assert "must be a positive integer, got 0" in err.problem and "remove it (null) to derive it" in err.fix


def test_head_dim_not_derivable_is_refused(tmp_path):
    """Without head_dim, hidden_size / num_attention_heads must be whole (5120 / 48 is not: no silent floor)."""
    cfg = _config("qwen3-32b")
    del cfg["head_dim"]
    cfg["num_attention_heads"], cfg["num_key_value_heads"] = 48, 8
    err = _expect(_write(tmp_path, cfg), "head_dim")
    assert "hidden_size=5120 is not a multiple of num_attention_heads=48" in err.problem


def test_negative_batch_field():
    with pytest.raises(SpecError) as ei:
        Batch.make(decode_seqs=-1, decode_ctx=100)
    assert "decode_seqs" in str(ei.value) and "Fix:" in str(ei.value)


def test_non_finite_batch_field():
    with pytest.raises(SpecError) as ei:
        Batch.make(decode_seqs=1, decode_ctx=float("nan"))
    assert "decode_ctx" in str(ei.value)


def test_tp_not_dividing_heads():
    m = load_model("deepseek-r1")
    with pytest.raises(InfeasibleDeployment) as ei:
        step_cost(m, load_pricer("gb200-nvl72"), Layout(tp=3), get_precision("fp8"),
                  Batch.make(decode_seqs=1, decode_ctx=100))
    assert ei.value.field == "tp"
    assert "128" in str(ei.value) and "Fix:" in str(ei.value)


def test_zero_parallel_degree():
    m = load_model("deepseek-r1")
    with pytest.raises(InfeasibleDeployment) as ei:
        step_cost(m, load_pricer("gb200-nvl72"), Layout(dp=0), get_precision("fp8"),
                  Batch.make(decode_seqs=1, decode_ctx=100))
    assert ei.value.field == "dp"


def test_ep_on_dense_model():
    m = load_model("llama-3.3-70b")
    with pytest.raises(InfeasibleDeployment) as ei:
        step_cost(m, load_pricer("h100"), Layout(tp=1, dp=2, ep=2), get_precision("bf16"),
                  Batch.make(decode_seqs=1, decode_ctx=100))
    assert ei.value.field == "ep"


def test_more_chips_than_the_system_has():
    m = load_model("deepseek-r1")
    with pytest.raises(InfeasibleDeployment) as ei:
        # 8 x 32 x 61 = 15,616 chips; the catalog's cluster level holds 8,192
        step_cost(m, load_pricer("gb200-nvl72"), Layout(tp=8, dp=32, ep=256, pp=61),
                  get_precision("fp8"), Batch.make(decode_seqs=1, decode_ctx=100))
    assert ei.value.field == "chips"


def test_deepseek_fp8_on_one_h100_does_not_fit():
    # 671e9 weights x ~1 B (FP8) = ~671 GB against 80 GB of HBM on one chip
    m = load_model("deepseek-r1")
    sc = step_cost(m, load_pricer("h100"), Layout(), get_precision("fp8"),
                   Batch.make(decode_seqs=1, decode_ctx=1000))
    assert not bool(sc.feasible[0])
    assert "weights" in str(sc.reason[0])
    assert sc.bound[0] == "hbm_capacity"
    assert sc.summary()["feasible"] is False


BF16_ONLY = '''
schema_version = 1
name = "bf16-box"
description = "a valid system whose chip has BF16 tensor cores only (the schema requires only bf16)"

[chip]
name = "T1"
peak_dense_tflops.bf16 = { value = 1000, source = "test" }
hbm_capacity_gb = { value = 100, source = "test" }
hbm_bandwidth_tb_per_s = { value = 4.0, source = "test" }
hbm_stacks = { value = 4, source = "test" }
tdp_w = { value = 700, source = "test" }

[[levels]]
name = "node"
chips = 8
scope = "scale_up"
topology = "switched"
bandwidth_gb_per_s = { value = 450, source = "test" }
latency_us = { value = 1.0, source = "test" }

[power]
allin_kw_per_chip = { value = 1.5, source = "test" }

[cost]
usd_per_chip_hour = { value = 1.0, source = "test" }
'''


@pytest.mark.parametrize("model", ["deepseek-r1", "gpt-oss-120b", "llama-3.3-70b"])
def test_bf16_only_chip_runs_every_op_in_bf16_when_fallback_is_asked(tmp_path, model):
    p = tmp_path / "bf16-box.toml"
    p.write_text(BF16_ONLY)
    m = load_model(model)
    prec = get_precision(m.default_precision).with_options(compute_fallback=True)
    sc = step_cost(m, load_pricer(str(p)), Layout(tp=8), prec,
                   Batch.make(decode_seqs=4, decode_ctx=100, prefill_tokens=100))
    assert set(sc.ops.fmt) == {"bf16"}


@pytest.mark.parametrize("model, module", [("deepseek-r1", "attention projections"),
                                           ("gpt-oss-120b", "routed experts")])
def test_bf16_only_chip_refuses_fp8_compute_without_fallback(tmp_path, model, module):
    p = tmp_path / "bf16-box.toml"
    p.write_text(BF16_ONLY)
    m = load_model(model)
    with pytest.raises(SpecError) as ei:
        step_cost(m, load_pricer(str(p)), Layout(tp=8), get_precision(m.default_precision),
                  Batch.make(decode_seqs=4, decode_ctx=100))
    assert ei.value.field == "--precision"
    assert f"the {module} on T1 in FP8" in ei.value.problem
    assert "--compute-fallback" in ei.value.fix
    # the presets it suggests are ones the chip runs (the fix once said "e.g. -p fp8" to a chip without FP8)
    assert "(-p bf16, " in ei.value.fix and "-p fp8" not in ei.value.fix


def test_bf16_only_chip_runs_deepseek_v32(tmp_path):
    p = tmp_path / "bf16-box.toml"
    p.write_text(BF16_ONLY)
    sc = step_cost(load_model("deepseek-v3.2"), load_pricer(str(p)), Layout(tp=8),
                   get_precision("bf16"), Batch.make(decode_seqs=4, decode_ctx=100, prefill_tokens=100))
    assert set(sc.ops.fmt) == {"bf16"}
