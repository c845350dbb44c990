"""docs/validation.md's flagged-group table writes a reason shared by several points once, as a numbered note
(scripts/validation_quality_section.shared_notes): round 53 found one 1,331-character source correction
repeated on 31 rows and one 470-character campaign flag on 49."""

from script_module import load_script

sec = load_script("validation_quality_section")


def test_repeated_reasons_become_numbered_notes_in_first_seen_order():
    # rows: A B A C B A -> A occurs 3 times (note 1, first seen), B twice (note 2), C once (stays inline)
    cells, notes = sec.shared_notes(["A", "B", "A", "C", "B", "A"])
    assert cells == ["see note [1]", "see note [2]", "see note [1]", "C", "see note [2]", "see note [1]"]
    assert notes == ["1. A (3 rows)", "2. B (2 rows)"]


def test_unique_reasons_stay_in_their_cells_and_give_no_notes():
    cells, notes = sec.shared_notes(["x", "y"])
    assert cells == ["x", "y"] and notes == []
    assert sec.shared_notes([]) == ([], [])


def test_every_reason_survives_once():
    long = "source correction: " + "z" * 1300
    reasons = [long] * 31 + ["campaign flag"] * 49 + ["one-off"]
    cells, notes = sec.shared_notes(reasons)
    text = "\n".join(cells + notes)
    # each distinct reason appears exactly once in cells + notes together: 1331 + 13 + 7 characters, not 31x/49x
    assert text.count(long) == 1 and text.count("campaign flag") == 1 and text.count("one-off") == 1
    assert len(cells) == 81
