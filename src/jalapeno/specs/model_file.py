"""Reading a model file: a Hugging Face ``config.json`` on disk into a :class:`~jalapeno.specs.model.ModelSpec`.

The file's text is read (:func:`~jalapeno.specs.files.read_user_text`), parsed as JSON with each key once, and
handed to :func:`~jalapeno.specs.model_config.model_from_config`; the model is named after the file or its folder
(:func:`file_model_name`). Every failure raises one :class:`~jalapeno.errors.SpecError` naming the file. Split
from model_config.py (round 52, module budget); the names stay importable from there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from jalapeno.errors import SpecError
from jalapeno.specs.files import (
    TOO_MANY_DIGITS_FIX,
    DuplicateKeyError,
    read_user_text,
    too_many_digits,
    too_many_digits_problem,
    unique_keys,
)
from jalapeno.specs.model import ModelSpec
from jalapeno.specs.model_config import model_from_config


def load_model_file(path: Path, name: str | None = None) -> ModelSpec:
    """Read a config.json file into a :class:`ModelSpec`.

    Raises:
        SpecError: the file is missing, not JSON, or a field is wrong (the message names it).
        UnsupportedModelError: the architecture is not supported.
    """
    path = Path(path)
    text = read_user_text(
        path, "a Hugging Face config.json", "pass a model name from `jalapeno models list` or the path of a config.json"
    )
    try:
        cfg = json.loads(text, object_pairs_hook=unique_keys)
    except DuplicateKeyError as e:
        raise SpecError(
            f"{path}: {e.key}",
            "is given twice in one object (JSON would keep the last, silently)",
            "give each key once, with the value the model has",
        ) from None
    except RecursionError:
        raise SpecError(str(path), "JSON nested too deeply", "pass a Hugging Face config.json") from None
    except json.JSONDecodeError as e:
        if not text.strip():  # was "malformed JSON at line 1 column 1: Expecting value" (break48)
            raise SpecError(str(path), "is empty", "give the model's Hugging Face config.json") from None
        if path.suffix.lower() == ".toml":  # a system or agentic TOML given to --model: was "malformed JSON"
            raise SpecError(
                str(path),
                "is a TOML file, and a model is read from a Hugging Face config.json (JSON)",
                "pass a config.json or a name from `jalapeno models list`; a system TOML goes "
                "to --system, an agentic one to --workload agentic:FILE.toml",
            ) from None
        raise SpecError(
            str(path),
            f"malformed JSON at line {e.lineno} column {e.colno}: {e.msg}",
            "fix the JSON syntax of the config file",
        ) from None
    except ValueError as e:  # after JSONDecodeError, a ValueError too: a 5,000-digit integer (break50)
        if not too_many_digits(e):
            raise
        raise SpecError(str(path), too_many_digits_problem(), TOO_MANY_DIGITS_FIX) from None
    return model_from_config(cfg, name or file_model_name(path), str(path))


def file_model_name(path: Path) -> str:
    """The name a model file is shown by: its file name without ``.json``, or for a file named ``config.json`` its
    folder's name (its path made absolute, ``.``/``..`` folded, links kept: a linked model folder keeps its name); in
    a Hugging Face hub cache (``models--ORG--NAME/snapshots/HASH/config.json``) the repository's NAME, not the
    snapshot hash. ``-m ./config.json`` (or a bare ``config.json``) named the model '' (``Path("config.json")
    .parent.name``): a blank title, and errors reading "TP3 does not divide 's 32 attention heads" (newuser51).

    >>> file_model_name(Path("/m/llama-8b/config.json")), file_model_name(Path("/m/my-moe.json"))
    ('llama-8b', 'my-moe')
    >>> file_model_name(Path("/hub/models--Qwen--Qwen3-30B-A3B/snapshots/ad44e777/config.json"))
    'Qwen3-30B-A3B'
    """
    if path.stem != "config":
        return path.stem
    folder = Path(os.path.abspath(path.parent))  # not resolve(): a linked model folder keeps its own name
    repo = folder.parent.parent.name
    if folder.parent.name == "snapshots" and repo.startswith("models--"):
        return repo.rsplit("--", 1)[-1]
    return folder.name or path.stem
