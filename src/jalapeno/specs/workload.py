"""Workloads: input/output lengths and how requests arrive (InferenceX fixed-length presets).

InferenceX draws input and output lengths uniformly in [r·L, L] with ``--random-range-ratio``
r = 0.8 (random tokens, no prefix reuse, ``--ignore-eos`` forcing the output length) and runs a
closed loop at a concurrency cap (data/validation/README.md, from InferenceX's
``benchmarks/benchmark_lib.sh``). A ``fixed`` workload uses
exactly L. Open loop: requests arrive at a rate instead of a concurrency cap.
"""

from __future__ import annotations

from dataclasses import dataclass

from jalapeno.errors import SpecError, UnknownNameError

#: InferenceX ``--random-range-ratio`` (validation/README.md).
INFERENCEX_RANGE_RATIO = 0.8

#: Largest closed-loop concurrency accepted. InferenceX sweeps 1 to 16,384 requests in flight
#: (DESIGN §2.4); a million is 60x past any benchmark, where a result would measure only the
#: queue in front of the deployment (``predict -c 1e12`` answered 1e11 s of queueing).
MAX_CONCURRENCY = 1_000_000


def check_concurrency(values, option: str = "--concurrency") -> None:
    """Closed-loop concurrencies must lie in [1, :data:`MAX_CONCURRENCY`] (requests in flight).

    Raises:
        SpecError: a value below 1 (a fraction of a request in flight is not a closed loop), not
            finite, or above the limit; the option named.
    """
    for v in values:
        if not (v >= 1):
            raise SpecError(option, f"{v:g} is not a closed-loop concurrency (requests in flight, >= 1)",
                            "give whole numbers of requests >= 1, e.g. 1,4,16,64; for a request rate use --rate")
        if v > MAX_CONCURRENCY:
            raise SpecError(option, f"{v:g} requests in flight is beyond what any benchmark measures (limit "
                            f"{MAX_CONCURRENCY:,}; InferenceX sweeps 1-16,384): the result would be only queueing",
                            "use a concurrency up to the thousands (the deployment's batch is far smaller)")


@dataclass(frozen=True, slots=True)
class Workload:
    """Request lengths and arrival mode.

    Attributes:
        name: preset name or ``isl/osl`` label.
        isl, osl: nominal input / output length L, tokens.
        range_ratio: lengths uniform in [range_ratio·L, L]; 1.0 = fixed lengths.
        arrival: ``closed`` (concurrency cap) or ``open`` (request rate).
    """

    name: str
    isl: int
    osl: int
    range_ratio: float = INFERENCEX_RANGE_RATIO
    arrival: str = "closed"

    def __post_init__(self) -> None:
        for k in ("isl", "osl"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise SpecError(k, f"must be a positive integer, got {v!r}", f"give --{k} >= 1")
        if self.osl < 2:
            raise SpecError("osl", "TPOT needs at least 2 output tokens", "give --osl >= 2")
        if not 0 < self.range_ratio <= 1:
            raise SpecError("range_ratio", f"must be in (0, 1], got {self.range_ratio}", "use 0.8 or 1")
        if self.arrival not in ("closed", "open"):
            raise SpecError("arrival", f"unknown arrival {self.arrival!r}", "use closed or open")

    @property
    def mean_isl(self) -> float:
        """Mean input length: (1 + r)/2 · L for lengths uniform in [r·L, L]."""
        return (1 + self.range_ratio) / 2 * self.isl

    @property
    def mean_osl(self) -> float:
        """Mean output length: (1 + r)/2 · L."""
        return (1 + self.range_ratio) / 2 * self.osl

    def osl_quantile(self, q: float) -> float:
        """Output length at quantile q of its uniform distribution."""
        return self.range_ratio * self.osl + q * (1 - self.range_ratio) * self.osl

    def isl_quantile(self, q: float) -> float:
        """Input length at quantile q of its uniform distribution."""
        return self.range_ratio * self.isl + q * (1 - self.range_ratio) * self.isl

    def as_dict(self) -> dict:
        return {"name": self.name, "isl": self.isl, "osl": self.osl, "range_ratio": self.range_ratio,
                "arrival": self.arrival}


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


def get_workload(name: str | None = None, isl: int | None = None, osl: int | None = None,
                 fixed: bool = False) -> Workload:
    """A preset by name, or a custom ISL/OSL (InferenceX distribution unless ``fixed``).

    Raises:
        UnknownNameError: unknown preset, or an agentic one (named as such: the commands that take
            those parse them before this). SpecError: only one of isl/osl given, or bad lengths.
    """
    ratio = 1.0 if fixed else INFERENCEX_RANGE_RATIO
    if isl is not None or osl is not None:
        if isl is None or osl is None:
            raise SpecError("isl/osl", "give both --isl and --osl", "pass both, or a --workload preset")
        return Workload(f"{isl}/{osl}", isl, osl, ratio)
    name = name or "8k1k"
    from jalapeno.specs.agentic import AGENTIC_PRESETS

    agent = name.removeprefix("agentic:")
    if name.startswith("agentic:") or name == "agentic" or agent in AGENTIC_PRESETS:
        # an agent preset reaching here is a command that sweeps fixed lengths (predict, plan, audit, report,
        # explore), or a bare preset name where compare/frontier take agentic:NAME
        preset = agent if name.startswith("agentic:") or agent in AGENTIC_PRESETS else "coding-agent"
        raise UnknownNameError("workload", f"{name!r} names an agentic (multi-turn) workload, not a fixed-length one",
                               f"compare, frontier and simulate take it as --workload agentic:{preset} "
                               "(docs/agentic.md); for fixed lengths use one of "
                               f"{', '.join(PRESETS)} or --isl N --osl N")
    if name not in PRESETS:
        raise UnknownNameError("workload", f"unknown workload {name!r}",
                               f"use one of {', '.join(PRESETS)} or --isl N --osl N")
    w = PRESETS[name]
    return Workload(w.name, w.isl, w.osl, ratio)
