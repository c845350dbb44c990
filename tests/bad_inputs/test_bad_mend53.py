"""Round 53's leftovers (mend53) that break53 and newuser53 found: each case below fails on main 13043682."""

from __future__ import annotations

import numpy as np
import pytest

from cli_runner import check_error, run

import jalapeno as jp
from jalapeno.cost.step import step_cost as internal_step_cost
from jalapeno.errors import JalapenoError


def _message(fn) -> str:
    with pytest.raises(JalapenoError) as e:
        fn()
    return str(e.value)


# ---- 1. jalapeno.step_cost refuses a step with no tokens, as the CLI step does -------------------------------------


def _args():
    return jp.load_model("deepseek-r1"), jp.load_pricer("jalapeno"), jp.Layout(dp=8, ep=8), jp.get_precision("fp8")


def test_public_step_cost_refuses_an_empty_batch_with_the_cli_message():
    msg = _message(lambda: jp.step_cost(*_args(), jp.Batch.make()))  # main: a 2.67 ms step, no word
    assert msg.startswith("batch: the step has no tokens: no decoding sequence and no prompt token")
    assert "Batch.make(decode_seqs=N" in msg and "prefill_tokens=N" in msg
    # a sweep with one empty point names it (0-based), not the whole batch
    msg = _message(lambda: jp.step_cost(*_args(), jp.Batch.make(decode_seqs=np.array([8.0, 0, 64]), decode_ctx=1024)))
    assert "no prompt token at point(s) 1." in msg


def test_public_step_cost_prices_a_batch_with_tokens_as_the_internal_one():
    b = jp.Batch.make(decode_seqs=np.array([8.0, 64]), decode_ctx=1024, prefill_tokens=np.array([0.0, 512]))
    assert np.array_equal(jp.step_cost(*_args(), b).step_time_s, internal_step_cost(*_args(), b).step_time_s)
    b = jp.Batch.make(prefill_tokens=2048)  # prefill only: tokens, so priced
    assert jp.step_cost(*_args(), b).time_s() > 0


def test_internal_step_cost_still_prices_empty_points_for_the_simulator():
    """serve/sim/step_time.py and the sweeps call cost/step.step_cost with points that hold no work."""
    sc = internal_step_cost(*_args(), jp.Batch.make(decode_seqs=np.array([0.0, 16]), decode_ctx=1024))
    assert sc.step_time_s.shape == (2,) and sc.step_time_s[0] > 0


# ---- 2. a system name with a comma; max_stage_factor 0; frontier -o a device ------------------------------------


def test_a_system_name_with_a_comma_is_refused(capsys):
    """main: compare ran with a system called 'a,b', which --systems would read as two systems."""
    code, out, err = run(capsys, "compare", "--systems", "b200,h200", "--set", "b200:name=a,b")
    check_error(code, out, err, "--set name", "'a,b' holds a comma", "name=a-b")
    code, out, err = run(capsys, "frontier", "--system", "h200", "--set", "name=x,y,z")
    check_error(code, out, err, "--set name", "name=x-y-z")


@pytest.mark.parametrize("factor", [0, -2, 1.5, True])
def test_max_stage_factor_below_one_is_refused(factor):
    """main: max_stage_factor=0 swept no layout and said 'within 0x its scale-up domain'."""
    msg = _message(lambda: jp.SweepOptions(max_stage_factor=factor))
    assert msg.startswith("options.max_stage_factor: must be a whole number >= 1") and "max_stage_factor=1" in msg
    assert jp.SweepOptions(max_stage_factor=1).max_stage_factor == 1


def test_frontier_out_to_a_device_says_nothing_was_written(capsys):
    """main: "unknown file type ''" for -o /dev/full, which has no ending to pick a format from."""
    code, out, err = run(capsys, "frontier", "--system", "h200", "-o", "/dev/full")
    check_error(code, out, err, "--out", "'/dev/full' is a device or pipe", "nothing was written", ".csv")


# ---- 3. a --set price: the price-basis line says it was set on the command line -----------------------------------


def test_a_set_price_is_said_to_come_from_the_command_line():
    """main: '...; its source in full: `jalapeno hardware show h200`', which shows the catalog's 1.41 $/h, not 3."""
    from jalapeno.analysis.price_reason import system_basis
    from jalapeno.specs.catalog import load_system

    line = system_basis(load_system("h200", (("cost.usd_per_chip_hour", 3.0),)))
    # ux54: the pointer now carries the --set, so the command it names shows 3.0 $/h (tests/cli/test_ux54.py runs it)
    assert line == (
        "given: override cost.usd_per_chip_hour = 3.0; set on the command line (--set); its source in full: "
        "`jalapeno hardware show h200 --set cost.usd_per_chip_hour=3.0`, cost.usd_per_chip_hour"
    )


# ---- 4. the agentic headline shows the cap on the decode batch where one binds (cap53) -------------------------------


def test_agentic_headline_shows_a_binding_cap_and_explains_it(capsys):
    """main: 'bound at peak' printed 'compute' alone where the fixed-length headline prints 'compute; capped by
    kv_capacity'; the agentic records carry the limit (analysis/agentic._point 'limit')."""
    import json

    from jalapeno.report.agentic_tables import agentic_tables

    code, out, err = run(capsys, "compare", "--workload", "agentic:coding-agent", "--systems", "h200,b200", "--json")
    assert code == 0, err
    d = json.loads(out)
    d["systems"]["h200"]["peak"]["limit"] = "kv_capacity"  # planted: one capped, one not
    d["systems"]["b200"]["peak"]["limit"] = ""
    head = agentic_tables(d)[0]
    bound = next(c for c in head.columns if c.header == "bound at peak")._cells
    assert bound[0] == d["systems"]["h200"]["peak"]["bound"] + "; capped by kv_capacity"
    assert bound[1] == d["systems"]["b200"]["peak"]["bound"]
    assert (
        "capped by X: what stopped the decode batch growing" in head.caption and "kv_capacity: the HBM" in head.caption
    )
    d["systems"]["h200"]["peak"]["limit"] = ""  # no cap binds: no caption line
    assert "capped by X" not in agentic_tables(d)[0].caption
