"""What a claim's answer is read under (analyst55): the claims table's statement names its precision and, for a per-kW
metric, its power convention; its band carries the wide-band flag compare --bands and audit --claim put on it; a
per-kW flip names the convention and the W it starts from; and the watts each side divides by are printed, so a
'sustained' ratio that sets Jalapeño's sustained 550 W against GB300's 1,400 W TDP says so. No sweep runs here: the
rows are the audit's ``--json`` shape with figures chosen by hand."""

from __future__ import annotations

import json
import re

from cli_runner import run

from jalapeno.analysis.claim_set import flip_condition
from jalapeno.cli.audit_set import point_lines, power_divisor, print_claims
from jalapeno.specs.catalog import load_system


def _row(metric: str, pred: float, low: float, high: float, precision: str = "fp4", power: str = "all-in") -> dict:
    return {
        "name": "r",
        "claim": {"metric": metric, "value": 1.0, "system": "jalapeno", "baseline": "gb300-nvl72", "unit": "x"},
        "predicted": {"value": pred, "low": low, "high": high, "band": "efficiency sets"},
        "verdict": "holds",
        "changes": [],
        "operating_point": {},
        "context": {"precision": precision, "power": power},
        "status": "held",
        "flip": "fails if jalapeno falls 31%",
    }


def test_a_per_kw_flip_names_its_convention_and_the_watts_it_starts_from():
    r = _row("tok_s_per_kw_ratio@50", 1.25, 1.1, 1.5)
    # by hand: the claim (1.0) turns where Jalapeño's all-in W grows by the ratio: 1,150 W x 1.25 = 1,437.5 W
    text = flip_condition(r, power_w=1150.0, convention="all-in")
    assert text.endswith("its all-in power above 1,438 W per chip (now 1,150 W)"), text
    # a claim that misses (0.8x) holds at 550 W x 0.8 = 440 W sustained
    r["predicted"]["value"], r["verdict"] = 0.8, "requires"
    text = flip_condition(r, power_w=550.0, convention="sustained")
    assert "its sustained power at most 440 W per chip (now 550 W)" in text, text


def test_the_claims_table_states_precision_power_and_a_wide_band(capsys, monkeypatch):
    from jalapeno.cli import audit_set

    monkeypatch.setattr(audit_set.console, "width", 600)  # each cell on one line
    rows = [
        _row("tok_s_per_kw_ratio@50", 1.45, 1.04, 2.19),  # 2.19 / 1.04 = 2.1x: flagged (WIDE_BAND 2x)
        _row("max_interactivity_ratio", 1.02, 0.853, 4.3, precision="int4"),  # 4.3 / 0.853 = 5.04x
        _row("tok_s_per_kw_ratio@50", 1.9, 1.65, 2.63, precision="mxfp4"),  # 1.59x: not flagged
    ]
    rows[0]["power_divisor"] = rows[2]["power_divisor"] = (
        "power (all-in): jalapeno all-in provisioned, 1,150 W per chip"
    )
    print_claims(rows, json_out=False)
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    assert "(fp4, all-in power)" in flat and "(mxfp4, all-in power)" in flat
    assert "(int4)" in flat and "(int4, all-in" not in flat  # a speed claim reads no power
    assert "[wide band: 2.1x]" in flat and "[wide band: 5.0x]" in flat
    assert "[wide band: 1.6x]" not in flat
    assert "[wide band: Nx]: high / low of 2x or more" in flat
    # the one basis both per-kW rows share is printed once, under the table
    assert out.count("power (all-in): jalapeno all-in provisioned, 1,150 W per chip") == 1


def test_the_power_divisor_names_each_sides_watts_and_a_missing_sustained_figure():
    jal, gb300 = load_system("jalapeno"), load_system("gb300-nvl72")
    # Jalapeño 550 W sustained, 700 W TDP (as publicly reported; `jalapeno hardware show jalapeno`); GB300 1,400 W
    # TGP (MLPerf v5.1 hw_notes), no sustained figure: the sustained convention falls back to its TDP
    assert power_divisor("sustained", [jal, gb300]) == (
        "power (sustained): jalapeno chip sustained, 550 W per chip; "
        "gb300-nvl72 chip TDP (no sustained figure published), 1,400 W per chip"
    )
    # all-in: Jalapeño 917 W IT x PUE 1.25 = 1,150 W (estimate from components); GB300 2.1 kW (InferenceX GPU_SPECS)
    assert power_divisor("all-in", [jal, gb300]).endswith("gb300-nvl72 all-in provisioned, 2,100 W per chip")
    assert power_divisor("load", [jal]).startswith("power (load): the chip power drawn at each operating point")


def test_the_single_audit_prints_the_power_divisor_of_a_per_kw_claim_only():
    jal, gb300 = load_system("jalapeno"), load_system("gb300-nvl72")
    d = _row("tok_s_per_kw_ratio@50", 2.025, 1.45, 3.05, power="sustained")
    lines = point_lines(d, jal, "sustained", gb300)
    # by hand: 550 W x 2.025 = 1,113.75 -> 1,114 W
    assert lines[1].endswith("its sustained power above 1,114 W per chip (now 550 W)"), lines[1]
    assert lines[2].startswith("power (sustained): jalapeno chip sustained, 550 W per chip; gb300-nvl72 chip TDP")
    d = _row("max_interactivity_ratio", 1.02, 0.85, 4.3)
    assert not any(line.startswith("power (") for line in point_lines(d, jal, "all-in", gb300))


def test_the_point_a_claim_is_read_at_names_its_instance_size(capsys):
    """analyst55: DeepSeek-R1's tok/W @50 vs GB300 is read on a disaggregated Jalapeño instance of 399 prefill workers of
    2 chips and 4 decode workers of 128 (1,310 chips: 1,310 / 128 = 10.2 racks of 128); the line named the layout and not its size.
    Here an aggregated gpt-oss-120b point: its chips are the attention layer's TP x DP, counted by hand from the label."""
    args = ("--system", "jalapeno", "--model", "gpt-oss-120b", "--workload", "8k1k", "--serving", "agg")
    code, out, err = run(capsys, "audit", *args, "--claim", "max_interactivity=1", "--json")
    assert code == 0, err
    op = json.loads(out)["operating_point"]["system"]
    tp, dp = (int(v) for v in re.search(r"attn TP(\d+) DP(\d+)", op["deployment"]).groups())
    assert op["chips"] == tp * dp
    code, out, err = run(capsys, "audit", *args, "--claim", "max_interactivity=1")
    read = next(line for line in out.splitlines() if line.startswith("read at: jalapeno "))
    assert f"{op['deployment']} ({tp * dp:,}-chip instance), bound " in read, read


def test_the_compare_title_names_the_serving_modes_and_mtp(capsys):
    """analyst55: compare's title named the precision and the power convention, not whether disaggregated deployments
    were swept or whether any system drafts tokens (MTP is off unless --mtp: compare --help)."""
    code, out, err = run(capsys, "compare", "-s", "jalapeno,gb300-nvl72", "-m", "gpt-oss-120b", "--serving", "agg")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "gpt-oss-120b · ISL 8192 / OSL 1024 · mxfp4 (each system) · agg · no MTP · power: all-in" in flat


def test_a_ratio_within_five_percent_of_the_claim_reads_even(capsys, monkeypatch):
    """compare's 'where it wins' calls a ratio within 5% of 1 even (analysis/win_ranges.EVEN_BAND: the model's median
    error); the claims table read DeepSeek-R1's max tok/s/user vs GB300, 1.02x, as 'within band (holds)' alone."""
    from jalapeno.cli import audit_set

    monkeypatch.setattr(audit_set.console, "width", 600)
    tie = _row("max_interactivity_ratio", 1.02, 0.853, 4.3)  # 1.02 inside 1/1.05 = 0.952 .. 1.05
    tie["status"], tie["verdict"], tie["even"] = "within band", "holds", audit_set.is_even(tie)
    win = _row("tok_s_per_kw_ratio@50", 1.45, 1.04, 2.19)  # 45% above: not even
    win["even"] = audit_set.is_even(win)
    assert (tie["even"], win["even"]) == (True, False)
    print_claims([tie, win], json_out=False)
    flat = " ".join(capsys.readouterr().out.split())
    assert "within band (holds); even" in flat and "held (holds); even" not in flat
    assert "even: the predicted ratio is within 5% of the claim" in flat
    # the single audit's status line says the same
    jal, gb300 = load_system("jalapeno"), load_system("gb300-nvl72")
    status = point_lines(tie, jal, "all-in", gb300)[1]
    assert status.startswith("status within band (the band straddles the claim")
    assert "); even: the predicted ratio is within 5% of the claim" in status
    assert "even:" not in point_lines(win, jal, "all-in", gb300)[1]
