"""Mutation guards: hand-derived checks, through the CLI only, that kill specific one-line bugs.

Each test recomputes a CLI ``--json`` figure from first principles (formula and source in the
comments) using only catalog numbers read from other CLI outputs (``hardware show --json``,
``step --json``) or from the tiny hand-made fixtures written below. No expected value is copied
from the program's output. ``scripts/mutants.py`` applies the mutants and checks these fail:

a. ring all-reduce bandwidth term halved (cost/collectives.py)
b. hierarchical all-to-all levels summed instead of max'ed (cost/collectives.py)
c. MTP draft cost dropped (cost/mtp_draft.py)
d. experts per rank floor(E/ep) instead of ceil (deploy/memory_fit.py, cost/ops.py)
e. TP and EP swapped in the weight memory fit (deploy/memory_fit.py)
"""

from __future__ import annotations

import json
import math

import pytest
from cli_runner import run
from tiny_fixtures import model_config, system_toml


def cli_json(capsys, *args: str):
    """Run ``jalapeno ARGS --json`` in-process and return the parsed output (exit 0 asserted)."""
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def level(hw: dict, name: str) -> dict:
    """The link level called ``name`` of a ``hardware show --json`` document."""
    return next(lv for lv in hw["levels"] if lv["name"] == name)


# ---------------------------------------------------------------- a. ring all-reduce

def test_ring_all_reduce_time_spread_h200(capsys):
    """Ring all-reduce of 8 chips spread over 8 H200 nodes (every byte on the scale-out NICs).

    Thakur, Rabenseifner & Gropp (IJHPCA 2005), ring all-reduce on g ranks, M bytes per rank:
        T = 2(g-1)·alpha + 2(g-1)/g · M / B   (+ one software launch, collective_launch_s)
    with B = per-direction NIC bandwidth x scale_out_link_fraction (scale-out level; the
    module docstring of cost/collectives.py). For M = 1 GB the ring beats the double binary tree
    (2·M/B bandwidth term), so the CLI must report algorithm "ring".
    """
    hw = cli_json(capsys, "hardware", "show", "h200")
    eff, out = hw["efficiency"], level(hw, "cluster")
    g, m = 8, 1e9
    # NCCL's size ramp (docs/collectives.md) on the NIC's asymptotic fraction
    bw = out["bandwidth_bytes_per_s"] * eff["scale_out_link_fraction"] / (
        1 + (eff["link_half_bytes"] / m) ** eff["link_shape"])
    expected = 2 * (g - 1) * out["latency_s"] + 2 * (g - 1) / g * m / bw + eff["collective_launch_s"]
    r = cli_json(capsys, "collective", "-s", "h200", "--op", "all_reduce", "-g", str(g), "-b", "1e9",
                 "--placement", "spread")["results"][0]
    assert r["algorithm"] == "ring"
    assert r["time_s"] == pytest.approx(expected, rel=1e-9)
    # bus bandwidth (nccl-tests convention): algbw · 2(g-1)/g
    assert r["busbw_bytes_per_s"] == pytest.approx(m / expected * 2 * (g - 1) / g, rel=1e-9)


def test_two_shot_beats_ring_inside_nvl72(capsys):
    """8 chips inside one NVL72 domain (scale-up, switched), 1 GB per chip.

    Two-shot (the engines' custom kernel): 2·alpha + 2(g-1)/g·M/(B·eta_c(M)); in-switch:
    2·alpha + M/(B·eta_n(M)), with eta(M) = fraction / (1 + (half/M)^shape) per family
    (docs/collectives.md). The ring pays 2(g-1) hops at NCCL's own ramp and must not be chosen;
    the time is min(two-shot, in-switch) + launch.
    """
    hw = cli_json(capsys, "hardware", "show", "gb200-nvl72")
    eff, lv = hw["efficiency"], hw["levels"][0]
    assert lv["scope"] == "scale_up" and lv["chips"] >= 8
    g, m, a = 8, 1e9, lv["latency_s"]

    def eta(frac, half, shape):
        return frac / (1 + (half / m) ** shape)

    b = lv["bandwidth_bytes_per_s"]
    two_shot = 2 * a + 2 * (g - 1) / g * m / (b * eta(eff["custom_ar_fraction"], eff["custom_ar_half_bytes"],
                                                       eff["custom_ar_shape"]))
    cands = [two_shot]
    if lv["in_network_reduction"]:
        cands.append(2 * a + m / (b * eta(eff["in_switch_fraction"], eff["in_switch_half_bytes"],
                                          eff["in_switch_shape"])))
    r = cli_json(capsys, "collective", "-s", "gb200-nvl72", "--op", "all_reduce", "-g", "8", "-b", "1e9")["results"][0]
    assert r["algorithm"] != "ring"
    assert r["time_s"] == pytest.approx(min(cands) + eff["collective_launch_s"], rel=1e-9)


# ---------------------------------------------------------------- b. hierarchical all-to-all

@pytest.mark.parametrize("group", [16, 32])
def test_hierarchical_all_to_all_h200(capsys, group):
    """All-to-all over 16/32 H200 chips packed 8 per NVLink node, 1e8 bytes per chip.

    Each rank sends M/g to every peer; (s-1)/g·M goes to its s-1 node peers over NVLink and
    (g-s)/g·M to the other nodes over the NICs, on separate links and concurrently, so
        T = alpha_out + max((s-1)/g·M/B_in, (g-s)/g·M/B_out) + launch
    (cost/collectives.py module docstring; fat-tree outer level: one hop of latency).
    """
    hw = cli_json(capsys, "hardware", "show", "h200")
    eff, node, cl = hw["efficiency"], level(hw, "node"), level(hw, "cluster")
    s, m = node["chips"], 1e8
    b_in = node["bandwidth_bytes_per_s"] * eff["all_to_all_fraction"]
    b_out = cl["bandwidth_bytes_per_s"] * eff["scale_out_link_fraction"]
    t_in, t_out = (s - 1) / group * m / b_in, (group - s) / group * m / b_out
    expected = cl["latency_s"] + max(t_in, t_out) + eff["collective_launch_s"]
    r = cli_json(capsys, "collective", "-s", "h200", "--op", "all_to_all", "-g", str(group), "-b", "1e8")["results"][0]
    assert r["algorithm"] == "hierarchical" and r["level"] == "cluster"
    assert r["time_s"] == pytest.approx(expected, rel=1e-9)


# ---------------------------------------------------------------- tiny fixtures (c, d, e)

# A 2-layer Mixtral-shaped MoE in BF16: h 1024, 8 heads x 128 (MHA), 6 experts (top-2) of
# intermediate 2048, one shared expert of the same size, vocab 1000, untied head.
MOE_H, MOE_LAYERS, MOE_HEADS, MOE_D, MOE_I, MOE_E, MOE_VOCAB = 1024, 2, 8, 128, 2048, 6, 1000


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Paths of the tiny system (tests/tiny_fixtures.py, every overhead 0) and two tiny models."""
    d = tmp_path_factory.mktemp("guards")
    (d / "sys.toml").write_text(system_toml(80))
    mtp = model_config() | {"num_nextn_predict_layers": 1}  # the 2-layer Llama with one MTP module
    (d / "mtp.json").write_text(json.dumps(mtp))
    moe = {"model_type": "mixtral", "hidden_size": MOE_H, "num_hidden_layers": MOE_LAYERS,
           "num_attention_heads": MOE_HEADS, "num_key_value_heads": MOE_HEADS, "intermediate_size": MOE_I,
           "num_local_experts": MOE_E, "num_experts_per_tok": 2, "n_shared_experts": 1,
           "vocab_size": MOE_VOCAB, "tie_word_embeddings": False, "max_position_embeddings": 4096}
    (d / "moe.json").write_text(json.dumps(moe))
    return {"system": str(d / "sys.toml"), "mtp": str(d / "mtp.json"), "moe": str(d / "moe.json")}


# ---------------------------------------------------------------- c. MTP draft cost

ISL, OSL, K, ALPHA = 1024, 1024, 3, 0.8


def _step_time(capsys, tiny, batch: int, ctx: int) -> float:
    """``jalapeno step`` time of the tiny MTP model at ``batch`` decode sequences, query length 1."""
    return cli_json(capsys, "step", "-s", tiny["system"], "-m", tiny["mtp"], "--tp", "1", "--dp", "1", "--ep", "1",
                    "-b", str(batch), "-c", str(ctx))["step_time_s"]


def _mtp_bounds(capsys, tiny, pt: dict, upper: bool) -> tuple[float, float | None]:
    """Bracket of the MTP step time tau at the point's decode batch B, derived by hand.

    DESIGN (cost/mtp_draft.py): an MTP step verifies 1+k rows per sequence, raw = step(B, query
    1+k), and adds k draft passes of the MTP module: each runs one decoder layer, the shared LM
    head and the 2h -> h projection over at most the verify's rows. With L = 2 layers a pass
    reads at least half of what a step of 2 layers + head reads (one layer + the head) and at most
    all of it (2h·h projection weights < one layer's q,k,v,o + FFN), so with the tiny system's
    zero step overhead raw + k·(raw − overhead)/2 <= tau <= (1 + k)·raw. The step time grows with
    rows and sequences, so step(floor B, 1) <= raw <= step(ceil(B)·(1+k), 1) (same rows, more KV
    reads).
    """
    hw = cli_json(capsys, "hardware", "show", tiny["system"])
    oh = hw["efficiency"]["step_overhead_s"]
    layers = cli_json(capsys, "models", "show", tiny["mtp"])["num_layers"]
    b, ctx = pt["decode_batch"], ISL + OSL // 2  # fixed lengths: mean context ISL + OSL/2

    assert layers == 2
    raw_lo = _step_time(capsys, tiny, math.floor(b), ctx)
    lo = raw_lo + K * (raw_lo - oh) / layers
    hi = (1 + K) * _step_time(capsys, tiny, math.ceil(b) * (1 + K), ctx) if upper else None
    return lo, hi


def _check_tpot(pt: dict) -> None:
    # tokens per MTP step a = (1 − α^(k+1))/(1 − α) (geometric acceptance), TPOT = tau/a
    a = (1 - ALPHA ** (K + 1)) / (1 - ALPHA)
    assert pt["deployment"]["mtp"]["tokens_per_step"] == pytest.approx(a, rel=1e-12)
    assert pt["tpot_s"] == pytest.approx(pt["step_time_s"] / a, rel=1e-9)


MTP_ARGS = ["--isl", str(ISL), "--osl", str(OSL), "--fixed-lengths", "-c", "8", "--mtp", str(K),
            "--mtp-acceptance", str(ALPHA)]


def test_mtp_draft_cost_disaggregated(capsys, tiny):
    pt = cli_json(capsys, "predict", "-s", tiny["system"], "-m", tiny["mtp"], "--prefill", "tp=1,workers=1",
                  "--decode", "tp=1,workers=1", *MTP_ARGS)
    lo, hi = _mtp_bounds(capsys, tiny, pt, upper=True)
    assert lo <= pt["step_time_s"] <= hi
    _check_tpot(pt)


def test_mtp_draft_cost_aggregated(capsys, tiny):
    # aggregated: tau mixes decode-only steps and steps with a prefill chunk, both >= step(B, 1)
    pt = cli_json(capsys, "predict", "-s", tiny["system"], "-m", tiny["mtp"], "--tp", "1", *MTP_ARGS)
    lo, _ = _mtp_bounds(capsys, tiny, pt, upper=False)
    assert pt["step_time_s"] >= lo
    _check_tpot(pt)


# ---------------------------------------------------------------- d/e. MoE weights per chip

def moe_weight_bytes(tp: int, dp: int, ep: int) -> float:
    """Resident BF16 weight bytes per chip of the tiny MoE, by hand (deploy/memory_fit.py docstring).

    Per layer: attention q,k,v,o = 4·h·H·d split over TP (MHA: each TP rank keeps H/tp KV heads);
    ceil(E/ep) routed experts of 3·h·I, each split moe_tp = tp·dp/ep ways; the shared expert
    3·h·I over TP; the router h·E replicated. Embedding and LM head V·h each over TP.
    Everything 2 bytes (BF16, router included).
    """
    h, i = MOE_H, MOE_I
    attn = 4 * h * MOE_HEADS * MOE_D / tp
    experts = math.ceil(MOE_E / ep) * 3 * h * i / (tp * dp // ep)
    shared = 3 * h * i / tp
    router = h * MOE_E
    per_layer = attn + experts + shared + router
    return 2.0 * (MOE_LAYERS * per_layer + 2 * MOE_VOCAB * h / tp)


@pytest.mark.parametrize("tp,dp,ep", [(1, 4, 4), (2, 2, 4), (4, 1, 4), (2, 2, 2), (1, 8, 4), (4, 2, 4)])
def test_moe_weight_bytes_per_chip(capsys, tiny, tp, dp, ep):
    """weights_bytes of ``step --json`` against :func:`moe_weight_bytes` (6 experts: ep=4 keeps 2 per rank)."""
    d = cli_json(capsys, "step", "-s", tiny["system"], "-m", tiny["moe"], "--tp", str(tp), "--dp", str(dp),
                 "--ep", str(ep), "-b", "64", "-c", "100")
    assert d["memory"]["weights_bytes"] == pytest.approx(moe_weight_bytes(tp, dp, ep), rel=1e-12)


def test_moe_expert_weights_read_per_step(capsys, tiny):
    """The routed-expert op reads every expert on the busiest rank at a large batch.

    1024 tokens x top-2 over 6 experts: the chance an expert is untouched is (1 − 2/6)^1024
    (~1e-180), so the rank touches all ceil(6/4) = 2 of its experts: 2 x 3·h·I x 2 B x 2 layers.
    """
    d = cli_json(capsys, "step", "-s", tiny["system"], "-m", tiny["moe"], "--tp", "1", "--dp", "4", "--ep", "4",
                 "-b", "1024", "-c", "100")
    w = sum(o["weight_bytes"] for o in d["ops"] if o["op"] == "moe.experts")
    assert w == pytest.approx(2 * 3 * MOE_H * MOE_I * 2 * MOE_LAYERS, rel=1e-9)


def test_every_mutant_of_the_mutation_script_still_applies():
    # scripts/mutants.py exits 2 when a row's old text has moved (a refactor); catch that in CI,
    # not at the next manual run: each row's old text occurs exactly once in its file.
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("mutants", root / "scripts" / "mutants.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, rel, old, _new in mod.MUTANTS:
        assert (root / rel).read_text().count(old) == 1, f"{name}: its old text is not once in {rel}"
