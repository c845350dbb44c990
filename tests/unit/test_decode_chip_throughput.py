"""Output throughput per decode chip (issue 15, defect 7): a disaggregated point's output tokens
over its decode pool's chips, the way InferenceX's ``output_tput_per_gpu`` counts disaggregated
runs; an aggregated point's is its per-chip figure."""

from __future__ import annotations

import pytest
from cli_runner import run

from jalapeno.analysis.prediction import predict_point
from jalapeno.cost.pricer import load_pricer
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import get_workload


def test_issue_example_arithmetic():
    """6,258 output tok/s per GPU over 3x(DP4 EP4) prefill + 5x(DP4 EP4) decode = 32 GPUs:
    per decode GPU 6,258 x 32 / 20 = 10,012.8 (the issue quotes 10,012)."""
    assert 6258 * (3 * 4 + 5 * 4) / (5 * 4) == pytest.approx(10012.8)


@pytest.fixture(scope="module")
def r1():
    return load_model("deepseek-r1"), load_pricer("gb200-nvl72"), get_precision("fp4")


def test_disaggregated_point_counts_decode_chips(r1):
    m, pr, p = r1
    dep = Deployment(p, Pool(Layout(dp=4, ep=4), 5), prefill=Pool(Layout(dp=4, ep=4), 3))
    pt = predict_point(m, pr, dep, get_workload("1k1k"), 256.0)
    assert pt.chips == 32
    # 12 prefill + 20 decode chips, counted by hand from the pools
    assert pt.output_throughput_per_decode_chip == pytest.approx(pt.output_throughput_per_chip * 32 / 20)
    assert pt.as_dict()["output_throughput_per_decode_chip"] == pt.output_throughput_per_decode_chip


def test_aggregated_point_is_per_chip(r1):
    m, pr, p = r1
    pt = predict_point(m, pr, Deployment(p, Pool(Layout(dp=8, ep=8))), get_workload("1k1k"), 64.0)
    assert pt.output_throughput_per_decode_chip == pt.output_throughput_per_chip


def test_predict_table_shows_both(capsys):
    code, out, err = run(capsys, "predict", "-s", "gb200-nvl72", "-p", "fp4", "-w", "1k1k", "-c", "256",
                         "--prefill", "dp=4,ep=4,workers=3", "--decode", "dp=4,ep=4,workers=5")
    assert code == 0, err
    assert "output throughput per decode chip" in out and "output throughput per chip" in out
