"""analyst49: an industry analyst reproducing the Jalapeño claim (gpt-oss-120b, 8K/1K, vs GB300 NVL72) from
`compare --bands --json` alone, as a chart would be built from it."""

from __future__ import annotations

import json

import pytest
from cli_runner import run


@pytest.fixture(scope="module")
def oss_bands():
    """compare --bands --json on gpt-oss-120b 8k1k, Jalapeño against GB300 (module-scoped: one sweep)."""
    import contextlib
    import io

    from jalapeno.cli.app import main  # capsys is function-scoped: stdout captured by hand for the one sweep

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            main(
                [
                    "compare",
                    "--model",
                    "gpt-oss-120b",
                    "--workload",
                    "8k1k",
                    "--systems",
                    "jalapeno,gb300-nvl72",
                    "--bands",
                    "--json",
                ]
            )
        except SystemExit as e:
            assert not e.code, e.code
    return json.loads(buf.getvalue())


def test_compare_json_carries_the_band_frontiers_a_shaded_chart_needs(oss_bands):
    """The report page shades each system's band between its low and high frontiers, but compare --json gave only
    the headline's three band figures: a chart of the band could not be drawn from it. Each system now has
    ``band_frontiers``: its low and high frontier points (null: that end is its calibrated frontier).
    Independent check: a band end's peak is the largest throughput on that end's frontier (docs/metrics.md §6:
    the headline band's low/high re-sweep the system at its low/high set), and an interactivity ascending."""
    jal = oss_bands["systems"]["jalapeno"]
    bf = jal["band_frontiers"]
    for end in ("low", "high"):
        pts = bf[end]
        assert pts, end
        xs = [p["interactivity"] for p in pts]
        assert xs == sorted(xs)
        assert max(p["throughput_per_chip"] for p in pts) == pytest.approx(
            jal["headline"]["bands"]["peak_throughput_per_chip"][end], rel=1e-9
        )
        assert set(pts[0]) >= {"interactivity", "throughput_per_chip", "tok_s_per_kw_by_convention", "e2e_s"}
    # GB300 has no band on gpt-oss-120b (validate has no points of it there): both ends are its calibrated frontier
    gb = oss_bands["systems"]["gb300-nvl72"]
    calibrated = [p["throughput_per_chip"] for p in gb["frontier"]]
    for end in ("low", "high"):
        assert [p["throughput_per_chip"] for p in gb["band_frontiers"][end] or gb["frontier"]] == calibrated


def test_compare_json_without_bands_has_no_band_frontiers(capsys):
    code, out, err = run(
        capsys,
        "compare",
        "--model",
        "gpt-oss-120b",
        "--workload",
        "1k1k",
        "--systems",
        "gb300-nvl72",
        "--serving",
        "agg",
        "--json",
    )
    assert code == 0, err
    assert "band_frontiers" not in json.loads(out)["systems"]["gb300-nvl72"]


def test_compare_bands_says_why_a_measured_system_lost_its_band_under_the_sliced_chip(capsys):
    """docs/chip.md's `compare --chip-model sliced` with --bands on DeepSeek-R1: GB300's headline lost its measured
    band (17,313 to 21,413 tok/s/chip on the flat chip) with no word of it, so the baseline read as exact. Its band is
    validate's error of the flat chip model (analysis/measured_bands.band_of: a sliced or tiled pricer is not the model
    validate measured), and the table now says so; on the flat chip no such line."""
    args = (
        "compare",
        "--model",
        "deepseek-r1",
        "--workload",
        "1k1k",
        "--systems",
        "gb300-nvl72",
        "--serving",
        "agg",
        "--bands",
        "--html",
        "",
    )
    code, out, err = run(capsys, *args, "--chip-model", "sliced")
    assert code == 0, err
    assert (
        "no band for gb300-nvl72 under the sliced chip model: its measured error band (validate's, on "
        "deepseek-r1) is the flat chip model's"
    ) in " ".join(out.split())
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "no band for gb300-nvl72" not in " ".join(out.split())
