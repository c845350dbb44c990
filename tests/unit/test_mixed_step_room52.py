"""serve/chunked.step_room (switch MIXED_STEP_ROOM_ON, round 52, mlperfint52): a mixed step's prompt chunk is what the
step's token cap leaves beside its decode rows, as TensorRT-LLM's micro-batch scheduler gives the context requests
``maxNumTokensRuntime - batchNumTokens`` after the generation requests (NVIDIA/TensorRT-LLM@0a949d31
cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp).

Expected values by hand: the Nebius H200 Llama-2-70B Interactive engine (inference_results_v5.1 @965182b
closed/Nebius/configs/H200-SXM-141GBx8/Interactive/llama2-70b.py: runtime max_num_tokens 256) at the run's ~107
decoding requests leaves 256 - 107 = 149 prompt tokens a step, less than the dataset's mean prompt of 222.3 tokens;
the B200 engine (768) at 255 leaves 513, more than a mean prompt, so its steps do not change."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import jalapeno.serve.chunked as chunked
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.deploy.mtp import MTP
from jalapeno.specs.formats import get_precision

H200_INT = "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama2-70b-99_Interactive"
B200_INT = "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Interactive"


def _dep(**kw) -> Deployment:
    return Deployment(get_precision("fp8"), Pool(Layout()), **kw)


def test_room_is_the_cap_less_the_decode_rows(monkeypatch):
    monkeypatch.setattr(chunked, "MIXED_STEP_ROOM_ON", True)
    d = _dep(token_budget=256, max_tokens_per_step=256)
    assert chunked.step_room(d, Layout(), np.array([107.0]), 1).tolist() == [149.0]
    # MTP: each decoding sequence verifies 1 + k rows: 256 - 3 x 50 = 106
    assert chunked.step_room(d, Layout(), np.array([50.0]), 3).tolist() == [106.0]
    # past the cap a step still carries a token (the batch cap, serve/limits.batch_caps, keeps B below it on average)
    assert chunked.step_room(d, Layout(), np.array([400.0]), 1).tolist() == [1.0]


def test_no_room_bound_without_a_cap_under_attention_dp_or_with_the_switch_off(monkeypatch):
    monkeypatch.setattr(chunked, "MIXED_STEP_ROOM_ON", True)
    assert chunked.step_room(_dep(token_budget=256), Layout(), np.array([107.0]), 1) is None
    adp = Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)), token_budget=256, max_tokens_per_step=256)
    assert chunked.step_room(adp, Layout(dp=8, ep=8), np.array([107.0]), 1) is None
    monkeypatch.setattr(chunked, "MIXED_STEP_ROOM_ON", False)
    assert chunked.step_room(_dep(token_budget=256, max_tokens_per_step=256), Layout(), np.array([107.0]), 1) is None


def test_shipped_on():
    assert chunked.MIXED_STEP_ROOM_ON is True


@pytest.fixture(scope="module")
def rows():
    from jalapeno.fit.mlperf import load_mlperf

    return {p.id: p for p in load_mlperf()[0]}


def _loads(p, monkeypatch, on: bool):
    from jalapeno.fit.mlperf_scenarios import priced_point
    from jalapeno.serve import analytic

    monkeypatch.setattr(chunked, "MIXED_STEP_ROOM_ON", on)
    model, pr, dep, wl = priced_point(p)
    b = np.array([107.0 if "H200" in p.id else 255.0])
    _, chunk, _, p_big, _ = analytic._chunk_step_load(dep, wl, b, wl.mean_osl - 1)
    one = dataclasses.replace(dep, decode=dataclasses.replace(dep.decode, workers=1))
    tpot = float(analytic.aggregated_by_batch(model, pr, one, wl, b).tpot_s[0])
    return chunk, float(p_big[0]), tpot


def test_h200_interactive_mixed_step_carries_what_the_decode_rows_leave(rows, monkeypatch):
    p = rows[H200_INT]
    chunk, big_off, tpot_off = _loads(p, monkeypatch, False)
    _, big_on, tpot_on = _loads(p, monkeypatch, True)
    assert chunk == pytest.approx(222.3, abs=0.1)  # off: a whole mean prompt in one step
    assert big_off == pytest.approx(chunk)
    assert big_on == pytest.approx(256 - 107)  # on: the room beside the 107 decode rows
    assert tpot_on < tpot_off  # smaller mixed steps on a step still convex in its rows (H200 FP8 at ~107 rows)


def test_b200_interactive_is_left_as_it_was(rows, monkeypatch):
    p = rows[B200_INT]
    off = _loads(p, monkeypatch, False)
    on = _loads(p, monkeypatch, True)
    assert on == pytest.approx(off)  # 768 - 255 = 513 > 222: the room does not bind


def test_mtp_rows_count_against_the_cap(monkeypatch):
    # 100 decoding sequences of MTP k = 2 verify 3 rows each (deploy/mtp.query_len): 512 - 300 = 212 tokens of room;
    # a fixed 400-token prompt fits the 512 budget (off: one whole chunk of 400) but not the room (on: 212)
    from jalapeno.serve import analytic
    from jalapeno.specs.workload import get_workload

    d = _dep(token_budget=512, max_tokens_per_step=512, mtp=MTP(draft_tokens=2, acceptance=0.8))
    wl = get_workload(isl=400, osl=1000, fixed=True)
    b = np.array([100.0])
    steps = (wl.mean_osl - 1) / d.mtp.tokens_per_step
    p = 100.0 * 400 / steps  # ~96 prompt tokens a step on average, below the room
    monkeypatch.setattr(chunked, "MIXED_STEP_ROOM_ON", False)
    assert analytic._chunk_step_load(d, wl, b, steps)[3].tolist() == pytest.approx([400.0])
    monkeypatch.setattr(chunked, "MIXED_STEP_ROOM_ON", True)
    assert p < 212
    assert analytic._chunk_step_load(d, wl, b, steps)[3].tolist() == pytest.approx([212.0])


def test_h200_harness_term_follows_the_switch(monkeypatch):
    # refitted on the H200 peer runs with the room (scripts/mlperf_llama_peers47.py: 7.47 ms); off gives round 47's
    # 7.25 ms, so switching the mechanism off gives the figures before round 52 exactly
    import jalapeno.fit.mlperf_engines as me

    monkeypatch.setattr(chunked, "MIXED_STEP_ROOM_ON", True)
    assert me.llama_trt_harness_step_s()["h200"] == pytest.approx(7.47e-3)
    monkeypatch.setattr(chunked, "MIXED_STEP_ROOM_ON", False)
    assert me.llama_trt_harness_step_s()["h200"] == pytest.approx(7.25e-3)


def test_a_step_still_carries_the_mean_prompt_load_when_the_room_is_smaller(monkeypatch):
    # review52: 100 decoding sequences against a 128-token cap leave 28 tokens of room, but the prompts arrive at
    # 100 x 400 / 999 = 40.04 tokens a step (fixed 400 / 1,000, 999 decode steps a request): the steps must carry
    # them (work conservation), so a prompt-carrying step carries max(p, room) = 40.04, not 28 (off: the 128 budget)
    from jalapeno.serve import analytic
    from jalapeno.specs.workload import get_workload

    d = _dep(token_budget=128, max_tokens_per_step=128)
    wl = get_workload(isl=400, osl=1000, fixed=True)
    b = np.array([100.0])
    monkeypatch.setattr(chunked, "MIXED_STEP_ROOM_ON", False)
    assert analytic._chunk_step_load(d, wl, b, 999.0)[3].tolist() == pytest.approx([128.0])
    monkeypatch.setattr(chunked, "MIXED_STEP_ROOM_ON", True)
    assert analytic._chunk_step_load(d, wl, b, 999.0)[3].tolist() == pytest.approx([100 * 400 / 999])
