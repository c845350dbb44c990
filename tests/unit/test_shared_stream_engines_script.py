"""scripts/shared_stream_engines.py: TensorRT-LLM's and SGLang's sourced shared-expert rules switched on in-process."""

from __future__ import annotations

import jalapeno.cost.shared_stream as ss
from script_module import load_script

eng = load_script("shared_stream_engines")


def test_switch_restores_the_priced_rules():
    before = dict(ss.SHARED_EXPERT_STREAMS)
    with eng.engines_on(("trtllm",)):
        assert ss.SHARED_EXPERT_STREAMS["trtllm"] is ss.TRTLLM_STREAM and "sglang" not in ss.SHARED_EXPERT_STREAMS
    assert ss.SHARED_EXPERT_STREAMS == before and "trtllm" not in before and "sglang" not in before


def test_hidden_where_the_engine_overlaps_and_nothing_where_it_fuses_or_runs_deepep(capsys):
    got = {label: (off, hid) for label, off, hid in eng.rows()}
    for label, (off, hid) in got.items():
        if "(fused)" in label or "(DeepEP)" in label:
            assert hid == 0.0, label
        else:  # the shared expert's ~13-15 us a layer beyond its bytes, 58-60 MoE layers: 0.5-1.2 ms, under 1/7 of the step
            assert 0.5 < hid < 1.2 and hid < off / 7, label
    eng.main()
    out = capsys.readouterr().out
    assert all(label in out for label in got)
