"""scripts/sglang_fit_split43.py: SGLang's configuration bucket, the PR #17965 tile geometry and the release filter
(docs/gap_aic_itl.md, round 43). Expected values by hand, not the script's output."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from script_module import load_script

s = load_script("sglang_fit_split43")


def test_bucket_is_the_nearest_key_ties_to_the_smaller():
    keys = {1: 0, 2: 0, 4: 0, 8: 0, 16: 0, 24: 0, 32: 0, 48: 0}
    assert s.bucket(5, keys) == 4  # |4-5| = 1 < |8-5| = 3
    assert s.bucket(6, keys) == 4  # tie 4 / 8: the smaller
    assert s.bucket(40, keys) == 32  # tie 32 / 48
    assert s.bucket(1000, keys) == 48


def test_tile_geometry_by_hand():
    # after PR #17965 at 8 tokens: BLOCK 16 x 64 x 128, 5 stages. Tiles: 512 / 64 = 8; a tile streams 64 x 7,168 B;
    # smem 5 x (16 + 64) x 128 = 51,200 B; 233,472 // 51,200 = 4 CTAs; in flight 4 x 5 x 64 x 128 = 163,840 B
    g = s.tile_geometry((16, 64, 128, 5))
    assert g == {
        "tiles_per_expert": 8,
        "tile_bytes": 458752,
        "cta_smem": 51200,
        "ctas_per_sm": 4,
        "inflight_per_sm": 163840,
    }


def test_the_retune_halves_the_tile_and_keeps_the_bytes_per_expert():
    for b, before, after in s.geometry_rows((4, 8, 32, 64)):
        per_expert = (
            before["tiles_per_expert"] * before["tile_bytes"],
            after["tiles_per_expert"] * after["tile_bytes"],
        )
        assert per_expert == (512 * 7168, 512 * 7168), b  # the gate/up slice of one expert, 3.67 MB either way
        assert after["tile_bytes"] == pytest.approx(before["tile_bytes"] / 2), b


def test_without_release_drops_only_inferencex_points_of_that_release():
    pts = [
        SimpleNamespace(id="a", source="inferencex", rel="0.5.7"),
        SimpleNamespace(id="b", source="aiconfigurator", rel="0.5.7"),
        SimpleNamespace(id="c", source="inferencex", rel="0.5.12"),
    ]
    kept = s.without_release(pts, "0.5.7", lambda p: p.rel)
    assert [p.id for p in kept] == ["b", "c"]
    assert [p.id for p in s.without_release(pts, "", lambda p: p.rel)] == ["a", "b", "c"]
