"""Round 39's break pass (break39): inputs that ran, crashed or were misnamed, each now one error naming its
field and fix. Expected figures are worked by hand in each docstring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import check_error, error_line, run

MODELS = Path(__file__).resolve().parents[2] / "src/jalapeno/data/models"


def _config(tmp_path, base: str, drop: tuple[str, ...] = (), **fields) -> str:
    cfg = json.loads((MODELS / f"{base}.json").read_text())
    for k in drop:
        cfg.pop(k)
    cfg.update(fields)
    p = tmp_path / f"{base}-edited.json"
    p.write_text(json.dumps(cfg))
    return str(p)


YARN4 = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768, "rope_theta": 1000000}


def test_rope_parameters_is_read_as_rope_scaling(capsys, tmp_path):
    """transformers v5 writes rope_scaling as rope_parameters: Qwen3's yarn recipe under that name was ignored
    (context 40,960, the max_position_embeddings); read, it gives 32,768 x 4 = 131,072 tokens."""
    path = _config(tmp_path, "qwen3-32b", rope_parameters=YARN4)
    code, out, err = run(capsys, "models", "show", path, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["max_context"] == 131072
    assert d["max_context_from"] == "rope_parameters yarn: original_max_position_embeddings 32,768 x factor 4"


def test_rope_parameters_without_a_type_is_the_default_rope(capsys, tmp_path):
    """{"rope_theta": 1e6} alone (transformers v5's plain RoPE) keeps max_position_embeddings, 40,960."""
    path = _config(tmp_path, "qwen3-32b", rope_parameters={"rope_theta": 1000000})
    code, out, err = run(capsys, "models", "show", path, "--json")
    assert code == 0, err
    assert json.loads(out)["max_context"] == 40960


def test_nested_rope_parameters_take_the_full_attention_layers(capsys, tmp_path):
    """Nested by layer type (vLLM's is_rope_parameters_nested): the full-attention layers' yarn bounds the
    context (32,768 x 2 = 65,536); a sliding layer sees only its window."""
    rp = {"full_attention": {**YARN4, "factor": 2.0}, "sliding_attention": {"rope_type": "default"}}
    path = _config(tmp_path, "qwen3-32b", rope_parameters=rp)
    code, out, err = run(capsys, "models", "show", path, "--json")
    assert code == 0, err
    assert json.loads(out)["max_context"] == 65536


def test_nested_rope_parameters_that_disagree_without_full_attention(capsys, tmp_path):
    rp = {"sliding_attention": {"rope_type": "default"}, "chunked_attention": {**YARN4}}
    path = _config(tmp_path, "qwen3-32b", rope_parameters=rp)
    check_error(*run(capsys, "models", "show", path), "rope_parameters", "different contexts",
                "sliding_attention 40960", "chunked_attention 131072", "full_attention")


def test_rope_parameters_and_rope_scaling_that_disagree(capsys, tmp_path):
    """Both fields, 131,072 (yarn x 4) against 40,960 (none): one would be ignored."""
    path = _config(tmp_path, "qwen3-32b", rope_parameters=YARN4, rope_scaling={"rope_type": "default"})
    check_error(*run(capsys, "models", "show", path), "rope_parameters: gives a context of 131072 tokens",
                "rope_scaling 40960", "keep one of them")
    same = _config(tmp_path, "qwen3-32b", rope_parameters=YARN4, rope_scaling={**YARN4})
    code, out, err = run(capsys, "models", "show", same, "--json")
    assert code == 0, err


@pytest.mark.parametrize("rope", ["rope_scaling", "rope_parameters"])
def test_a_rope_factor_past_the_context_bound(capsys, tmp_path, rope):
    """factor 4e6 over 32,768 tokens = 1.31e11 tokens (> 2^27 = 134,217,728) was read as the model's context;
    max_position_embeddings that large is refused already. 4,096 (= 2^27 / 32,768) is at the bound."""
    path = _config(tmp_path, "qwen3-32b", **{rope: {**YARN4, "factor": 4e6}})
    check_error(*run(capsys, "models", "show", path), f"{rope}.factor", "32,768 x factor 4e+06 = 1.31e+11 tokens",
                "at most 134,217,728")
    ok = _config(tmp_path, "qwen3-32b", **{rope: {**YARN4, "factor": 4096}})
    code, out, err = run(capsys, "models", "show", ok, "--json")
    assert code == 0, err
    assert json.loads(out)["max_context"] == 2**27


def test_a_factor_past_float_range_is_not_a_generic_error(capsys, tmp_path):
    """factor 1e308 x 32,768 overflows to inf: int(inf) raised OverflowError, shown as 'a field has the wrong
    type or value' naming no field."""
    path = _config(tmp_path, "qwen3-32b", rope_scaling={**YARN4, "factor": 1e308})
    check_error(*run(capsys, "models", "show", path), "rope_scaling.factor", "inf tokens")


@pytest.mark.parametrize("base", ["deepseek-r1", "qwen3-235b-a22b", "mixtral-8x7b"])
def test_a_missing_top_k_names_hugging_faces_key(capsys, tmp_path, base):
    """Without num_experts_per_tok the message asked for "experts_per_token", gpt-oss's own key, which no
    DeepSeek/Qwen/Mixtral config has."""
    path = _config(tmp_path, base, drop=("num_experts_per_tok",))
    line = error_line(*run(capsys, "models", "show", path))
    assert f"{path}: num_experts_per_tok: missing required field" in line, line
    assert "experts_per_token" not in line.replace("num_experts_per_tok", ""), line


def _kimi(tmp_path, **group) -> str:
    cfg = json.loads((MODELS / "kimi-k2.5.json").read_text())
    q = cfg["quantization_config"]
    if "config_groups" in group:
        q["config_groups"] = group["config_groups"]
    else:
        q["config_groups"]["group_0"].update(group)
    p = tmp_path / "kimi-edited.json"
    p.write_text(json.dumps(cfg))
    return str(p)


@pytest.mark.parametrize("groups, shown", [(7, "got 7"), ("int4", 'got "int4"'), (["g"], 'got ["g"]')])
def test_compressed_tensors_config_groups_must_be_an_object(capsys, tmp_path, groups, shown):
    """7 raised "'int' object has no attribute 'values'", shown as a generic 'a field has the wrong type'."""
    path = _kimi(tmp_path, config_groups=groups)
    check_error(*run(capsys, "models", "show", path), "quantization_config.config_groups",
                "must be an object of named groups", shown)


@pytest.mark.parametrize("targets, shown", [(3, "got 3"), ("re:.*mlp.experts.*", 'got "re:.*mlp.experts.*"'),
                                            ({"a": 1}, 'got {"a": 1}'), ([1], "got [1]")])
def test_compressed_tensors_targets_must_be_a_list_of_names(capsys, tmp_path, targets, shown):
    """A string was read letter by letter ('r e : . * m l p . e x p e r t s' holds no 'expert', so Kimi's
    INT4 experts were priced as INT4 in every linear layer, w4a16-g32); a number raised TypeError."""
    path = _kimi(tmp_path, targets=targets)
    check_error(*run(capsys, "models", "show", path), "quantization_config.config_groups.group_0.targets",
                "must be a list of module names", shown)


POINTS = Path(__file__).resolve().parents[2] / "src/jalapeno/data/validation/inferencex_points.csv"


@pytest.mark.parametrize("stat, hint", [("Median", "(did you mean 'median'?)"), ("p50", "")])
def test_a_points_row_whose_ttft_stat_is_unread_is_skipped(capsys, tmp_path, stat, hint):
    """ttft_stat picks the predicted TTFT a row is compared with: a cell starting 'median' the p50, any other the
    mean. 'Median' or 'p50' (a median, written otherwise) was compared with the mean, silently."""
    import csv

    rows = list(csv.DictReader(POINTS.open()))
    row = next(r for r in rows if r["ttft_stat"] == "median")
    row["ttft_stat"] = stat
    p = tmp_path / "pts.csv"
    with p.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(row))
        w.writeheader()
        w.writerow(row)
    check_error(*run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--no-mlperf"),
                "no measured point could be mapped", f"ttft_stat '{stat}' is not mean, median or unspecified", hint)
