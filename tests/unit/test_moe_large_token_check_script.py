"""scripts/moe_large_token_check.py: the serial token-pass time, the two forms, the DeepSeek row filter."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from script_module import load_script

script = load_script("moe_large_token_check")


def _rows() -> pd.DataFrame:
    """Two balanced rows of DeepSeek-R1's shape at EP8 (3,072 and 8,192 tokens) and one of another shape."""
    from jalapeno.fit.kernels import moe_rows

    base = {"moe_dtype": "nvfp4", "hidden_size": 7168, "inter_size": 2048, "topk": 8, "num_experts": 256,
            "moe_tp_size": 1, "moe_ep_size": 8, "distribution": "balanced"}
    rows = [{**base, "num_tokens": 3072, "latency": 0.303}, {**base, "num_tokens": 8192, "latency": 0.547},
            {**base, "num_tokens": 8192, "hidden_size": 4096, "inter_size": 1536, "num_experts": 128, "latency": 0.6}]
    return moe_rows(pd.DataFrame(rows))


def test_serial_scan_by_hand():
    # 3 passes over 4,096 vectors of 7,168 BF16 elements: 3 · 4096 · 7168 · 2 B = 176,160,768 B at 0.6 · 8 TB/s
    t = script.serial_scan_s(np.array([4096.0]), 7168, 3.0, 8e12, 0.6)
    assert t[0] == pytest.approx(176_160_768 / 4.8e12)


def test_the_forms_agree_without_passes_and_serial_adds_the_scan():
    from jalapeno.specs.catalog import load_system

    system, r = load_system("b200"), _rows()
    p = (0.4, 64.0, 0.7, 2e-5)
    plain = script.form_s(system, r, "fp4", "max", *p, 0.0)
    assert script.form_s(system, r, "fp4", "serial", *p, 0.0) == pytest.approx(plain)
    serial = script.form_s(system, r, "fp4", "serial", *p, 5.0)
    scan = 5.0 * r.num_tokens.to_numpy(float) * r.hidden_size.to_numpy(float) * 2 / (8e12 * 0.7)
    assert serial - plain == pytest.approx(scan)
    # inside max(compute, memory) the same passes cost at most as much as after it
    assert np.all(script.form_s(system, r, "fp4", "max", *p, 5.0) <= serial + 1e-12)


def test_unknown_form_is_named():
    from jalapeno.specs.catalog import load_system

    with pytest.raises(ValueError, match="form 'sum': use one of max, serial"):
        script.form_s(load_system("b200"), _rows(), "fp4", "sum", 0.4, 64.0, 0.7, 2e-5, 1.0)


def test_deepseek_filter_keeps_only_its_shape():
    r = _rows()
    assert sorted(r[script.deepseek(r)].num_tokens) == [3072, 8192]
    assert set(r[~script.deepseek(r)].hidden_size) == {4096}
