"""The serving engine's own all-reduce, priced from its measured latency table.

The link-hierarchy model (cost/collectives.py) prices a TP all-reduce as the fastest of NCCL's
ring / tree, the engines' one-/two-shot kernels (one ramp per system, fitted on every size and TP
size at once) and NVLS. A serving engine does not pick the fastest of those: TensorRT-LLM's
``AllReduce`` op runs its own strategy choice (AUTO: one-shot, two-shot, NCCL by size and TP), SGLang
its custom all-reduce in a CUDA graph. Where the engine's own kernel was measured on the system
(``data/collectives/engine_allreduce.toml``, written by scripts/fit_engine_allreduce.py from
aiconfigurator-core's ``custom_allreduce_perf`` tables: BF16, TP 2/4/8 on HGX, 2/4 on the NVL72
trays, 256 B to 1 GiB per rank), a pool whose software stack names that engine
(``Efficiency.all_reduce_table``, data/stacks.toml) takes the measured time instead:

    t(M) = exp(interp(log M; log M_i, log t_i))     M_1 <= M <= M_n  (piecewise linear in log-log)
    t(M) = t_1                                       M < M_1          (the kernel's floor)

the table's latency as measured (launch included; no ``collective_launch_s`` is added), after one
rule on the table: a message is never priced slower than a larger one of the same curve,

    t_i <- min(t_j, j >= i)                  (the running minimum from the largest size down)

Assumption (named): the engine can all-reduce a message in at most the time of a larger one (the
message padded to it), so a measured point above a larger size's is a one-sample outlier of the
table (each point is one row), not a cost the interpolation should spread to its neighbours. The
tables have it: aiconfigurator-core 0.12.0 a100_sxm comm/trtllm/1.0.0, TP8, 1 MiB (``message_size``
524288 BF16 elements) 83.2 us between 28.3 us at 512 KiB and 53.6 us at 2 MiB (priced 53.6 us);
h100 comm/sglang, TP8, 1 KiB 38.1 us between 3.3 and 3.5 us; h200 comm/sglang, TP8, 512 KiB 14.9 us
above 13.1 us at 1 MiB; and some curves' first, 256 B point (up to 1.55x; below one token's hidden
vector, never priced). The data file lists each point over 10% above a larger size's time
(scripts/fit_engine_allreduce.py); the rest are the small-message floor's row-to-row noise. Beyond the
largest measured size, at a TP size the table lacks, on a group that leaves the system's innermost
link level or is placed ``spread``, and on a system whose link levels differ from the catalog
system the table was measured on (a variant), the link-hierarchy model prices it unchanged.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

import numpy as np

from jalapeno.cost.collectives import CollectiveTime
from jalapeno.errors import SpecError
from jalapeno.specs.efficiency import ALL_REDUCE_TABLE_NAMES
from jalapeno.specs.hardware import System

__all__ = ["ALL_REDUCE_TABLE_NAMES", "engine_all_reduce_curve", "measured_all_reduce"]


def monotone_latency(latency_s: np.ndarray) -> np.ndarray:
    """The running minimum from the largest message down (module docstring): no message priced
    slower than a larger one.

    >>> monotone_latency(np.array([28.3, 83.2, 53.6, 75.9])).tolist()
    [28.3, 53.6, 53.6, 75.9]
    """
    return np.minimum.accumulate(np.asarray(latency_s, dtype=float)[::-1])[::-1]


@lru_cache(maxsize=1)
def _curves() -> MappingProxyType:
    raw = tomllib.loads((resources.files("jalapeno") / "data" / "collectives" / "engine_allreduce.toml").read_text())
    out = {}
    for c in raw.get("curve", []):
        key = (c["system"], c["engine"], int(c["tp"]))
        m, t = np.asarray(c["message_bytes"], dtype=float), np.asarray(c["latency_ms"], dtype=float) * 1e-3
        if key in out or len(m) < 2 or np.any(np.diff(m) <= 0) or np.any(t <= 0):
            raise SpecError(
                "engine_allreduce.toml",
                f"curve {key}: duplicated, unsorted or non-positive",
                "rerun scripts/fit_engine_allreduce.py",
            )
        out[key] = (np.log(m), np.log(monotone_latency(t)), c["table"])
    return MappingProxyType(out)


def engine_all_reduce_curve(system: str, engine: str, tp: int):
    """(log bytes, log seconds, table label) of ``engine``'s measured all-reduce on the catalog
    system ``system`` at ``tp`` ranks, or None when not measured."""
    return _curves().get((system, engine, int(tp)))


@lru_cache(maxsize=64)
def _catalog_levels(name: str):
    from jalapeno.specs.catalog import load_system

    try:
        return load_system(name).levels
    except SpecError:
        return None


def _root_name(system: System) -> str:
    o = system.origin
    return o.root if o is not None and o.root else system.name


def measured_all_reduce(
    base: CollectiveTime, engine: str, group: int, message_bytes, system: System, placement: str = "packed"
) -> CollectiveTime:
    """``base`` (the link-hierarchy price of a TP all-reduce) with the sizes the engine's table
    covers priced from it.

    Args:
        base: :func:`jalapeno.cost.collectives.collective_time` of the same all-reduce.
        engine: one of :data:`ALL_REDUCE_TABLE_NAMES` (``none`` returns ``base``).
        group: ranks of the all-reduce; message_bytes: (N,) bytes per rank.
        system: the system priced (its catalog root's table, if its link levels are the root's).
        placement: ``packed`` or ``spread`` (spread: ``base``).

    Returns:
        :class:`CollectiveTime`; the measured elements have algorithm ``<engine>_measured``.

    Raises:
        SpecError: an unknown engine name.
    """
    if engine not in ALL_REDUCE_TABLE_NAMES:
        raise SpecError(
            "all_reduce_table", f"unknown engine {engine!r}", f"use one of {', '.join(ALL_REDUCE_TABLE_NAMES)}"
        )
    if engine == "none" or group <= 1 or placement != "packed" or group > system.levels[0].chips:
        return base
    root = _root_name(system)
    curve = engine_all_reduce_curve(root, engine, group)
    if (
        curve is None
        or (root != system.name or system.origin is not None and system.origin.overrides)
        and _catalog_levels(root) != system.levels
    ):
        return base
    lm, lt, _ = curve
    m = np.asarray(message_bytes, dtype=float)
    x = np.log(np.maximum(m, 1.0))
    inside = x <= lm[-1]
    if not inside.any():
        return base
    t = np.where(inside, np.exp(np.interp(x, lm, lt)), base.time_s)
    alg = np.where(inside, f"{engine}_measured", base.algorithm).astype(object)
    return CollectiveTime(t, alg, base.level, base.scope)
