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
    ({"params": {"chip.hbm_stak": {"choices": [6, 8]}}}, ["params.chip.hbm_stak", "did you mean"]),
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


def test_a_space_whose_case_cannot_load_leaves_no_study(tmp_path, capsys):
    """An unknown case model was found only after the study was created: the corrected file then
    met 'a study named ... is already in ...; add --resume'."""
    f = tmp_path / "space.toml"
    f.write_text('name = "typo"\nbase = "jalapeno"\n[objective]\nmetrics = ["tok_s_per_kw"]\n'
                 '[[cases]]\nmodel = "gpt-oss-12b"\nworkload = "1k1k"\n'
                 '[params."chip.peak_dense_tflops.fp8"]\nchoices = [2000, 2600]\n')
    store = tmp_path / "store"
    check_error(*run(capsys, "explore", str(f), "--store", str(store), "--trials", "1"), "model", "gpt-oss-12b")
    url = f"sqlite:///{store / 'explore.db'}"
    names = ({s.study_name for s in optuna.study.get_all_study_summaries(optuna.storages.RDBStorage(url))}
             if (store / "explore.db").exists() else set())
    assert "typo" not in names


def test_cli_missing_space_and_unknown_run(tmp_path, capsys):
    check_error(*run(capsys, "explore", str(tmp_path / "none.toml")), "design-space file:",
                "none.toml' not found", "SPACE.toml argument")
    (tmp_path / "st" / "runs").mkdir(parents=True)
    check_error(*run(capsys, "results", "show", "nope", "--store", str(tmp_path / "st")), "RUN", "no run")


# ---- break-it findings (each kind as a case) ---------------------------------------------------

@pytest.mark.parametrize("over, words", [
    ({"derived": {"chip.peak_dense_tflops.fp4": "(2.5 * {chip.peak_dense_tflops.fp8}"}}, ["not a valid expression"]),
    ({"derived": {"chip.peak_dense_tflops.fp4": ""}}, ["not a valid expression"]),
    ({"derived": {"chip.peak_dense_tflops.fp4": "２ * {chip.peak_dense_tflops.fp8}"}}, ["not a valid expression"]),
    ({"derived": {"chip.peak_dense_tflops.fp4": "(" * 5000 + "1" + ")" * 5000}}, ["derived"]),
    ({"seed": -1}, ["seed"]),
    ({"seed": 2**40}, ["seed"]),
    ({"params": {"chip.peak_dense_tflops.fp8": {"low": 2000, "high": 3000, "step": 100, "log": True}}},
     ["log range takes no step"]),
    ({"params": {"chip.hbm_stacks": {"low": 4, "high": 8, "step": 0.5, "integer": True}}}, ["whole"]),
    ({"params": {"chip.peak_dense_tflops.fp8": {"low": 2000, "high": 3000, "step": 1e9}}}, ["larger than"]),
    ({"params": {"chip.hbm_stacks": {"choices": [True, False]}}}, ["true/false"]),
    ({"params": {"chip.hbm_stacks": {"choices": [6, "six"]}}}, ["params.chip.hbm_stacks", "'six'"]),
    ({"sweep": {"batches": []}}, ["sweep.batches"]),
    ({"sweep": {"batches": [0, -1]}}, ["sweep.batches"]),
    ({"objective": {"metrics": ["tok_s_per_kw", "tok_s_per_kw"]}}, ["twice"]),
    ({"params": {"die.link_bandwidth_tb_per_s": {"low": 0.1, "high": 2}}}, ["chip_model", "sliced"]),
])
def test_bad_spaces_found_by_breaking_it(over, words):
    with pytest.raises(SpecError) as e:
        design_space_from_dict(_space(**over), "space.toml")
    msg = str(e.value).lower()
    for w in words:
        assert w.lower() in msg, (w, msg)


def test_a_derived_division_by_zero_is_refused_at_load_and_pruned_at_trial_time():
    d = _space(params={"chip.hbm_stacks": {"choices": [4, 6]}},
               derived={"chip.hbm_bandwidth_tb_per_s": "2.5667 * {chip.hbm_stacks} + 0 / ({chip.hbm_stacks} - 6)"})
    with pytest.raises(SpecError, match="divides by zero"):
        design_space_from_dict(d, "space.toml")
    from jalapeno.analysis.explore import Evaluator
    from jalapeno.specs.design_space import DesignSpace

    res = Evaluator(DesignSpace.model_validate(d)).evaluate({"chip.hbm_stacks": 6})  # (unchecked space)
    assert not res.feasible and "divides by zero" in res.reason


def test_sliced_explore_prices_die_keys():
    """die.* keys are priced once the space asks for the sliced model: a very slow on-die link under
    striping lowers the score (it was silently ignored under the flat model)."""
    sp = design_space_from_dict(_space(
        params={"die.link_bandwidth_tb_per_s": {"choices": [1.1, 0.001]}},
        sweep={"batches": [1, 16], "chip_model": "sliced", "placement": "striped"},
        objective={"metrics": ["tok_s_per_chip"], "min_interactivity": 0, "power": "chip"}))
    ev = make_evaluator(sp)
    fast = ev.evaluate({"die.link_bandwidth_tb_per_s": 1.1}).scores["tok_s_per_chip"]
    slow = ev.evaluate({"die.link_bandwidth_tb_per_s": 0.001}).scores["tok_s_per_chip"]
    assert fast == pytest.approx(1.0) and slow < 0.5


def test_storage_address_resume_and_store_errors(space, evaluator, tmp_path, capsys):
    from jalapeno.analysis.search import _check_address

    for url in ("junk://x", "hello", f"sqlite:///{tmp_path}/no/such/dir/x.db"):
        with pytest.raises(SpecError, match="--storage"):
            open_study(space, url, "s", resume=False)
    for addr in ("junk://nowhere", "127.0.0.1:1"):
        with pytest.raises(SpecError, match="--address"):
            _check_address(addr, timeout_s=1.0)
    url = f"sqlite:///{tmp_path / 'r.db'}"
    st = open_study(space, url, "r", resume=False)
    run_search(space, evaluator, st, 2, batch=2)
    other = design_space_from_dict(_space(params={"chip.peak_dense_tflops.fp8": {"choices": [2000, 2600]}}))
    with pytest.raises(SpecError, match="different design space"):
        open_study(other, url, "r", resume=True)
    # a resumed study does not re-propose its first designs
    again = open_study(space, url, "r", resume=True)
    run_search(space, evaluator, again, 4, batch=2)
    t = again.get_trials(deepcopy=False)
    assert [x.params for x in t[2:4]] != [x.params for x in t[0:2]]


def test_corrupt_or_odd_stores_give_one_line(tmp_path, capsys):
    store = tmp_path / "q'uote [gl*b]"
    code, out, err = run(capsys, "frontier", "--system", "b200", "--model", "gpt-oss-120b", "-w", "1k1k",
                         "--store", str(store), "--json")
    assert code == 0, err
    code, out, err = run(capsys, "results", "list", "--store", str(store), "--json")
    assert code == 0, err
    runs = [r["run"] for r in json.loads(out)]
    assert runs == ["frontier-b200-gpt-oss-120b-1k1k-1"]
    code, out, err = run(capsys, "results", "show", runs[0], "--store", str(store), "--html", str(tmp_path / "a.html"))
    assert code == 0, err
    check_error(*run(capsys, "results", "export", runs[0], "--store", str(store), "--out", str(tmp_path)), "--out")
    check_error(*run(capsys, "results", "export", runs[0], "--store", str(store), "--out",
                     str(tmp_path / "none" / "x.csv")), "--out")
    check_error(*run(capsys, "results", "show", "../runs/" + runs[0], "--store", str(store)), "RUN")
    d = store / "runs" / runs[0]
    (d / "points.parquet").write_bytes(b"not parquet")
    check_error(*run(capsys, "results", "show", runs[0], "--store", str(store)), "points.parquet", "corrupt")
    (d / "meta.json").write_text("[1, 2]")
    check_error(*run(capsys, "results", "show", runs[0], "--store", str(store)), "meta.json", "corrupt")
    code, out, err = run(capsys, "results", "list", "--store", str(store), "--json")
    assert code == 0 and json.loads(out) == [] and "skipped" in err
    check_error(*run(capsys, "results", "show", runs[0], "--store", str(store), "--top", "-1"), "--top")


@pytest.mark.parametrize("choice, kind", [({"a": 1}, "a table"), ([4], "an array")])
def test_a_choice_that_is_a_table_or_an_array_is_named_as_one(choice, kind):
    """Every member of a choice's union (bool, int, float, str) refuses a table or an array; the first member's
    words, 'must be true or false', asked for the one kind of choice the schema refuses (break54)."""
    with pytest.raises(SpecError) as e:
        design_space_from_dict(_space(params={"chip.hbm_stacks": {"choices": [choice, 6]}}), "space.toml")
    assert e.value.field == "space.toml: params.chip.hbm_stacks.choices.0"
    assert f"a choice is a number or a name, got {kind}" in str(e.value)
    assert "true or false" not in str(e.value)
