"""scripts/gptoss_decode_occupancy49.py: the decode occupancy a closed-loop row's own TTFT and TPOT imply
(docs/gap_large_batch_decode.md, round 49). Expected values are the published rows (data/validation/
inferencex_points.csv: row 41 GB200 8k/1k C 512 TTFT 5.0277 s, TPOT 14.7 ms; row 43 H200 8k/1k C 64 TTFT 4.2869 s,
TPOT 31.3 ms; row 51 MI325X 1k/1k C 64 TTFT 62.5 ms, TPOT 13.8 ms) and arithmetic by hand, not the script's output."""

from __future__ import annotations

import pytest
from script_module import load_script

from jalapeno.errors import SpecError

occ = load_script("gptoss_decode_occupancy49")


def test_occupancy_by_hand():
    # row 41: D = (0.9 x 1024 - 1) x 0.0147 = 920.6 x 0.0147 = 13.5328 s decoding; N = 512 x 13.5328 / 18.5605
    assert occ.decoding_users(512, 5.0277, 0.0147, 1024) == pytest.approx(512 * 13.53282 / (5.0277 + 13.53282))
    assert occ.decoding_users(512, 5.0277, 0.0147, 1024) == pytest.approx(373.3, abs=0.1)
    # row 43: D = 920.6 x 0.0313 = 28.8148 s; N = 64 x 28.8148 / 33.1017 = 55.71
    assert occ.decoding_users(64, 4.2869, 0.0313, 1024) == pytest.approx(55.71, abs=0.01)
    # row 51: a 62.5 ms TTFT against 12.70 s of decoding leaves 63.7 of 64 users decoding
    assert occ.decoding_users(64, 0.0625, 0.0138, 1024) == pytest.approx(64 * 12.70428 / 12.76678)
    # no queue: every user decodes
    assert occ.decoding_users(64, 0.0, 0.02, 1024) == pytest.approx(64.0)


def test_mean_fraction_is_used():
    # lengths at their nominal value (m = 1): D = 1023 x 0.01 = 10.23 s, N = 10 x 10.23 / 11.23
    assert occ.decoding_users(10, 1.0, 0.01, 1024, mean_fraction=1.0) == pytest.approx(10 * 10.23 / 11.23)


@pytest.mark.parametrize(
    "args", [(0, 0.1, 0.01, 1024), (64, -0.1, 0.01, 1024), (64, 0.1, 0.0, 1024), (64, 0.1, 0.01, 1)]
)
def test_bad_input_names_the_fields(args):
    with pytest.raises(SpecError, match="decoding_users.*Fix: give C > 0, TTFT >= 0, TPOT > 0"):
        occ.decoding_users(*args)


def _cells(out: str, row: int) -> list[str]:
    line = next(x for x in out.splitlines() if x.startswith(f"| {row} |"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_row_41_tables(capsys):
    # part 1: the measured occupancy column is the hand value above, and the model's step at fewer decoding users
    # is cheaper, so its TPOT there is below the TPOT at its own (larger) batch
    occ.occupancy([41])
    c = _cells(capsys.readouterr().out, 41)
    n, b = (float(x) for x in c[5].split(" / "))
    assert n == pytest.approx(373, abs=0.5) and b > n
    at_b, at_n = float(c[7].split()[0]), float(c[8].split()[0])
    assert at_n < at_b
    # part 2: halving the KV bytes (FP8 e4m3: 1 B an element against BF16's 2) cannot make the decode step slower
    occ.kv_format([41])
    c = _cells(capsys.readouterr().out, 41)
    assert float(c[6].split()[0]) < float(c[5].split()[0])
