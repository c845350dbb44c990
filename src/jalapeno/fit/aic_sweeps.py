"""The InferenceX sweep behind a group of aiconfigurator ``silicon_sample.csv`` rows, and its MTP use.

aiconfigurator-core 0.12.0's sample does not record speculative decoding, yet several of its
TensorRT-LLM DeepSeek-R1 groups are InferenceX MTP sweeps: the rows' ``measured=`` time is the
commit time of the InferenceX change that triggered the sweep, and that change's perf-changelog
names the configurations it ran (``data/validation/aic_sweeps.toml``, each entry with its commit,
changelog keys and launch script). :func:`sweep_of` finds a row's entry; :func:`sweep_mtp` the MTP
its launch script ran at the row's layout.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from jalapeno.deploy.recipe import DraftRule
from jalapeno.errors import SpecError

SWEEPS = Path(__file__).resolve().parents[1] / "data" / "validation" / "aic_sweeps.toml"
_KEYS = {"system", "model", "engine", "version", "precision", "measured", "config_key", "spec", "mtp_draft",
         "mtp_draft_dp_attention", "source"}


@dataclass(frozen=True)
class Sweep:
    """One entry of aic_sweeps.toml (its header documents the fields)."""

    system: str
    model: str
    engine: str
    version: str
    precision: str
    measured: str
    config_key: str
    spec: str
    source: str
    mtp_draft: int = 0
    mtp_draft_dp_attention: int = 0

    @property
    def draft_rule(self) -> DraftRule | None:
        """The launch script's draft length by layout (deploy/recipe.DraftRule, the rule engine recipes use):
        ``mtp_draft`` without attention DP, ``mtp_draft_dp_attention`` with it; None without MTP."""
        if self.spec != "mtp":
            return None
        return DraftRule(((math.inf, self.mtp_draft),), ((math.inf, self.mtp_draft_dp_attention),))

    def draft_tokens(self, attention_dp: int) -> int:
        """Draft tokens per step at a layout's attention DP degree (0 without MTP)."""
        rule = self.draft_rule
        return 0 if rule is None else rule.draft_at(None, attention_dp)


@cache
def load_sweeps(path: Path = SWEEPS) -> tuple[Sweep, ...]:
    """The entries of ``path``.

    Raises:
        SpecError: an unknown key, a missing field, a spec other than mtp/none, or an MTP entry
            without a positive draft length (naming the entry and the fix).
    """
    out = []
    for i, e in enumerate(tomllib.loads(path.read_text()).get("sweep", [])):
        where = f"{path.name}: sweep[{i}]"
        if set(e) - _KEYS:
            raise SpecError(where, f"unknown key(s) {sorted(set(e) - _KEYS)}", f"use {', '.join(sorted(_KEYS))}")
        missing = {"system", "model", "engine", "version", "precision", "measured", "config_key", "spec",
                   "source"} - set(e)
        if missing:
            raise SpecError(where, f"missing {sorted(missing)}", "give every field the file header lists")
        if e["spec"] not in ("mtp", "none"):
            raise SpecError(f"{where}.spec", repr(e["spec"]), 'use "mtp" or "none"')
        if e["spec"] == "mtp" and not (e.get("mtp_draft", 0) > 0 and e.get("mtp_draft_dp_attention", 0) > 0):
            raise SpecError(where, "an MTP sweep without draft lengths",
                            "give mtp_draft and mtp_draft_dp_attention from its launch script")
        out.append(Sweep(**{k: str(v) if k in ("version", "measured") else v for k, v in e.items()}))
    return tuple(out)


def measured_date(data_source: str) -> str:
    """The UTC date of ``measured=`` in a row's ``silicon_data_source`` ("" when absent).

    >>> measured_date("source_file=2026-03-25.csv; measured=2026-02-05T19:55:05Z; wip=False")
    '2026-02-05'
    """
    m = re.search(r"measured=(\d{4}-\d\d-\d\d)", str(data_source))
    return m.group(1) if m else ""


def sweep_of(system: str, model: str, framework: str, precision: str, data_source: str) -> Sweep | None:
    """The sweep entry of a row (catalog ``system`` and ``model``, ``framework`` "ENGINE RELEASE",
    catalog ``precision``, its ``silicon_data_source``), or None.

    >>> sweep_of("b200", "deepseek-r1", "trtllm 1.2.0rc6.post3", "fp8", "measured=2026-02-05T00:00:00.000Z").config_key
    'dsr1-fp8-b200-trt-mtp'
    >>> sweep_of("b200", "deepseek-r1", "trtllm 1.2.0rc6.post3", "fp8", "measured=2026-02-04") is None
    True
    """
    date = measured_date(data_source)
    if not date:
        return None
    engine, _, version = framework.strip().partition(" ")
    return next((s for s in load_sweeps() if (s.system, s.model, s.engine, s.version, s.precision, s.measured)
                 == (system, model, engine, version.strip(), precision, date)), None)


def with_sweep_mtp(dep, sweep: Sweep | None, acceptance_single: float, acceptance_chain: float):
    """(deployment, spec, note) of a row its sweep ran: ``dep`` (deploy/deployment.Deployment) with the
    sweep's MTP at its layout (acceptance ``acceptance_single`` for one draft token, ``acceptance_chain``
    per token for more: the validation's stated assumptions), the sweep's spec ("mtp"/"none"; "" without
    a sweep) and a note naming the sweep ("" without one).
    """
    if sweep is None or dep is None:
        return dep, "", ""
    k = sweep.draft_tokens(dep.decode.layout.dp)
    if not k:
        return dep, sweep.spec, f"InferenceX sweep {sweep.config_key} (no MTP; data/validation/aic_sweeps.toml)"
    from dataclasses import replace

    from jalapeno.deploy.deployment import MTP

    mtp = MTP(k, acceptance_single if k == 1 else acceptance_chain)
    return (replace(dep, mtp=mtp), "mtp", f"InferenceX MTP sweep {sweep.config_key}: MTP{k} (its launch script), "
            f"acceptance {mtp.acceptance} assumed (data/validation/aic_sweeps.toml)")
