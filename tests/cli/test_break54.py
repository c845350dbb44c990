"""break54: bad input found by probing, each one clear error (the commands' other refusals: the break5x files)."""

from __future__ import annotations

from cli_runner import check_error, run


def test_an_unknown_key_of_a_table_names_the_table_s_keys_not_another_table_s(capsys):
    """--set cost.nosuch=1 was asked "did you mean 'host.note'?" (difflib's nearest over every key): a key of [cost]
    is not one of [host]. b200.toml's [cost] states one key, usd_per_chip_hour."""
    code, out, err = run(capsys, "step", "-s", "b200", "--set", "cost.nosuch=1")
    check_error(code, out, err, "--set: cost.nosuch", "unknown system field ([cost] has usd_per_chip_hour)")
    assert "did you mean" not in err
    # a near key of the same table is still offered as before
    code, out, err = run(capsys, "step", "-s", "b200", "--set", "cost.usd_per_hour=1")
    check_error(code, out, err, "did you mean 'cost.usd_per_chip_hour'?")
