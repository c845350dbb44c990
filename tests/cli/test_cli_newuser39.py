"""Round 39 new-user pass (newuser39): the main job's concurrency sweep, read as a hardware architect would."""

from __future__ import annotations

from cli_runner import run

from jalapeno.analysis.sweep import SweepOptions
from jalapeno.cli.serving_opts import concurrency_notes


def test_a_concurrency_sweep_says_it_leaves_disaggregated_serving_out(capsys):
    """compare/frontier -c under the default --serving both priced aggregated instances only, without a word:
    Jalapeño's gpt-oss-120b 8k1k fast tier (>= 100 tok/s/user) read 36,759 tok/s/chip with
    -c 1,4,16,64,256,1024 against 69,159 without -c (a disaggregated point). The run now says so on stderr."""
    code, out, err = run(capsys, "frontier", "-s", "gb300-nvl72", "-m", "gpt-oss-120b", "-c", "4,64", "--json")
    assert code == 0, err
    text = " ".join(err.split())
    assert "note: --concurrency prices aggregated serving only" in text
    assert "no disaggregated deployment is swept; drop --concurrency" in text
    assert '"disagg"' not in out  # what the note says: no disaggregated point in the frontier
    code, out, err = run(
        capsys, "frontier", "-s", "gb300-nvl72", "-m", "gpt-oss-120b", "-c", "4,64", "--serving", "agg", "--json"
    )
    assert code == 0, err
    assert "--concurrency prices" not in err  # --serving agg states it already


def test_the_concurrency_note_only_where_disaggregated_serving_was_asked_for():
    """One line exactly when a fixed concurrency meets serving 'both' (the default); none on the batch grid or agg."""
    assert len(concurrency_notes(SweepOptions(serving="both", concurrency=(1, 4)))) == 1
    assert concurrency_notes(SweepOptions(serving="agg", concurrency=(1, 4))) == []
    assert concurrency_notes(SweepOptions(serving="both")) == []
