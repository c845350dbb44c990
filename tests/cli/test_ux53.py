"""Round 53's UX leftovers (ux53): plan, predict and frontier say where their watts come from, as compare does."""

from __future__ import annotations

import json

from cli_runner import run

#: one small case every command runs: llama-3.3-70b on h200 at 1k1k
CASE = ("-m", "llama-3.3-70b", "-w", "1k1k", "-s", "h200")
#: h200.toml read by hand: power.allin_kw_per_chip = 1.73 (InferenceX constants.ts GPU_SPECS), chip.tdp_w = 700
#: ("MLPerf v5.1 hw_notes 'H200 TGP 700W'"), no chip.sustained_w
H200_POWER = (
    "all-in 1,730 W (power.allin_kw_per_chip): published: InferenceX constants.ts GPU_SPECS (all-in provisioned kW "
    "per GPU, SemiAnalysis Datacenter Industry Model); chip TDP 700 W (chip.tdp_w): published: MLPerf v5.1 hw_notes "
    "'H200 TGP 700W'; sustained: the chip TDP (no sustained figure published); its sources in full: "
    "`jalapeno hardware show h200`"
)


def _power_lines(out: str) -> list[str]:
    return [ln.strip().removeprefix("power basis: ") for ln in out.splitlines() if ln.strip().startswith("power basis")]


def test_plan_predict_frontier_print_compares_power_basis_line(capsys):
    """compare prints a 'power basis' line under its per-kW figures; plan, predict and frontier printed the same
    watts (power per chip, tok/s per kW) with no source. Each now prints compare's line for the same system, and its
    --json carries it as power_basis (a field added; price_basis still there)."""
    code, out, err = run(capsys, "compare", "-m", "llama-3.3-70b", "-w", "1k1k", "-s", "b200,h200")
    assert code == 0, err
    compared = next(ln for ln in out.splitlines() if ln.startswith("power basis of h200: "))
    assert compared == f"power basis of h200: {H200_POWER}"
    for cmd in (("predict", "-c", "16"), ("plan", "--chips", "8"), ("frontier",)):
        code, out, err = run(capsys, *cmd, *CASE)
        assert code == 0, err
        assert _power_lines(out) == [H200_POWER], cmd
        code, out, err = run(capsys, *cmd, *CASE, "--json")
        assert code == 0, err
        d = json.loads(out)
        assert d["power_basis"] == H200_POWER and "price_basis" in d, cmd

