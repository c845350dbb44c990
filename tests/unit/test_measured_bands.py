"""A measured system's own error band (analysis/measured_bands.py): toy tables by hand, the shipped
file current, and compare / audit carrying it (printed band, JSON fields)."""

from __future__ import annotations

import importlib.util
import json
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from cli_runner import run

from jalapeno.analysis.measured_bands import BANDS_PATH, MetricBand, band_of, build_bands, load_measured_bands
from jalapeno.cost.pricer import load_pricer
from jalapeno.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]


def _rows(system: str, metric: str, errors, osl: int = 101, quality: str = "") -> list[dict]:
    return [{"id": f"{system}:{metric}:{i}", "system": system, "metric": metric, "measured": 1.0,
             "predicted": 1.0 + e, "error": e, "osl": osl, "quality": quality} for i, e in enumerate(errors)]


def _e2e_rows(system: str, e2e_errors) -> list[dict]:
    """Points whose TTFT is exact (1 s) and TPOT measured 10 ms over OSL 101: E2E 2 s measured; the
    predicted TPOT 10 (1 + 2e) ms makes the predicted E2E 2 (1 + e) s: an E2E error of e exactly."""
    out = []
    for i, e in enumerate(e2e_errors):
        pid = f"{system}:pt:{i}"
        out.append({"id": pid, "system": system, "metric": "ttft_s", "measured": 1.0, "predicted": 1.0, "error": 0.0,
                    "osl": 101, "quality": ""})
        out.append({"id": pid, "system": system, "metric": "tpot_s", "measured": 0.01, "predicted": 0.01 * (1 + 2 * e),
                    "error": 2 * e, "osl": 101, "quality": ""})
    return out


def test_toy_table_by_hand():
    # 10 interactivity errors 0.00 .. 0.09: p10 at order statistic 0.9 -> 0.009, p90 at 8.1 -> 0.081
    inter = [k / 100 for k in range(10)]
    e2e = [(k - 5) / 100 for k in range(10)]  # -0.05 .. 0.04: p10 -0.041, p90 0.031
    rows = pd.DataFrame(_rows("toy", "interactivity", inter) + _e2e_rows("toy", e2e)
                        + _rows("toy", "interactivity", [5.0], quality="flagged")  # a flagged row is left out
                        + _rows("few", "interactivity", [0.1] * 9))  # 9 rows: below MIN_POINTS, no band
    b = build_bands(rows)
    assert set(b) == {"toy"}
    i = b["toy"]["interactivity"]
    assert (i["q_lo"], i["q_hi"], i["n"]) == (pytest.approx(0.009), pytest.approx(0.081), 10)
    e = b["toy"]["e2e_s"]
    assert (e["q_lo"], e["q_hi"], e["n"]) == (pytest.approx(-0.041), pytest.approx(0.031), 10)
    # no direct throughput rows: derived, e_thr = 1 / (1 + e_e2e) - 1 (sorted: 1/0.96 - 1 .. 1/1.05 - 1)
    t = b["toy"]["throughput_per_chip"]
    thr = sorted(1 / (1 + x) - 1 for x in e2e)  # -0.0476 .. 0.0417
    assert t["q_lo"] == pytest.approx(thr[0] + 0.9 * (thr[1] - thr[0]))
    assert t["q_hi"] == pytest.approx(thr[8] + 0.1 * (thr[9] - thr[8]))
    assert t["source"].startswith("derived from e2e_s")
    # ten direct throughput rows win over the derived ones
    direct = build_bands(pd.DataFrame(_rows("toy", "throughput_per_chip", inter) + _e2e_rows("toy", e2e)))
    assert direct["toy"]["throughput_per_chip"]["source"] == "direct"
    assert direct["toy"]["throughput_per_chip"]["q_hi"] == pytest.approx(0.081)


def test_band_ends_by_hand():
    # q_lo -10%, q_hi +25%: the measured value of a 100 prediction lies in 100/1.25 .. 100/0.9
    t = MetricBand("throughput_per_chip", -0.10, 0.25, 50, 0.0, "direct")
    assert t.ends(100.0) == (pytest.approx(80.0), pytest.approx(111.111111))
    lat = MetricBand("e2e_s", -0.10, 0.25, 50, 0.0, "derived")  # latency: the worse end is the higher one
    assert lat.ends(100.0) == (pytest.approx(111.111111), pytest.approx(80.0))
    assert t.factor("low") == pytest.approx(0.8) and lat.factor("low") == pytest.approx(1 / 0.9)


def test_shipped_file_is_current():
    """The file is what scripts/gen_measured_bands.py writes from today's validate (about 10 s)."""
    spec = importlib.util.spec_from_file_location("gen_measured_bands", ROOT / "scripts" / "gen_measured_bands.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    from jalapeno.fit.validation_run import run_validation

    assert BANDS_PATH.read_text() == gen.render(run_validation()["rows"]), \
        "stale: rerun python scripts/gen_measured_bands.py"


def test_which_pricers_get_a_band():
    assert band_of(load_pricer("gb300-nvl72")).get("throughput_per_chip").n >= 10
    assert band_of(load_pricer("jalapeno")) is None  # derived: not validated (its efficiency band instead)
    over = load_pricer("gb300-nvl72", overrides=(("efficiency.hbm_fraction", 0.5),))
    assert band_of(over) is None  # a what-if set is not the system validate measured


def test_bad_file(tmp_path):
    p = tmp_path / "b.toml"
    p.write_text("[systems\n")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_measured_bands(str(p))
    p.write_text('[systems."x".interactivity]\nq_lo = 0.2\nq_hi = 0.1\nn = 10\nmedian = 0\nsource = "direct"\n')
    with pytest.raises(SpecError, match="out of order"):
        load_measured_bands(str(p))
    with pytest.raises(SpecError, match="file not found"):
        load_measured_bands(str(tmp_path / "none.toml"))


def test_audit_prints_the_measured_band(capsys):
    q = tomllib.loads(BANDS_PATH.read_text())["systems"]["gb300-nvl72"]["throughput_per_chip"]
    argv = ("audit", "-s", "gb300-nvl72", "-m", "deepseek-r1", "-w", "1k1k", "--claim",
            "peak_throughput_per_chip=1000")
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    d = json.loads(out)["predicted"]
    # the peak scales with the throughput factor: prediction / (1 + p90) .. / (1 + p10)
    assert d["low"] == pytest.approx(d["value"] / (1 + q["q_hi"]), rel=1e-9)
    assert d["high"] == pytest.approx(d["value"] / (1 + q["q_lo"]), rel=1e-9)
    assert d["band"].startswith("gb300-nvl72: measured error p10/p90")
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    text = " ".join(out.split())
    assert f"{d['low']:,.0f} to {d['high']:,.0f}" in text  # 13,690 to 17,260: separators from 1,000 (newuser29)
    assert ("band: gb300-nvl72: measured error p10/p90 of predicted/measured - 1 (jalapeno validate on "
            "deepseek-r1)") in text


def test_audit_ratio_crosses_the_baseline_band(capsys):
    q = tomllib.loads(BANDS_PATH.read_text())["systems"]["gb300-nvl72"]["throughput_per_chip"]
    code, out, err = run(capsys, "audit", "-s", "b200", "-b", "gb300-nvl72", "-m", "deepseek-r1", "-w", "1k1k",
                         "--claim", "peak_throughput_per_chip_ratio=1", "--json")
    assert code == 0, err
    d = json.loads(out)
    qb = tomllib.loads(BANDS_PATH.read_text())["systems"]["b200"]["throughput_per_chip"]
    sys_v = d["predicted"]["value"] * d["baseline_value"]
    # low: B200 at its worse end over GB300 at its better end; high: the reverse
    assert d["predicted"]["low"] == pytest.approx(sys_v / (1 + qb["q_hi"]) / (d["baseline_value"] / (1 + q["q_lo"])))
    assert d["predicted"]["high"] == pytest.approx(sys_v / (1 + qb["q_lo"]) / (d["baseline_value"] / (1 + q["q_hi"])))
    assert "baseline gb300-nvl72: measured error" in d["predicted"]["band"]


def test_compare_prints_and_shades_the_measured_band(capsys, tmp_path):
    """compare --bands: GB300's headline carries (low to high) = peak / (1 + p90) .. / (1 + p10) of its
    throughput error, the ratio row of GB200 (both measured) a crossed band, and the chart shades it."""
    q = tomllib.loads(BANDS_PATH.read_text())["systems"]
    args = ("compare", "--systems", "gb200-nvl72,gb300-nvl72", "-m", "deepseek-r1", "-w", "1k1k", "-p", "fp8",
            "--serving", "agg", "--at", "20", "--bands")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    h = d["systems"]["gb300-nvl72"]["headline"]
    t3, t2 = q["gb300-nvl72"]["throughput_per_chip"], q["gb200-nvl72"]["throughput_per_chip"]
    lo, hi = h["peak_throughput_per_chip"] / (1 + t3["q_hi"]), h["peak_throughput_per_chip"] / (1 + t3["q_lo"])
    assert h["bands"]["peak_throughput_per_chip"]["low"] == pytest.approx(lo, rel=1e-12)
    assert h["bands"]["peak_throughput_per_chip"]["high"] == pytest.approx(hi, rel=1e-12)
    g2 = d["systems"]["gb200-nvl72"]["headline"]["peak_throughput_per_chip"]
    pk = d["comparisons"]["gb200-nvl72"]["bands"]["peak_ratio"]["throughput_per_chip"]
    assert pk["low"] == pytest.approx(g2 / (1 + t2["q_hi"]) / hi, rel=1e-12)  # GB200 worse over GB300 better
    assert pk["high"] == pytest.approx(g2 / (1 + t2["q_lo"]) / lo, rel=1e-12)
    html = tmp_path / "c.html"
    code, out, err = run(capsys, *args, "--html", str(html))
    assert code == 0, err
    assert "its measured error band" in " ".join(out.split())
    page = html.read_text()
    assert '"name":"gb300-nvl72 band"' in page.replace('": "', '":"')  # the chart shades it
    # the tables as printed (wide, so no cell wraps)
    from rich.console import Console

    from jalapeno.analysis.comparison import compare_systems
    from jalapeno.analysis.sweep import SweepOptions
    from jalapeno.cost.pricer import band_pricers
    from jalapeno.report.tables import comparison_tables
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    prs = [load_pricer("gb200-nvl72"), load_pricer("gb300-nvl72")]
    res = compare_systems(load_model("deepseek-r1"), prs, get_workload("1k1k"), get_precision("fp8"),
                          options=SweepOptions(serving="agg"), iso_interactivity=(20.0,),
                          bands={p.system.name: band_pricers(p) for p in prs})
    con = Console(width=400, record=True)
    for t in comparison_tables(res.record()):
        con.print(t)
    text = con.export_text()
    row = next(line for line in text.splitlines() if line.startswith("│ gb300-nvl72 "))
    assert f"{h['peak_throughput_per_chip']:,.0f} ({lo:,.0f} to {hi:,.0f})" in row
    # the caption says where min E2E's band is (the table has no band in that column) and how E2E is formed
    assert "min E2E's band (E2E = TTFT + (OSL - 1) TPOT) is in compare --json only" in " ".join(text.split())
    row = next(line for line in text.splitlines() if "gb200-nvl72 band" in line)
    assert f"{min(pk['low'], pk['high']):.2f} to {max(pk['low'], pk['high']):.2f}x" in row


def test_no_band_for_a_pricer_validate_did_not_use():
    from jalapeno.cost.sliced import chip_model_pricer

    pr = chip_model_pricer(load_pricer("gb300-nvl72"), "sliced")
    assert type(pr).__name__ == "SlicedPricer" and band_of(pr) is None


def test_no_band_for_a_model_validate_never_measured_there(capsys):
    """GB300's band is DeepSeek-R1's error (the only model validate has GB300 points for): Llama 3.3 70B,
    a dense GQA model, never measured there, gets none (it got DeepSeek-R1's before review27)."""
    assert load_measured_bands()["gb300-nvl72"].models == ("deepseek-r1",)
    pr = load_pricer("gb300-nvl72")
    assert band_of(pr, "deepseek-r1") is not None and band_of(pr, "llama-3.3-70b") is None
    code, out, err = run(capsys, "audit", "-s", "gb300-nvl72", "-m", "llama-3.3-70b", "-w", "1k1k", "--claim",
                         "peak_throughput_per_chip=1000", "--json")
    assert code == 0, err
    d = json.loads(out)["predicted"]
    assert d["low"] == d["high"] == d["value"] and "measured error" not in d["band"]
    code, out, err = run(capsys, "audit", "-s", "gb300-nvl72", "-m", "llama-3.3-70b", "-w", "1k1k", "--claim",
                         "peak_throughput_per_chip=1000")
    assert code == 0, err
    assert ("(gb300-nvl72's measured band is validate's error on deepseek-r1 only: no llama-3.3-70b points on it). "
            "The parameter bands below still apply") in " ".join(out.split())
    code, out, err = run(capsys, "compare", "--systems", "gb200-nvl72,gb300-nvl72", "-m", "llama-3.3-70b", "-w",
                         "1k1k", "-p", "fp8", "--serving", "agg", "--at", "20", "--bands", "--json")
    assert code == 0, err
    d = json.loads(out)
    for s in d["systems"].values():  # a band without width (as a user file's), not a measured one
        b = s["headline"].get("bands") or {}
        assert not (b.get("source") or "").startswith("measured")
        pk = b.get("peak_throughput_per_chip", {"low": 1, "high": 1})
        assert pk["low"] == pk["high"]
    # analyst49: the JSON said nothing of why GB300's ends are equal (the table says 'no band for gb300-nvl72'), so a
    # chart drawn from it showed the baseline as exact; its source names the gap (GB200's measured band covers no
    # Llama 3.3 70B either: its band is validate's on DeepSeek-R1, GPT-OSS-120B and Kimi K2.5)
    for n in ("gb200-nvl72", "gb300-nvl72"):
        models = ", ".join(load_measured_bands()[n].models)
        assert d["systems"][n]["headline"]["bands"]["source"] == (
            f"none: validate has no llama-3.3-70b points on {n} (its measured error band is validate's on {models}); "
            "low and high repeat the calibrated prediction")


def test_compare_table_says_why_a_measured_system_has_no_band(capsys):
    """compare --bands on a model validate never measured on GB300 (Llama 3.3 70B): the headline table says GB300
    has no band and why (an empty band would read as an exact figure); on DeepSeek-R1, covered, no such line."""
    args = ("compare", "--systems", "gb200-nvl72,gb300-nvl72", "-w", "1k1k", "--serving", "agg", "--at", "20",
            "--bands", "--html", "")
    code, out, err = run(capsys, *args, "-m", "llama-3.3-70b", "-p", "fp8")
    assert code == 0, err
    assert ("no band for gb300-nvl72: its measured error band is validate's on deepseek-r1; validate has no "
            "llama-3.3-70b points on it") in " ".join(out.split())
    code, out, err = run(capsys, *args, "-m", "deepseek-r1", "-p", "fp8")
    assert code == 0, err
    assert "no band for gb300-nvl72" not in " ".join(out.split())
