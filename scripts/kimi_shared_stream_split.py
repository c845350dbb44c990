"""Kimi K2.5 decode steps decomposed op group by op group, with a hand count of the bytes each reads,
and the shared expert the engine overlaps (issue 18, round 26, kimi26; docs/gap_aic_itl.md "Kimi K2.5
too slow on every system (round 26)").

For four steps — B300 vLLM TP8 at 4 sequences and TP4 at 64, GB200 TensorRT-LLM TP8 EP8 at 1 and 48
sequences per worker — prints the model's time per op group (attention, routed experts, shared expert,
router, other ops, collectives, per-step fixed cost), the shared-expert time vLLM's auxiliary stream hides
(cost/shared_stream.py; TensorRT-LLM's profile is priced without it), and the weight bytes per GPU per
step: the model's (the ``fp4`` preset: MLA projections and shared expert FP8) against a hand count of
NVIDIA's checkpoint from its config.json (self_attn BF16, every other Linear NVFP4: 4 bits + one FP8
scale per 16 = 0.5625 B per weight; router and LM head BF16), next to the measured TPOT of the
aiconfigurator rows at that layout and load (TPOT includes the prompt work the decoders wait out).

Run: python scripts/kimi_shared_stream_split.py   (a few seconds)
"""

from __future__ import annotations

import json
from pathlib import Path

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost, step_overhead
from jalapeno.deploy.layout import Layout
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

CFG = Path(__file__).resolve().parent.parent / "src" / "jalapeno" / "data" / "models" / "kimi-k2.5.json"
NVFP4_B = 0.5625  # 4-bit E2M1 + one FP8 E4M3 scale per 16 weights (NVFP4 group 16: the checkpoint's config.json)

#: (label, system, stack, layout, sequences per worker, context, measured TPOT ms and its rows)
STEPS = (
    (
        "B300 vLLM TP8, 4 seqs",
        "b300",
        "vllm+ar_rms",
        Layout(tp=8, ep=1),
        4,
        1536,
        "6.86 / 7.30 (c4 1k1k: aic kimik2_5_b300_vllm_fp4_agg_1024x1024_c4_cfg814, v0.19.0; *_c4_tp8_0_ep1_0_47, v0.17.0)",
    ),
    (
        "B300 vLLM TP4, 64 seqs",
        "b300",
        "vllm+ar_rms",
        Layout(tp=4, ep=1),
        64,
        1536,
        "22.08 (c64 1k1k: aic kimik2_5_b300_vllm_fp4_agg_1024x1024_c64_cfg813, v0.19.0)",
    ),
    (
        "GB200 TRT-LLM TP8 EP8, 1 seq",
        "gb200-nvl72",
        "trtllm",
        Layout(tp=8, ep=8),
        1,
        1536,
        "5.32 / 5.47 (c4 on 4 workers, 1k1k / 8k1k, TRT-LLM 1.1.0-dev.2)",
    ),
    (
        "GB200 TRT-LLM TP8 EP8, 48 seqs",
        "gb200-nvl72",
        "trtllm",
        Layout(tp=8, ep=8),
        48,
        1536,
        "11.70 (c192 on 4 workers, 1k1k, TRT-LLM 1.1.0-dev.2)",
    ),
)


def group(op: str) -> str:
    """The op group a step's op belongs to (the table's columns)."""
    if op.startswith("attn."):
        return "attention"
    if op == "moe.experts":
        return "routed"
    if op.startswith("moe.shared_expert."):
        return "shared"
    if op == "moe.router":
        return "router"
    return "other"


def hand_bytes(cfg: dict, tp: int, routed_per_layer: float) -> dict:
    """Weight bytes per GPU per step of NVIDIA's NVFP4 checkpoint at attention TP ``tp`` (MoE sharded over
    the same GPUs), by hand from config.json; ``routed_per_layer``: the routed-expert bytes per layer the
    model reads (its distinct-expert count, the same format: the hand count checks the other terms)."""
    h, nl, q, kv, rope = (
        cfg["hidden_size"],
        cfg["num_hidden_layers"],
        cfg["q_lora_rank"],
        cfg["kv_lora_rank"],
        cfg["qk_rope_head_dim"],
    )
    nh, dn, dv, ffn = (
        cfg["num_attention_heads"],
        cfg["qk_nope_head_dim"],
        cfg["v_head_dim"],
        cfg["moe_intermediate_size"],
    )
    moe_layers = nl - cfg["first_k_dense_replace"]
    attn = 2 * (h * (q + kv + rope) + (q * nh * (dn + rope) + kv * nh * (dn + dv) + nh * dv * h) / tp)
    return {
        "attention (BF16)": nl * attn,
        "shared expert (NVFP4)": moe_layers * 3 * h * ffn * NVFP4_B / tp,
        "router (BF16)": moe_layers * h * cfg["n_routed_experts"] * 2,
        "dense layer 0 (NVFP4)": 3 * h * cfg["intermediate_size"] * NVFP4_B / tp,
        "LM head (BF16)": cfg["vocab_size"] * h * 2 / tp,
        "routed (model's count)": moe_layers * routed_per_layer,
    }


def main() -> None:
    cfg = json.loads(CFG.read_text())
    model, prec = load_model("kimi-k2.5"), get_precision("fp4")
    for label, system, stack, lay, seqs, ctx, measured in STEPS:
        pricer = load_pricer(system, stack=stack)
        sc = step_cost(model, pricer, lay, prec, Batch.make(decode_seqs=seqs, decode_ctx=ctx))
        rows = sc.op_rows()
        t, wb = {}, {}
        for r in rows:
            g = group(r["op"])
            t[g] = t.get(g, 0.0) + r["time_s"]
            wb[g] = wb.get(g, 0.0) + r["weight_bytes"]
        coll = sum(c["time_s"] for c in sc.collective_rows())
        fixed = step_overhead(pricer.efficiency, lay)
        hidden = sum(t.values()) + coll + fixed - sc.time_s(0)
        print(f"\n{label}: step {sc.time_s(0) * 1e3:.2f} ms (measured TPOT {measured})")
        print(
            "  model, ms: "
            + ", ".join(f"{g} {t.get(g, 0) * 1e3:.2f}" for g in ("attention", "routed", "shared", "router", "other"))
            + f", collectives {coll * 1e3:.2f}, per-step fixed {fixed * 1e3:.2f}; shared expert hidden on the"
            f" aux stream {hidden * 1e3:.2f}"
        )
        n_moe = model.num_layers - len(model.dense_layers)
        hb = hand_bytes(cfg, lay.tp, wb.get("routed", 0.0) / n_moe)
        print(
            "  weight GB per GPU per step, model: "
            + ", ".join(f"{g} {wb.get(g, 0) / 1e9:.2f}" for g in ("attention", "routed", "shared", "router", "other"))
        )
        print("  hand count (checkpoint): " + ", ".join(f"{k} {v / 1e9:.2f}" for k, v in hb.items()))


if __name__ == "__main__":
    main()
