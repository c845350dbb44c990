"""A headline cell of ``jalapeno compare`` recomputed by hand (docs/audit.md §6).

DeepSeek-R1 FP4, 8K/1K, on Jalapeño: the decode step of the peak point's layout (attention DP16,
EP16, two-batch overlap), the peak point's throughput, power and cost arithmetic, and the same
figures for GB300 NVL72. Every expected value comes from the model config (hardware_specs.md §2.1:
hidden 7168, 128 heads, kv_lora_rank 512 + rope 64, 61 layers of which 58 MoE, 256 routed experts
top-8, moe_intermediate 2048), the chip's stated specs (13.4 PF FP4, 3.4 PF FP8, 15.4 TB/s, 600 GB/s
scale-up) and the catalog's stated power/cost arithmetic, not from the model's output.
"""

from __future__ import annotations

import json
import math

import pytest
from cli_runner import run

# DeepSeek-R1 config (hardware_specs.md §2.1)
HIDDEN, HEADS, LAYERS, MOE_LAYERS = 7168, 128, 61, 58
KV_LORA, ROPE = 512, 64
EXPERTS, TOP_K, MOE_INTER = 256, 8, 2048
EXPERT_PARAMS = 3 * HIDDEN * MOE_INTER  # gate, up, down: 44.04 M
MLA_KV_BYTES_PER_TOKEN = LAYERS * (KV_LORA + ROPE) * 1  # FP8 latent cache: 35,136 B
NVFP4_BYTES_PER_PARAM = 0.5 + 1 / 16  # 4-bit values + one FP8 scale per 16

# Jalapeño (hardware_specs.md §0)
J_FP8, J_FP4, J_HBM, J_SCALE_UP = 3.4e15, 13.4e15, 15.4e12, 600e9
# the catalog's all-in estimate, recomputed from its stated parts: (chip 700 + tray 70 + CPU trays 31
# + switches 66 + global links 50) W x PUE 1.25; cost: $30k capex x GB200's costh 2.21 $/h / $46.5k
J_ALL_IN_W = (700 + 70 + 31 + 66 + 50) * 1.25
J_USD_H = 30e3 * 2.21 / 46.5e3

# the step of the peak point's decode layout: 9,888 sequences over 16 chips at 7,830 tokens of context (round 49:
# the KV cap reserves E[ISL + OSL] = 8,294.4 tokens a sequence, 167.73 GiB of room / (8,294.4 x 35,136 B) = 618.0
# a chip, 9,887.7 an instance; the step reads the mean context E[ISL] + E[OSL]/2 = 7,833.6; docs/audit.md §6)
BATCH, DP, CTX = 9888, 16, 7830
PER_CHIP = BATCH / DP


#: each command runs once per module (the fixtures are function-scoped for capsys)
_RUNS: dict[tuple[str, ...], dict] = {}


def _json(capsys, *args: str) -> dict:
    if args not in _RUNS:
        code, out, err = run(capsys, *args, "--json")
        assert code == 0, err
        _RUNS[args] = json.loads(out)
    return _RUNS[args]


@pytest.fixture
def step(capsys):
    d = _json(
        capsys,
        "step",
        "--system",
        "jalapeno",
        "--model",
        "deepseek-r1",
        "-p",
        "fp4",
        "--dp",
        str(DP),
        "--ep",
        str(DP),
        "--batch",
        str(BATCH),
        "--context",
        str(CTX),
        "--overlap",
        "tbo",
    )
    return {**d, "op": {o["op"]: o for o in d["ops"]}}


def test_kv_bytes_read_by_attention(step):
    # 618.0 sequences x 7,830 tokens x 35,136 B = 170.0 GB per chip per step
    assert step["op"]["attn.mla_decode"]["kv_bytes"] == pytest.approx(PER_CHIP * CTX * MLA_KV_BYTES_PER_TOKEN, rel=1e-9)


def test_mla_decode_flop(step):
    # absorbed MLA decode: per head and context token, q.k over 576 and p.v over 512 dims, 2 FLOP a MAC
    hand = PER_CHIP * LAYERS * HEADS * CTX * 2 * (KV_LORA + ROPE + KV_LORA)
    assert hand == pytest.approx(82.21e12, rel=1e-3)
    assert step["op"]["attn.mla_decode"]["flop"] == pytest.approx(hand, rel=1e-9)


def test_routed_expert_weights_and_flop(step):
    # every one of the 16 experts a rank holds is touched at 618 tokens x 8 picks: 58 x 16 experts in NVFP4
    w = MOE_LAYERS * (EXPERTS // DP) * EXPERT_PARAMS * NVFP4_BYTES_PER_PARAM
    assert w == pytest.approx(22.99e9, rel=1e-3)
    assert step["op"]["moe.experts"]["weight_bytes"] == pytest.approx(w, rel=1e-9)
    # FLOP: the mean rank's 618 x 8 picks x 2 x 44 M per layer; the busiest rank (which sets the time)
    # carries the routing skew on top: above the mean by a few per cent, never below
    mean = PER_CHIP * TOP_K * MOE_LAYERS * 2 * EXPERT_PARAMS
    assert 1.0 <= step["op"]["moe.experts"]["flop"] / mean <= 1.06


def test_memory_fits_with_kv_room(step):
    mem = step["memory"]
    # resident weights: experts (above) + FP8 attention 187.1 M x 61, dense FFN 3 x 3 x 7168 x 18432, shared
    # experts 58 x 44 M, BF16 router 58 x 256 x 7168 and BF16 embedding + head 2 x 129,280 x 7168
    attn = HIDDEN * 1536 + HIDDEN * (KV_LORA + ROPE) + 1536 * HEADS * 192 + KV_LORA * HEADS * 256 + HEADS * 128 * HIDDEN
    fp8 = LAYERS * attn + 3 * 3 * HIDDEN * 18432 + MOE_LAYERS * EXPERT_PARAMS
    bf16 = 2 * (MOE_LAYERS * EXPERTS * HIDDEN + 2 * 129280 * HIDDEN)
    hand = MOE_LAYERS * (EXPERTS // DP) * EXPERT_PARAMS * NVFP4_BYTES_PER_PARAM + fp8 + bf16
    assert mem["weights_bytes"] == pytest.approx(hand, rel=0.005)  # FP8 block scales are the rest
    total = mem["weights_bytes"] + mem["kv_bytes"] + mem["activation_bytes"] + mem["reserve_bytes"]
    assert total <= mem["usable_bytes"] == pytest.approx(216 * 2**30)


def test_no_op_or_collective_beats_its_roofline(step):
    peak = {"fp4": J_FP4, "fp8": J_FP8, "bf16": J_FP8 / 2}
    compute_floor = sum(o["flop"] / peak[o["format"]] for o in step["ops"])
    hbm_floor = (step["weight_bytes"] + step["kv_bytes"] + step["act_bytes"]) / J_HBM
    assert step["step_time_s"] >= max(compute_floor, hbm_floor)
    for o in step["ops"]:
        assert o["time_s"] >= o["flop"] / peak[o["format"]]
        assert o["time_s"] >= (o["weight_bytes"] + o["kv_bytes"] + o["act_bytes"]) / J_HBM * (1 - 1e-9)
    for c in step["collectives"]:  # 15/16 of an all-to-all's bytes leave the chip, at most 600 GB/s
        assert c["bytes_per_call"] * c["calls"] * 15 / 16 / c["time_s"] <= J_SCALE_UP


@pytest.fixture
def headline(capsys):
    return _json(capsys, "compare", "--systems", "jalapeno,gb300-nvl72", "-p", "fp4")


def test_peak_point_throughput_from_its_step(headline):
    p = headline["systems"]["jalapeno"]["frontier"][0]
    assert p["throughput_per_chip"] == pytest.approx(
        headline["systems"]["jalapeno"]["headline"]["peak_throughput_per_chip"]
    )
    dec = p["deployment"]["decode"]
    isl, osl = 0.9 * 8192, 0.9 * 1024  # lengths uniform in [0.8 L, L]
    # TPOT is the decode step; the first token comes from prefill, so OSL tokens per OSL - 1 steps
    assert p["tpot_s"] == pytest.approx(p["step_time_s"])
    assert p["interactivity"] == pytest.approx(1 / p["tpot_s"])
    out_dec = p["decode_batch"] / (dec["tp"] * dec["dp"]) / p["step_time_s"] * osl / (osl - 1)
    assert p["output_throughput_per_decode_chip"] == pytest.approx(out_dec, rel=1e-3)
    per_chip = out_dec * dec["chips"] / p["chips"] * (isl + osl) / osl
    assert p["throughput_per_chip"] == pytest.approx(per_chip, rel=1e-3)


def test_peak_decode_batch_is_the_whole_request_kv_cap(headline, step):
    """The peak is KV-capacity capped and its cap counts each request's whole reservation (TensorRT-LLM's
    GUARANTEED_NO_EVICT: E[ISL] + E[OSL] = 7,372.8 + 921.6 = 8,294.4 tokens, serve/kv_admission.py), not the
    mean context the step reads (7,833.6): 167.73 GiB of room / (8,294.4 x 35,136 B) = 618.0 a chip."""
    p = headline["systems"]["jalapeno"]["frontier"][0]
    assert p["limit"] == "kv_capacity"
    dec = p["deployment"]["decode"]
    mem = step["memory"]  # the same layout at batch 9,888 (activations move by 0.003% at 9,887.7)
    room = mem["usable_bytes"] - mem["reserve_bytes"] - mem["weights_bytes"] - mem["activation_bytes"]
    assert room / 2**30 == pytest.approx(167.73, abs=0.01)  # 216 - 8.64 - 39.18 - 0.45 GiB
    isl, osl = 0.9 * 8192, 0.9 * 1024
    per_chip = room / ((isl + osl) * MLA_KV_BYTES_PER_TOKEN)
    assert per_chip == pytest.approx(618.0, abs=0.05)
    assert p["decode_batch"] == pytest.approx(per_chip * dec["dp"], rel=1e-4)
    # the mean-context count (the cap before round 49) would hold 7,833.6 / 8,294.4 = 5.6% more
    assert p["decode_batch"] < room / ((isl + osl / 2) * MLA_KV_BYTES_PER_TOKEN) * dec["dp"] * 0.95


def test_per_kw_and_per_usd_follow_from_per_chip(headline):
    j = headline["systems"]["jalapeno"]["headline"]
    g = headline["systems"]["gb300-nvl72"]["headline"]
    # stated power and cost: Jalapeño's recomputed estimate (1,146 W, $1.426/h; the catalog rounds to
    # 1,150 W and $1.43/h), GB300 InferenceX's 2.10 kW and 2.652 $/h, chip TDPs 700 W and 1,400 W
    assert j["peak_tok_s_per_kw"]["all-in"] == pytest.approx(
        j["peak_throughput_per_chip"] / (J_ALL_IN_W / 1e3), rel=0.01
    )
    assert j["peak_tok_s_per_kw"]["chip"] == pytest.approx(j["peak_throughput_per_chip"] / 0.700, rel=1e-9)
    assert j["peak_tok_s_per_kw"]["sustained"] == pytest.approx(j["peak_throughput_per_chip"] / 0.550, rel=1e-9)
    assert j["usd_per_mtok_at_peak"] == pytest.approx(J_USD_H / (j["peak_throughput_per_chip"] * 3600 / 1e6), rel=0.01)
    assert g["peak_tok_s_per_kw"]["all-in"] == pytest.approx(g["peak_throughput_per_chip"] / 2.10, rel=1e-9)
    assert g["peak_tok_s_per_kw"]["chip"] == pytest.approx(g["peak_throughput_per_chip"] / 1.40, rel=1e-9)
    assert g["usd_per_mtok_at_peak"] == pytest.approx(2.652 / (g["peak_throughput_per_chip"] * 3600 / 1e6), rel=1e-9)
    r = headline["comparisons"]["jalapeno"]["peak_ratio"]
    per_chip = j["peak_throughput_per_chip"] / g["peak_throughput_per_chip"]
    assert r["throughput_per_chip"] == pytest.approx(per_chip)
    # per kW: the per-chip ratio times the power ratio 2.10 / 1.15 (all-in, the compare default)
    assert r["tok_s_per_kw"] == pytest.approx(per_chip * 2.10 / 1.15, rel=1e-9)
    assert r["tokens_per_usd"] == pytest.approx(per_chip * 2.652 / 1.43, rel=1e-9)


def _loglog(frontier: list[dict], x: float) -> float:
    """Throughput at interactivity ``x``, straight-line in log-log between the frontier points either side."""
    pts = sorted((p["interactivity"], p["throughput_per_chip"]) for p in frontier)
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return math.exp(math.log(y0) + math.log(x / x0) / math.log(x1 / x0) * math.log(y1 / y0))
    raise AssertionError(f"{x} tok/s/user is off the frontier")


def test_iso_interactivity_ratio_by_interpolation(headline):
    js, gs = headline["systems"]["jalapeno"]["frontier"], headline["systems"]["gb300-nvl72"]["frontier"]
    rows = headline["comparisons"]["jalapeno"]["iso_interactivity"]["throughput_per_chip"]
    for row in rows:
        assert row["ratio"] == pytest.approx(_loglog(js, row["x"]) / _loglog(gs, row["x"]), rel=1e-9)
    # the fast tier (>= 100 tok/s/user) interpolates too: it lies between the best swept point at or
    # above the floor (what `plan --min-interactivity 100` reports) and the point below it
    for name, fr in (("jalapeno", js), ("gb300-nvl72", gs)):
        tier = headline["comparisons"][name]["tiers"]["fast"]
        assert tier["status"] == "interpolated"
        at_or_above = max(p["throughput_per_chip"] for p in fr if p["interactivity"] >= 100)
        below = max(p["throughput_per_chip"] for p in fr if p["interactivity"] < 100)
        assert tier["throughput"] == pytest.approx(_loglog(fr, 100.0), rel=1e-9)
        assert at_or_above <= tier["throughput"] <= below


def _doc_table() -> dict[str, str]:
    """The 'figure | value' rows at the end of docs/audit.md §6, as quoted (text)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "audit.md").read_text(encoding="utf-8")
    section = text.split("## 6. A headline cell by hand", 1)[1].split("\n## ", 1)[0]
    table = section.split("as `compare` prints them now.**", 1)[1]
    rows = [line.strip("|").split("|") for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    return {k.strip(): v.strip() for k, v in rows[1:]}  # rows[0] is the header


def _quoted_matches(quoted: str, actual: float) -> bool:
    """True if ``actual`` rounds to the quoted text (its own decimals; thousands separators allowed)."""
    decimals = len(quoted.split(".")[1]) if "." in quoted else 0
    return abs(actual - float(quoted.replace(",", ""))) <= 0.5 * 10**-decimals * (1 + 1e-9)


def test_quoted_matches_rounding():
    # the helper itself: 14,610.24 is '14,610'; 0.7786 is '0.779' not '0.788'; 1.4218 is '1.42'
    assert _quoted_matches("14,610", 14610.24)
    assert not _quoted_matches("18,530", 18764.27)
    assert _quoted_matches("0.779", 0.77862) and not _quoted_matches("0.788", 0.77862)
    assert _quoted_matches("1.42", 1.4218) and not _quoted_matches("1.44", 1.4218)


def test_audit_doc_quotes_current_figures(headline):
    """docs/audit.md §6 says its figures are 'as printed': hold the quoted table to compare's output."""
    c = headline["comparisons"]
    actual = {
        "Jalapeño peak tok/s/chip": headline["systems"]["jalapeno"]["headline"]["peak_throughput_per_chip"],
        "GB300 peak tok/s/chip": headline["systems"]["gb300-nvl72"]["headline"]["peak_throughput_per_chip"],
        "peak ratio per chip": c["jalapeno"]["peak_ratio"]["throughput_per_chip"],
        "peak ratio per kW (all-in)": c["jalapeno"]["peak_ratio"]["tok_s_per_kw"],
        "peak ratio per $": c["jalapeno"]["peak_ratio"]["tokens_per_usd"],
        "GB300 tok/s/chip at 35 tok/s/user": next(
            r["y_b"] for r in c["jalapeno"]["iso_interactivity"]["throughput_per_chip"] if r["x"] == 35.0
        ),
        "Jalapeño fast tier (>= 100 tok/s/user)": c["jalapeno"]["tiers"]["fast"]["throughput"],
        "GB300 fast tier (>= 100 tok/s/user)": c["gb300-nvl72"]["tiers"]["fast"]["throughput"],
    }
    quoted = _doc_table()
    assert set(quoted) == set(actual), f"docs/audit.md §6 table rows {sorted(quoted)} != {sorted(actual)}"
    stale = [
        f"{k}: quoted {quoted[k]}, compare prints {v:,.4f}"
        for k, v in actual.items()
        if not _quoted_matches(quoted[k], v)
    ]
    assert not stale, (
        "docs/audit.md §6 quotes figures compare no longer prints (" + "; ".join(stale) + "): rerun "
        "`jalapeno compare --systems jalapeno,gb300-nvl72 -p fp4` and update the table and the prose that uses them"
    )
