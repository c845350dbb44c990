"""aiconfigurator's MoE collector routings read per row (fit/collector_routing.py, fit/kernels.moe_rows).

Expected values are worked by hand from the collector's generator as its docstring states it.
"""

import numpy as np
import pandas as pd
import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.collector_routing import collector_routing, power_law_alpha, power_law_counts
from jalapeno.fit.kernels import moe_rows


@pytest.mark.parametrize("tokens, ep, expected", [
    (32, 8, (32.0, 32.0)),     # 32·8/8 = 32 assignments on 32 experts, one row each
    (2, 8, (2.0, 2.0)),        # 16 assignments over 8 ranks: 2 per rank on 2 experts
    (1000, 8, (1000.0, 32.0)),  # every one of the rank's 32 experts
    (4, 1, (32.0, 32.0)),      # one rank holds all 256: 4·8 distinct experts
])
def test_balanced_routing_reaches_every_expert_its_load_can(tokens, ep, expected):
    assert collector_routing(tokens, 256, 8, ep, "balanced") == expected


def test_power_law_counts_with_equal_weights_put_the_rounding_residual_on_the_first_experts():
    # 8 equal weights, T·k = 2: each share 2/8 = 0.25 rounds to 0; the residual 2 goes to experts 0 and 1
    assert power_law_counts(np.full(8, 0.5), 1, 2, 1.01).tolist() == [1, 1, 0, 0, 0, 0, 0, 0]


def test_power_law_counts_take_an_excess_from_the_smallest_count_first():
    # E = 4, T = 4, k = 2 (T·k > E: weights on [1, 0.8·4 = 3.2]), alpha = 2: x = 1/((1/3.2 - 1)·u + 1)
    # u = 0, 0.5, 0.5, 1 -> x = 1, 1.5238, 1.5238, 3.2 (sum 7.2476); 8·x/sum = 1.10, 1.68, 1.68, 3.53
    # -> rounded 1, 2, 2, 4 = 9, one too many: taken from the last expert in descending order, expert 0
    got = power_law_counts(np.array([0.0, 0.5, 0.5, 1.0]), 4, 2, 2.0)
    assert got.tolist() == [0, 2, 2, 4]


@pytest.mark.parametrize("tokens, expected", [(1, (8.0, 8.0)), (2, (16.0, 16.0))])
def test_few_power_law_tokens_load_one_rank_with_every_assignment(tokens, expected):
    # T·k <= 16 assignments over 256 weights on [0.01, 2]: 256 draws sum to ~95 (mean 0.37 each) against a
    # largest weight of at most 2, so every share is under 16·2/95 = 0.34 and rounds to 0; the residual T·k
    # lands on experts 0..T·k-1, all on the first EP8 rank of 32 experts, one assignment each
    assert collector_routing(tokens, 256, 8, 8, "power_law_1.01") == expected


def test_power_law_busiest_rank_carries_more_than_the_mean_rank():
    load, touched = collector_routing(512, 256, 8, 8, "power_law_1.01")
    assert load > 512 * 8 / 8  # the busiest of 8 ranks is above the mean 512
    assert touched <= 32


def test_distribution_names_are_read_and_a_bad_one_is_refused():
    assert power_law_alpha("power_law_1.2") == 1.2
    assert power_law_alpha("balanced") is None
    with pytest.raises(SpecError, match="distribution.*unknown routing 'zipf'.*power_law_<alpha>"):
        power_law_alpha("zipf")


def test_power_law_needs_equal_ranks():
    with pytest.raises(SpecError, match="moe_ep_size.*3 does not divide 256"):
        collector_routing(8, 256, 8, 3, "power_law_1.01")


def test_moe_rows_read_each_row_with_its_own_routing():
    one = {"moe_dtype": "fp8_block", "num_tokens": 1, "hidden_size": 7168, "inter_size": 2048, "topk": 8,
           "num_experts": 256, "moe_tp_size": 1, "moe_ep_size": 8, "latency": 0.1}
    df = pd.DataFrame([{**one, "distribution": "balanced"}, {**one, "distribution": "power_law_1.01"}])
    assert len(moe_rows(df, "balanced")) == 1  # balanced rows only by default
    got = moe_rows(df, "balanced", distributions=("balanced", "power_law_1.01")).set_index("distribution")
    # balanced: 1 token's 8 experts on 8 ranks, one each; power law: all 8 on the measured rank
    assert (got.loc["balanced", "load"], got.loc["balanced", "touched"]) == (1.0, 1.0)
    assert (got.loc["power_law_1.01", "load"], got.loc["power_law_1.01", "touched"]) == (8.0, 8.0)
