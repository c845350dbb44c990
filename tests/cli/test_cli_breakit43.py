"""Findings of round 43's break-it pass (break43): a results store whose ``explore.db`` is not a database was blamed
on ``--storage`` (not given) with the fix 'drop --storage'; ``--engine`` with a recipe that ships off
(deploy/engines.RECIPES_OFF) ran with no word that validate and ``--as-deployed`` leave it out."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import check_error, run

SPACE = Path(__file__).parents[2] / "examples" / "explore_700w.toml"


def test_a_store_whose_explore_db_is_no_database_names_store_not_storage(capsys, tmp_path):
    pytest.importorskip("optuna")
    store = tmp_path / "st"
    store.mkdir()
    (store / "explore.db").write_text("garbage\n")  # e.g. a file copied over, or a truncated download
    code, out, err = run(capsys, "explore", str(SPACE), "-n", "1", "--store", str(store), "--resume")
    check_error(code, out, err, "--store", "explore.db is not a readable study store", "file is not a database",
                "give another --store folder, or move that explore.db aside")
    assert "--storage" not in err  # was: "error: --storage: cannot open ... Fix: ... or drop --storage"


def test_a_bad_storage_url_is_still_named_storage(capsys, tmp_path):
    pytest.importorskip("optuna")
    code, out, err = run(capsys, "explore", str(SPACE), "-n", "1", "--store", str(tmp_path / "st"),
                         "--storage", "notaurl")
    check_error(code, out, err, "--storage", "cannot open 'notaurl'", "give a SQLAlchemy URL")


def test_an_engine_recipe_that_ships_off_says_so_and_still_runs(capsys):
    # RECIPES_OFF holds atom-mi355x-gptoss-fp4 (round 42); --engine NAME runs it, as engines.py documents
    code, out, err = run(capsys, "predict", "-s", "mi355x", "-m", "gpt-oss-120b", "--engine",
                         "atom-mi355x-gptoss-fp4", "-c", "4", "--json")
    assert code == 0, err
    assert "note: recipe atom-mi355x-gptoss-fp4 ships off (deploy/engines.RECIPES_OFF" in err
    # a recipe that is on gets no such note
    code, out, err = run(capsys, "predict", "-s", "mi355x", "-m", "deepseek-r1", "--engine",
                         "atom-mi355x-dsr1-fp8-mtp", "-c", "4", "--json")
    assert code == 0, err
    assert "ships off" not in err


@pytest.mark.parametrize("cell", ['"10"', '"abc"', '"1e3"'])
def test_a_jsonl_trace_number_written_as_text_is_refused(capsys, tmp_path, cell):
    # was: "10" (a JSON string) read as the number 10 with no word, where a system TOML refuses hbm_stacks = "8"
    p = tmp_path / "t.jsonl"
    p.write_text('{"arrival_s": 0, "input_tokens": 1000, "output_tokens": 10}\n'
                 f'{{"arrival_s": 1, "input_tokens": 1000, "output_tokens": {cell}}}\n')
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "-w", str(p), "-n", "2")
    check_error(code, out, err, f"t.jsonl: row 2 (line 2): output_tokens: {cell} is text, not a number",
                'write output_tokens as a JSON number without quotes, e.g. "output_tokens": 1024')


def test_a_jsonl_trace_with_numbers_and_a_missing_cell_reads_as_before(capsys, tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text('{"arrival_s": 0, "input_tokens": 1000, "output_tokens": 10}\n{"arrival_s": 1, "output_tokens": 10}\n')
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "-w", str(p), "-n", "2")
    check_error(code, out, err, "row 2 (line 2): input_tokens: missing value", "give input_tokens for every row")
    p.write_text('{"arrival_s": 0, "input_tokens": 1000, "output_tokens": 10}\n'
                 '{"arrival_s": 1, "input_tokens": 500, "output_tokens": 10}\n')
    code, out, err = run(capsys, "simulate", "-s", "h200", "-m", "llama-3.3-70b", "-w", str(p), "-n", "2", "--json")
    assert code == 0, err
