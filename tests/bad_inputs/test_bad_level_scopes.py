"""A scale-out level declared inside a scale-up one is refused (specs/system_file.SystemFile): a load/store
scale-up fabric is reached before any NIC, and level_for_group picks the innermost level holding a group."""

from __future__ import annotations

from cli_runner import check_error, run


def test_scale_up_outside_scale_out_is_refused_naming_both_levels(capsys):
    # GB200 NVL72's catalog levels: rack (72 chips, NVLink, scale_up), then cluster (8,192, scale_out)
    check_error(*run(capsys, "step", "-s", "gb200-nvl72", "-m", "gpt-oss-120b", "--set", "levels.rack.scope=scale_out",
                     "--set", "levels.cluster.scope=scale_up"),
                "levels: the scale_up level 'cluster' (8192 chips) lies outside the scale_out level 'rack' (72 chips)",
                "reorder them")


def test_scale_up_levels_nested_in_each_other_still_load(capsys):
    # Jalapeño: tray (8), rack (128) and the 16-rack 3-D fabric (2,048) are all scale_up: one fabric, no NIC between
    code, out, err = run(capsys, "step", "-s", "jalapeno", "-m", "gpt-oss-120b")
    assert code == 0, err
