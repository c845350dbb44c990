"""Round 44: Batch.make's plain-input path (cost/batch._plain_fields) gives the batch its full read gives.

The expected arrays are written out by hand (a number filled to the arrays' length, an array kept as it is,
one prefill sequence wherever there are prefill tokens), and every input the plain path does not take, or
takes and then finds out of range, is checked to raise the full read's error (field and fix named).
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.batch import Batch, _plain_fields, _read_fields
from jalapeno.errors import SpecError

FIELDS = ("decode_seqs", "decode_ctx", "prefill_tokens", "prefill_ctx", "prefill_seqs", "pad_seqs")


def _args(**kw):
    defaults = dict(decode_seqs=0, decode_ctx=0, prefill_tokens=0, prefill_ctx=0, prefill_seqs=None, pad_seqs=0)
    return tuple((defaults | kw)[f] for f in FIELDS)


def test_plain_inputs_give_the_hand_written_batch():
    seqs = np.array([12.0, 3.0])
    b = Batch.make(decode_seqs=seqs, decode_ctx=8704, prefill_tokens=np.array([0.0, 512.0]), prefill_ctx=np.float64(7.5))
    assert b.decode_seqs is seqs  # an array is kept as it is
    assert b.decode_ctx.tolist() == [8704.0, 8704.0] and b.decode_ctx.dtype == np.float64
    assert b.prefill_ctx.tolist() == [7.5, 7.5]
    assert b.prefill_seqs.tolist() == [0.0, 1.0]  # one sequence where there are prefill tokens
    assert b.pad_seqs.tolist() == [0.0, 0.0] and b.pad_routing == "routed"
    one = Batch.make(prefill_tokens=300.0)  # numbers only: one point
    assert [getattr(one, f).tolist() for f in FIELDS] == [[0.0], [0.0], [300.0], [0.0], [1.0], [0.0]]


@pytest.mark.parametrize("kw", [
    dict(decode_seqs=np.array([12.0, 3.0]), decode_ctx=8704.0),
    dict(decode_seqs=np.array([12.0, 3.0]), decode_ctx=1.0, prefill_tokens=np.array([0.0, 64.0]),
         prefill_ctx=np.array([5.0, 6.0]), prefill_seqs=np.array([0.0, 2.0])),
    dict(decode_seqs=4, prefill_tokens=2048, prefill_seqs=2),
    dict(decode_seqs=np.array([8.0, 16.0]), pad_seqs=np.array([2.0, 0.0])),
])
def test_the_plain_path_equals_the_full_read_bitwise(kw):
    fast, full = _plain_fields(*_args(**kw)), _read_fields(*_args(**kw))
    assert fast is not None and list(fast) == list(full)
    for name in fast:
        assert fast[name].dtype == full[name].dtype and fast[name].shape == full[name].shape
        assert fast[name].tobytes() == full[name].tobytes() and fast[name].flags.c_contiguous


@pytest.mark.parametrize("kw", [
    dict(decode_seqs=[8.0, 16.0]),  # a list
    dict(decode_seqs=np.array([8, 16])),  # integers
    dict(decode_seqs=np.array([8.0, 16.0, 4.0])[::2]),  # not contiguous
    dict(decode_seqs=np.zeros(0)),  # no points
    dict(decode_seqs=np.array([8.0, 16.0]), decode_ctx=np.array([1.0, 2.0, 3.0])),  # two lengths
    dict(decode_seqs=True), dict(decode_seqs="64"),
    dict(decode_seqs=-1.0), dict(prefill_tokens=np.inf), dict(decode_ctx=np.array([1.0, np.nan])),
    dict(decode_seqs=None), dict(decode_seqs=None, prefill_seqs=1.0),  # None is prefill_seqs' default only
    dict(decode_seqs=2.0, pad_seqs=np.array([1.0, 0.0, 0.0])),  # the dummies do not set the points
    dict(decode_seqs=np.array([8.0, 16.0]), pad_seqs=np.array([1, 0])),  # integer dummies
    dict(decode_seqs=np.array([8.0, 16.0]), pad_seqs=[1.0, 0.0]),  # a list of dummies
])
def test_other_inputs_take_the_full_read(kw):
    assert _plain_fields(*_args(**kw)) is None


@pytest.mark.parametrize(("kw", "field"), [
    (dict(decode_seqs=-1.0), "batch.decode_seqs"), (dict(prefill_tokens=np.inf), "batch.prefill_tokens"),
    (dict(decode_ctx=np.array([1.0, np.nan])), "batch.decode_ctx"), (dict(decode_seqs=True), "batch.decode_seqs"),
    (dict(decode_seqs=np.array([8.0, 16.0]), decode_ctx=np.array([1.0, 2.0, 3.0])), "batch"),
])
def test_out_of_range_plain_inputs_raise_the_full_reads_error(kw, field):
    with pytest.raises(SpecError) as e:
        Batch.make(**kw)
    assert e.value.field == field and e.value.fix
