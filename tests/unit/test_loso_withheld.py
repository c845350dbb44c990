"""Leave-one-system-out borrows nothing the left-out system measured (fit/loso.py).

One test per rule that fills one system's fit from another's measurements. Each leaves a system S out and
recomputes, independently of fit/loso's plumbing, what the donor's parameters are without S's tables (and its
same-silicon twin's): the shipped donor set carries S's rows, so each test fails on it (as loso_set was before
round 28: the shipped set, less the all-to-all latency only).
"""

from __future__ import annotations

import copy
from functools import cache

import numpy as np
import pytest

from jalapeno.fit import loso
from jalapeno.specs.calibration import load_calibration

pytest.importorskip("aiconfigurator_core")

RAMP = ("link_fraction", "link_half_bytes", "link_shape", "in_switch_fraction", "in_switch_half_bytes",
        "in_switch_shape")


#: calibrate_system's fits by (system, withheld tables), kept for the module (_borrowed below)
_REFITS: dict = {}


@cache
def _borrowed(name: str) -> dict:
    """``loso.loso_set(name)``, once per name for the module. Each set refits its four pooled donors
    (fit/calibrate.calibrate_system, ~10 s each); twins withhold the same tables (withheld_tables: b200 and gb200-nvl72
    both {b200_sxm, gb200}; b300 and gb300-nvl72 both {b300_sxm, gb300}), so their pools are the same four fits. Each
    (system, withheld tables) is fitted once here and every call gets its own deep copy: calibrate_system reads the
    kernel tables alone (same arguments, same set), so loso_set returns what it would have fitted itself: 12 fits for
    the five names the tests read, not 20."""
    from jalapeno.fit import calibrate as cal

    real = cal.calibrate_system

    def refit_once(system, withheld=frozenset()):
        key = (system.name, frozenset(withheld))
        if key not in _REFITS:
            _REFITS[key] = real(system, withheld)
        return copy.deepcopy(_REFITS[key])

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cal, "calibrate_system", refit_once)
        return loso.loso_set(name)


def test_withheld_tables_are_the_system_and_its_twin():
    assert loso.withheld_tables("gb200-nvl72") == {"gb200", "b200_sxm"}
    assert loso.withheld_tables("h100") == {"h100_sxm", "h200_sxm"}
    s = _borrowed("b200")
    assert s["provenance"] == {"derived_from": "b300", "left_out": "b200", "withheld_tables": ["b200_sxm", "gb200"],
                               "moe_hbm_pooled_over": ["b300", "gb300-nvl72", "h100", "h200"]}


def test_nvlink_generation_ramp_is_fitted_without_the_left_out_systems_nccl_tables():
    """The NVLink 5 NCCL ramp is fitted on every NVLink 5 system's table (fit/collectives.fit_generation); B300 left
    out borrows B200's set, whose ramp must come from B200's and GB200's tables alone."""
    from jalapeno.fit.collectives import aic_nccl_frame, fit_generation
    from jalapeno.fit.kernel_tables import load_nccl_table
    from jalapeno.specs.catalog import load_system

    frames = {n: aic_nccl_frame(load_nccl_table(d)[0], load_system(n)) for n, d in (("b200", "b200_sxm"),
                                                                                   ("gb200-nvl72", "gb200"))}
    want, _ = fit_generation(frames)
    got = _borrowed("b300")["parameters"]
    assert {k: got[k] for k in RAMP} == pytest.approx({k: want[k] for k in RAMP}, rel=1e-9)
    shipped = load_calibration("b200")["parameters"]  # fitted on B300's and GB300's tables too
    assert not np.isclose(shipped["link_fraction"], want["link_fraction"], rtol=1e-3)


def test_kernel_path_sibling_rows_are_not_borrowed():
    """B300's MoE table lacks a kernel path, imputed from B200's table (fit/kernel_tables.KERNEL_PATH_SIBLING): B200
    left out borrows B300's MoE form fitted on B300's own rows alone."""
    from jalapeno.fit.kernel_tables import load_table
    from jalapeno.fit.kernels import CALIBRATION_TOUCHED_RULE, fit_moe
    from jalapeno.specs.catalog import load_system

    own, _ = load_table("b300_sxm", "moe", "moe_perf")
    assert not own.kernel_source.str.contains("imputed").any()
    want, _ = fit_moe(own, load_system("b300"), touched_rule=CALIBRATION_TOUCHED_RULE)  # read as calibrate reads it
    got = _borrowed("b200")["parameters"]["moe"]
    for fmt, entry in want["moe"].items():  # the HBM fraction is pooled (fit/moe_transfer.py; its own test below)
        assert {k: v for k, v in got[fmt].items() if k != "hbm_fraction"} == pytest.approx(
            {k: v for k, v in entry.items() if k != "hbm_fraction"}, rel=1e-9), fmt
    shipped = load_calibration("b300")["parameters"]["moe"]  # fitted with B200's imputed rows
    assert not np.isclose(shipped["fp4"]["hbm_fraction"], want["moe"]["fp4"]["hbm_fraction"], rtol=1e-2)


def test_routed_expert_hbm_fraction_is_pooled_over_the_donors_without_the_left_out_pair():
    """H100 left out: its MoE HBM fraction is the median, over B200, GB200, B300 and GB300 refitted without H100's and
    H200's tables (none of which reads them: their MoE forms are fitted on their own rows, KERNEL_PATH_SIBLING imputes
    within Blackwell only) and over every format each fits, of moe[fmt].hbm_fraction (fit/moe_transfer.py) — here read
    from the shipped files of those four, in every format; not B200's FP8 value."""
    vals = [e["hbm_fraction"] for n in ("b200", "gb200-nvl72", "b300", "gb300-nvl72")
            for e in load_calibration(n)["parameters"]["moe"].values()]
    assert len(vals) == 12
    got = _borrowed("h100")["parameters"]["moe"]
    assert set(got) == {"bf16", "fp8", "fp4"}
    for fmt in got:
        assert got[fmt]["hbm_fraction"] == pytest.approx(float(np.median(vals)), rel=1e-6), fmt
    assert got["fp8"]["hbm_fraction"] > 1.2 * load_calibration("b200")["parameters"]["moe"]["fp8"]["hbm_fraction"]


def test_fabric_sibling_all_to_all_is_not_borrowed():
    """GB300's all-to-all latency is fitted on GB200's table (fit/kernel_tables.A2A_FABRIC_SIBLING): GB200 left out
    borrows none, and GB300 left out borrows GB200's own."""
    assert "all_to_all_latency_s" in load_calibration("gb300-nvl72")["parameters"]
    assert "all_to_all_latency_s" not in _borrowed("gb200-nvl72")["parameters"]
    assert _borrowed("gb300-nvl72")["parameters"]["all_to_all_latency_s"] == pytest.approx(
        load_calibration("gb200-nvl72")["parameters"]["all_to_all_latency_s"], rel=1e-3)


def test_a_borrowed_set_reads_none_of_the_systems_own_per_system_measurements(tmp_path):
    """Under a set derived from another chip the pricer reads no measurement keyed by the system's name
    (cost/pricer.measured_here): B200's TensorRT-LLM all-reduce is priced from its measured curve
    (data/collectives/engine_allreduce.toml) under its own set, by the link model under a borrowed one."""
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.fit.calibrate import to_toml

    (tmp_path / "b200.toml").write_text(to_toml({"system": "b200", "parameters": {"hbm_fraction": 0.8},
                                                 "provenance": {"derived_from": "b300"}}, "derived"))
    msg = np.array([256e3])
    own = load_pricer("b200", stack="trtllm").collective("all_reduce", 8, msg)
    lent = load_pricer("b200", str(tmp_path), stack="trtllm").collective("all_reduce", 8, msg)
    assert own.algorithm[0].endswith("_measured") and not lent.algorithm[0].endswith("_measured")
    # H100's FA3 decode speed (data/attention_backends.toml, fitted on H100's own vLLM table): not under a borrowed set
    from jalapeno.cost.pool_backends import with_attention_backend

    (tmp_path / "h100.toml").write_text(to_toml({"system": "h100", "parameters": {"hbm_fraction": 0.8},
                                                 "provenance": {"derived_from": "b200"}}, "derived"))
    own, lent = load_pricer("h100"), load_pricer("h100", str(tmp_path))
    assert with_attention_backend(own, "flash_attn", "fp8") is not own
    assert with_attention_backend(lent, "flash_attn", "fp8") is lent


def test_stacks_are_refitted_without_the_left_out_systems_end_to_end_rows(tmp_path, monkeypatch):
    """The stacks' fixed costs are fitted on every system's end-to-end rows (fit/stack_fit.fit_all): GB300 left out
    is priced with fits that saw none of GB300's or B300's rows."""
    import jalapeno.fit.stack_fit as sf
    import jalapeno.fit.validation_run as vr

    pts = sf.load_points(frozenset({"gb300-nvl72", "b300"}))
    assert pts and not {p.system for p in pts} & {"gb300-nvl72", "b300"}
    assert {"gb300-nvl72", "b300"} <= {p.system for p in sf.load_points()}
    seen = {}
    monkeypatch.setattr(sf, "fit_all", lambda **k: seen.setdefault("fit", k) and {"sglang": {"values": {}}})
    monkeypatch.setattr(loso, "loso_set", lambda n: {"system": n, "parameters": {"hbm_fraction": 0.8},
                                                     "provenance": {"derived_from": "gb200-nvl72"}})
    monkeypatch.setattr(vr, "run_validation", lambda **k: seen.setdefault("validate", k) and {"rows": _no_rows()})
    loso.run_loso(tmp_path, ("gb300-nvl72",))
    assert seen["fit"] == {"withheld_systems": {"gb300-nvl72", "b300"}}
    assert seen["validate"]["stack_fits"] == {"sglang": {"values": {}}}


def _no_rows():
    import pandas as pd

    return pd.DataFrame({"metric": [], "error": []})
