"""Round 38's review of break38's refusals (review38b): legitimate Python-API input that a new check refused or
crashed on, and the schema names moved out of specs/hardware.py. Expected values are worked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cost.batch import Batch
from jalapeno.deploy.mtp import MTP
from jalapeno.errors import SpecError


@pytest.mark.parametrize("seqs", [np.array([8, 64], dtype=object), pd.Series([8, 64], dtype=object).to_numpy(),
                                  pd.Series([8, 64]), [np.int64(8), np.int64(64)], (8.0, 64.0)])
def test_batch_reads_numbers_however_held(seqs):
    """An object-dtype array of numbers (pandas' ``.to_numpy()`` of an object column) was refused by break38 as
    'holds no numbers'; it, a Series, numpy scalars in a list and a tuple are the counts 8 and 64."""
    b = Batch.make(decode_seqs=seqs, decode_ctx=1024)
    assert b.decode_seqs.tolist() == [8.0, 64.0]
    assert b.decode_ctx.tolist() == [1024.0, 1024.0]


@pytest.mark.parametrize("seqs", [np.int64(64), np.float32(64.0), np.array(64), np.array(64.0)])
def test_batch_reads_numpy_scalars_and_0d_arrays(seqs):
    """A numpy scalar or a 0-d array is one row of 64 sequences."""
    assert Batch.make(decode_seqs=seqs, decode_ctx=np.array(2048)).decode_seqs.tolist() == [64.0]


@pytest.mark.parametrize("seqs", [np.bool_(True), [np.bool_(True)], np.str_("8"), np.array(["8"], dtype=object)])
def test_batch_still_refuses_what_is_no_count(seqs):
    """numpy's bool and str are refused as Python's are (True is not one sequence, '8' not eight)."""
    with pytest.raises(SpecError, match="batch.decode_seqs: must be a number or a 1-D array of numbers"):
        Batch.make(decode_seqs=seqs, decode_ctx=1024)


@pytest.mark.parametrize("grid", [np.array([1, 4, 16]), pd.Series([1, 4, 16]), range(1, 17, 5)])
def test_sweep_grids_may_be_arrays(grid):
    """``SweepOptions(concurrency=np.array(...))`` raised numpy's 'truth value of an array is ambiguous' from the
    grid check (``vals or ()``); an array, a Series and a range are grids as a tuple is."""
    assert list(SweepOptions(concurrency=grid).concurrency) == list(grid)
    assert list(SweepOptions(batches=grid).batches) == list(grid)


def test_a_nan_in_an_array_grid_is_still_refused():
    with pytest.raises(SpecError, match=r"options.concurrency: nan is not a number of sequences"):
        SweepOptions(concurrency=np.array([1.0, np.nan]))


def test_mtp_takes_numpy_numbers():
    """MTP(1, np.float32(0.5)) was refused as 'must be in [0, 1), got 0.5' (np.float32 is no Python float);
    np.int64 drafts likewise. Tokens per step at k = 1, α = 0.5: (1 − 0.5²) / (1 − 0.5) = 1.5 by hand."""
    m = MTP(np.int64(1), np.float32(0.5))
    assert m.tokens_per_step == pytest.approx(1.5)


@pytest.mark.parametrize("a", ["0.5", True, np.bool_(True), None, np.array(0.5)])
def test_mtp_acceptance_not_a_number_says_so(a):
    with pytest.raises(SpecError, match=r"mtp-acceptance: must be a number in \[0, 1\), got"):
        MTP(1, a)


@pytest.mark.parametrize("name", ["ChipFile", "LevelFile", "HostFile", "PowerFile", "CostFile", "TOPOLOGIES"])
def test_schema_names_moved_to_system_file_still_import(name):
    """Round 38 moved the system file's schema to specs/system_file.py; the old import keeps working, with a
    DeprecationWarning naming the new place."""
    from jalapeno.specs import hardware, system_file

    with pytest.warns(DeprecationWarning, match=f"jalapeno.specs.system_file.{name}"):
        got = getattr(hardware, name)
    assert got is getattr(system_file, name)


def test_from_import_of_a_moved_name():
    with pytest.warns(DeprecationWarning, match="moved to jalapeno.specs.system_file.ChipFile"):
        from jalapeno.specs.hardware import ChipFile
    from jalapeno.specs.system_file import ChipFile as new

    assert ChipFile is new


def test_an_unknown_name_is_still_an_attribute_error():
    from jalapeno.specs import hardware

    with pytest.raises(AttributeError, match="has no attribute 'NoSuchFile'"):
        hardware.NoSuchFile  # noqa: B018
