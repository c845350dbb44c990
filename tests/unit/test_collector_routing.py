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


def test_grouped_gate_small_case_by_hand():
    # E 16, k 8, 8 groups of 2, 4 kept. Balanced stride ceil(16/8) = 2: token 0 picks the even experts, token 1 the
    # odd ones, one per group, so all 8 groups score 1 and the tie keeps groups 0-3 (experts 0-7); inside them each
    # token takes its 4 picked experts then the 4 unpicked ones (score 0 beats the masked -1): experts 0-7 both.
    from jalapeno.fit.collector_routing import grouped_gate_picks, grouped_gate_rank0

    assert sorted(grouped_gate_picks(2, 16, 8)[0].tolist()) == list(range(8))
    assert grouped_gate_rank0(2, 16, 8, 1) == (16.0, 8.0)   # 16 assignments on 8 experts (balanced: 16 on 16)
    assert grouped_gate_rank0(2, 16, 8, 2) == (16.0, 8.0)   # experts 0-7 are EP rank 0 of 2: the whole load


def _moe_df(sources, latencies, tokens=2, experts=16):
    n = len(sources)
    return pd.DataFrame({"moe_dtype": ["nvfp4"] * n, "num_tokens": [tokens] * n, "hidden_size": [7168] * n,
                         "inter_size": [2048] * n, "topk": [8] * n, "num_experts": [experts] * n, "moe_tp_size": [1] * n,
                         "moe_ep_size": [1] * n, "distribution": ["balanced"] * n, "latency": latencies,
                         "kernel_source": sources})


def test_collector_rule_reads_the_winning_min_latency_row_through_the_grouped_gate():
    # the min_latency path is the faster (0.05 ms against 0.08 ms): its row is kept and read as 16 assignments on
    # 8 experts (the hand case above), not balanced's 16 on 16
    r = moe_rows(_moe_df(["moe_torch_flow_cutlass", "moe_torch_flow_min_latency"], [0.08, 0.05]), "collector")
    assert len(r) == 1 and r.latency.iloc[0] == 0.05
    assert (r.load.iloc[0], r.touched.iloc[0]) == (16.0, 8.0)
    # an imputed copy of the path (fit/kernel_tables.fill_missing_kernel_paths' suffix) is read the same way
    r = moe_rows(_moe_df(["moe_torch_flow_min_latency (imputed from b200)"], [0.05]), "collector")
    assert r.touched.iloc[0] == 8.0


def test_collector_rule_reads_a_plain_row_balanced():
    # the CUTLASS path wins: balanced routing, min(16, 2·8) = 16 experts
    r = moe_rows(_moe_df(["moe_torch_flow_cutlass", "moe_torch_flow_min_latency"], [0.04, 0.05]), "collector")
    assert r.latency.iloc[0] == 0.04 and r.touched.iloc[0] == 16.0
    # a shape the gate cannot group (12 experts: not a multiple of 8 groups) stays balanced whatever its path
    r = moe_rows(_moe_df(["moe_torch_flow_min_latency"], [0.05], experts=12), "collector")
    assert r.touched.iloc[0] == 12.0   # min(12, 16)


def test_other_rules_ignore_the_kernel_path():
    d = _moe_df(["moe_torch_flow_cutlass", "moe_torch_flow_min_latency"], [0.08, 0.05])
    assert moe_rows(d, "balanced").touched.iloc[0] == 16.0
    # uniform: 16·(1 − (1 − 8/16)^2) = 16·0.75 = 12
    assert moe_rows(d, "uniform").touched.iloc[0] == pytest.approx(12.0)


def test_collector_rule_keeps_one_row_per_configuration_in_a_table_with_repeated_labels():
    # a table concatenated without ignore_index repeats index labels (here 0, 0, 0): the rule must still keep
    # one row per configuration, the fastest (0.1 ms of the two 32-token rows), as the min-latency rules do
    one = {"moe_dtype": ["fp8_block"], "num_tokens": [32], "hidden_size": [7168], "inter_size": [2048], "topk": [8],
           "num_experts": [256], "moe_tp_size": [1], "moe_ep_size": [8], "distribution": ["balanced"]}
    df = pd.concat([pd.DataFrame({**one, "latency": [0.2], "kernel_source": ["moe_torch_flow_cutlass"]}),
                    pd.DataFrame({**one, "latency": [0.1], "kernel_source": ["moe_torch_flow_min_latency"]}),
                    pd.DataFrame({**one, "num_tokens": [64], "latency": [0.3], "kernel_source": ["cutlass"]})])
    got = moe_rows(df, "collector")
    assert sorted(zip(got.num_tokens, got.latency)) == [(32, 0.1), (64, 0.3)]
    assert got.kernel_source[got.num_tokens == 32].tolist() == ["moe_torch_flow_min_latency"]
