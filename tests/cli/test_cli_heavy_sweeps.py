"""Issue 17 heavy input and kind 10, issue 15 defect 9: compare lists a system that cannot hold the
model as infeasible (with the reason) and compares the rest; a long explicit concurrency list is
priced once per distinct batch (exactly the same points); concurrencies a benchmark cannot mean
are refused; validation rows with a broken concurrency or measurement are skipped with the reason
shown, never mapped silently."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest

from cli_runner import check_error, run

FIXTURE_ROW = ("GB200 NVL72,DeepSeek-R1-0528,FP4,dynamo-trt,mtp,1,1024,1024,{conc},prefill 4 GPU TP=4; decode 32 GPU "
               "EP=8,36,{tput},,286.4,3.49,median (dashboard),,,,10.12,2026-05-22,frontier,0.954,,test")
HEADER = ("hardware,model,precision,framework,spec,disagg,isl,osl,conc,topology,num_gpus,tput_per_gpu,"
          "output_tput_per_gpu,tok_s_user,tpot_ms,tpot_stat,ttft_ms,ttft_stat,e2el_s,cost_per_mtok_usd,date,"
          "point_type,check_ratio,notes,source")


def _one_node_h100(tmp_path) -> str:
    """H100 without its scale-out level: 8 x 80 GB = 640 GB cannot hold DeepSeek-R1 FP8 (671B
    parameters at ~1 byte each is 671 GB before any KV cache)."""
    t = (resources.files("jalapeno") / "data" / "systems" / "h100.toml").read_text()
    t = t[:t.index('[[levels]]\nname = "cluster"')] + t[t.index("[power]"):]
    p = tmp_path / "h100node.toml"
    p.write_text(t.replace('name = "h100"', 'name = "h100-node"\ncalibration = "h100"', 1))
    return str(p)


def test_compare_lists_a_system_that_cannot_hold_the_model(capsys, tmp_path):
    node = _one_node_h100(tmp_path)
    code, out, err = run(capsys, "compare", "-s", f"{node},h200", "-c", "4,64", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert list(d["systems"]) == ["h200"] and d["baseline"] == "h200"
    assert "no layout of deepseek-r1" in d["infeasible"]["h100-node"]
    code, out, err = run(capsys, "compare", "-s", f"{node},h200", "-c", "4,64", "--html", str(tmp_path / "c.html"))
    assert code == 0, err
    assert "h100-node" in out and "infeasible" in out and "cannot run" in out
    assert (tmp_path / "c.html").stat().st_size > 0


def test_compare_refuses_an_infeasible_baseline_given_by_name(capsys, tmp_path):
    node = _one_node_h100(tmp_path)
    check_error(*run(capsys, "compare", "-s", f"{node},h200", "-c", "4", "--baseline", node, "--html", ""),
                "--baseline", "h100-node cannot run deepseek-r1", "pick a system")


def test_compare_with_no_feasible_system(capsys, tmp_path):
    check_error(*run(capsys, "compare", "-s", _one_node_h100(tmp_path), "-c", "4", "--html", ""),
                "--systems", "no compared system can run", "h100-node")


def test_long_concurrency_list_prices_each_distinct_batch_once():
    """Every concurrency past the instance's cap clips to one batch: the deduplicated solve gives
    the same points as solving each concurrency on its own."""
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.serve.analytic import solve_concurrency
    from jalapeno.serve.sim.simulation import simple_deployment
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    m, pr, wl = load_model("gpt-oss-120b"), load_pricer("h200"), get_workload("8k1k")
    dep = simple_deployment(get_precision("mxfp4"))
    conc = np.array([1, 7, 64, 300, 5000, 9000, 20000, 5000], dtype=float)
    together = solve_concurrency(m, pr, dep, wl, conc)
    for k, c in enumerate(conc):
        alone = solve_concurrency(m, pr, dep, wl, np.array([c]))
        for f in ("throughput_per_chip", "interactivity", "ttft_s", "e2e_s", "concurrency"):
            assert getattr(together, f)[k] == pytest.approx(getattr(alone, f)[0], rel=1e-12), (f, c)
    assert together.throughput_per_chip[5] == together.throughput_per_chip[6]  # both past the cap


@pytest.mark.parametrize("args, words", [
    (("predict", "-s", "h200", "-m", "gpt-oss-120b", "-c", "1e12"), ["--concurrency", "1e+12", "1,000,000"]),
    (("predict", "-s", "h200", "-m", "gpt-oss-120b", "-c", "0.25"), ["--concurrency", "0.25", ">= 1"]),
    (("frontier", "-s", "h200", "-m", "gpt-oss-120b", "-c", "0.5,4"), ["--concurrency", "0.5"]),
    (("compare", "-s", "h200", "-m", "gpt-oss-120b", "-c", "4,2000000", "--html", ""), ["--concurrency", "2e+06"]),
    (("simulate", "-s", "h200", "-m", "gpt-oss-120b", "-c", "5000000"), ["--concurrency", "5e+06"]),
])
def test_concurrency_a_benchmark_cannot_mean_is_refused(capsys, args, words):
    check_error(*run(capsys, *args), *words)


@pytest.mark.parametrize("conc, tput, reason", [
    ("0", "60.7", "conc '0' is not a closed-loop concurrency in [1, 1,000,000]"),
    ("1e12", "60.7", "conc '1e12' is not a closed-loop concurrency in [1, 1,000,000]"),
    ("-4", "60.7", "conc '-4'"),
    ("0.25", "60.7", "conc '0.25'"),
    ("4", "-60.7", "tput_per_gpu '-60.7' is not a positive finite number"),
    ("4", "abc", "tput_per_gpu 'abc'"),
])
def test_validation_rows_with_broken_cells_are_skipped_with_the_reason(capsys, tmp_path, conc, tput, reason):
    p = tmp_path / "pts.csv"
    good = FIXTURE_ROW.format(conc=8, tput=111.8)
    p.write_text("\n".join([HEADER, good, FIXTURE_ROW.format(conc=conc, tput=tput)]) + "\n")
    # the user's points only: aiconfigurator's 2,100 rows add nothing to what is tested (~20 s a run)
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert [r for _, r in d["skipped"]] == [reason] or reason in d["skipped"][0][1]
    assert d["skipped"][0][0] == "pts:3"  # the file's third line
    code, out, err = run(capsys, "validate", "--points", str(p), "--no-aiconfigurator")
    assert code == 0 and f"skipped pts:3: {reason}" in out
