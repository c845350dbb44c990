"""The design explorer (issue 14): search, constraints, resume, Ray, the results store."""

from __future__ import annotations

import itertools
import json

import pytest

optuna = pytest.importorskip("optuna")
pytest.importorskip("duckdb")

from cli_runner import check_error, run  # noqa: E402
from jalapeno.analysis.explore import make_evaluator  # noqa: E402
from jalapeno.analysis.search import finished, open_study, run_search  # noqa: E402
from jalapeno.errors import SpecError  # noqa: E402
from jalapeno.specs.design_space import design_space_from_dict  # noqa: E402

FP8 = [2000, 2600, 3400]
BW = [10.0, 15.4]


def _space(**over) -> dict:
    d = {"name": "small", "base": "jalapeno", "seed": 5, "trials": 20,
         "objective": {"metrics": ["tok_s_per_kw"], "min_interactivity": 20, "power": "chip"},
         "cases": [{"model": "gpt-oss-120b", "workload": "1k1k"}],
         "params": {"chip.peak_dense_tflops.fp8": {"choices": FP8},
                    "chip.hbm_bandwidth_tb_per_s": {"choices": BW}},
         "sweep": {"batches": [1, 16, 128, 512]}}
    d.update(over)
    return d


@pytest.fixture(scope="module")
def space():
    return design_space_from_dict(_space())


@pytest.fixture(scope="module")
def evaluator(space):
    return make_evaluator(space)


def test_search_finds_the_enumerated_optimum(space, evaluator, tmp_path):
    """Six designs, enumerated by hand through the evaluator; the search must end on the best."""
    scores = {}
    for f, b in itertools.product(FP8, BW):
        r = evaluator.evaluate({"chip.peak_dense_tflops.fp8": f, "chip.hbm_bandwidth_tb_per_s": b})
        assert r.feasible, r.reason
        scores[(f, b)] = r.scores["tok_s_per_kw"]
    best = max(scores, key=scores.get)
    # the base design (3400, 15.4) scores exactly 1 against itself
    assert scores[(3400, 15.4)] == pytest.approx(1.0)
    study = open_study(space, f"sqlite:///{tmp_path / 's.db'}", "small", resume=False)
    run_search(space, evaluator, study, 20, batch=4)
    bp = study.best_trial.params
    assert (bp["chip.peak_dense_tflops.fp8"], bp["chip.hbm_bandwidth_tb_per_s"]) == best
    assert study.best_value == pytest.approx(scores[best])


def test_constraints_are_never_violated_in_reported_designs(tmp_path):
    sp = design_space_from_dict(_space(constraints={"chip_power_w": 650.0}))
    ev = make_evaluator(sp)
    study = open_study(sp, f"sqlite:///{tmp_path / 'c.db'}", "c", resume=False)
    run_search(sp, ev, study, 12, batch=4)
    from jalapeno.analysis.results_store import trial_rows

    rows = trial_rows(study)
    done = [r for r in rows if r["state"] == "COMPLETE"]
    pruned = [r for r in rows if r["state"] == "PRUNED"]
    assert done and pruned  # 3400 TFLOPS at 15.4 TB/s is the 700 W base: over the limit
    assert all(r["chip_power_w"] <= 650.0 for r in done)
    assert all(r["reason"].startswith("chip_power_w") and r["chip_power_w"] > 650.0 for r in pruned)


def test_killed_and_resumed_study_has_the_uninterrupted_count_and_no_duplicates(space, evaluator, tmp_path):
    url = f"sqlite:///{tmp_path / 'r.db'}"
    whole = open_study(space, url, "whole", resume=False)
    run_search(space, evaluator, whole, 10, batch=2)
    part = open_study(space, url, "part", resume=False)
    run_search(space, evaluator, part, 4, batch=2)
    part.ask()  # a trial the kill left running
    resumed = open_study(space, url, "part", resume=True)
    run_search(space, evaluator, resumed, 10, batch=2)
    assert finished(resumed) == finished(whole) == 10
    states = [t.state for t in resumed.get_trials(deepcopy=False)]
    assert states.count(optuna.trial.TrialState.FAIL) == 1  # the stale one, never counted
    nums = [t.number for t in resumed.get_trials(deepcopy=False)]
    assert len(nums) == len(set(nums))
    with pytest.raises(SpecError, match="--resume"):
        open_study(space, url, "whole", resume=False)


def test_ray_and_one_process_give_identical_results(space, evaluator, tmp_path):
    ray = pytest.importorskip("ray")
    url = f"sqlite:///{tmp_path / 'ray.db'}"
    one = open_study(space, url, "one", resume=False)
    run_search(space, evaluator, one, 8, batch=4, workers=1)
    try:
        many = open_study(space, url, "many", resume=False)
        run_search(space, evaluator, many, 8, batch=4, workers=2)
    finally:
        ray.shutdown()
    a = [(t.params, t.values, t.state) for t in one.get_trials(deepcopy=False)]
    b = [(t.params, t.values, t.state) for t in many.get_trials(deepcopy=False)]
    assert a == b


def test_cli_explore_then_results_rerender_byte_identically(tmp_path, capsys):
    import tomllib  # noqa: F401  (the space file is written as TOML text below)

    f = tmp_path / "space.toml"
    f.write_text('name = "cli"\nbase = "jalapeno"\nseed = 1\ntrials = 6\n'
                 '[objective]\nmetrics = ["tok_s_per_kw", "max_interactivity"]\npower = "chip"\n'
                 '[[cases]]\nmodel = "gpt-oss-120b"\nworkload = "1k1k"\n'
                 '[params."chip.peak_dense_tflops.fp8"]\nlow = 2000\nhigh = 3400\nstep = 700\n'
                 '[derived]\n"chip.peak_dense_tflops.fp4" = "4 * {chip.peak_dense_tflops.fp8}"\n'
                 '[sweep]\nbatches = [1, 16, 256]\n')
    store = tmp_path / "store"
    a = tmp_path / "a.html"
    code, out, err = run(capsys, "explore", str(f), "--store", str(store), "--html", str(a), "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["trials"] == 6 and res["metrics"] == ["tok_s_per_kw", "max_interactivity"]
    b = tmp_path / "b.html"
    code, out, err = run(capsys, "results", "show", res["run"], "--store", str(store), "--html", str(b))
    assert code == 0, err
    assert a.read_bytes() == b.read_bytes()
    code, out, err = run(capsys, "results", "export", res["run"], "--store", str(store), "--out",
                         str(tmp_path / "t.csv"))
    assert code == 0 and (tmp_path / "t.csv").read_text().startswith("trial,state,reason")
    code, out, err = run(capsys, "results", "list", "--store", str(store), "--json")
    assert [r["run"] for r in json.loads(out)] == ["explore-cli"]
    # the same study again without --resume is refused; with --resume and a higher target it continues
    check_error(*run(capsys, "explore", str(f), "--store", str(store)), "--study", "--resume")
    code, out, err = run(capsys, "explore", str(f), "--store", str(store), "--resume", "--trials", "8", "--json")
    assert code == 0 and json.loads(out)["trials"] == 8


@pytest.mark.parametrize("over, words", [
    ({"params": {"chip.hbm_stak": {"choices": [6]}}}, ["params.chip.hbm_stak", "did you mean"]),
    ({"constraints": {"chip_watts": 700}}, ["constraints", "unknown constraint", "chip_power_w"]),
    ({"derived": {"chip.hbm_stacks": "2 * {chip.nope}"}}, ["derived", "not a parameter"]),
    ({"params": {"chip.hbm_stacks": {"low": 8, "high": 6}}}, ["low < high"]),
    ({"objective": {"metrics": ["speed"]}}, ["objective.metrics"]),
    ({"derived": {"chip.hbm_stacks": "__import__('os')"}}, ["only numbers"]),
])
def test_bad_spaces_name_the_field(over, words):
    with pytest.raises(SpecError) as e:
        design_space_from_dict(_space(**over), "space.toml")
    msg = str(e.value).lower()
    for w in words:
        assert w.lower() in msg, (w, msg)


def test_cli_missing_space_and_unknown_run(tmp_path, capsys):
    check_error(*run(capsys, "explore", str(tmp_path / "none.toml")), "SPACE", "no file")
    (tmp_path / "st" / "runs").mkdir(parents=True)
    check_error(*run(capsys, "results", "show", "nope", "--store", str(tmp_path / "st")), "RUN", "no run")
