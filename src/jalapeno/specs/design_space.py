"""A design space for ``jalapeno explore``: a base system, parameters with ranges or choices,
hard constraints, objectives, and the models x workloads they are judged on (one TOML file).

Example (docs/explore.md has the full worked one)::

    name = "700w-chip"
    base = "jalapeno"                     # catalog system or TOML path; every trial is a variant of it
    seed = 7
    [objective]
    metrics = ["tok_s_per_kw"]            # one (TPE) or several (NSGA-II): tok_s_per_kw,
                                          # usd_per_mtok, max_interactivity, tok_s_per_chip
    min_interactivity = 100               # the metric is read at this speed ([sweep] at_floor)
    power = "chip"                        # power convention of per-kW metrics: chip, sustained, all-in
    [[cases]]
    model = "deepseek-r1"
    workload = "8k1k"
    weight = 1.0
    [params."chip.hbm_stacks"]
    choices = [6, 8]
    [params."chip.peak_dense_tflops.fp8"]
    low = 2000
    high = 5000
    step = 100
    [derived]                             # keys computed from the parameters (+ - * / and numbers)
    "chip.hbm_bandwidth_tb_per_s" = "2.567 * {chip.hbm_stacks}"
    [constraints]
    chip_power_w = 700                    # the variant's TDP (it follows its components, specs/power.py)
    usd_per_chip_hour = 2.5

Every parameter key is a variant key (specs/variants.py: ``--set`` keys, ``efficiency.*`` included);
each is checked against a probe variant when the space loads, so a typo fails before any trial.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path
from typing import Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from jalapeno.errors import SpecError, choice_hint
from jalapeno.specs.derived_expr import PARAM_REF, evaluate
from jalapeno.specs.design_space_keys import check_keys, probe_values  # noqa: F401 (probe_values re-exported, round 53)
from jalapeno.specs.schema_errors import describe

#: Most trials one search may ask for (the file's trials, --trials): a named plausibility bound (docs/explore.md).
MAX_TRIALS = 1_000_000

#: objective metric → direction
METRICS = {
    "tok_s_per_kw": "maximize",
    "usd_per_mtok": "minimize",
    "max_interactivity": "maximize",
    "tok_s_per_chip": "maximize",
}
#: constraint key → what it bounds (all upper bounds)
CONSTRAINTS = {
    "chip_power_w": "the chip's TDP, W (a variant's follows its components: specs/power.py)",
    "rack_power_kw": "all-in power of one rack (the level named 'rack', else the scale-up domain), kW",
    "usd_per_chip_hour": "total cost of ownership per chip-hour, $",
    "hbm_stacks": "HBM stacks on the package: the HBM-site proxy of die/package area",
    "fp8_pflops": "dense FP8 peak, PFLOP/s: the compute-area proxy of the die at a given node",
}


class _Strict(BaseModel):
    # allow_inf_nan: a weight of inf made every objective NaN, and the search ran on without a ranking
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _one_value(value) -> str:
    """The refusal of a parameter that holds one value (``choices = [6]`` or ``low = high = 6``): a fixed value is
    no dimension to search, and both forms are refused alike, naming the fix (break54: the one-item list ran, the
    empty range was refused)."""
    shown = f"{value:g}" if isinstance(value, float) else repr(value) if isinstance(value, str) else str(value)
    return (
        f"holds one value ({shown}), a fixed value, not a dimension to search: give a range with low < high or "
        "two or more choices, or write the value into the base system (a system TOML with base = ...) and drop "
        "the key from [params]"
    )


class Param(_Strict):
    """A range (``low``, ``high``, optional ``step``/``log``, ``integer``) or a ``choices`` list."""

    # strict: TOML's true was read as 1 (low = true, step = true ran a range from 1): a number is written as one
    low: float | None = Field(default=None, strict=True)
    high: float | None = Field(default=None, strict=True)
    step: float | None = Field(default=None, gt=0, strict=True)
    log: StrictBool = False  # "yes"/1 were read as true
    integer: StrictBool = False
    choices: list[bool | int | float | str] | None = None

    @model_validator(mode="after")
    def _one_kind(self):
        if self.choices is not None:
            if self.low is not None or self.high is not None:
                raise ValueError("give either choices or low/high, not both")
            ranged = [k for k in ("step", "log", "integer") if getattr(self, k) not in (None, False)]
            if ranged:  # log = true beside choices was ignored, silently
                raise ValueError(f"{ranged[0]} applies to a low/high range, not to choices: remove it")
            if not self.choices:
                raise ValueError("choices is empty")
            if len(self.choices) == 1:  # choices = [6] ran while low = high = 6 was refused (break54)
                raise ValueError(_one_value(self.choices[0]))
            if any(isinstance(c, bool) for c in self.choices):
                raise ValueError("choices must be numbers or names, not true/false (a count or a size is a number)")
            if len({repr(c) for c in self.choices}) != len(self.choices):
                raise ValueError("choices repeat a value")
            return self
        if self.low is None or self.high is None:
            raise ValueError("a range needs low and high (or give choices = [...])")
        if self.low == self.high:
            raise ValueError(_one_value(self.low))
        if not self.low < self.high:
            raise ValueError(f"need low < high, got {self.low:g} and {self.high:g}")  # as written: 8, not 8.0
        if self.log and self.low <= 0:
            raise ValueError("a log range needs low > 0")
        if self.log and self.step is not None:
            raise ValueError("a log range takes no step (Optuna samples log ranges continuously)")
        if self.step is not None and self.step > self.high - self.low:
            raise ValueError(f"step {self.step:g} is larger than high - low = {self.high - self.low:g}")
        n = None if self.step is None else (self.high - self.low) / self.step
        if n is not None and abs(n - round(n)) > 1e-9 * n:  # Optuna cut high to the last step below it (a warning)
            hi = self.low + int(n) * self.step  # high = 6000 with low 1500, step 7 ran to 5994, silently (break52)
            raise ValueError(
                f"high - low = {self.high - self.low:g} is not a whole number of steps of {self.step:g} "
                f"(the search would stop at {hi:g}); give high = {hi:g} or {hi + self.step:g}"
            )
        if self.integer and any(v is not None and v != int(v) for v in (self.low, self.high, self.step)):
            raise ValueError("an integer range needs whole low, high and step")
        if self.integer and self.log and self.low < 1:
            raise ValueError("an integer log range needs low >= 1")
        return self


class Objective(_Strict):
    """The ``[objective]`` table of a design space: the metrics to optimise, the least interactivity a design
    must reach (tok/s per user) and the power convention (chip, sustained or all-in).
    """

    metrics: list[Literal["tok_s_per_kw", "usd_per_mtok", "max_interactivity", "tok_s_per_chip"]] = Field(min_length=1)

    @field_validator("metrics")
    @classmethod
    def _distinct(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("a metric is listed twice")
        return v

    min_interactivity: float = Field(default=0.0, ge=0, strict=True)  # true was 1 tok/s/user
    power: Literal["chip", "sustained", "all-in"] = "all-in"


class Case(_Strict):
    """One ``[[cases]]`` entry a design is judged on: model, workload, precision (None: the model's default)
    and its weight (> 0) in the objective.
    """

    model: str
    workload: str = "8k1k"
    precision: str | None = None
    weight: float = Field(default=1.0, gt=0, strict=True)

    @field_validator("workload")
    @classmethod
    def _preset(cls, v: str) -> str:  # named here with its case, not later as a bare "workload"
        from jalapeno.specs.workload import PRESETS

        if v not in PRESETS:
            raise ValueError(
                f"unknown workload {v!r} (a design search sweeps fixed-length workloads): "
                f"use one of {', '.join(PRESETS)}"
            )
        return v


class SweepSettings(_Strict):
    """How each trial is swept (coarse by default: a design search needs the ranking, not every point)."""

    serving: Literal["agg", "disagg", "both"] = "agg"
    batches: list[StrictInt] = Field(default_factory=lambda: [1, 4, 16, 64, 128, 256, 512, 1024], min_length=1)
    max_stage_factor: int = Field(default=1, ge=1, strict=True)
    #: how each design's chip is priced (cost/sliced.py, cost/tiles.py): ``die.*`` keys need ``sliced``
    chip_model: Literal["flat", "sliced", "tiled"] = "flat"
    placement: Literal["", "local_first", "striped", "best"] = ""
    #: how a floor metric is read from the coarse points (analysis/explore.throughput_at_floor): ``interpolated``
    #: (default since round 42: the better of the best point at or above the floor and the frontier log-log
    #: interpolated at the floor, as ``compare``'s tiers) or ``point`` (the best point at or above it only: a score
    #: that jumps a whole decode batch as a design's point crosses the floor)
    at_floor: Literal["interpolated", "point"] = "interpolated"
    #: which precisions a case without its own ``precision`` is swept at: ``case`` (default: the model's default
    #: precision) or ``native`` (every released precision the chip computes natively, deploy/checkpoints.
    #: available_precisions, as ``compare`` sweeps them; the points of all of them form one frontier). Round 45,
    #: scripts/explore_fidelity.py: with ``serving = "both"`` it ranks designs as compare's figure does (Spearman
    #: 0.98-1.00 over 20 designs of each shipped space, against 0.94-0.96 coarse; per case 0.97-1.00, against 0.21-0.99)
    #: at 1.5-2.5x a coarse trial's time (compare's full sweep: 3-4x)
    precisions: Literal["case", "native"] = "case"

    @field_validator("batches")
    @classmethod
    def _positive(cls, v: list[int]) -> list[int]:
        from jalapeno.specs.workload import MAX_CONCURRENCY

        if any(b < 1 for b in v):
            raise ValueError("decode batches must be whole numbers >= 1")
        big = next((b for b in v if b > MAX_CONCURRENCY), None)
        if big is not None:  # 10**30 ran: no layout holds it, and the point was dropped without a word
            raise ValueError(
                f"decode batch {big:.3g} is above {MAX_CONCURRENCY:,}, the most requests in flight "
                "accepted (specs/workload.MAX_CONCURRENCY); engines batch up to a few thousand"
            )
        twice = next((b for i, b in enumerate(v) if b in v[:i]), None)
        if twice is not None:  # [4, 4] priced the point twice, where --concurrency 4,4 is refused
            raise ValueError(f"decode batch {twice} is listed twice; list each batch once, e.g. [1, 4, 16, 64]")
        return v


class DesignSpace(_Strict):
    """A design-space file (``explore``): name, base system, seed, trials, objective, cases, parameters
    with their ranges, derived keys, constraints and sweep settings; a bad key or value is refused naming it.
    """

    name: str = Field(min_length=1, max_length=100)
    base: str
    seed: int = Field(default=0, ge=0, le=2**32 - 1, strict=True)
    trials: int = Field(default=100, ge=1, le=MAX_TRIALS, strict=True)  # trials = true ran one trial
    objective: Objective
    cases: list[Case] = Field(min_length=1)
    params: dict[str, Param] = Field(min_length=1)
    derived: dict[str, str] = Field(default_factory=dict)
    constraints: dict[str, StrictFloat] = Field(default_factory=dict)  # hbm_stacks = true bounded at 1
    sweep: SweepSettings = Field(default_factory=SweepSettings)

    @field_validator("cases")
    @classmethod
    def _distinct_cases(cls, v: list[Case]) -> list[Case]:  # the same case twice doubled its weight, silently
        seen = set()
        for c in v:
            key = (c.model, c.workload, c.precision)
            if key in seen:
                raise ValueError(
                    f"the case {c.model} {c.workload}"
                    + (f" {c.precision}" if c.precision else "")
                    + " is listed twice (its weight counted twice): give it once, with weight = "
                    "the sum of the two"
                )
            seen.add(key)
        return v

    @model_validator(mode="after")
    def _derived_refs(self):  # reported at the top level: name the table in the message
        for key, expr in self.derived.items():
            if key in self.params:
                raise ValueError(f"derived: key {key!r} is also a parameter")
            for ref in PARAM_REF.findall(expr):
                if ref not in self.params:  # a misspelt [params."chip.hbm_stack"] was reported here, unnamed
                    near = difflib.get_close_matches(ref, list(self.params), n=1, cutoff=0.8)
                    raise ValueError(
                        f"derived: {key!r} refers to {{{ref}}}, which is not a parameter"
                        + (f" (the parameters have {near[0]!r}: one of the two is misspelt)" if near else "")
                    )
            evaluate(expr, {r: 1.0 for r in PARAM_REF.findall(expr)}, key, check_only=True)  # syntax check
        if self.sweep.chip_model != "sliced" and any(k.startswith("die.") for k in [*self.params, *self.derived]):
            raise ValueError('die.* keys change only the sliced chip model: add chip_model = "sliced" to [sweep]')
        if self.sweep.placement and self.sweep.chip_model != "sliced":
            raise ValueError('[sweep] placement applies to chip_model = "sliced" only')
        return self

    def overrides(self, values: dict) -> list[tuple[str, object]]:
        """The variant overrides of a design: its parameter values and the derived keys, sorted."""
        out = dict(values)
        for key, expr in self.derived.items():
            out[key] = evaluate(expr, values, key)
        return sorted(out.items())

    @field_validator("constraints")
    @classmethod
    def _known_constraints(cls, v: dict[str, float]) -> dict[str, float]:
        bad = sorted(set(v) - set(CONSTRAINTS))
        if bad:
            raise ValueError(f"unknown constraint {bad[0]!r}; known: {', '.join(CONSTRAINTS)}")
        bad_limit = next((k for k, x in v.items() if not x > 0), None)  # NaN too: it never bounds a design
        if bad_limit is not None:  # name which: a space with several constraints left the user to guess
            raise ValueError(f"constraint limits must be positive: {bad_limit} = {v[bad_limit]:g}")
        return v

    @property
    def directions(self) -> list[str]:
        """Optuna directions of the objective metrics, in order."""
        return [METRICS[m] for m in self.objective.metrics]


def _known_keys(parts: list) -> list[str]:
    """The keys the table at ``parts`` (a pydantic error location in a :class:`DesignSpace`) takes: a list
    index or a dict key (``params."chip.hbm_stacks"``) steps into the item's model.

    >>> _known_keys(["cases", 0])[:3], _known_keys([])[:3]
    (['model', 'workload', 'precision'], ['name', 'base', 'seed'])
    """
    cls: type[BaseModel] = DesignSpace
    for p in parts:
        field = cls.model_fields.get(p) if isinstance(p, str) else None
        if field is None:  # a list index or a dict key: the item's model is already cls
            continue
        inner = _model_in(field.annotation)
        if inner is None:
            return []
        cls = inner
    return list(cls.model_fields)


def _model_in(annotation) -> type[BaseModel] | None:
    """The pydantic model an annotation holds (``list[Case]``, ``dict[str, Param]``, ``SweepSettings``), or None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def design_space_from_dict(data: dict, where: str = "design space") -> DesignSpace:
    """Validate a parsed design-space TOML.

    Raises:
        SpecError: a missing, unknown or inconsistent field (named), or a parameter key that is
            not a variant key of the base system (checked on a probe variant).
    """
    try:
        space = DesignSpace.model_validate(data)
    except ValidationError as err:
        errs = err.errors()
        # a NaN among choices fails every member of the union; the finite-number one is the cause
        e = next((x for x in errs if x["type"] == "finite_number"), errs[0])
        parts = list(e["loc"])
        member = len(parts) > 1 and parts[-1] in ("bool", "int", "float", "str")  # the union member tried
        if member:
            parts = parts[:-1]
        loc = ".".join(str(x) for x in parts) or "(top level)"
        problem, fix = describe(e, loc, "docs/explore.md")
        if member and e["type"] == "bool_type" and "choices" in parts:  # every member failed: a table, array, ...
            # it was told 'must be true or false', the one kind of choice the schema refuses (break54)
            kind = {dict: "a table", list: "an array"}.get(type(e["input"]), repr(e["input"]))
            problem = f"a choice is a number or a name, got {kind}"
            fix = f'write {".".join(str(x) for x in parts[:-1])} = [4, 6, 8] (numbers) or ["a", "b"] (names in quotes)'
        if e["type"] == "extra_forbidden" and parts:  # 'sed = 1' named no key meant (break50)
            problem += choice_hint(parts[-1], _known_keys(parts[:-1]))
        table, sep, rest = problem.partition(": ")
        keyed = re.fullmatch(r"(\w+) '([^']+)'", table) if sep else None  # derived 'chip.x': ...
        if not parts and keyed:  # was '(top level): derived ...', its fix 'correct (top level)'
            loc, problem = f"{keyed[1]}.{keyed[2]}", rest
            fix = f"correct {keyed[2]!r} in [{keyed[1]}] (see docs/explore.md for the schema)"
        elif not parts and sep and table.isidentifier():  # a whole-file check names its table first
            loc, problem, fix = table, rest, f"correct [{table}] (see docs/explore.md for the schema)"
        raise SpecError(f"{where}: {loc}", problem, fix) from None
    check_keys(space, where)
    return space


def load_design_space(path: str | Path) -> DesignSpace:
    """Read and validate a design-space TOML file.

    Raises:
        SpecError: an unreadable or malformed file, or a bad field (named).
    """
    from jalapeno.specs.files import MAX_USER_FILE_BYTES, parse_toml

    fix = "give the path of a design-space .toml, e.g. examples/explore_700w.toml (docs/explore.md)"
    if not str(path).strip():  # `explore ''` said "cannot read '.': [Errno 21] Is a directory"
        raise SpecError("design-space file", "is empty ('')", fix)
    p = Path(path)
    try:
        with p.open("rb") as f:  # at most one byte past the limit: SPACE.toml = /dev/zero never ended
            raw = f.read(MAX_USER_FILE_BYTES + 1)
        if len(raw) > MAX_USER_FILE_BYTES:
            raise SpecError(
                "design-space file",
                f"{str(p)!r} is larger than {MAX_USER_FILE_BYTES // 2**20} MiB (a device or a wrong file?)",
                "give the path of a design-space .toml (docs/explore.md)",
            )
        data = parse_toml(raw.decode("utf-8"))
    except FileNotFoundError:
        raise SpecError(
            "design-space file",
            f"{str(p)!r} not found",
            "give the path of a design-space .toml, the SPACE.toml argument (docs/explore.md)",
        ) from None
    except IsADirectoryError:
        raise SpecError("design-space file", f"{str(p)!r} is a folder, not a file", fix) from None
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError(
            "design-space file", f"cannot read {str(p)!r}: {e}", "check the path and its permissions"
        ) from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{p.name}", f"is not valid TOML: {e}", "fix the syntax (docs/explore.md)") from None
    return design_space_from_dict(data, p.name)
