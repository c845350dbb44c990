"""The benchmark client of each aiconfigurator row family (fit/aic_rows.aic_client) and what it changes."""

from pathlib import Path

import pandas as pd
import pytest

from jalapeno.fit.aic_rows import aic_client
from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload
from jalapeno.specs.stacks import Stack

SILICON = Path(__file__).resolve().parents[1] / "fixtures" / "aiconfigurator" / "silicon_sample_subset.csv"
# silicon_data_source strings as aiconfigurator-core 0.12.0's silicon_sample.csv gives them
DB_DUMP = ("db-dump/2026-04-27; config_id=733; silicon_concurrency=128; measured=2026-04-17T00:00:00.000Z; "
           "workflow_run_id=758; vllm/vllm-openai:v0.19.0-cu130")
IX_CSV = "source_file=2026-04-06.csv; model=DeepSeek-R1; silicon_concurrency=4; measured=2025-11-02T00:00:00.000Z; wip=False"
GAP = ("source_file=/Users/harrli/projects/aic-auto-gap-analysis/data/h100_sxm/trtllm/1.0.0rc3/Qwen_Qwen3-32B.csv; "
       "silicon_concurrency=8")


@pytest.mark.parametrize("source, client", [
    (DB_DUMP, "inferencex-db"),  # a dump of InferenceX's results database
    (IX_CSV, "inferencex-db"),
    ("source_file=2026-03-25.csv; model=MiniMax-M2.5; silicon_concurrency=16", "inferencex-db"),
    (GAP, "aiconfigurator"),  # NVIDIA's own gap-analysis runs
    ("source_file=kimi-k2.5-gap-analysis.csv; silicon_concurrency=4; aic_database_mode=SILICON", "aiconfigurator"),
    ("", "aiconfigurator"),
    (None, "aiconfigurator"),
])
def test_each_row_family_names_its_client(source, client):
    assert aic_client(source) == client


def test_an_inferencex_export_is_timed_as_inferencex_ran_it():
    row = pd.read_csv(SILICON).iloc[1].to_dict()  # B200 TRT-LLM FP4 TP8 1k/8k c32
    ix, gap = load_aiconfigurator(pd.DataFrame([{**row, "silicon_data_source": IX_CSV},
                                                {**row, "id": row["id"] + "_gap", "silicon_data_source": GAP,
                                                 "silicon_tpot_ms": row["silicon_tpot_ms"] + 1}]))[0]
    assert (ix.timed_by, gap.timed_by) == ("inferencex-db", "aiconfigurator")
    # InferenceX draws each prompt's length uniformly in [0.8 L, L]; the gap-analysis client sends L
    assert point_workload(ix).range_ratio == pytest.approx(0.8) and point_workload(gap).range_ratio == 1.0
    assert not ix.fixed_lengths and gap.fixed_lengths


def test_the_client_entry_of_the_family_prices_its_front_end():
    st = Stack("t", "t", "trtllm", request_overhead_s=0.05,
               clients={"aiconfigurator": {"request_overhead_s": 0.2}, "inferencex-db": {"request_overhead_s": 0.01}})
    assert st.for_client("inferencex-db").request_overhead_s == 0.01
    assert st.for_client("aiconfigurator").request_overhead_s == 0.2
    assert st.for_client("inferencex").request_overhead_s == 0.05  # InferenceX's own points: the profile's


def test_an_export_of_an_inferencex_sglang_sweep_runs_its_launch_recipe():
    row = pd.read_csv(SILICON).iloc[0].to_dict()  # B200 SGLang FP4 TP8 MoE TP8, 1k/8k, c4
    ix, gap = load_aiconfigurator(pd.DataFrame([{**row, "silicon_data_source": IX_CSV},
                                                {**row, "id": row["id"] + "_gap", "silicon_data_source": GAP,
                                                 "silicon_tpot_ms": row["silicon_tpot_ms"] + 1}]))[0]
    # InferenceX benchmarks/dsr1_fp4_b200.sh (data/engines.toml sglang-b200-dsr1-fp4): --chunked-prefill-size
    # 16384, --max-running-requests 256, --scheduler-recv-interval 10 below concurrency 16
    dep = ix.deployment
    assert (dep.token_budget, dep.max_running, dep.recv_interval) == (16384, 256, 10)
    assert "sglang-b200-dsr1-fp4" in "; ".join(ix.notes)
    # no InferenceX recipe for NVIDIA's own run: the default budget (8,192 tokens), no running cap, no poll
    assert (gap.deployment.token_budget, gap.deployment.max_running, gap.deployment.recv_interval) == (8192, None, 1)
    assert point_stack(ix).name == point_stack(gap).name == "sglang"


def test_a_launch_setting_picked_by_load_does_not_split_a_deployment():
    from dataclasses import replace
    from types import SimpleNamespace

    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.fit.aic_quality import aic_ttft_flags
    from jalapeno.specs.formats import get_precision

    dep = Deployment(get_precision("fp4"), Pool(Layout(tp=8, ep=1)))

    def pt(i, c, ttft, tpot, poll):  # the recipe polls every 10 decode steps below C = 16, every 30 from 16
        return SimpleNamespace(id=i, source="aiconfigurator", system="b200", model="deepseek-r1",
                               framework="sglang 0.5.9", precision="fp4", mode="agg", isl=8192, osl=1024,
                               deployment=replace(dep, recv_interval=poll), concurrency=c,
                               measured={"ttft_s": ttft, "tpot_s": tpot})
    # docs/gap_aic_ttft.md: the B200 SGLang FP4 MoE-TP8 8k rows, 5.6 s at C = 4 against 2.1 s at C = 32 (TPOT higher)
    flags = aic_ttft_flags([pt("c4", 4, 5.6, 0.0124, 10), pt("c32", 32, 2.1, 0.030, 30)])
    assert sorted(flags) == ["c4"] and "2.7x" in flags["c4"]


@pytest.mark.parametrize("concurrency, cap", [(64, 128), (128, 128), (256, None), (512, None)])
def test_a_row_beyond_the_recipes_running_cap_is_not_capped_by_it(concurrency, cap):
    from jalapeno.deploy.deployment import Deployment, Pool
    from jalapeno.deploy.layout import Layout
    from jalapeno.fit.aic_row_engine import with_recipe_limits
    from jalapeno.specs.formats import get_precision

    # InferenceX benchmarks/single_node/dsr1_fp8_b200.sh, TP8 branch: --max-running-requests 128 and
    # --cuda-graph-max-bs 128 "as the maximum concurrency" of its sweep, --chunked-prefill-size 32768,
    # --scheduler-recv-interval 30 from concurrency 16, --kv-cache-dtype fp8_e4m3
    base = Deployment(get_precision("fp8"), Pool(Layout(tp=8, ep=1)))
    dep, note = with_recipe_limits(base, "b200", "deepseek-r1", "sglang", "fp8", 1024, 1024, concurrency)
    assert (dep.max_running, dep.cuda_graph_max_batch) == (cap, cap)
    # the recipe's other limits hold at every load
    assert (dep.token_budget, dep.recv_interval, dep.precision.kv_cache.name) == (32768, 30, "fp8")
    assert "sglang-b200-dsr1-fp8" in note
    assert ("not applied" in note) == (cap is None)
    if cap is None:
        assert f"concurrency {concurrency} is above the cap" in note and "max_running 128" in note
