"""An aiconfigurator row is priced at the release its own label states (fit/aic_release.label_release), not its
launch recipe's (round 32, relabel32).

Expectations by hand: a label "vllm 0.11.2" is release 0.11.2 (the recipe, data/engines.toml vllm-h100-gptoss-fp4, names
0.18.0); TensorRT-LLM's MoE exchange rule (data/stacks.toml trtllm version_rules, before 1.2.0rc3) holds at 1.0.0rc3
and 1.1.0rc2.post2 and not at 1.2.0rc6.post2; a Dynamo runtime label names Dynamo's release, mapped to the TensorRT-LLM
its support matrix lists (0.8.1.post2 -> 1.2.0rc6.post2), so the raw label (0.8.1.post2 < 1.2.0rc3) must not reach the
rule.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from jalapeno.fit.aic_release import DYNAMO_RUNTIME_TRTLLM, label_release
from jalapeno.fit.validate import load_aiconfigurator, point_release, point_stack
from jalapeno.specs.engine_versions import version_key


def _row(**kw) -> dict:
    """One aggregated H100 gpt-oss-120b row, TP8 attention, MoE EP8, 1k/1k at concurrency 64 (silicon_sample.csv)."""
    row = {"id": "g_agg_1024x1024_c64_tp8_ep8_1", "backend": "vllm", "backend_version": "0.11.2",
           "model_path": "openai/gpt-oss-120b", "system": "h100_sxm", "precision": "fp4", "mode": "agg",
           "isl": 1024, "osl": 1024, "batch_size": 64.0, "tp_size": 8.0, "pp_size": 1.0, "attention_dp_size": 1.0,
           "moe_tp_size": 1.0, "moe_ep_size": 8.0, "silicon_ttft_ms": 300.0, "silicon_tpot_ms": 8.0,
           "silicon_data_source": "source_file=2026-04-06.csv; measured=2025-12-08T00:00:00.000Z; wip=False"}
    return {**row, **kw}


def _point(**kw):
    (p,), _ = load_aiconfigurator(pd.DataFrame([_row(**kw)]))
    return p


def test_the_label_beats_the_launch_recipe():
    p = _point()
    assert p.framework == "vllm 0.11.2" and p.engine_version == ""
    assert point_release(p) == "0.11.2"  # was the recipe's 0.18.0


@pytest.mark.parametrize(("label", "release", "exchange"), [
    ("1.0.0rc3", "1.0.0rc3", "nvlink_all_to_all_above_top_k"),              # TensorRT-LLM's own release, before 1.2.0rc3
    ("1.1.0rc2.post2", "1.1.0rc2.post2", "nvlink_all_to_all_above_top_k"),
    ("1.2.0rc6.post2", "1.2.0rc6.post2", "nvlink_all_to_all"),              # at/after 1.2.0rc3: the profile's own value
    ("0.8.1.post2", "1.2.0rc6.post2", "nvlink_all_to_all"),                 # Dynamo's release: the TensorRT-LLM it ships
    ("0.5.1-rc0.pre3", "1.1.0rc2.post2", "nvlink_all_to_all_above_top_k"),  # Dynamo's, not a PEP 440 number itself
])
def test_trtllm_labels_cross_the_moe_exchange_rule_at_their_own_release(label, release, exchange):
    p = _point(backend="trtllm", backend_version=label)
    assert point_release(p) == release
    assert point_stack(p).moe_exchange == exchange


def test_silent_labels_keep_the_fallbacks():
    assert point_release(_point(backend_version=float("nan"))) == ""  # unstated: newest behaviour, no recipe
    assert label_release("trtllm gpt-oss-dev") == label_release("sglang nightly-dev") == ""
    # a stated release image still pins a TensorRT-LLM row (fit/aic_rows.trtllm_release)
    q = _point(backend="trtllm", backend_version="1.1.0rc2.post2",
               silicon_data_source="image=nvcr.io/nvidia/tensorrt-llm/release:1.1.0rc2.post2")
    assert q.engine_version == point_release(q) == "1.1.0rc2.post2"


def test_every_dynamo_runtime_label_of_the_sample_is_mapped_or_silent():
    """A row run in an ai-dynamo runtime image whose ``backend_version`` is that image's tag states Dynamo's release:
    TensorRT-LLM rows' tags are all mapped; the others' do not parse as a release (so the recipe fallback holds)."""
    files = pytest.importorskip("importlib.resources").files
    pytest.importorskip("aiconfigurator_core")
    f = pd.read_csv(files("aiconfigurator_core") / "systems" / "silicon_sample.csv")
    seen = 0
    for r in f.itertuples(index=False):
        m = re.search(r"ai-dynamo/\w+-runtime:([^;\s]+)", str(r.silicon_data_source))
        if not m or m.group(1) != str(r.backend_version):
            continue
        seen += 1
        if r.backend == "trtllm":
            assert m.group(1) in DYNAMO_RUNTIME_TRTLLM
        else:
            assert label_release(f"{r.backend} {r.backend_version}") == ""
    assert seen > 0
    for dynamo, (trtllm, source) in DYNAMO_RUNTIME_TRTLLM.items():
        assert version_key(trtllm) and source  # each mapped release parses and says where it is stated


def test_the_audit_script_names_the_crossed_groups():
    """scripts/aic_label_release.py: the groups whose release now crosses TensorRT-LLM's MoE exchange rule are the
    imageless rows whose label is a release before 1.2.0rc3 (1.0.0rc3; 1.1.0rc2.post2; Dynamo 0.5.1-rc0.pre3, which
    ships 1.1.0rc2.post2); no vLLM group crosses; SGLang groups cross only the disagg_prebuilt rule (round 47)."""
    pytest.importorskip("aiconfigurator_core")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "aic_label_release.py"
    spec = importlib.util.spec_from_file_location("aic_label_release", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    rows = [r for r in script.table() if r[-1] == "CROSSED"]
    crossed = {(r[2], r[3]) for r in rows if r[3].startswith("trtllm ")}
    labels = {fw.split()[-1] for _, fw in crossed}
    assert labels <= {"1.0.0rc3", "1.1.0rc2.post2", "0.5.1-rc0.pre3"} and labels
    # round 47: SGLang groups cross only sglang's disagg_prebuilt rule (before 0.5.10; serve/prebuilt_skip.py, priced
    # only with its switch on) and, round 48, its allreduce_rms_rule rule (before 0.5.7: the fusion on SM100 only, priced
    # only with specs/stacks.SGLANG_AR_RMS_ON), vLLM none
    others = [r for r in rows if not r[3].startswith("trtllm ")]
    rules = {"disagg_prebuilt", "allreduce_rms_rule"}
    assert others and all(r[3].startswith("sglang ") and set(r[-2].split(",")) <= rules for r in others)
    assert any("allreduce_rms_rule" in r[-2] and r[3] == "sglang 0.5.6.post2" for r in others)  # the H200 Qwen3 rows
    assert all(version_key(r[3].split()[-1]) < version_key("0.5.10") for r in others)
