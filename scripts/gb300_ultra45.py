"""Which Blackwell Ultra (GB300) chip differences against Blackwell (GB200) could make wide-EP decode 4-6% faster,
and does the model lack any? (docs/gap_disagg_overprediction.md, round 45 "Blackwell Ultra chip terms in decode").
Diagnosis only: nothing is fitted, written or shipped.

Part 1 (arithmetic, no data). The softmax exponential against the tensor cores and HBM per attention score.
Blackwell Ultra doubles the SFU's MUFU.EX2 rate (NVIDIA Technical Blog, "Making Softmax More Efficient with NVIDIA
Blackwell Ultra"; Verda, "GB300 NVL72 architecture", per-GPU table: 10.7 TeraExponentials/s on GB300 and B300
against 5 on GB200 and B200). Per score (one query head x one key token) a kernel spends 2·(d_qk + d_v) tensor FLOPs,
one exponential, and its share of the key/value bytes (bytes per cached token / (heads sharing it x query tokens)).
The three times per score say which unit bounds the kernel and what halving the exponential time can save: nothing
where the exponential is under both others and overlapped; at most exp/(tensor + exp) where it runs serially
between the two matrix products (the pipeline stall NVIDIA's blog describes).

Part 2 (``--tables``, about ten seconds; needs aiconfigurator-core). Measured GB300 / GB200 latency, TensorRT-LLM
1.3.0rc20 tables (same release on both, every shape timed on both): MLA decode (``generation_mla_perf``) and
prefill (``context_mla_perf``), dense GEMMs by row band (``gemm_perf``, DeepSeek-V3 shapes) and the routed-expert
layer (``moe_perf``, DeepSeek-V3 shape, balanced routing) by EP width and token band. Beside the GEMM ratio, the
model's own: the same rows priced by the calibrated roofline (cost/roofline.op_times, data/calibration/*.toml).

Part 3 (no data). cost/roofline.POWER_CLOCK: the dense clock ratio each rack's system file gives (Chip.dense_clock_ratio)
and hence what the switch does to GB300 and GB200 decode.

Usage: python scripts/gb300_ultra45.py [--tables]
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

#: SFU exponential rate, exponentials/s. Verda, "GB300 NVL72 architecture" (verda.com/blog/gb300-nvl72-architecture,
#: read 2026), per-GPU table row "Attention acceleration (SFU EX2)": GB300 / B300 10.7 T, GB200 / B200 5 T; NVIDIA's
#: "Inside NVIDIA Blackwell Ultra" (Aug 2025) and "Making Softmax More Efficient with NVIDIA Blackwell Ultra" blogs:
#: SFU throughput doubled for attention ("2X attention-layer acceleration").
EXP_PER_S = {"gb300-nvl72": 10.7e12, "gb200-nvl72": 5.0e12}
#: DeepSeek-V3/R1 MLA (HF config): kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128, 128 heads.
#: Absorbed decode: scores over the 576-wide latent (512 + 64), values the 512-wide latent; prefill: d_qk 192, d_v 128.
MLA_DECODE_D = (576, 512)
MLA_PREFILL_D = (192, 128)
#: FP8 latent KV cache bytes per token per layer: 576 one-byte elements (the scale is per tensor in TensorRT-LLM's
#: FP8 KV cache), the MLA decode kernel's streamed bytes per cached token
MLA_KV_BYTES = 576.0


def per_score_s(
    d_qk: int,
    d_v: int,
    tensor_flop_per_s: float,
    exp_per_s: float,
    kv_bytes: float,
    sharers: float,
    hbm_bytes_per_s: float,
) -> dict:
    """Seconds per attention score (one query head x one key token) on the tensor cores, the SFU and HBM.

    ``kv_bytes``: bytes of one cached token, read once for ``sharers`` scores (heads sharing the latent x query
    tokens of a sequence; 0 for prefill, whose keys come from on-chip tiles: no HBM term). Returns
    {"tensor", "exp", "hbm"}, s.

    >>> t = per_score_s(576, 512, 5e15, 5e12, 576.0, 128, 8e12)
    >>> round(t["tensor"] * 1e12, 4), round(t["exp"] * 1e12, 4), round(t["hbm"] * 1e12, 4)
    (0.4352, 0.2, 0.5625)

    Raises:
        ValueError: a rate that is not positive.
    """
    if min(tensor_flop_per_s, exp_per_s, hbm_bytes_per_s) <= 0:
        raise ValueError("per_score_s: tensor_flop_per_s, exp_per_s and hbm_bytes_per_s must be > 0")
    hbm = kv_bytes / (sharers * hbm_bytes_per_s) if sharers > 0 else 0.0
    return {"tensor": 2.0 * (d_qk + d_v) / tensor_flop_per_s, "exp": 1.0 / exp_per_s, "hbm": hbm}


def exp_saving(t200: dict, t300: dict) -> tuple[float, float]:
    """(overlapped, serial) GB300 / GB200 time per score with only the exponential rate changed: overlapped =
    max of the three terms, serial = max(tensor + exp, hbm) (exponential between the two products, nothing hides it).

    >>> exp_saving({"tensor": 1.0, "exp": 0.5, "hbm": 2.0}, {"tensor": 1.0, "exp": 0.25, "hbm": 2.0})
    (1.0, 1.0)
    >>> exp_saving({"tensor": 1.0, "exp": 1.0, "hbm": 0.0}, {"tensor": 1.0, "exp": 0.5, "hbm": 0.0})
    (1.0, 0.75)
    """

    def over(t):
        return max(t.values())

    def serial(t):
        return max(t["tensor"] + t["exp"], t["hbm"])

    return over(t300) / over(t200), serial(t300) / serial(t200)


def sfu_table() -> pd.DataFrame:
    """Part 1: per-score times on GB200 (FP8 tensor 5 PF for decode, BF16 2.5 PF for prefill; 8 TB/s) and the
    GB300 / GB200 ratio with only the SFU rate changed, for DeepSeek-R1's MLA decode (128 heads: attention DP; 16:
    attention TP8) at 1 and 4 query tokens (MTP3), and its prefill."""
    rows = []
    cases = [("decode", MLA_DECODE_D, 5e15, MLA_KV_BYTES, h, q) for h in (128, 16) for q in (1, 4)]
    cases.append(("prefill", MLA_PREFILL_D, 2.5e15, 0.0, 128, 1))
    for kind, (dq, dv), flops, kv, heads, q in cases:
        t = {s: per_score_s(dq, dv, flops, e, kv, heads * q if kv else 0, 8e12) for s, e in EXP_PER_S.items()}
        ov, se = exp_saving(t["gb200-nvl72"], t["gb300-nvl72"])
        g = t["gb200-nvl72"]
        rows.append(
            {
                "kernel": kind,
                "heads": heads,
                "q_tokens": q,
                "tensor_ps": g["tensor"] * 1e12,
                "exp_ps": g["exp"] * 1e12,
                "hbm_ps": g["hbm"] * 1e12,
                "bound": max(g, key=g.get),
                "ratio_overlapped": ov,
                "ratio_serial": se,
            }
        )
    return pd.DataFrame(rows).round(3)


def _ratio(family: str, name: str, keys: list[str]) -> pd.DataFrame:
    from jalapeno.fit.kernel_tables import load_table

    lat = {}
    for s in ("gb300", "gb200"):
        df, _ = load_table(s, family, name)
        lat[s] = df.groupby(keys).latency.min()
    j = pd.concat(lat, axis=1).dropna().reset_index()
    return j.assign(r=j.gb300 / j.gb200)


def band(x: pd.Series, edges: list[float]) -> pd.Series:
    """Interval labels of ``x`` over ``edges`` (right-closed), as strings.

    >>> band(pd.Series([1, 100]), [0, 16, 128]).tolist()
    ['(0, 16]', '(16, 128]']
    """
    return pd.cut(x, edges).astype(str).str.replace(".0", "", regex=False)


#: DeepSeek-V3 dense GEMMs of one layer (n, k): fused q_a + kv_a down-projections, q_b up-projection, o_proj,
#: shared expert up (gate + up) and down
DS_GEMMS = ((2112, 7168), (24576, 1536), (7168, 16384), (4096, 7168), (7168, 2048))
M_EDGES = [0, 16, 64, 128, 256, 512, 2048]


def model_gemm_ratio(rows: pd.DataFrame) -> pd.Series:
    """The calibrated roofline's GB300 / GB200 time for each (m, n, k) row of ``rows`` (fp8_block GEMM, FP8 in,
    one launch), priced per chip with its calibrated efficiency set."""
    from jalapeno.cost.optable import OpBuilder
    from jalapeno.cost.roofline import op_times
    from jalapeno.specs.catalog import load_efficiency, load_system

    out = {}
    for s in ("gb300-nvl72", "gb200-nvl72"):
        chip, eff = load_system(s).chip, load_efficiency(s)
        t = np.empty(len(rows))
        for (n, k), idx in rows.groupby(["n", "k"]).groups.items():
            ob = OpBuilder(len(idx))
            ob.gemm("g", "fp8", rows.loc[idx, "m"].to_numpy(float), float(k), float(n), 1.0, 1.0, key="fp8_block")
            t[rows.index.get_indexer(idx)] = op_times(ob.build()[0], chip, eff).time_s.ravel()
        out[s] = t
    return pd.Series(out["gb300-nvl72"] / out["gb200-nvl72"], index=rows.index)


def kernel_tables() -> dict[str, pd.DataFrame]:
    """Part 2: measured GB300 / GB200 latency medians by family and band (see the module docstring)."""
    res = {}
    keys = ["mla_dtype", "kv_cache_dtype", "num_heads", "batch_size", "isl", "tp_size", "step"]
    for name in ("generation_mla_perf", "context_mla_perf"):
        j = _ratio("mla", name, keys)
        j = j.assign(heads=j.num_heads.where(j.num_heads.isin([16, 128]), -1))
        g = j[j.heads > 0].groupby(["kv_cache_dtype", "heads"]).r
        res[name] = pd.DataFrame(
            {"n": g.size(), "median": g.median(), "p10": g.quantile(0.1), "p90": g.quantile(0.9)}
        ).round(3)
    j = _ratio("gemm", "gemm_perf", ["gemm_dtype", "m", "n", "k"])
    j = j[(j.gemm_dtype == "fp8_block") & j[["n", "k"]].apply(tuple, axis=1).isin(DS_GEMMS) & (j.m <= 2048)]
    j = j.reset_index(drop=True)
    j = j.assign(model=model_gemm_ratio(j), m_band=band(j.m, M_EDGES))
    g = j.groupby("m_band", sort=False)
    res["gemm_fp8_block"] = pd.DataFrame({"n": g.size(), "measured": g.r.median(), "model": g.model.median()}).round(3)
    from jalapeno.fit.kernels import MOE_KEYS  # the columns that name one MoE configuration (fit/moe_kernels.py)

    j = _ratio("moe", "moe_perf", ["kernel_source", *MOE_KEYS])
    j = j[
        (j.hidden_size == 7168)
        & (j.inter_size == 2048)
        & (j.num_experts == 256)
        & (j.distribution == "balanced")
        & j.moe_ep_size.isin([8, 16, 32])
    ]
    edges = [0, 64, 256, 1024, 8192]
    j = j.assign(tokens=band(j.num_tokens, edges))
    res["moe"] = (
        j.groupby(["moe_dtype", "kernel_source", "moe_ep_size", "tokens"])
        .r.median()
        .unstack("tokens")
        .round(3)[band(pd.Series(edges[1:]), edges).tolist()]
    )
    return res


#: GB300 DEP32 decode-step shares of the model's terms (gb_trt_dep_terms44.py --steps, medians over the TensorRT-LLM
#: DEP32 rows; docs/gap_disagg_overprediction.md round 44): routed experts, MLA attention, other GEMMs, all-to-all
DEP32_SHARES = {"moe": 0.169, "attention": 0.118, "gemm": 0.253, "a2a": 0.199}
#: measured GB300 / GB200 kernel ratios at DEP32 decode (Part 2 and round 27), (most, least) GB300 gain: NVFP4
#: CUTLASS EP32 experts 0.985-0.991, MLA decode 0.998 (128 heads, FP8 KV), block-FP8 GEMMs 0.967 (128-256 rows) -
#: 0.995 (64-128), DeepEP all-to-all 0.981-0.989 (fit/kernel_tables.A2A_FABRIC_SIBLING)
DEP32_KERNEL_RATIOS = (
    {"moe": 0.985, "attention": 0.998, "gemm": 0.967, "a2a": 0.981},
    {"moe": 0.991, "attention": 0.998, "gemm": 0.995, "a2a": 0.989},
)


def step_ratio(shares: dict, ratios: dict) -> float:
    """GB300 / GB200 decode step when each term of share ``shares[t]`` (fractions of the step) runs at ``ratios[t]``
    and the rest of the step (1 - sum of shares) is unchanged.

    >>> round(step_ratio({"a": 0.5}, {"a": 0.9}), 3)
    0.95

    Raises:
        ValueError: shares summing over 1, or a term with a share and no ratio.
    """
    if sum(shares.values()) > 1.0 + 1e-9 or set(shares) - set(ratios):
        raise ValueError("step_ratio: shares must sum to <= 1 and every term with a share needs a ratio")
    return 1.0 - sum(f * (1.0 - ratios[t]) for t, f in shares.items())


def power_clock_rows() -> pd.DataFrame:
    """Part 3: each rack's TDP and Chip.dense_clock_ratio, and what cost/roofline.POWER_CLOCK does with it."""
    from jalapeno.cost import roofline
    from jalapeno.specs.catalog import load_system

    rows = []
    for s in ("gb300-nvl72", "gb200-nvl72"):
        c = load_system(s).chip
        r = c.dense_clock_ratio
        rows.append(
            {
                "system": s,
                "tdp_w": c.tdp_w,
                "dense_clock_ratio": r,
                "power_clock_on": roofline.POWER_CLOCK,
                "effect": "none (ratio 1: compute unchanged)"
                if r == 1.0
                else f"compute / {r} at eta >= {roofline.DENSE_UTILISATION}",
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    pd.set_option("display.width", 200)
    print("== 1. Per attention score on GB200 (ps) and GB300 / GB200 with only the SFU rate doubled")
    print(sfu_table().to_string(index=False))
    lo, hi = (step_ratio(DEP32_SHARES, r) for r in DEP32_KERNEL_RATIOS)
    print(
        f"\n== 2b. DEP32 decode step GB300 / GB200 from the measured kernel ratios alone: {lo:.3f} - {hi:.3f} "
        "(matched runs 0.936 - 0.959)"
    )
    print("\n== 3. cost/roofline.POWER_CLOCK on the two racks")
    print(power_clock_rows().to_string(index=False))
    if "--tables" in sys.argv[1:]:
        for k, v in kernel_tables().items():
            print(f"\n== 2. measured GB300 / GB200, TensorRT-LLM 1.3.0rc20 {k}")
            print(v.to_string())


if __name__ == "__main__":
    main()
