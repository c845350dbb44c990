"""The file-schema base of the catalog: strict pydantic models, the sourced number and the banded one.

Every number in a system TOML is ``{ value = ..., source = "..." }`` (optional ``alternatives``
and ``estimate = true``). Shared by specs/system_file.py and the schema tables that live beside it
(specs/kv_tiers.py), so that a table can be typed without importing the system file's schema.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, model_validator
from pydantic_core import PydanticCustomError


def _printable_name(v: str) -> str:
    """A name that prints on one line: not blanks only, no line break or control character (``"x\\ny"``
    split every table title in two; ``"   "`` titled them with nothing)."""
    if not v.strip() or not v.isprintable():
        raise ValueError(f"must be printable text on one line, not blanks only (it titles every table), got {v!r}")
    return v


#: A system's or chip's name (specs/system_file.py): '' is refused by its min_length, as before.
Name = Annotated[str, Field(min_length=1), AfterValidator(_printable_name)]


def _not_true(v):
    """TOML's ``true`` passed a ``Literal[1]`` (``True == 1`` in Python): refused in the words any other wrong
    version gets (schema_errors.describe, literal_error)."""
    if isinstance(v, bool):
        raise PydanticCustomError("literal_error", "Input should be 1", {"expected": "1"})
    return v


#: A system file's ``schema_version`` (specs/system_file.py): the number 1, not ``true``.
SchemaVersion = Annotated[Literal[1], BeforeValidator(_not_true)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Sourced(_Strict):
    """A number with its source."""

    value: float = Field(gt=0, allow_inf_nan=False, strict=True)  # true/"5" are not numbers
    source: str = Field(min_length=3)
    alternatives: str = ""
    estimate: StrictBool = False  # "yes" was read as true


class SourcedNames(_Strict):
    """A set of FP4 block-scaled format names with its source (``fp4_block_formats``)."""

    formats: list[Literal["mxfp4", "nvfp4"]] = Field(min_length=1)
    source: str = Field(min_length=3)


def _capability(v):
    """A CUDA compute capability as ``"major.minor"`` (``"9.0"``): a TOML number (9.0, 10.3) is refused, as
    ``10.10`` would read as 10.1 and a version is no quantity."""
    import re

    if not isinstance(v, str) or not re.fullmatch(r"[1-9][0-9]?\.[0-9]", v):
        raise ValueError(
            f'must be the CUDA compute capability as a string "major.minor" (NVIDIA\'s CUDA GPUs table, '
            f'developer.nvidia.com/cuda-gpus: "9.0" for Hopper H100/H200/H20/GH200, "10.0" for B200/GB200, '
            f'"10.3" for B300/GB300), got {v!r}'
        )
    return v


class SourcedCapability(_Strict):
    """A chip's CUDA compute capability with its source (``chip.compute_capability``): ``value`` is
    ``"major.minor"``; :attr:`sm` is major x 10 + minor (90, 100, 103), as cost/allreduce_rms.py reads it."""

    value: Annotated[str, BeforeValidator(_capability)]
    source: str = Field(min_length=3)

    @property
    def sm(self) -> int:
        """major x 10 + minor: ``"10.3"`` -> 103."""
        major, minor = self.value.split(".")
        return int(major) * 10 + int(minor)


class Banded(Sourced):
    """A sourced number with an optional plausible range (``low`` ≤ ``high``); the value may lie
    outside it (a what-if override does), the band is what sensitivity and audits sweep."""

    # finite like ``value``: ``high = inf`` (a TOML float) passed gt=0 and reached the band sweeps as inf
    low: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)
    high: float | None = Field(default=None, gt=0, allow_inf_nan=False, strict=True)

    @model_validator(mode="after")
    def _ordered(self):
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"need low <= high, got low {self.low} and high {self.high}")
        return self
