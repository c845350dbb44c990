"""`--set k=true` then `--set k=1` in one process: the second is refused as a fresh process refuses it.

Python's ``True == 1`` made the system/efficiency caches (keyed on the override tuples) return the
boolean result for the integer; found by gemmar11 on ``efficiency.gemm_allreduce_fusion``.
"""

import pytest

from jalapeno.errors import SpecError
from jalapeno.specs.catalog import load_efficiency, load_system

KEY = "efficiency.gemm_allreduce_fusion"


def test_true_then_one_is_still_refused():
    assert load_efficiency("b200", overrides=((KEY, True),)).gemm_allreduce_fusion is True
    with pytest.raises(SpecError, match="must be true or false, got 1"):
        load_efficiency("b200", overrides=((KEY, 1),))


def test_int_and_float_overrides_are_cached_apart():
    a = load_system("b200", (("chip.hbm_stacks", 8),))
    b = load_system("b200", (("chip.hbm_stacks", 8),))
    assert a is b  # still cached for equal overrides of equal types
    try:
        c = load_system("b200", (("chip.hbm_stacks", 8.0),))
    except SpecError:
        return  # a float for a count may be refused: what matters is that it was not served from the int's entry
    assert c is not a
