"""Typed result records: what leaves the model (the JSON contract other tools read).

One schema, documented field by field in ``docs/metrics.md`` §11 (a test checks that every field
of every record here is listed there, and nothing else):

- :class:`PointRecord`: one operating point (a frontier point, a ``predict`` result);
- :class:`PredictionRecord`: a :class:`PointRecord` plus the model, workload and efficiency
  set it was predicted with (``jalapeno predict``);
- :class:`Headline` (with :class:`Bands` of :class:`Band`): one system's headline figures;
- :class:`FrontierRecord`: one system's frontier points (and headline, in a comparison);
- :class:`Ratios`: one system against the baseline; :class:`ComparisonRecord`: a comparison.

Records are frozen dataclasses; nested mappings are read-only (``MappingProxyType``) and lists
are tuples. Views derive from the fields: ``as_dict()`` gives plain dicts/lists/str/float/
int/bool/None in field order (``json.dumps`` serialises it; NaN stays a float NaN: the CLI's
``print_json`` writes it as null) and ``to_frame()`` a pandas DataFrame, one row per point.
Pure: no I/O; pandas is imported only by ``to_frame``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

import numpy as np

from jalapeno.analysis.bound_words import (  # noqa: F401 (re-exported: split for the line budget, round 53)
    BAND_TO,
    BOUND_TEXT_FIELD,
    LIMIT_TEXT_FIELD,
    band_span,
    bound_cell,
    bound_text,
    cap_text,
    point_bound,
    point_bound_capped,
    prefill_chip_share,
    with_cap,
)
from jalapeno.analysis.power_cost import CONVENTIONS, energy_and_cost, power_w_per_chip
from jalapeno.deploy.deployment import Deployment
from jalapeno.serve.serving_points import ServingPoints
from jalapeno.specs.hardware import System
from jalapeno.specs.workload import Workload

#: metadata of a field left out of ``as_dict()`` when it is None
OPTIONAL = {"omit_if_none": True}


def _freeze(o: Any) -> Any:
    """Read-only copy: mappings → MappingProxyType, lists/tuples → tuples (recursively)."""
    if isinstance(o, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in o.items()})
    if isinstance(o, (list, tuple)):
        return tuple(_freeze(v) for v in o)
    return o


def _plain(o: Any) -> Any:
    """JSON-ready view: records/specs → their ``as_dict()``, mappings → dicts, tuples → lists."""
    if hasattr(o, "as_dict"):
        return o.as_dict()
    if isinstance(o, Mapping):
        return {k: _plain(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_plain(v) for v in o]
    if isinstance(o, np.generic):
        return o.item()
    return o


class _Record:
    """Shared views of the records (a mixin: no fields of its own)."""

    __slots__ = ()

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, (Mapping, list, tuple)):
                object.__setattr__(self, f.name, _freeze(v))

    def as_dict(self) -> dict:
        """Every field in order as plain JSON-ready values (optional fields left out when None)."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None and f.metadata.get("omit_if_none"):
                continue
            out[f.name] = _plain(v)
        return out


#: ``PointRecord`` fields whose frame (CSV, Parquet) column carries its unit as a suffix
#: (STYLE §6: ``tput_per_chip_tok_per_s``); every other scalar field's name already ends in its
#: unit (``ttft_s``, ``power_w_per_chip``, ``tok_s_per_kw``, ``usd_per_mtok``) or is a count or ratio.
FRAME_UNITS = MappingProxyType(
    {
        "throughput_per_chip": "throughput_per_chip_tok_per_s",
        "output_throughput_per_chip": "output_throughput_per_chip_tok_per_s",
        "interactivity": "interactivity_tok_per_s_per_user",
        "output_throughput_per_decode_chip": "output_throughput_per_decode_chip_tok_per_s",
    }
)


def _flat_row(d: dict) -> dict:
    """One frame row of a point's dict: scalar fields (named with their unit, :data:`FRAME_UNITS`),
    the deployment as its label and its JSON."""
    return {
        **{FRAME_UNITS.get(k, k): v for k, v in d.items() if not isinstance(v, dict)},
        "deployment": d["deployment"]["label"],
        "deployment_json": json.dumps(d["deployment"]),
    }


def _span(points) -> str:
    """``21 points, 13.5-130.8 tok/s/user, peak 6,447 tok/s/chip``: a frontier in one phrase, for the
    short reprs of the records a notebook prints (README, "Results print short"); the feasible points only."""
    ok = [p for p in points if p.feasible]
    if not ok:
        return f"{len(points)} points, none feasible"
    x = [p.interactivity for p in ok]
    return (
        f"{len(ok)} points, {min(x):,.1f}-{max(x):,.1f} tok/s/user, "
        f"peak {max(p.throughput_per_chip for p in ok):,.0f} in+out tok/s/chip"
    )


def _frame(points) -> Any:
    import pandas as pd

    return pd.DataFrame([_flat_row(p.as_dict()) for p in points])


@dataclass(frozen=True, slots=True)
class PointRecord(_Record):
    """One operating point: a deployment serving a workload at one load (docs/metrics.md §1-§5, §11)."""

    throughput_per_chip: float
    output_throughput_per_chip: float
    interactivity: float
    ttft_s: float
    tpot_s: float
    e2e_s: float
    ttft_p50_s: float
    ttft_p90_s: float
    ttft_p99_s: float
    e2e_p50_s: float
    e2e_p90_s: float
    e2e_p99_s: float
    queue_s: float
    concurrency: float
    decode_batch: float
    request_rate_per_s: float
    chips: float
    step_time_s: float
    kv_transfer_s: float
    bound: str
    bound_margin: float
    bound_level: str
    limit: str
    feasible: bool
    reason: str
    power_convention: str
    power_label: str
    power_w_per_chip: float
    tok_s_per_kw: float
    tok_s_per_kw_by_convention: Mapping[str, float]
    j_per_token: float
    usd_per_mtok: float
    system: str
    deployment: Deployment
    config: str
    output_throughput_per_decode_chip: float
    in_flight: float
    #: a disaggregated point's prefill pool: its full token-budget step's bound (``bound`` is the
    #: decode step's) and its chips over the point's chips; ``""`` and 0 when aggregated
    prefill_bound: str
    prefill_chip_share: float

    @classmethod
    def from_points(
        cls, points: ServingPoints, i: int, dep: Deployment, system: System, convention: str
    ) -> PointRecord:
        """Point ``i`` of ``points``, served by ``dep`` on ``system``, under a power convention."""
        return cls(**_point_fields(points, i, dep, system, convention))

    def to_frame(self):
        """A one-row DataFrame (columns as :meth:`FrontierRecord.to_frame`)."""
        return _frame([self])

    def __repr__(self) -> str:
        """Short (the generated one printed 40 fields and the deployment, 3,700 characters): where, what
        runs, the two frontier axes, the latencies and the bound; :meth:`as_dict` has every field."""
        if not self.feasible:
            return f"{type(self).__name__}({self.system}: {self.deployment.label}, infeasible: {self.reason})"
        c = self.concurrency  # 1.5 was printed 'concurrency 2' (:,.0f), the point served at 1.5
        conc = f"{c:,.0f}" if abs(c - round(c)) < 1e-6 else f"{c:,.2f}"
        return (
            f"{type(self).__name__}({self.system}: {self.deployment.label} at concurrency {conc}: "
            f"{self.throughput_per_chip:,.1f} in+out tok/s/chip, {self.interactivity:,.1f} tok/s/user, "
            f"TTFT {self.ttft_s * 1e3:,.0f} ms, TPOT {self.tpot_s * 1e3:.2f} ms, {bound_text(self)})"
        )


_SERVING = (
    "throughput_per_chip",
    "output_throughput_per_chip",
    "interactivity",
    "ttft_s",
    "tpot_s",
    "e2e_s",
    "ttft_p50_s",
    "ttft_p90_s",
    "ttft_p99_s",
    "e2e_p50_s",
    "e2e_p90_s",
    "e2e_p99_s",
    "queue_s",
    "concurrency",
    "decode_batch",
    "request_rate_per_s",
    "chips",
    "step_time_s",
    "kv_transfer_s",
    "bound",
    "bound_margin",
    "bound_level",
    "limit",
    "feasible",
    "reason",
)


def _point_fields(points: ServingPoints, i: int, dep: Deployment, system: System, convention: str) -> dict:
    p = points.record(i)
    rec = {k: p[k] for k in _SERVING}
    for k in ("bound", "bound_level", "limit", "reason"):
        rec[k] = str(rec[k])
    rec["feasible"] = bool(rec["feasible"])
    rec["prefill_bound"] = str(p["prefill_bound"])
    rec["prefill_chip_share"] = prefill_chip_share(p["prefill_chips"], p["chips"])
    # requests admitted to a batch (decoding or prefilling), Little's law over the time after the
    # admission queue: L = λ·(E2E − W) = C·(E2E − W)/E2E; the concurrency cap C counts the queued too
    e2e, wait = float(p["e2e_s"]), float(p["queue_s"])
    c = float(p["concurrency"])
    rec["in_flight"] = c * (e2e - wait) / e2e if e2e > 0 and wait > 0 else c
    # output tokens per second per decode chip (InferenceX's output_tput_per_gpu when disaggregated):
    # the same output over the decode pool's chips only; equal to the per-chip figure when aggregated
    rec["output_throughput_per_decode_chip"] = (
        float(p["output_throughput_per_chip"]) * float(p["chips"]) / dep.decode.chips
        if dep.prefill is not None
        else float(p["output_throughput_per_chip"])
    )
    t = np.array([p["throughput_per_chip"]])
    ec = energy_and_cost(t, system, convention)
    rec.update(
        {
            "power_convention": convention,
            "power_label": power_w_per_chip(system, convention)[1],
            "power_w_per_chip": float(ec["power_w_per_chip"][0]),
            "tok_s_per_kw": float(ec["tok_s_per_kw"][0]),
            "tok_s_per_kw_by_convention": {
                c: float(energy_and_cost(t, system, c)["tok_s_per_kw"][0]) for c in CONVENTIONS
            },
            "j_per_token": float(ec["j_per_token"][0]),
            "usd_per_mtok": float(ec["usd_per_mtok"][0]),
            "system": system.name,
            "deployment": dep,
            "config": dep.config,
        }
    )
    return rec


@dataclass(frozen=True, slots=True, repr=False)  # PointRecord's short repr
class PredictionRecord(PointRecord):
    """What ``jalapeno predict`` returns: a point plus what it was predicted for and with."""

    model: str
    workload: Workload
    efficiency_source: str
    #: the mean TTFT's parts, s (serve/ttft_parts.PARTS: front end, prefill, KV transfer, first step, the rest)
    ttft_parts: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_points(
        cls,
        points: ServingPoints,
        i: int,
        dep: Deployment,
        system: System,
        convention: str,
        *,
        model: str,
        workload: Workload,
        efficiency_source: str,
        ttft_parts: Mapping[str, float] | None = None,
    ) -> PredictionRecord:
        """Point ``i`` of ``points`` with the model name, workload, efficiency-set source and TTFT parts."""
        return cls(
            **_point_fields(points, i, dep, system, convention),
            model=model,
            workload=workload,
            efficiency_source=efficiency_source,
            ttft_parts=MappingProxyType(dict(ttft_parts or {})),
        )


@dataclass(frozen=True, slots=True)
class Band(_Record):
    """One headline figure under the low / calibrated (mid) / high efficiency sets."""

    low: float
    mid: float
    high: float


@dataclass(frozen=True, slots=True)
class Bands(_Record):
    """A headline's band (``compare --bands``): its efficiency band, or a measured system's own error band."""

    peak_throughput_per_chip: Band
    max_interactivity: Band
    min_e2e_s: Band
    peak_tok_s_per_kw: Mapping[str, Mapping[str, float]]
    #: what the band is: None (left out of the JSON) for an efficiency band (low/high efficiency sets);
    #: ``measured error (validate p10/p90)`` for a measured system's own error band (analysis/measured_bands.py);
    #: ``none: validate has no MODEL points on SYSTEM ...`` for a measured system whose band does not cover the model
    #: (measured_bands.uncovered_source: low = high, the table's 'no band for' line)
    source: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, slots=True)
class Headline(_Record):
    """One system's headline figures over its sweep (docs/metrics.md §6, §11)."""

    peak_throughput_per_chip: float
    peak_output_throughput_per_chip: float
    interactivity_at_peak: float
    bound_at_peak: str
    deployment_at_peak: str
    peak_tok_s_per_kw: Mapping[str, float]
    power_labels: Mapping[str, str]
    usd_per_mtok_at_peak: float
    max_interactivity: float
    throughput_at_max_interactivity: float
    bound_at_max_interactivity: str
    deployment_at_max_interactivity: str
    min_e2e_s: float
    min_ttft_s: float
    frontier_points: int
    efficiency_source: str
    vendor_verified: bool
    points_evaluated: int
    bands: Bands | None = field(default=None, metadata=OPTIONAL)
    #: appended (earlier keys unchanged): the peak's and the fastest point's prefill pool when
    #: disaggregated, its bound (``bound_at_*`` is the decode step's) and its share of the chips
    #: (PointRecord.prefill_bound, prefill_chip_share); "" and 0 aggregated
    prefill_bound_at_peak: str = ""
    prefill_chip_share_at_peak: float = 0.0
    prefill_bound_at_max_interactivity: str = ""
    prefill_chip_share_at_max_interactivity: float = 0.0
    #: appended (cap53): what capped the peak's and the fastest point's decode batch (PointRecord.limit:
    #: ``kv_capacity``, ``max_running``, ...; :func:`cap_text`); "" when no cap binds there
    limit_at_peak: str = ""
    limit_at_max_interactivity: str = ""


@dataclass(frozen=True, slots=True)
class FrontierRecord(_Record):
    """One system's frontier: its points by interactivity ascending (``jalapeno frontier``)."""

    system: str
    model: str
    workload: Workload
    precision: str
    frontier: tuple[PointRecord, ...]
    headline: Headline | None = field(default=None, metadata=OPTIONAL)

    def __repr__(self) -> str:
        """Short: ``FrontierRecord(gb200-nvl72: deepseek-r1 · 1k1k · fp8, 21 points, ...)`` (the
        generated repr printed every point, 71,000 characters for one frontier)."""
        return f"FrontierRecord({self.system}: {self.model} · {self.workload.name} · {self.precision}, {_span(self.frontier)})"

    def to_frame(self):
        """One row per frontier point: every scalar field of :class:`PointRecord` (the rates named
        with their unit: :data:`FRAME_UNITS`), then ``deployment`` (its label) and
        ``deployment_json`` (the whole deployment as JSON); ``tok_s_per_kw_by_convention`` is left
        out. The columns of ``frontier --out`` files."""
        return _frame(self.frontier)


@dataclass(frozen=True, slots=True)
class Ratios(_Record):
    """One system against the comparison's baseline (docs/metrics.md §6, §11)."""

    vs: str
    peak_ratio: Mapping[str, float]
    max_interactivity_ratio: float
    min_e2e_ratio: float
    iso_interactivity: Mapping[str, tuple[Mapping[str, Any], ...]]
    tiers: Mapping[str, Mapping[str, Any]]
    tiers_tok_s_per_kw: Mapping[str, Mapping[str, Any]]
    #: with ``compare --bands`` only: the ratios again at both systems' low sets and at their high sets
    #: (analysis/ratio_bands.BAND_PAIRING): ``pairing`` (how), ``peak_ratio`` {kind: {low, high}},
    #: ``max_interactivity_ratio`` / ``min_e2e_ratio`` {low, high}, ``iso_interactivity`` {kind: {low: [row], high: [row]}}
    bands: Mapping[str, Any] | None = field(default=None, metadata=OPTIONAL)
    #: over which per-user speeds the system beats the baseline, per ratio kind (analysis/win_ranges.win_ranges);
    #: None (left out) for the baseline itself
    where_wins: Mapping[str, Any] | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, slots=True)
class ComparisonRecord(_Record):
    """Systems compared on one model and workload (``jalapeno compare --json``).

    In ``as_dict()`` each ``systems`` entry is ``{"frontier": [...], "headline": {...}}``: the
    model, workload and precision are the comparison's, not repeated per system.
    """

    model: str
    workload: Workload
    precision: str
    power_convention: str
    baseline: str
    options: Mapping[str, Any]
    systems: Mapping[str, FrontierRecord]
    comparisons: Mapping[str, Ratios]
    #: systems that cannot run the model (name → reason), compared without them
    infeasible: Mapping[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict:
        """The record as JSON: the common fields and, per system, its frontier and headline."""
        d = _Record.as_dict(self)
        d["systems"] = {
            n: {"frontier": _plain(fr.frontier), "headline": _plain(fr.headline)} for n, fr in self.systems.items()
        }
        return d

    def to_frame(self):
        """Every system's frontier points, one row each (``system`` tells them apart)."""
        return _frame([p for fr in self.systems.values() for p in fr.frontier])

    def __repr__(self) -> str:
        """Short: the comparison's model, workload, precision, power convention and baseline, then
        each system's frontier in one phrase (:func:`_span`)."""
        per = "; ".join(f"{n}: {_span(fr.frontier)}" for n, fr in self.systems.items())
        return (
            f"ComparisonRecord({self.model} · {self.workload.name} · {self.precision} · {self.power_convention}, "
            f"baseline {self.baseline}: {per})"
        )


#: every record type, in the order docs/metrics.md §11 documents them
RECORDS = (PointRecord, PredictionRecord, Headline, Bands, Band, FrontierRecord, Ratios, ComparisonRecord)
