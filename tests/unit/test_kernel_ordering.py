"""FP4 on Blackwell Ultra (issue 18 part 1): kernel-path imputation, the GEMM fit's memory anchor,
and the newer-chip-not-slower check of ``jalapeno calibrate`` (fit/ordering.py).

Expected values are computed by hand from the synthetic rows below; no test needs the
aiconfigurator-core package (the shipped sets are package data).
"""

from __future__ import annotations

import pandas as pd
import pytest
from cli_runner import run

from jalapeno.fit.kernel_tables import fill_missing_kernel_paths
from jalapeno.fit.ordering import ORDERING_TOLERANCE, PREDECESSOR, ordering_check
from jalapeno.specs.calibration import load_calibration
from jalapeno.specs.catalog import load_system

KEYS = ["moe_dtype", "num_tokens"]


def _rows(src: str, lat: list[float], tokens=(1, 2), dtype="nvfp4") -> pd.DataFrame:
    return pd.DataFrame({"moe_dtype": dtype, "num_tokens": list(tokens), "kernel_source": src, "latency": lat})


def test_missing_kernel_path_is_imputed_by_the_siblings_ratio():
    # sibling: path B is 1/2 and 3/4 of path A; own chip has only A (3 and 8 ms)
    sib = pd.concat([_rows("A", [2.0, 4.0]), _rows("B", [1.0, 3.0])])
    own = _rows("A", [3.0, 8.0])
    out, rep = fill_missing_kernel_paths(own, sib, KEYS, "moe_dtype", "b200_sxm")
    imp = out[out.kernel_source == "B (imputed from b200_sxm)"].sort_values("num_tokens")
    assert imp.latency.tolist() == pytest.approx([3.0 * 1 / 2, 8.0 * 3 / 4])
    assert rep == {"nvfp4": {"B": {"reference": "A", "rows": 2}}}
    assert len(out) == 4  # the measured rows are kept


def test_nothing_is_imputed_when_the_chip_has_every_path():
    sib = pd.concat([_rows("A", [2.0, 4.0]), _rows("B", [1.0, 3.0])])
    own = pd.concat([_rows("A", [3.0, 8.0]), _rows("B", [5.0, 5.0])])
    out, rep = fill_missing_kernel_paths(own, sib, KEYS, "moe_dtype", "b200_sxm")
    assert rep == {} and len(out) == len(own)


def test_imputation_uses_the_reference_shared_on_the_most_configurations():
    # path C missing; A is shared on one token count, D on two: D is the reference
    sib = pd.concat([_rows("A", [1.0], tokens=(1,)), _rows("D", [2.0, 2.0]), _rows("C", [1.0, 1.0])])
    own = pd.concat([_rows("A", [1.0], tokens=(1,)), _rows("D", [4.0, 6.0])])
    out, rep = fill_missing_kernel_paths(own, sib, KEYS, "moe_dtype", "s")
    assert rep["nvfp4"]["C"]["reference"] == "D"
    assert sorted(out[out.kernel_source.str.startswith("C")].latency) == pytest.approx([2.0, 3.0])


def _params(name: str) -> dict:
    return load_calibration(name)["parameters"]


def test_a_successor_with_the_same_fractions_is_not_slower():
    # B300 has B200's HBM bandwidth and at least its peak per format: same fractions, not slower
    p = _params("b200")
    rows = ordering_check({n: load_system(n) for n in ("b200", "b300")}, {"b200": p, "b300": p})
    assert rows and not any(r["flagged"] for r in rows)
    fp4 = [r for r in rows if r["group"] == "gemm.fp4" and r["regime"].startswith("prefill")]
    assert fp4[0]["median_ratio"] < 1.0  # 13.5 vs 9 PF dense FP4


def test_a_successor_with_half_the_hbm_fraction_is_flagged_in_decode():
    p = _params("b200")
    slow = {**p, "gemm": {**p["gemm"], "fp4": {**p["gemm"]["fp4"],
                                               "hbm_fraction": p["gemm"]["fp4"]["hbm_fraction"] / 2}}}
    rows = ordering_check({n: load_system(n) for n in ("b200", "b300")}, {"b200": p, "b300": slow})
    flagged = {(r["group"], r["regime"].split()[0]) for r in rows if r["flagged"]}
    assert ("gemm.fp4", "decode") in flagged
    assert not any(g.startswith("moe") or g.endswith(("bf16", "fp8")) for g, _ in flagged)
    dec = next(r for r in rows if r["group"] == "gemm.fp4" and r["regime"].startswith("decode"))
    assert 1 + ORDERING_TOLERANCE < dec["median_ratio"] <= 2.0  # at most the bandwidth ratio


def test_shipped_sets_pass_the_ordering_check():
    """The regression net of issue 18 part 1: B300/GB300 FP4 came out 1.5x slower than B200/GB200."""
    names = sorted(set(PREDECESSOR) | set(PREDECESSOR.values()))
    rows = ordering_check({n: load_system(n) for n in names}, {n: _params(n) for n in names})
    assert {(r["newer"], r["older"]) for r in rows} == set(PREDECESSOR.items())
    bad = [(r["newer"], r["group"], r["regime"], round(r["median_ratio"], 3)) for r in rows if r["flagged"]]
    assert bad == []


def test_calibrate_cli_warns_on_a_flagged_fit(capsys, monkeypatch):
    import jalapeno.fit.calibrate as cal

    flag = {"newer": "b300", "older": "b200", "group": "moe.fp4", "regime": "decode (m <= 64)",
            "median_ratio": 1.38, "flagged": True}
    monkeypatch.setattr(cal, "calibrate_catalog", lambda *a, **k: {"_ordering_flags": [flag]})
    code, out, err = run(capsys, "calibrate", "--systems", "b300")
    assert code == 0
    text = " ".join((out + err).split())
    assert "b300's moe.fp4 fit is 38% slower than b200's in the decode (m <= 64) regime" in text
