"""Round 44 (mend44): Batch.make refuses a count past float64's range and dummies of the wrong length with one
SpecError naming the field and its fix, on the plain-input path (cost/batch._plain_fields) and the full read alike.

Before: ``Batch.make(decode_seqs=10**400)`` raised a bare OverflowError (int too large to convert to float) and a
(2,) ``pad_seqs`` beside three points numpy's broadcast ValueError, naming neither the field nor the fix.
float64's largest finite value is (2 - 2**-52) * 2**1023 = 1.797e308 (IEEE 754 binary64), so 10**400 is past it
while 2**70 (1.18e21) is an ordinary count.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.batch import Batch, _plain_fields
from jalapeno.errors import SpecError

HUGE = 10**400  # a Python int: float(HUGE) overflows


@pytest.mark.parametrize(
    "field", ["decode_seqs", "decode_ctx", "prefill_tokens", "prefill_ctx", "prefill_seqs", "pad_seqs"]
)
@pytest.mark.parametrize("form", ["number", "list", "object array"])
def test_an_integer_past_float_range_names_its_field(field, form):
    value = {"number": HUGE, "list": [HUGE], "object array": np.array([HUGE], dtype=object)}[form]
    kw = {"decode_seqs": 5, "prefill_tokens": 5} | {field: value}
    with pytest.raises(SpecError) as e:
        Batch.make(**kw)
    assert e.value.field == f"batch.{field}"
    assert "too large for a float" in str(e.value) and f"give non-negative {field} below 1.8e308" in e.value.fix


def test_the_plain_path_hands_an_overflowing_int_to_the_full_read():
    # decode_seqs, decode_ctx, prefill_tokens, prefill_ctx, prefill_seqs, pad_seqs: every one a plain type
    assert _plain_fields(HUGE, 0, 0, 0, None, 0) is None
    assert _plain_fields(np.array([1.0, 2.0]), HUGE, 0, 0, None, 0) is None


def test_a_large_but_finite_integer_is_still_a_count():
    b = Batch.make(decode_seqs=2**70, decode_ctx=1024)
    assert b.decode_seqs.tolist() == [2.0**70]  # exactly representable: a power of two


@pytest.mark.parametrize(
    ("kw", "shape", "rows"),
    [
        (dict(decode_seqs=np.array([1.0, 2.0, 3.0]), pad_seqs=np.array([1.0, 1.0])), (2,), 3),  # the plain path
        (dict(decode_seqs=[1, 2, 3], pad_seqs=[1, 1]), (2,), 3),  # the full read
        (dict(decode_seqs=3.0, pad_seqs=np.array([1.0, 1.0, 1.0])), (3,), 1),  # dummies do not set the points
        (dict(decode_seqs=[1, 2, 3], pad_seqs=np.zeros((3, 1))), (3, 1), 3),  # not 1-D
    ],
)
def test_dummies_of_another_length_name_pad_seqs(kw, shape, rows):
    with pytest.raises(SpecError) as e:
        Batch.make(**kw)
    assert e.value.field == "batch.pad_seqs"
    assert f"has shape {shape} where the count fields have {rows} row(s)" in str(e.value)
    assert "one number or a 1-D array of the count fields' length" in e.value.fix


def test_dummies_of_the_right_length_or_one_number_still_pass():
    b = Batch.make(decode_seqs=np.array([4.0, 8.0, 16.0]), pad_seqs=np.array([1.0, 0.0, 2.0]))
    assert b.pad_seqs.tolist() == [1.0, 0.0, 2.0]
    assert Batch.make(decode_seqs=[4, 8], pad_seqs=2).pad_seqs.tolist() == [2.0, 2.0]
