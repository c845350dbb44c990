"""A turn's prefill in the session model (serve/sessions.py) runs as the chunks an engine cuts it into:
⌊n/pb⌋ full chunks of pb tokens and one remainder chunk, each step priced at its own tokens and
context. Round 53 (agentic53) found the remainder priced as a second full chunk: on GB300 (DeepSeek-R1
fp4, DP4 + EP4, pb = 2,048) the coding agent's last turn prefilled 2 × 2,048 tokens for a 2,500-token
tool output (1.86 s at batch 1 against 0.93 + 0.29 = 1.22 s for 2,048 + 452)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tiny_fixtures import model_config, system_toml

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, pool_step_cost
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.serve.analytic import frontend_s
from jalapeno.serve.sessions import sessions_by_batch
from jalapeno.specs.agentic import AgenticSpec
from jalapeno.specs.formats import get_precision
from jalapeno.specs.model_file import load_model_file


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("chunks")
    (d / "config.json").write_text(json.dumps(model_config()))
    (d / "sys.toml").write_text(system_toml(3.0))
    return load_model_file(d / "config.json", name="tiny-llama"), load_pricer(str(d / "sys.toml"))


def _prefill_s(model, pr, dep, spec, b):
    """Each turn's TTFT less its queue wait (τ/2) and front end: the prefill (no lower tiers: no reload)."""
    pts = sessions_by_batch(model, pr, dep, spec, [b])
    wait = dep.recv_interval * pts.step_time_s[0] / 2
    return pts.ttft_turn_s[0] - wait - frontend_s(pr.efficiency, spec.turn_isl()), pts


def _step(model, pr, dep, b, ctx_dec, tokens, ctx):
    batch = Batch.make(
        decode_seqs=[float(b)],
        decode_ctx=ctx_dec,
        prefill_tokens=[float(tokens)],
        prefill_ctx=[float(ctx)],
        prefill_seqs=[1.0],
    )
    return float(pool_step_cost(model, pr, dep, dep.decode.layout, batch).step_time_s[0])


def test_a_turn_prefills_its_full_chunks_and_one_remainder_chunk(tiny):
    model, pr = tiny
    dep = Deployment(get_precision("bf16"), Pool(Layout()), token_budget=512)  # pb = 512 tokens a step
    # 2 turns, S = 100, u = 600, r = 10: turn 0 prefills 700 = 512 + 188 from context 0;
    # turn 1 prefills 600 = 512 + 88 on a 710-token prefix (ISL 1,310)
    spec = AgenticSpec("c", 2, 100, 600, 10, 0.01, jitter=0.0)
    b = 1.0
    got, pts = _prefill_s(model, pr, dep, spec, b)
    ctx_dec = float(spec.turn_isl().mean() + 10 / 2)
    b_run = float(pts.decode_batch[0])
    assert b_run == pytest.approx(b)
    # by hand: the full chunk's tokens sit at mean context P + 256, the remainder's at P + 512 + rem/2
    turn0 = _step(model, pr, dep, b, ctx_dec, 512, 256) + _step(model, pr, dep, b, ctx_dec, 188, 512 + 94)
    turn1 = _step(model, pr, dep, b, ctx_dec, 512, 710 + 256) + _step(model, pr, dep, b, ctx_dec, 88, 710 + 512 + 44)
    assert got[0] == pytest.approx(turn0, rel=1e-6)
    assert got[1] == pytest.approx(turn1, rel=1e-6)
    # the old pricing, two full chunks, is clearly more (an 88-token chunk is not a 512-token one)
    assert got[1] < 0.9 * 2 * _step(model, pr, dep, b, ctx_dec, 512, 710 + 256)


def test_whole_chunks_have_no_remainder_step(tiny):
    model, pr = tiny
    dep = Deployment(get_precision("bf16"), Pool(Layout()), token_budget=512)
    # turn 0: S + u = 1,024 = 2 × 512 (mean context of the two chunks' tokens 512); turn 1: 512 on a 1,034 prefix
    spec = AgenticSpec("w", 2, 512, 512, 10, 0.01, jitter=0.0)
    got, _ = _prefill_s(model, pr, dep, spec, 1.0)
    ctx_dec = float(spec.turn_isl().mean() + 10 / 2)
    assert got[0] == pytest.approx(2 * _step(model, pr, dep, 1.0, ctx_dec, 512, 512), rel=1e-6)
    assert got[1] == pytest.approx(_step(model, pr, dep, 1.0, ctx_dec, 512, 1034 + 256), rel=1e-6)


def test_turn_one_is_priced_not_interpolated_from_turn_zero(tiny):
    """Turn 0 prefills S + u, every later turn u: a line from turn 0 to the next sampled turn put turns 1-5 of
    the coding agent between an 8,500-token prefill and a 2,500-token one."""
    model, pr = tiny
    dep = Deployment(get_precision("bf16"), Pool(Layout()), token_budget=512)
    # 12 turns (sampled 0, 2, 3, 5, ... before the fix: turn 1 was a line from turn 0 to turn 2);
    # turn 0 prefills 1,600 tokens (3 × 512 + 64), turn k >= 1 its 100-token tool output
    spec = AgenticSpec("k", 12, 1500, 100, 10, 0.01, jitter=0.0)
    got, _ = _prefill_s(model, pr, dep, spec, 1.0)
    ctx_dec = float(spec.turn_isl().mean() + 10 / 2)
    # turn 1: one 100-token chunk on the 1,610-token prefix (S + u + r)
    assert got[1] == pytest.approx(_step(model, pr, dep, 1.0, ctx_dec, 100, 1610 + 50), rel=1e-3)
    assert np.all(np.diff(got[1:]) > 0)  # later turns: the same 400 tokens on a longer prefix
