"""``jalapeno validate --held-out`` with an option that makes it meaningless: one error line naming both."""

from __future__ import annotations

import pytest
from cli_runner import check_error, run


@pytest.mark.parametrize("extra, words", [
    (("--stack", "default"), ("--held-out", "--stack default", "drop")),
    (("--points", "{f}"), ("--held-out", "--points", "drop")),
])
def test_held_out_with_a_meaningless_option_is_one_clear_error(capsys, tmp_path, extra, words):
    f = tmp_path / "mine.csv"
    f.write_text("hardware,model\n")
    args = [a.format(f=f) for a in extra]
    check_error(*run(capsys, "validate", "--held-out", "--no-aiconfigurator", *args), *words)
