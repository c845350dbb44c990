"""docs/audit.md §3.1 quotes the measured error bands and a worked ratio band: hold both to what ships.

The §3.1 table must equal ``data/validation/measured_bands.toml`` (p10/p90 of predicted/measured − 1
to 0.1%, the row counts, direct or derived throughput), every system of the file and no other; until
round 41 it quoted round 30's file (GB300 throughput −12.3%..+6.8% where audit printed +7.9%).

The worked example (``audit -s jalapeno -b gb300-nvl72 --claim peak_tok_s_per_kw_ratio=1.26``) is
recomputed by the rule the section states, not read from the audit: the ratio's low end is Jalapeño's
low-set peak per kW over GB300's peak per kW at GB300's favourable end (its prediction over 1 + p10),
the high end Jalapeño's high-set peak over GB300's unfavourable end (over 1 + p90).
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from cli_runner import run

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "audit.md").read_text()
BANDS = tomllib.loads((ROOT / "src" / "jalapeno" / "data" / "validation" / "measured_bands.toml").read_text())
FIX = "rerun the figures and update docs/audit.md §3.1"


def _pct_range(cell: str) -> tuple[float, float]:
    m = re.fullmatch(r"([−+-][\d.]+)% to ([−+-][\d.]+)%", cell.strip())
    assert m, f"docs/audit.md §3.1: cannot read the band {cell!r} (want −a% to +b%, every command's band format)"
    return tuple(float(g.replace("−", "-")) for g in m.groups())


def _doc_table() -> dict[str, list[str]]:
    """system → its cells, from the §3.1 'Figures' table."""
    sec = DOC[DOC.index("### 3.1") : DOC.index("## 4.")]
    rows = re.findall(r"^\s*\| `([\w.-]+)` \|(.*)\|\s*$", sec, re.M)
    assert rows, "docs/audit.md §3.1 lost its measured-bands table"
    return {s: [c.strip() for c in cells.split("|")] for s, cells in rows}


def test_section_3_1_table_is_the_shipped_file():
    table = _doc_table()
    assert set(table) == set(BANDS["systems"]), (
        f"docs/audit.md §3.1 lists {sorted(table)}, measured_bands.toml has {sorted(BANDS['systems'])}; {FIX}"
    )
    stale = []
    for system, (tput, n_t, source, inter, n_i) in table.items():
        shipped = BANDS["systems"][system]
        t = shipped["throughput_per_chip"]
        want = (round(100 * t["q_lo"], 1), round(100 * t["q_hi"], 1))
        if _pct_range(tput) != want or int(n_t) != t["n"]:
            stale.append(f"{system} throughput {tput} (n {n_t}), file {want} (n {t['n']})")
        if source != ("direct" if t["source"] == "direct" else "derived"):
            stale.append(f"{system} throughput source {source}, file {t['source']!r}")
        i = shipped.get("interactivity")
        if i is None:
            if inter != "-":
                stale.append(f"{system} interactivity {inter}, file has none")
        elif _pct_range(inter) != (round(100 * i["q_lo"], 1), round(100 * i["q_hi"], 1)) or int(n_i) != i["n"]:
            stale.append(
                f"{system} interactivity {inter} (n {n_i}), file {i['q_lo']:.4f}..{i['q_hi']:.4f} (n {i['n']})"
            )
    assert not stale, "docs/audit.md §3.1 is stale: " + "; ".join(stale) + f"; {FIX}"


def _example() -> tuple[float, float, float, tuple[float, float]]:
    m = re.search(
        r"peak_tok_s_per_kw_ratio=1\.26`: predicted ([\d.]+)x, band ([\d.]+) to ([\d.]+) \(Jalapeño's\s+"
        r"efficiency band crossed with GB300's throughput band, ([−+-][\d.]+% to [−+-][\d.]+%)\)",
        DOC,
    )
    assert m, "docs/audit.md §3.1 lost its worked ratio example (peak_tok_s_per_kw_ratio=1.26)"
    return float(m.group(1)), float(m.group(2)), float(m.group(3)), _pct_range(m.group(4))


def test_example_quotes_gb300_band_of_the_table():
    *_, gb300 = _example()
    assert gb300 == _pct_range(_doc_table()["gb300-nvl72"][0]), "the example's GB300 band is not the table's"


def test_example_ratio_band_by_the_stated_rule(capsys):
    predicted, low, high, _ = _example()
    code, out, err = run(
        capsys, "compare", "--systems", "jalapeno,gb300-nvl72", "-p", "fp8", "--bands", "--json", "--html", ""
    )
    assert code == 0, err
    d = json.loads(out)
    jal = d["systems"]["jalapeno"]["headline"]
    gb300_kw = d["systems"]["gb300-nvl72"]["headline"]["peak_tok_s_per_kw"]["all-in"]
    q = BANDS["systems"]["gb300-nvl72"]["throughput_per_chip"]
    j_lo, j_mid, j_hi = (jal["bands"]["peak_tok_s_per_kw"][k]["all-in"] for k in ("low", "mid", "high"))
    # the ratio's ends cross: Jalapeño's worse end over GB300's better one, and the reverse
    by_rule = (j_lo / (gb300_kw / (1 + q["q_lo"])), j_hi / (gb300_kw / (1 + q["q_hi"])))
    got = {"predicted": j_mid / gb300_kw, "low": by_rule[0], "high": by_rule[1]}
    quoted = {"predicted": predicted, "low": low, "high": high}
    stale = [f"{k}: quoted {quoted[k]}, now {v:.4f}" for k, v in got.items() if quoted[k] != pytest.approx(v, abs=6e-4)]
    assert not stale, (
        "docs/audit.md §3.1 example: "
        + "; ".join(stale)
        + "; rerun `jalapeno audit -s jalapeno -b gb300-nvl72 --claim peak_tok_s_per_kw_ratio=1.26`"
    )
    # and compare's own crossed band is the same arithmetic
    band = d["comparisons"]["jalapeno"]["bands"]["peak_ratio"]["tok_s_per_kw"]
    assert (band["low"], band["high"]) == pytest.approx(by_rule, rel=1e-9)


def _section_5_block() -> dict[str, str]:
    sec = DOC[DOC.index("## 5. Worked example") :]
    block = sec[sec.index("```\n$ jalapeno audit --system jalapeno --model deepseek-r1") :]
    block = block[: block.index("```", 3)]
    pats = {
        "predicted": r"predicted ([\d.]+) \(band",
        "low": r"\(band ([\d.]+) to ",
        "high": r"\(band [\d.]+ to ([\d.]+)\)",
        "limit": r"physical limit ([\d.,]+)",
        "verdict": r"verdict: (\w+)",
        "kernel alone": r"best alone: kernel launch ([\d.]+)",
        "corner": r"favourable band end\s+-> ([\d.]+)",
        "together": r"both by s = ([\d.]+)",
    }
    out = {}
    for k, pat in pats.items():
        m = re.search(pat, block)
        assert m, f"docs/audit.md §5: the audit block lost its {k} ({pat!r})"
        out[k] = m.group(1).replace(",", "")
    return out


def _assert_block_current(quoted: dict[str, str], got: dict[str, float], verdict: str, command: str) -> None:
    """Each quoted figure equals `got` to the digits the doc prints (half a unit of its last digit), and the
    quoted verdict equals the audit's; the failure names every stale figure and the command to rerun."""
    stale = [
        f"{k}: quoted {quoted[k]}, now {v:.4f}"
        for k, v in got.items()
        if abs(float(quoted[k]) - v) > 0.5 * 10 ** -len(quoted[k].partition(".")[2]) + 1e-9
    ]
    if quoted["verdict"].lower() != verdict:
        stale.append(f"verdict: quoted {quoted['verdict']}, now {verdict}")
    assert not stale, (
        "docs/audit.md §5: " + "; ".join(stale) + f"; rerun `{command}` and update the block and its reading"
    )


def test_section_5_block_is_what_audit_prints(capsys):
    """§5's condensed `audit --claim max_interactivity=700` block equals `audit --json` to its printed digits, and
    the all-favourable corner reaches the band's top (§3 step 4), which failed while the high set moved the
    block-scaled GEMM's k-loop time and the parameter list left it out (480.9 against 500.2)."""
    quoted = _section_5_block()
    code, out, err = run(
        capsys,
        "audit",
        "--system",
        "jalapeno",
        "--model",
        "deepseek-r1",
        "--workload",
        "8k1k",
        "--claim",
        "max_interactivity=700",
        "--json",
    )
    assert code == 0, err
    d = json.loads(out)
    kernel = next(c for c in d["changes"] if c["parameter"] == "efficiency.kernel_launch_s")
    j = d["joint_change"]
    got = {
        "predicted": d["predicted"]["value"],
        "low": d["predicted"]["low"],
        "high": d["predicted"]["high"],
        "limit": d["physical_limit"],
        "kernel alone": kernel["best_in_range"],
        "corner": j["band_ends"]["value"],
        "together": j["together"]["value"],
    }
    _assert_block_current(
        quoted,
        got,
        d["verdict"],
        "jalapeno audit --system jalapeno --model deepseek-r1 --workload 8k1k --claim max_interactivity=700",
    )
    assert j["band_ends"]["value"] >= d["predicted"]["high"] * (1 - 1e-6)


def _ratio_block() -> dict[str, str]:
    sec = DOC[DOC.index("## 5. Worked example") : DOC.index("## 6.")]
    block = sec[sec.index("```\n$ jalapeno audit --system jalapeno --baseline gb300-nvl72") :]
    block = block[: block.index("```", 3)]
    pats = {
        "predicted": r"predicted ([\d.]+)x \(band",
        "low": r"\(band ([\d.]+) to ",
        "high": r"\(band [\d.]+ to ([\d.]+)\)",
        "limit": r"physical limit ([\d.]+)x",
        "verdict": r"verdict: (\w+)",
        "fp8 block alone": r"best alone ([\d.]+)x",
        "corner": r"favourable band end -> ([\d.]+)x",
        "efficiencies %": r"efficiencies ([\d.]+)% of the way",
        "together": r"both by s = ([\d.]+)",
    }
    out = {}
    for k, pat in pats.items():
        m = re.search(pat, block)
        assert m, f"docs/audit.md §5: the ratio audit block lost its {k} ({pat!r})"
        out[k] = m.group(1)
    return out


def test_section_5_ratio_block_is_what_audit_prints(capsys):
    """§5's second block (`--claim peak_tok_s_per_kw_ratio=1.7`, chip power) equals `audit --json` to its printed
    digits. Until round 42 it quoted round 30's figures (1.325x, limit 2.733x) where audit printed 1.299x and 2.763x."""
    quoted = _ratio_block()
    code, out, err = run(
        capsys,
        "audit",
        "--system",
        "jalapeno",
        "--baseline",
        "gb300-nvl72",
        "--power",
        "chip",
        "--claim",
        "peak_tok_s_per_kw_ratio=1.7",
        "--json",
    )
    assert code == 0, err
    d = json.loads(out)
    best = max(d["changes"], key=lambda c: c["best_in_range"])
    assert best["parameter"] == "efficiency.gemm.fp8_block.peak_fraction", best["parameter"]
    j = d["joint_change"]
    got = {
        "predicted": d["predicted"]["value"],
        "low": d["predicted"]["low"],
        "high": d["predicted"]["high"],
        "limit": d["physical_limit"],
        "fp8 block alone": best["best_in_range"],
        "corner": j["band_ends"]["value"],
        "efficiencies %": 100 * j["efficiency_toward_peak"]["value"],
        "together": j["together"]["value"],
    }
    _assert_block_current(
        quoted,
        got,
        d["verdict"],
        "jalapeno audit --system jalapeno --baseline gb300-nvl72 --power chip --claim peak_tok_s_per_kw_ratio=1.7",
    )
