"""Round 44 new-user leftovers (ux44): what each energy and cost figure counts, per-$ ratios at each speed, and
explore's column headers.

Expected values come from the published constants (InferenceX constants.ts: B200 all-in 2.17 kW per GPU and
1.95 $/GPU-hour; DESIGN.md §3) and the formulas of docs/metrics.md §3, not from the code's output:
tok/s/kW = tok/s/chip / kW, J/token = W / (tok/s/chip), $/M tok = $/chip-hour / (tok/s/chip x 3600 / 10^6).
"""

from __future__ import annotations

import re

import pytest
from cli_runner import run

#: InferenceX constants.ts: B200 all-in provisioned kW per GPU, hyperscaler-owner $/GPU-hour
B200_KW, B200_USD_H = 2.17, 1.95


def _cells(out: str) -> dict[str, str]:
    """predict's two-column table: label -> value text."""
    return {m[1].strip(): m[2].strip() for m in re.finditer(r"^[│|] (.+?)\s*[│|] (.+?)\s*[│|]$", out, re.M)}


def _num(text: str) -> float:
    return float(text.split()[0].replace(",", ""))


def test_predict_says_its_energy_and_cost_figures_count_input_and_output_tokens(capsys):
    """predict printed 'tok/s per kW', 'J per token' and '$ per M tokens' with no word of which tokens; compare's tiers
    say in+out and plan counts output tokens only. The three rows say (in+out), and their values are the in+out
    throughput's (at 8K/1K output tokens are about a ninth of them)."""
    code, out, err = run(capsys, "predict", "-s", "b200", "-m", "gpt-oss-120b", "-c", "32")
    assert code == 0, err
    c = _cells(out)
    tput = _num(c["throughput per chip (in+out)"])
    assert _num(c["output throughput per chip"]) < 0.9 * tput  # the two counts differ: the label matters
    assert _num(c["tok/s per kW (in+out)"]) == pytest.approx(tput / B200_KW, abs=1.0)  # rounded to whole tok/s/kW
    assert _num(c["J per token (in+out)"]) == pytest.approx(B200_KW * 1e3 / tput, abs=6e-4)  # three decimals
    assert _num(c["$ per M tokens (in+out)"]) == pytest.approx(B200_USD_H / (tput * 3600 / 1e6), rel=6e-3)
    assert not any(k in c for k in ("tok/s per kW", "J per token", "$ per M tokens"))  # no unlabelled row left
