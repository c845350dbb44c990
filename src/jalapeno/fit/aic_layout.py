"""How an aggregated aiconfigurator ``silicon_sample.csv`` row's parallel sizes map to a layout.

The sample's writer stores some runs' sizes in forms that do not name the chips the run used;
:func:`aic_agg_layout` undoes them, each convention checked on the rows whose id also names the
run (read by fit/validate.load_aiconfigurator).
"""

from __future__ import annotations

import re


def aic_agg_layout(tp: int, dp: int | None, moe_tp: int | None, moe_ep: int | None,
                   rid: str) -> tuple[int, int, int, str]:
    """(attention TP, attention DP, MoE EP, note) of an aggregated ``silicon_sample.csv`` row.

    The row's ``tp_size`` / ``attention_dp_size`` / ``moe_tp_size`` / ``moe_ep_size`` are read as
    written, except for two writer conventions of aiconfigurator-core 0.12.0's sample, each checked
    on the rows that carry both the fields and an id naming the run:

    1. Inflated fields: ``moe_tp == moe_ep == k >= 2`` and ``tp * dp == k * k`` (333 agg rows). 194 of
       them name their run in the id, all as ``tp{k}_ep{k}`` (B200, H200; k = 2, 4, 8); of the 135
       without a named run (``..._cfgNNN`` ids; B200, B300, H200) 62 repeat the measured TPOT of a
       named one at the same system and lengths. The run
       used k chips, MoE EP k (whole experts), attention TP k, or attention DP k where the tp field
       is 1 (the writer multiplied the attention degree by the MoE one). A row whose id names a
       run of ``tp * dp`` chips keeps its fields (H100 TRT-LLM ``..._tp4_epnone``: TP4 with MoE
       TP2 x EP2, a layout TensorRT-LLM runs; Qwen3-235B FP8 does not fit 2 H100s).
    2. vLLM data-parallel attention: ``moe_tp * moe_ep > tp`` and no ``attention_dp_size`` (H200
       Qwen3-235B vLLM 0.12.0: tp 1 with moe_tp 2 or 4; tp 2 with moe_tp 4). The MoE layers span
       more chips than attention, so attention runs ``dp = moe_tp * moe_ep / tp`` data-parallel
       replicas (vLLM's data-parallel deployment: the expert layers form one DP x TP tensor-parallel
       group unless expert parallelism is enabled; docs.vllm.ai "Data Parallel Deployment").

    Otherwise an id naming another run (``_tp{n}[_ep{m}]``) than ``tp * dp`` wins, as before.

    Raises:
        TypeError: ``tp`` is missing (the caller skips the row).
    """
    dp1 = dp or 1
    m_tp = re.search(r"_tp(\d+)(?:_ep(\d+))?", rid)
    n_id = int(m_tp.group(1)) if m_tp else None
    if moe_tp and moe_ep and moe_tp == moe_ep >= 2 and tp * dp1 == moe_tp * moe_ep and n_id in (None, moe_ep):
        k = moe_ep
        tp_k, dp_k = (1, k) if tp == 1 else (k, 1)
        return tp_k, dp_k, k, (f"fields tp={tp} dp={dp1} moe_tp={moe_tp} moe_ep={moe_ep} are the inflated form "
                               f"of a {k}-chip run: used attention TP{tp_k} DP{dp_k}, MoE EP{k}")
    moe_world = (moe_tp or 1) * (moe_ep or 1)
    if dp is None and moe_world > tp and moe_world % tp == 0:
        return tp, moe_world // tp, moe_ep or 1, (f"moe_tp={moe_tp} moe_ep={moe_ep} span more chips than tp={tp}: "
                                                 f"attention DP{moe_world // tp} (vLLM data parallelism)")
    ep = moe_ep or 1
    if m_tp and tp * dp1 != n_id:
        # some rows store sizes inflated against the run their id names (id tp8_ep8 with tp_size 64): trust the id
        n = n_id
        ep_id = int(m_tp.group(2)) if m_tp.group(2) else min(ep, n)
        return n, 1, ep_id, f"fields tp={tp} dp={dp1} ep={ep} disagree with the id: used TP{n} EP{ep_id}"
    return tp, dp1, ep, ""
