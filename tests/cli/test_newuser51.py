"""Round 51 new-user fixes (newuser51): a model read from ``./config.json`` is named after its folder.

Expected values are worked by hand in each test's comments, not read off the code's printed text.
"""

from __future__ import annotations

import json

from cli_runner import check_error, run

#: A Llama-3.1-8B-shaped config.json (the fields a Hugging Face llama config gives).
LLAMA_8B = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 32,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}


def _config(folder) -> None:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(LLAMA_8B))


def test_a_config_json_in_the_working_folder_is_named_after_the_folder(capsys, tmp_path, monkeypatch):
    """`-m config.json` / `-m ./config.json` from the model's own folder named the model '' (the parent of a bare
    file name is '.', whose name is empty): models show printed a blank name, and step's TP error read "TP3 does
    not divide 's 32 attention heads". The folder is llama-8b, so the model is llama-8b."""
    _config(tmp_path / "llama-8b")
    monkeypatch.chdir(tmp_path / "llama-8b")
    for arg in ("config.json", "./config.json"):
        code, out, err = run(capsys, "models", "show", arg, "--json")
        assert code == 0, err
        assert json.loads(out)["name"] == "llama-8b"
    # 32 heads: TP3 does not divide them (32 / 3 is not whole), and the error names the model
    check_error(
        *run(capsys, "step", "-s", "h200", "-m", "./config.json", "--tp", "3", "--batch", "8"),
        "TP3 does not divide llama-8b's 32 attention heads",
    )


def test_a_hub_cache_config_is_named_after_its_repository_not_the_snapshot_hash(capsys, tmp_path):
    """In a Hugging Face hub cache the file sits in models--ORG--NAME/snapshots/HASH/: the name is NAME
    (Llama-3.1-8B here), not the 40-hex snapshot folder."""
    snap = tmp_path / "models--meta-llama--Llama-3.1-8B" / "snapshots" / ("0e9e39f2" * 5)
    _config(snap)
    code, out, err = run(capsys, "models", "show", str(snap / "config.json"), "--json")
    assert code == 0, err
    assert json.loads(out)["name"] == "Llama-3.1-8B"
