"""SGLang B200 DeepSeek-R1 aiconfigurator rows: the MoE layout and spec their InferenceX scripts ran (round 24).

Expected values are read by hand from the sources, not from the code:
- ids, fields and stamps are those of real rows of aiconfigurator-core 0.12.0's ``systems/silicon_sample.csv``
  (backend sglang, backend_version blank, system b200_sxm): their fields say MoE TP = tp, MoE EP 1;
- SemiAnalysisAI/InferenceX ``benchmarks/dsr1_fp4_b200_docker.sh`` @e06929c70 (in force 2025-11-02) passes
  ``--enable-ep-moe`` (replaced by ``--ep-size 8`` for TP8 in d6f38f293, PR #204: ep = tp), and @d8fe8f73e (PR #204,
  2025-11-10) ``--ep-size $EP_SIZE`` with ``.github/configs/nvidia-master.yaml`` dsr1-fp4-b200-sglang searching only
  ``{ tp: 4, ep: 4 }`` and ``{ tp: 8, ep: 8 }``: every chip of the instance holds whole experts, MoE TP1 EP = tp;
- neither script passes ``--speculative-algorithm``: no MTP.
"""

from __future__ import annotations

import pandas as pd

from jalapeno.fit.aic_sweeps import load_sweeps
from jalapeno.fit.validate import load_aiconfigurator


def _row(rid: str, stamp: str, tp: int, tpot_ms: float) -> dict:
    return {"id": rid, "silicon_data_source": stamp, "backend": "sglang", "backend_version": float("nan"),
            "model_path": "deepseek-ai/DeepSeek-R1", "system": "b200_sxm", "precision": "fp4", "mode": "agg",
            "isl": 1024, "osl": 1024, "gemm_quant_mode": "nvfp4", "moe_quant_mode": "nvfp4", "batch_size": 16,
            "tp_size": float(tp), "pp_size": 1.0, "attention_dp_size": 1.0, "moe_tp_size": float(tp),
            "moe_ep_size": 1.0, "silicon_ttft_ms": 300.0, "silicon_tpot_ms": tpot_ms}


def test_november_fp4_rows_ran_moe_ep_over_the_instance():
    rows = [_row("2026_04_06_deepseek_r1_b200_sxm_sglang_fp4_agg_1024x1024_c16_tp4_ep1_103",
                 "source_file=2026-04-06.csv; measured=2025-11-10T00:00:00.000Z", 4, 20.0),
            _row("2026_04_06_deepseek_r1_b200_sxm_sglang_fp4_agg_1024x1024_c16_tp8_ep1_273",
                 "source_file=2026-04-06.csv; measured=2025-11-02T00:00:00.000Z", 8, 17.0),
            # a date with no entry: the fields' layout stands (distinct TPOTs: equal figures merge as one run's repeats)
            _row("x_deepseek_r1_b200_sxm_sglang_fp4_agg_1024x1024_c16_tp8_ep1_1",
                 "source_file=2026-04-06.csv; measured=2025-11-05T00:00:00.000Z", 8, 14.0)]
    tp4, tp8, other = load_aiconfigurator(pd.DataFrame(rows))[0]
    assert tp4.deployment.decode.layout.label == "attn TP4 DP1 · MoE TP1 EP4"
    assert tp8.deployment.decode.layout.label == "attn TP8 DP1 · MoE TP1 EP8"
    assert "--enable-ep-moe / --ep-size = --tp-size" in "; ".join(tp4.notes)
    assert tp4.uses_mtp is False and tp8.uses_mtp is False
    assert other.deployment.decode.layout.label == "attn TP8 DP1 · MoE TP8 EP1" and other.uses_mtp is None


def test_sglang_b200_entries_name_no_moe_backend():
    # the scripts force --moe-runner-backend flashinfer_trtllm; SGLang's measured curves moved these rows the
    # wrong way (docs/model.md), so no entry prices them by it
    got = [s for s in load_sweeps() if (s.system, s.engine) == ("b200", "sglang")]
    assert {(s.precision, s.measured) for s in got} == {
        ("fp4", "2025-11-02"), ("fp4", "2025-11-10"), ("fp8", "2025-11-16"), ("fp8", "2025-11-17"),
        ("fp8", "2025-11-18"), ("fp8", "2025-12-31"), ("fp4", "2026-03-25")}
    assert all(s.spec == "none" and not s.moe_backend for s in got)
    assert [s.measured for s in got if s.expert_parallel] == ["2025-11-02", "2025-11-10"]
