"""Round 53 sliced-chip fixes (slice53): the sliced pricer reached from ``predict``, and its ``best`` placement.

Expected values are worked by hand in each test's comments (from specs/die.py's topology arithmetic and
cost/sliced.py's module docstring), not read off the code's output.
"""

from __future__ import annotations

import json

import pytest

from cli_runner import check_error, run

PREDICT = tuple("predict -s jalapeno -m deepseek-r1 --isl 1024 --osl 1024 -c 16 --dp 8 --ep 8 --fixed-lengths".split())


def _point(capsys, *extra: str) -> dict:
    code, out, err = run(capsys, *PREDICT, *extra, "--json")
    assert code == 0, err
    return json.loads(out)


def test_predict_refuses_a_die_set_under_the_flat_chip(capsys):
    """``predict --set die.link_bandwidth_tb_per_s=0.3`` printed the flat chip's figures unchanged (predict had no
    --chip-model, so nothing read the on-die keys); step, frontier and compare refuse it. Now predict does too."""
    code, out, err = run(capsys, *PREDICT, "--set", "die.link_bandwidth_tb_per_s=0.3")
    check_error(code, out, err, "--set", "die.link_bandwidth_tb_per_s", "--chip-model sliced")


def test_predict_prices_the_sliced_chip_and_says_so(capsys):
    """predict --chip-model sliced: with an on-die network too fast to bind (500 TB/s links and 1 ns hops, the ends
    of --set's plausible ranges) every op's t_net is negligible, so t_op = max(t_compute, t_hbm, 0) + launches = the
    flat chip's (cost/sliced.py docstring) and the point is the flat one. With Jalapeño's 2 x 3 mesh at 0.3 TB/s per link, striped: bisection 3 links = 0.9 TB/s.
    A decode step of 16 sequences x top-8 = 128 expert picks of 256 hits 32 x (1 - (255/256)^128) = 12.6 of a
    chip's 32 experts per layer, each 3 x 7168 x 2048 B = 44 MB in fp8, x 58 MoE layers = 32 GB; striped puts 5/6
    of it (26.8 GB) on die, whose cut term is 26.8 GB x 6/(4 x 5) / 0.9 TB/s = 8.9 ms against the ~2-4 ms its HBM
    reads take (32 GB at 15.4 TB/s x 0.57-0.95): the TPOT rises by well over 3 ms, and the line under the table names
    the chip model (the figures moved)."""
    flat = _point(capsys)
    assert flat["chip_model"] == {"model": "flat", "placement": ""}
    fast = _point(
        capsys, "--chip-model", "sliced", "--set", "die.link_bandwidth_tb_per_s=500", "--set", "die.hop_latency_ns=1"
    )
    assert fast["chip_model"] == {"model": "sliced", "placement": "local_first"}  # Jalapeño's own placement
    assert abs(fast["tpot_s"] / flat["tpot_s"] - 1) < 1e-9
    slow = _point(
        capsys, "--chip-model", "sliced", "--placement", "striped", "--set", "die.link_bandwidth_tb_per_s=0.3"
    )
    assert slow["chip_model"] == {"model": "sliced", "placement": "striped"}
    assert slow["tpot_s"] > flat["tpot_s"] + 3e-3
    code, out, err = run(capsys, *PREDICT, "--chip-model", "sliced", "--placement", "striped")
    assert code == 0, err
    assert "chip model: sliced (jalapeno 6 slices, striped)" in out


def test_predict_refuses_a_placement_on_a_one_slice_chip(capsys):
    """H100 is one slice: a placement has nothing to place (cost/sliced.refuse_idle_placement, as step's)."""
    args = "predict -s h100 -m llama-3.3-70b --isl 1024 --osl 1024 -c 4 --chip-model sliced --placement striped"
    code, out, err = run(capsys, *args.split())
    check_error(code, out, err, "--placement", "one slice")


def _attention(kv: float, act: float):
    from jalapeno.cost.optable import OpBuilder

    ob = OpBuilder(1)
    ob.op("attn", "attention", "bf16", flop=1e12, kv=kv, act=act, rows=1.0)
    return ob.build()[0]


def test_best_splits_a_prompts_attention_by_heads(monkeypatch):
    """Two slices joined by one 1 TB/s link (per direction), 200 ns hop, one kernel (docs/chip.md §3's example).
    A prompt's attention, K = 0 (no cached prefix), A = 1 GB: local_first (split-KV) exchanges (S − 1)·A = 1 GB ->
    max(0.5 GB / 1 TB/s, 1 GB·2/4 / 1 TB/s) + 0.2 µs = 500.2 µs; split by heads it moves (S − 1)·K = 0 bytes -> 0 s,
    and best takes it. A decode attention, K = 1 GB of KV cache, A = 10 MB: split-KV moves 10 MB -> 5.2 µs, by heads
    the KV multicast of 1 GB -> 500.2 µs, so best keeps split-KV. HBM reads stay local + remote = the op's bytes.
    With the switch off, best is the older three candidates: the prompt's 500.2 µs."""
    from jalapeno.cost import sliced
    from jalapeno.specs.die import Die

    die = Die(slices=2, topology="pair", link_bandwidth_bytes_per_s=1e12, hop_latency_s=200e-9)
    prompt, decode = _attention(0.0, 1e9), _attention(1e9, 1e7)
    assert sliced.slice_traffic(prompt, die, "local_first").network_s[0, 0] == pytest.approx(500.2e-6)
    best = sliced.slice_traffic(prompt, die, "best")
    assert best.split[0, 0] == "head_split"
    assert best.network_s[0, 0] == 0.0 and best.exchange_bytes[0, 0] == 0.0
    assert best.hbm_local_bytes[0, 0] + best.hbm_remote_bytes[0, 0] == pytest.approx(1e9)
    dec = sliced.slice_traffic(decode, die, "best")
    assert dec.split[0, 0] == "local_first"
    assert dec.network_s[0, 0] == pytest.approx(5.2e-6)
    assert dec.hbm_local_bytes[0, 0] + dec.hbm_remote_bytes[0, 0] == pytest.approx(1.01e9)
    monkeypatch.setattr(sliced, "HEAD_SPLIT_ON", False)
    off = sliced.slice_traffic(prompt, die, "best")
    assert off.split[0, 0] == "local_first" and off.network_s[0, 0] == pytest.approx(500.2e-6)


def test_best_prefill_of_deepseek_r1_on_jalapeno_moves_no_attention_activations(capsys, monkeypatch):
    """step --slices --placement best on an 8,192-token DeepSeek-R1 prompt (Jalapeño, 6 slices): its attention
    (attn.mla_prefill, no cached prefix: K = 0) moved (S − 1)·A = 5 x its activation bytes on die under split-KV;
    split by heads it moves none, so the step's on-die bytes drop by exactly 5·A and the table lists head_split."""
    from jalapeno.cost import sliced

    args = "step -s jalapeno -m deepseek-r1 --batch 0 --prefill-tokens 8192 --slices --placement best --json".split()
    code, out, err = run(capsys, *args)
    assert code == 0, err
    on = json.loads(out)
    a = next(op for op in on["ops"] if op["op"] == "attn.mla_prefill")
    assert on["slices"]["splits"]["attn.mla_prefill"] == "head_split"
    monkeypatch.setattr(sliced, "HEAD_SPLIT_ON", False)
    code, out, err = run(capsys, *args)
    assert code == 0, err
    off = json.loads(out)
    assert off["slices"]["splits"]["attn.mla_prefill"] == "local_first"
    drop = off["slices"]["on_die_bytes"] - on["slices"]["on_die_bytes"]
    assert drop == pytest.approx(5 * a["act_bytes"], rel=1e-9)


def test_commands_without_a_chip_model_refuse_a_die_set(capsys):
    """simulate, plan and report price the flat chip only: --set die.link_bandwidth_tb_per_s=0.3 gave the flat chip's
    figures unchanged with no word (simulate printed Jalapeño's flat TPOT). Each now refuses it, naming the commands
    that price the sliced chip."""
    die = ("--set", "die.link_bandwidth_tb_per_s=0.3")
    for args in (
        "simulate -s jalapeno -m deepseek-r1 --isl 1024 --osl 256 -c 8",
        "plan -s jalapeno -m deepseek-r1 --chips 8",
        "report --systems jalapeno,gb300-nvl72 -m deepseek-r1",
    ):
        code, out, err = run(capsys, *args.split(), *die)
        check_error(code, out, err, "--set", "die.link_bandwidth_tb_per_s", args.split()[0], "--chip-model sliced")
