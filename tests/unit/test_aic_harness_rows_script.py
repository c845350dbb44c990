"""scripts/aic_harness_rows.py: the harness's 1.3.0rc rows, their raw fields and rule D's within-deployment pairs."""

from __future__ import annotations

import pandas as pd
import pytest
from script_module import load_script

script = load_script("aic_harness_rows")

GTL = "gtl_task_id=dynamo_trtllm_agg-20260323; silicon_concurrency={c}; measured=2026-03-23"


def _row(rid, c, batch, ttft, tpot, isl=2000, osl=500, model="Qwen/Qwen3-32B", tp=2.0, version="1.3.0rc1"):
    return {"id": rid, "silicon_data_source": GTL.format(c=c), "backend": "trtllm", "backend_version": version,
            "model_path": model, "system": "gb200", "mode": "agg", "isl": isl, "osl": osl, "batch_size": batch,
            "tp_size": tp, "moe_tp_size": 0.0, "moe_ep_size": 0.0, "silicon_ttft_ms": ttft, "silicon_tpot_ms": tpot}


def test_raw_fields_ratio_and_tpot_per_layer():
    # B200 DeepSeek-R1 NVFP4 1.3.0rc1 C40 TP8: batch_size 5 -> 40 / 5 = 8; 85.238783 ms / 61 layers = 1.3974 ms
    frame = pd.DataFrame([_row("r", 40, 5.0, 858.47436, 85.238783, 4000, 1000, "nvidia/DeepSeek-R1-NVFP4", 8.0),
                          _row("old", 28, 28.0, 1.0, 1.0, version="1.2.0rc6.post1")])  # not a 1.3.0rc row
    rows = script.harness_rows(frame, layers_of=lambda m: 61)
    assert list(rows["id"]) == ["r"]
    assert rows["conc_per_batch"].iloc[0] == 8.0
    assert rows["tpot_per_layer_ms"].iloc[0] == pytest.approx(1.39736, rel=1e-4)


def test_a_batch_of_two_five_times_slower_than_a_batch_of_one_breaks_the_proportional_bound():
    # GB200 Qwen3-32B 1.3.0rc1 2000/500 rows (aiconfigurator-core 0.12.0). By hand, X = C2, Y = C1:
    # stall 2 * 0.225735 / 499 = 0.90475 ms -> decode 41.917892 - 0.90475 = 41.01314 ms;
    # B_X = 2 * 499 * 41.917892 / (225.734944 + 499 * 41.917892) = 1.978646, B_Y = 4026.7743 / 4129.5310 = 0.975117;
    # bound 8.069688 * 1.978646 / 0.975117 = 16.37451 ms; ratio 41.01314 / 16.37451 = 2.5047
    frame = pd.DataFrame([_row("c1", 1, 1.0, 102.756747, 8.069688), _row("c2", 2, 1.0, 225.734944, 41.917892)])
    pairs = script.within_deployment_pairs(script.harness_rows(frame, layers_of=lambda m: None))
    top = pairs[0]
    assert (top["x"], top["y"]) == ("c2", "c1")
    assert top["decode_x_ms"] == pytest.approx(41.01314, rel=1e-5)
    assert top["bound_ms"] == pytest.approx(16.37451, rel=1e-5)
    assert top["ratio"] == pytest.approx(2.5047, rel=1e-4)
    # the other way round: (8.069688 - 0.2059) / 41.917892 = 0.1876 (a smaller batch no slower than a larger one's)
    assert pairs[1]["ratio"] == pytest.approx(0.1876, rel=1e-3)
