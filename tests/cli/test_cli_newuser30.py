"""Round 30 new-user pass and break-it (newuser30): an analyst auditing a vendor claim, then hostile input."""

from __future__ import annotations

import pytest
from cli_runner import error_line, run


# ---- the claim as the analyst words it -------------------------------------------------------------------------------

@pytest.mark.parametrize("name, meant, unit", [
    # the press claim is 'tokens per watt': the metric is tok/s per kW, so the figure is x 1,000 (W -> kW);
    # tokens per joule = tok/s per W; tokens per kWh = tok/s/kW x 3,600 s/h; J per token is the inverse
    ("tokens_per_watt", "peak_tok_s_per_kw", "x 1,000"),
    ("tok_s_per_w", "peak_tok_s_per_kw", "x 1,000"),
    ("tokens_per_joule", "peak_tok_s_per_kw", "x 1,000"),
    ("tokens_per_kwh", "peak_tok_s_per_kw", "/ 3,600"),
    ("joules_per_token", "peak_tok_s_per_kw", "1,000 / the joules per token"),
    ("cost_per_token", "peak_tokens_per_usd", "1e6 / the $ per million tokens"),
    ("per_user_speed", "max_interactivity", None),
    ("tok_s_per_user", "max_interactivity", None),
    ("tok_s_per_gpu", "peak_throughput_per_chip", None),
])
def test_audit_claim_in_the_analysts_words_names_the_metric_and_its_unit(capsys, name, meant, unit):
    """'tokens_per_watt' listed the seven metrics and no hint; 'tok_s_per_w' pointed at tok_s_per_kw (the @X
    metric) without the factor 1,000 between a per-W and a per-kW figure."""
    line = error_line(*run(capsys, "audit", "-s", "jalapeno", "--claim", f"{name}=2"))
    assert f"--claim: unknown metric '{name}' (did you mean {meant}?" in line
    if unit:
        assert unit in line


def test_audit_claim_hint_keeps_the_at_form(capsys):
    line = error_line(*run(capsys, "audit", "-s", "jalapeno", "--claim", "tokens_per_watt@50=2"))
    assert "(did you mean tok_s_per_kw?" in line
    line = error_line(*run(capsys, "sensitivity", "-s", "jalapeno", "--metric", "tok_s_per_gpu@50", "--html", ""))
    assert "(did you mean throughput_per_chip?)" in line


# ---- one-word choices typed another way ------------------------------------------------------------------------------

@pytest.mark.parametrize("args, hint", [
    (("compare", "--power", "Chip"), "'chip'"),
    (("compare", "--power", "all_in"), "'all-in'"),
    (("compare", "--power", "allin"), "'all-in'"),
    (("compare", "--serving", "AGG"), "'agg'"),
    (("compare", "--serving", "disaggregated"), "'disagg'"),
    (("compare", "-p", "FP8"), "'fp8'"),
    (("compare", "--efficiency", "calibrate"), "'calibrated'"),
    (("compare", "--pricer", "tables"), "'table'"),
    (("compare", "--routing", "Measured"), "'measured'"),
    (("compare", "--overlap", "TBO"), "'tbo'"),
    (("compare", "--chip-model", "tile"), "'tiled'"),
    (("plan", "-s", "jalapeno", "--target", "1e6", "--target-kind", "Output"), "'output'"),
    (("audit", "-s", "jalapeno", "--claim", "max_interactivity=100", "--power", "All-In"), "'all-in'"),
    (("audit", "-s", "jalapeno", "--claim", "max_interactivity=100", "--serving", "Agg"), "'agg'"),
])
def test_a_choice_typed_another_way_names_the_one_meant(capsys, args, hint):
    """'-p FP8', '--power all_in', '--serving disaggregated' listed the choices with no word of which was
    meant, where --kv-dtype FP8 ran and a system or model name got '(did you mean ...?)'."""
    line = error_line(*run(capsys, *args, *(("--html", "") if args[0] == "compare" else ())))
    assert f"(did you mean {hint}?)" in line
