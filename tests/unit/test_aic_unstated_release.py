"""An aiconfigurator row whose ``backend_version`` is blank: a named unknown release, and its stated fallback.

868 rows of aiconfigurator-core 0.12.0's ``silicon_sample.csv`` leave ``backend_version`` blank; pandas reads the
cell as NaN, which the loader formerly wrote into the framework label ("vllm nan") and, through the launch recipe,
priced at the recipe's image: vLLM 0.18.0 for H100 gpt-oss-120b (data/engines.toml vllm-h100-gptoss-fp4, InferenceX
issue #1154's image table), for rows measured 2025-12-05, three days before neighbours of the same export that
state v0.11.2.
"""

from __future__ import annotations

import pandas as pd

from jalapeno.fit.aic_quality import aic_sibling_flags
from jalapeno.fit.aic_sweeps import UNSTATED_RELEASE, release_stated, row_release
from jalapeno.fit.validate import load_aiconfigurator, point_release


def _row(**kw) -> dict:
    """One aggregated H100 gpt-oss-120b vLLM TP8 row, 1k/1k at concurrency 512 (silicon_sample.csv columns)."""
    row = {"id": "g_agg_1024x1024_c512_tp8_ep1_1", "backend": "vllm", "backend_version": float("nan"),
           "model_path": "openai/gpt-oss-120b", "system": "h100_sxm", "precision": "fp4", "mode": "agg",
           "isl": 1024, "osl": 1024, "batch_size": 512.0, "tp_size": 8.0, "pp_size": 1.0, "attention_dp_size": 1.0,
           "moe_tp_size": 8.0, "moe_ep_size": 1.0, "silicon_ttft_ms": 22294.9, "silicon_tpot_ms": 5.33,
           "silicon_data_source": "source_file=2026-04-06.csv; measured=2025-12-05T00:00:00.000Z; wip=False"}
    return {**row, **kw}


def test_a_blank_release_is_named_and_says_its_fallback():
    (p,), _ = load_aiconfigurator(pd.DataFrame([_row()]))
    assert UNSTATED_RELEASE == "unstated"
    assert p.framework == "vllm unstated"
    assert any("release unstated (backend_version blank)" in n and "newest behaviour" in n for n in p.notes)
    # no launch recipe's release is borrowed (the recipe's image, v0.18.0, postdates the run)
    assert point_release(p) == ""


def test_a_stated_release_is_kept_and_the_recipe_fallback_stays_for_other_sources():
    (p,), _ = load_aiconfigurator(pd.DataFrame([_row(backend_version="0.11.2")]))
    assert p.framework == "vllm 0.11.2" and not any("unstated" in n for n in p.notes)
    # a TRT-LLM row's stated release image pins it; its framework label keeps the blank as the named unknown
    (q,), _ = load_aiconfigurator(pd.DataFrame([_row(
        backend="trtllm", silicon_data_source="image=nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc2.post2")]))
    assert q.framework == "trtllm unstated" and point_release(q) == "1.1.0rc2.post2"


def test_release_helpers():
    assert [row_release(v) for v in ("0.12.0", float("nan"), "", None)] == ["0.12.0"] + [UNSTATED_RELEASE] * 3
    assert [release_stated(f) for f in ("sglang 0.5.9", "sglang unstated", "sglang nan", "sglang")] == [
        True, False, False, False]


def test_rule_d_leaves_unstated_releases_out():
    def pair(**kw):
        return [load_aiconfigurator(pd.DataFrame([_row(system=s, silicon_tpot_ms=t, silicon_ttft_ms=100.0, id=f"{s}_c8_tp8", **kw)]))[0][0]
                for s, t in (("h200_sxm", 20.0), ("h100_sxm", 5.0))]
    assert aic_sibling_flags(pair()) == {}  # 4x slower on the faster chip, but no release to compare within
    assert list(aic_sibling_flags(pair(backend_version="0.11.2"))) == ["aic:h200_sxm_c8_tp8"]  # one release: flagged
