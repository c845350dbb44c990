"""``--kv-dtype``, ``--attention-dtype`` and ``--compute-fallback`` on the commands that take a
precision: the override reaches the result (and its recorded precision name), bad values and
precisions a model/chip pair cannot run get one error line."""

from __future__ import annotations

import json

import pytest

from cli_runner import check_error, run


def test_step_kv_dtype_changes_kv_memory(capsys):
    args = ("step", "-s", "h100", "-m", "qwen3-235b-a22b", "-p", "fp8", "--tp", "4", "--dp", "1", "--ep", "4",
            "--batch", "8", "--context", "1000", "--json")
    code, out, _ = run(capsys, *args, "--kv-dtype", "bf16")
    assert code == 0
    d = json.loads(out)
    assert d["precision"] == "fp8,kv=bf16"
    # 8 sequences x 1000 tokens x 48,128 B per token per GPU (94 layers x 1 KV head x 128 x 2 x 2 B)
    assert d["memory"]["kv_bytes"] == pytest.approx(8 * 1000 * 48_128, rel=1e-12)


def test_predict_attention_dtype_is_recorded(capsys):
    code, out, _ = run(capsys, "predict", "-s", "b200", "-m", "deepseek-r1", "--dp", "8", "--ep", "8", "-c", "64",
                       "--attention-dtype", "fp8", "--json")
    assert code == 0
    assert "attn=fp8" in json.dumps(json.loads(out))


@pytest.mark.parametrize("cmd, words", [
    (("step", "-s", "b200", "-m", "llama-3.3-70b", "-p", "fp4", "--dp", "1", "--ep", "1"), ["--precision", "nvfp4"]),
    (("frontier", "-s", "h100", "-m", "llama-3.3-70b", "-p", "nvfp4"), ["fp4", "--compute-fallback"]),
    (("compare", "-m", "gpt-oss-120b", "--kv-dtype", "fp8_ds_mla", "--json"), ["--kv-dtype", "mla"]),
    (("predict", "-s", "h100", "-c", "8", "--kv-dtype", "int3"), ["--kv-dtype", "bf16, fp8"]),
    (("simulate", "-s", "h100", "-c", "8", "--attention-dtype", "fp4"), ["--attention-dtype", "bf16, fp8"]),
])
def test_precision_errors_are_one_line(capsys, cmd, words):
    check_error(*run(capsys, *cmd), *words)
