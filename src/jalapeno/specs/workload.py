"""Workloads: input/output lengths and how requests arrive (InferenceX fixed-length presets).

InferenceX draws input and output lengths uniformly in [r·L, L] with ``--random-range-ratio``
r = 0.8 (random tokens, no prefix reuse, ``--ignore-eos`` forcing the output length) and runs a
closed loop at a concurrency cap (data/validation/README.md, from InferenceX's
``benchmarks/benchmark_lib.sh``). A ``fixed`` workload uses
exactly L. Open loop: requests arrive at a rate instead of a concurrency cap.

A dataset's lengths (MLPerf's OpenOrca, DeepSeek-R1 reasoning prompts) spread far wider than
InferenceX's ±10%: a :class:`LengthSpread` holds one (ISL, OSL) pair per request of the dataset
and replaces the uniform draw. It moves the means, the quantiles and — through the long outputs a
decode step keeps resident — the decode context, which is output-token-weighted
(:attr:`LengthSpread.decode_ctx`), not the fixed-length ISL + OSL/2.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

import numpy as np

from jalapeno.errors import SpecError, UnknownNameError, check_bool
from jalapeno.specs.model_plausibility import MAX_CONTEXT_TOKENS

#: InferenceX ``--random-range-ratio`` (validation/README.md).
INFERENCEX_RANGE_RATIO = 0.8

#: Largest closed-loop concurrency accepted. InferenceX sweeps 1 to 16,384 requests in flight
#: (DESIGN §2.4); a million is 60x past any benchmark, where a result would measure only the
#: queue in front of the deployment (``predict -c 1e12`` answered 1e11 s of queueing).
MAX_CONCURRENCY = 1_000_000
#: Largest open-loop request rate accepted, requests/s. A GB200 NVL72 rack at its InferenceX 1k1k
#: peak serves ~1e6 tokens/s, about 1,000 requests/s; a million requests/s is 1,000x that, where a
#: simulation would only queue (``simulate --rate 1e12`` sent every request at t = 0 without a word).
MAX_RATE_PER_S = 1e6


def check_concurrency(values, option: str = "--concurrency", rate: str = "--rate") -> None:
    """Closed-loop concurrencies must lie in [1, :data:`MAX_CONCURRENCY`] (requests in flight).

    Args:
        values: the concurrencies (requests in flight).
        option: the option or field that gave them, for the message.
        rate: how to ask for an open-loop request rate instead, for the fix: ``--rate`` on a command
            that has it (predict, simulate); compare and frontier sweep closed loops only and name
            the commands that take one.

    Raises:
        SpecError: a value below 1 (a fraction of a request in flight is not a closed loop), not
            a whole number, not finite, or above the limit; the option named.
    """
    for v in values:
        if not (v >= 1):
            raise SpecError(
                option,
                f"{v:g} is not a closed-loop concurrency (requests in flight, >= 1)",
                f"give whole numbers of requests >= 1, e.g. 1,4,16,64; for a request rate use {rate}",
            )
        if v > MAX_CONCURRENCY:
            raise SpecError(
                option,
                f"{v:g} requests in flight is beyond what any benchmark measures (limit "
                f"{MAX_CONCURRENCY:,}; InferenceX sweeps 1-16,384): the result would be only queueing",
                "use a concurrency up to the thousands (the deployment's batch is far smaller)",
            )
        if v != int(v):  # predict -c 1.5 priced 1.5 requests in flight; a closed loop holds whole requests
            raise SpecError(
                option,
                f"{v:g} is not a whole number of requests in flight",
                "give whole numbers of requests >= 1, e.g. 1,4,16,64; for a fractional mean "
                f"load use {rate} (requests/s)",
            )


@dataclass(frozen=True, eq=False)
class LengthSpread:
    """An empirical joint distribution of request lengths: one (ISL, OSL) pair per request.

    Attributes:
        name: label (e.g. ``mlperf:deepseek-r1``).
        isl_tokens, osl_tokens: (N,) input / output lengths, tokens; each ISL >= 1, OSL >= 2.
        source: where the pairs come from.

    Compared by identity (it holds arrays). Raises SpecError on empty, mismatched or
    out-of-range lengths, naming the field.
    """

    name: str
    isl_tokens: np.ndarray
    osl_tokens: np.ndarray
    source: str = ""

    def __post_init__(self) -> None:
        isl, osl = (np.asarray(v, dtype=float).ravel() for v in (self.isl_tokens, self.osl_tokens))
        if isl.size == 0 or isl.shape != osl.shape:
            raise SpecError(
                "spread",
                f"{isl.size} input and {osl.size} output lengths",
                "give one (ISL, OSL) pair per request, at least one",
            )
        for k, v, lo in (("spread.isl_tokens", isl, 1), ("spread.osl_tokens", osl, 2)):
            if not (np.all(np.isfinite(v)) and v.min() >= lo):
                raise SpecError(
                    k,
                    f"lengths must be finite and >= {lo}, got min {v.min():g}",
                    f"drop requests shorter than {lo} tokens",
                )
        object.__setattr__(self, "isl_tokens", isl)
        object.__setattr__(self, "osl_tokens", osl)

    @property
    def mean_isl(self) -> float:
        """Mean input length, tokens."""
        return float(self.isl_tokens.mean())

    @property
    def mean_osl(self) -> float:
        """Mean output length, tokens."""
        return float(self.osl_tokens.mean())

    @property
    def decode_ctx(self) -> float:
        """Mean context a decode step sees per sequence, tokens: each request spends OSL - 1 decode
        steps at a mean context ISL + OSL/2, so the steps weight it by OSL - 1:
        Σ (OSL - 1)(ISL + OSL/2) / Σ (OSL - 1). Equal lengths give the fixed-length ISL + OSL/2;
        a long right tail of outputs raises it (long requests stay resident longer). The same
        mean is the resident context of the running sequences (KV cache per sequence)."""
        w = self.osl_tokens - 1
        return float((w * (self.isl_tokens + self.osl_tokens / 2)).sum() / w.sum())

    def isl_quantile(self, q: float) -> float:
        """Input length at quantile q (linear interpolation between requests)."""
        return float(np.quantile(self.isl_tokens, q))

    def osl_quantile(self, q: float) -> float:
        """Output length at quantile q."""
        return float(np.quantile(self.osl_tokens, q))

    def with_mean_osl(self, mean_osl: float, source: str = "") -> LengthSpread:
        """The same shape with every output scaled so their mean is ``mean_osl`` (a run's own mean
        output over the dataset's pairs); each output stays >= 2.

        Raises:
            SpecError: ``mean_osl`` < 2.
        """
        if not mean_osl >= 2:
            raise SpecError("mean_osl", f"must be >= 2 tokens, got {mean_osl}", "give the run's mean output length")
        osl = np.maximum(self.osl_tokens * (mean_osl / self.mean_osl), 2.0)
        return LengthSpread(self.name, self.isl_tokens, osl, source or self.source)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` requests drawn with replacement, pairs kept together: (ISL, OSL) int arrays (n,)."""
        k = rng.integers(0, self.isl_tokens.size, size=n)
        return (
            np.maximum(np.rint(self.isl_tokens[k]), 1).astype(int),
            np.maximum(np.rint(self.osl_tokens[k]), 2).astype(int),
        )


@dataclass(frozen=True, slots=True)
class Workload:
    """Request lengths and arrival mode.

    Attributes:
        name: preset name or ``isl/osl`` label.
        isl, osl: nominal input / output length L, tokens.
        range_ratio: lengths uniform in [range_ratio·L, L]; 1.0 = fixed lengths.
        arrival: ``closed`` (concurrency cap) or ``open`` (request rate).
        spread: a dataset's (ISL, OSL) pairs (:class:`LengthSpread`) drawn instead of the uniform
            range (needs ``range_ratio`` 1.0; ``isl``/``osl`` then label its rounded means).
            None (default): InferenceX's uniform or fixed lengths, every figure as before.
    """

    name: str
    isl: int
    osl: int
    range_ratio: float = INFERENCEX_RANGE_RATIO
    arrival: str = "closed"
    spread: LengthSpread | None = None

    def __post_init__(self) -> None:
        """Check the name, lengths, range, arrival mode and spread.

        Raises:
            SpecError: an empty or non-string name; isl/osl not a positive integer, osl < 2, or beyond any
                model's context; range_ratio outside (0, 1]; an unknown arrival; a spread with range_ratio != 1.
        """
        if not isinstance(self.name, str) or not self.name.strip():  # '' was accepted: a nameless row in every table
            raise SpecError(
                "Workload: name",
                f"must be a non-empty label, got {self.name!r}",
                "give a preset name or an isl/osl label, e.g. name='1024/1024', or use get_workload(isl=..., osl=...)",
            )
        for k in ("isl", "osl"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise SpecError(k, f"must be a positive integer, got {v!r}", f"give --{k} >= 1")
        if self.osl < 2:
            raise SpecError("osl", "TPOT needs at least 2 output tokens", "give --osl >= 2")
        if self.isl + self.osl > MAX_CONTEXT_TOKENS:  # checked for models whose config gives no context too
            raise SpecError(
                "isl/osl",
                f"{self.isl:,} + {self.osl:,} tokens is beyond any model's context (at most "
                f"{MAX_CONTEXT_TOKENS:,} accepted; the longest released is 10,485,760, Llama 4 Scout)",
                "give --isl/--osl of a real request (InferenceX: 1,024-8,192 in, 1,024-8,192 out)",
            )
        if not 0 < self.range_ratio <= 1:
            raise SpecError("range_ratio", f"must be in (0, 1], got {self.range_ratio}", "use 0.8 or 1")
        if self.arrival not in ("closed", "open"):
            raise SpecError("arrival", f"unknown arrival {self.arrival!r}", "use closed or open")
        if self.spread is not None and self.range_ratio != 1.0:
            raise SpecError(
                "range_ratio",
                f"{self.range_ratio} with a length spread: the spread's pairs are the lengths",
                "use range_ratio 1.0 with a spread",
            )

    @property
    def mean_isl(self) -> float:
        """Mean input length: the spread's mean, else (1 + r)/2 · L for lengths uniform in [r·L, L]."""
        return self.spread.mean_isl if self.spread is not None else (1 + self.range_ratio) / 2 * self.isl

    @property
    def mean_osl(self) -> float:
        """Mean output length: the spread's mean, else (1 + r)/2 · L."""
        return self.spread.mean_osl if self.spread is not None else (1 + self.range_ratio) / 2 * self.osl

    @property
    def decode_ctx(self) -> float:
        """Mean context per decoding sequence, tokens: mean ISL + mean OSL / 2 (InferenceX's ±10%
        range leaves it within 0.5% of the output-token-weighted mean), or the spread's
        output-token-weighted :attr:`LengthSpread.decode_ctx`."""
        return self.spread.decode_ctx if self.spread is not None else self.mean_isl + self.mean_osl / 2

    @property
    def osl_std(self) -> float:
        """Standard deviation of the output length, tokens: (1 − r)·L/√12 for lengths uniform in [r·L, L]
        (0 for fixed lengths), the spread's own (population) standard deviation otherwise."""
        if self.spread is not None:
            return float(self.spread.osl_tokens.std())
        return (1 - self.range_ratio) * self.osl / math.sqrt(12.0)

    def osl_quantile(self, q: float) -> float:
        """Output length at quantile q of its uniform distribution (or of the spread)."""
        if self.spread is not None:
            return self.spread.osl_quantile(q)
        return self.range_ratio * self.osl + q * (1 - self.range_ratio) * self.osl

    def isl_quantile(self, q: float) -> float:
        """Input length at quantile q of its uniform distribution (or of the spread)."""
        if self.spread is not None:
            return self.spread.isl_quantile(q)
        return self.range_ratio * self.isl + q * (1 - self.range_ratio) * self.isl

    def as_dict(self) -> dict:
        """The workload as JSON: name, isl, osl (tokens), range ratio, arrival and any spread."""
        d = {
            "name": self.name,
            "isl": self.isl,
            "osl": self.osl,
            "range_ratio": self.range_ratio,
            "arrival": self.arrival,
        }
        return d | ({"spread": self.spread.name} if self.spread is not None else {})


PRESETS = {
    "1k1k": Workload("1k1k", 1024, 1024),
    "8k1k": Workload("8k1k", 8192, 1024),
    "1k8k": Workload("1k8k", 1024, 8192),
    # long-context single-shot (whole-repository questions, long documents): one prompt of 32K-128K
    # tokens, no prefix reuse, the InferenceX length distribution; 128K + 1K fits DeepSeek-R1's
    # 163,840-token context (max_position_embeddings of the DeepSeek-V3/R1 config.json, data/models/deepseek-r1.json). Agentic multi-turn: specs/agentic.py.
    "32k1k": Workload("32k1k", 32768, 1024),
    "64k1k": Workload("64k1k", 65536, 1024),
    "128k1k": Workload("128k1k", 131072, 1024),
}


def context_fix(max_context: int) -> str:
    """The remedy for a fixed-length workload longer than a model's context: the presets that fit
    (``compare -m llama-2-70b`` ran the default 8k1k into Llama 2's 4,096 tokens and was told to
    "use shorter requests", naming --isl/--osl, which the user had not given).

    >>> context_fix(4096)
    'use a preset that fits (-w 1k1k), or --isl/--osl summing to at most 4,096 tokens'
    """
    fits = [n for n, w in PRESETS.items() if w.isl + w.osl <= max_context]
    head = f"use a preset that fits (-w {', '.join(fits)}), or " if fits else "no preset fits: use "
    return head + f"--isl/--osl summing to at most {max_context:,} tokens"


def get_workload(
    name: str | None = None, isl: int | None = None, osl: int | None = None, fixed: bool = False
) -> Workload:
    """A preset by name, or a custom ISL/OSL (InferenceX distribution unless ``fixed``).

    Raises:
        UnknownNameError: unknown preset, or an agentic one (named as such: the commands that take
            those parse them before this). SpecError: only one of isl/osl given, a name and isl/osl
            both given (one would be ignored), or bad lengths; a name that is not a string or is empty,
            ``fixed`` that is not a bool.
    """
    if name is not None and not isinstance(name, str):  # 5 raised AttributeError ('int' has no 'removeprefix')
        raise SpecError(
            "workload",
            f"expected a preset name, got {type(name).__name__} {name!r:.40}",
            f"pass one of {', '.join(PRESETS)}, or isl=N, osl=N",
        )
    if name is not None and not name.strip():  # '' ran 8k1k, the default, silently
        raise SpecError("workload", "is an empty name", f"pass one of {', '.join(PRESETS)}, or leave it out for 8k1k")
    # fixed='no' read as true: fixed lengths, not InferenceX's spread
    check_bool("fixed", fixed, "pass fixed=True for exact lengths, fixed=False for InferenceX's [0.8 L, L] spread")
    ratio = 1.0 if fixed else INFERENCEX_RANGE_RATIO
    same = name in PRESETS and (isl, osl) == (PRESETS[name].isl, PRESETS[name].osl)  # -w 8k1k --isl 8192 --osl 1024
    if name is not None and (isl is not None or osl is not None) and not same:
        # `compare -w 1k1k --isl 8192 --osl 1024` ran 8192/1024 with no word (round 26): the preset was dropped
        lengths = " ".join(f"--{k} {v}" for k, v in (("isl", isl), ("osl", osl)) if v is not None)
        raise SpecError(
            "workload",
            f"{name} and {lengths} both give the request lengths; one of them would be ignored",
            f"drop --workload {name} (lengths --isl N --osl N), or drop --isl/--osl (the preset's lengths)",
        )
    if isl is not None or osl is not None:
        if isl is None or osl is None:
            raise SpecError("isl/osl", "give both --isl and --osl", "pass both, or a --workload preset")
        return Workload(f"{isl}/{osl}", isl, osl, ratio)
    name = name or "8k1k"
    from jalapeno.specs.agentic import AGENTIC_PRESETS

    agent = name.removeprefix("agentic:")
    if name.startswith("agentic:") or name == "agentic" or agent in AGENTIC_PRESETS:
        # an agent preset reaching here is a command that sweeps fixed lengths (predict, audit, report,
        # explore), or a bare preset name where compare/frontier take agentic:NAME
        preset = agent if name.startswith("agentic:") or agent in AGENTIC_PRESETS else "coding-agent"
        raise UnknownNameError(
            "workload",
            f"{name!r} names an agentic (multi-turn) workload, not a fixed-length one",
            f"compare, frontier, plan and simulate take it as --workload agentic:{preset} "
            "(docs/agentic.md); for fixed lengths use one of "
            f"{', '.join(PRESETS)} or --isl N --osl N",
        )
    fixed_lengths = f"{', '.join(PRESETS)} or --isl N --osl N"
    if name.lower().endswith((".csv", ".jsonl", ".json")):  # was 'unknown workload' for a file that exists
        raise UnknownNameError(
            "workload",
            f"{name!r} is a request trace (a file), which only simulate replays",
            f"run `jalapeno simulate --workload {name}`; here give one of {fixed_lengths}",
        )
    if name.lower().endswith(".toml"):
        raise UnknownNameError(
            "workload",
            f"{name!r} is a file: an agentic session file is written agentic:FILE.toml",
            f"compare, frontier and simulate take --workload agentic:{name}; for fixed lengths use "
            f"one of {fixed_lengths}",
        )
    if name not in PRESETS and os.path.isfile(name):  # trace.tsv, lengths.txt: was 'unknown workload'
        raise UnknownNameError(
            "workload",
            f"{name!r} is a file, not a workload preset: only simulate reads a file (a request trace, .csv or .jsonl)",
            f"for a trace run `jalapeno simulate --workload FILE.csv`; here give one of {fixed_lengths}",
        )
    if name not in PRESETS:
        near = "".join(name.lower().split()).replace("/", "").replace("-", "")  # 8K1K, 8k/1k: did you mean
        fix = f"use one of {fixed_lengths}"
        nk = re.fullmatch(r"(\d{1,9})k(\d{1,9})k", near)  # 2k1k, 16k1k: a preset's k is 1,024 tokens (8k1k = 8192/1024)
        if near not in PRESETS and nk and int(nk[1]) > 0 and int(nk[2]) > 0:
            fix = (
                f"give the lengths: --isl {int(nk[1]) * 1024} --osl {int(nk[2]) * 1024} (k = 1,024 tokens, as 8k1k "
                f"is 8192/1024), or a preset: {', '.join(PRESETS)}"
            )
        raise UnknownNameError(
            "workload", f"unknown workload {name!r}" + (f" (did you mean {near!r}?)" if near in PRESETS else ""), fix
        )
    w = PRESETS[name]
    return Workload(w.name, w.isl, w.osl, ratio)
