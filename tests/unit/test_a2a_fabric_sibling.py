"""fit/kernel_tables.A2A_FABRIC_SIBLING: GB300 prices its MoE all-to-all's per-call time from GB200's measured
table, because the all-to-all kernels aiconfigurator times on both systems run at the same speed (recomputed
here from the tables themselves)."""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.errors import SpecError
from jalapeno.fit.kernel_tables import A2A_FABRIC_SIBLING, load_a2a_table, load_table
from jalapeno.specs.calibration import load_calibration

pytest.importorskip("aiconfigurator_core")


def _ratio(name: str, keys: list[str], value) -> tuple[np.ndarray, int]:
    backend = "sglang" if name.startswith("wideep") else "trtllm"
    a, _ = load_table("gb200", "comm", name, backend=backend)
    b, _ = load_table("gb300", "comm", name, backend=backend)
    m = a.merge(b, on=keys, suffixes=("_a", "_b"))
    return (value(m, "_b") / value(m, "_a")).to_numpy(), len(m)


def test_the_kernels_timed_on_both_fabrics_run_alike():
    # SGLang's DeepEP low-latency dispatch + combine, every shape both systems ran (176 rows, 1-1024 tokens)
    r, n = _ratio("wideep_deepep_ll_perf", ["hidden_size", "num_token", "num_topk", "num_experts"],
                  lambda m, s: m["dispatch_avg_t_us" + s] + m["combine_avg_t_us" + s])
    assert n == 176 and 0.97 < np.median(r) < 1.01 and np.percentile(r, 10) > 0.95 and np.percentile(r, 90) < 1.02
    # TensorRT-LLM's DeepEP kernels (704 rows): the same within 2% at the median
    keys = ["kernel_source", "comm_backend", "phase", "comm_dtype", "ep_size", "node_num", "hidden_size", "topk",
            "num_experts", "num_tokens", "sms"]
    r, n = _ratio("moe_a2a_perf", keys, lambda m, s: m["latency" + s])
    assert n == 704 and 0.96 < np.median(r) < 1.02


def test_gb300_reads_gb200s_all_to_all_table():
    assert A2A_FABRIC_SIBLING == {"gb300": "gb200"}
    own, v_own = load_a2a_table("gb200")
    sib, v_sib = load_a2a_table("gb300")
    assert v_sib == f"gb200 {v_own}" and sib.equals(own)
    with pytest.raises(SpecError):  # no table and no fabric sibling
        load_a2a_table("h200_sxm")


def test_shipped_gb300_latency_is_gb200s_kernel():
    # the same fit on the same table; only the system pricing the rows differs (GB300's NVLink ramp), so the
    # per-call latency lands within 5% of GB200's 15.0 us, and is no longer the 0 every other set carries
    lat = {s: load_calibration(s)["parameters"]["all_to_all_latency_s"] for s in ("gb200-nvl72", "gb300-nvl72")}
    assert lat["gb300-nvl72"] == pytest.approx(lat["gb200-nvl72"], rel=0.05)
    assert load_calibration("gb300-nvl72")["report"]["all_to_all"]["version"].startswith("gb200 ")
