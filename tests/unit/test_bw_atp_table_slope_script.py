"""scripts/bw_atp_table_slope.py (round 34, gbtp34): the touched-expert counts by hand, the B bands and the aggregated
attention-TP filter on small frames, and the what-if's patch of the table pricer's MoE reading undone on exit."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

sp = load_script("bw_atp_table_slope")


def test_touched_per_rank_by_hand():
    # DeepSeek-R1 at EP8: 32 experts a rank. Uniform: 32·(1 − (31/32)^B); B = 16: (31/32)^16 = exp(16·ln 0.96875)
    # = exp(−0.50798) = 0.60172, so 32 × 0.39828 = 12.745. Balanced (one expert per pick, spread): min(32, 16·8/8) = 16
    u, b = sp.touched_per_rank([1.0, 16.0, 64.0])
    assert u[0] == pytest.approx(1.0) and b[0] == pytest.approx(1.0)
    assert u[1] == pytest.approx(12.745, abs=1e-3) and b[1] == pytest.approx(16.0)
    # B = 64: 32·(1 − 0.96875^64) = 32 × (1 − 0.13108) = 27.81; balanced saturates at 32
    assert u[2] == pytest.approx(27.81, abs=0.01) and b[2] == pytest.approx(32.0)


def test_band_table_by_hand():
    s = pd.DataFrame({"lay": ["ATP"] * 4 + ["ADP"], "B": [1.0, 4.0, 6.0, 20.0, 3.0],
                      "split": ["fit", "held_out", "fit", "held_out", "fit"], "fmt": ["fp4", "fp4", "fp8", "fp8", "fp4"],
                      "err%": [2.0, -4.0, -8.0, -12.0, 50.0]})
    t = sp.band_table(s)
    assert t.loc["B <= 2", "all"] == 2.0 and t.loc["2 < B <= 8", "all"] == -6.0 and t.loc["B > 8", "all"] == -12.0
    assert t.loc["2 < B <= 8", "held-out"] == -4.0 and t.loc["2 < B <= 8", "fit"] == -8.0
    assert t.loc["2 < B <= 8", "fp8 all"] == -8.0  # the ADP row (+50%) is in no column


def test_agg_rows_keeps_attention_tp_without_mtp(tmp_path):
    rows = [("b200", "deepseek-r1", "agg", "agg attn TP8 DP1 · MoE TP1 EP8 [fp4]", ""),
            ("b200", "deepseek-r1", "agg", "agg attn TP8 DP1 · MoE TP1 EP8 MTP3@0.8 [fp4]", ""),  # MTP
            ("b200", "deepseek-r1", "agg", "agg attn TP1 DP8 · MoE TP1 EP8 [fp4]", ""),  # attention DP
            ("h200", "deepseek-r1", "agg", "agg attn TP8 DP1 · MoE TP8 EP1 [fp8]", ""),  # not Blackwell
            ("b300", "kimi-k2.5", "agg", "agg attn TP4 DP1 · MoE TP4 EP1 [int4]", "flagged")]  # quality flag
    d = pd.DataFrame([{"source": "aiconfigurator", "id": f"r{i}", "system": s, "model": m, "mode": mo, "deployment": dep,
                       "quality": q or None, "metric": "interactivity", "framework": "trtllm 1.2.0rc6.post2",
                       "concurrency": 8, "error": 0.0} for i, (s, m, mo, dep, q) in enumerate(rows)])
    p = tmp_path / "all.csv"
    d.to_csv(p, index=False)
    assert sp.agg_rows(str(p)).id.tolist() == ["r0"]


def test_disagg_rows_read_the_decode_pool(tmp_path):
    # the prefill pool runs attention DP in both rows; only the decode pool's layout counts
    deps = ["disagg P 1x(attn TP1 DP4 · MoE TP1 EP4) + D 2x(attn TP8 DP1 · MoE TP1 EP8) [fp4]",
            "disagg P 1x(attn TP4 DP1 · MoE TP1 EP4) + D 1x(attn TP1 DP8 · MoE TP1 EP8) [fp4]"]
    d = pd.DataFrame([{"source": "aiconfigurator", "id": f"r{i}", "system": "gb300-nvl72", "model": "deepseek-r1",
                       "mode": "disagg", "deployment": dep, "quality": None, "metric": "interactivity",
                       "framework": "trtllm", "concurrency": 8, "error": -0.1} for i, dep in enumerate(deps)])
    p = tmp_path / "all.csv"
    d.to_csv(p, index=False)
    assert sp.agg_rows(str(p), disagg=True).id.tolist() == ["r0"]
    assert sp.agg_rows(str(p)).empty


def test_balanced_reading_is_undone():
    from jalapeno.fit import kernels, table_lookup

    # one min_latency row of 2 tokens, 16 experts, top-8: the shipped reading (collector) takes the grouped gate's 8
    # experts (tests/unit/test_collector_routing.py works the case by hand), the what-if balanced min(16, 2·8) = 16
    one = pd.DataFrame({"moe_dtype": ["nvfp4"], "num_tokens": [2], "hidden_size": [7168], "inter_size": [2048],
                        "topk": [8], "num_experts": [16], "moe_tp_size": [1], "moe_ep_size": [1],
                        "distribution": ["balanced"], "latency": [0.05], "kernel_source": ["moe_torch_flow_min_latency"]})
    before = table_lookup.moe_rows
    assert before(one, kernels.CALIBRATION_TOUCHED_RULE).touched.iloc[0] == 8.0
    with sp.balanced_table_reading():
        assert table_lookup.moe_rows(one, kernels.CALIBRATION_TOUCHED_RULE).touched.iloc[0] == 16.0
    assert table_lookup.moe_rows is before


def test_balanced_refit_raises_the_moe_bandwidth_and_is_undone():
    # the balanced rule counts at least the experts of the shipped collector reading for every table row (the two
    # differ only on the min_latency rows, GB300's imputed from GB200's table, where the grouped gate touches at most
    # half of a rank's experts), so the same measured times imply at least the bandwidth: GB300's FP4 HBM fraction
    # rises from the shipped one (data/calibration/gb300-nvl72.toml)
    pytest.importorskip("aiconfigurator_core")
    from jalapeno.cost import pricer as pricer_mod

    shipped = pricer_mod.load_pricer("gb300-nvl72").efficiency.moe["fp4"].hbm_fraction
    with sp.balanced_moe_everywhere(("gb300-nvl72",)) as params:
        inside = pricer_mod.load_pricer("gb300-nvl72").efficiency.moe["fp4"].hbm_fraction
        assert inside == pytest.approx(params["gb300-nvl72"]["moe"]["fp4"]["hbm_fraction"])
        assert inside > shipped
        assert pricer_mod.load_pricer("gb300-nvl72", "low").efficiency.moe["fp4"].hbm_fraction != inside  # bands as shipped
    assert pricer_mod.load_pricer("gb300-nvl72").efficiency.moe["fp4"].hbm_fraction == shipped
