"""How an aggregated aiconfigurator ``silicon_sample.csv`` row's parallel sizes map to a layout.

The sample's writer stores some runs' sizes in forms that do not name the chips the run used;
:func:`aic_agg_layout` undoes them, each convention checked on the rows whose id also names the
run (read by fit/validate.load_aiconfigurator).
"""

from __future__ import annotations

import re


def aic_agg_layout(
    tp: int, dp: int | None, moe_tp: int | None, moe_ep: int | None, rid: str
) -> tuple[int, int, int, str]:
    """(attention TP, attention DP, MoE EP, note) of an aggregated ``silicon_sample.csv`` row.

    The row's ``tp_size`` / ``attention_dp_size`` / ``moe_tp_size`` / ``moe_ep_size`` are read as
    written, except for three writer conventions of aiconfigurator-core 0.12.0's sample, each checked
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

    3. Expert-parallel fields squared: ``moe_tp == 1``, ``tp == attention_dp == k >= 2`` and
       ``moe_ep == k * k`` (97 agg rows: MiniMax-M2.5 on B200, B300, H100 and Kimi K2.5 on B200, all
       vLLM). The 40 of them whose id names the run all name ``tp{k}_ep{k}``, and the H100 ones repeat
       the TPOT of the same InferenceX run stored as ``tp 4, moe_ep 4`` in the sample's 2026-03-25 file
       (``..._1024x1024_c4_tp4_0_ep4_0_234`` 10.12 ms vs ``..._1024x1024_c4_tp4_ep4_1357`` 10.09 ms);
       InferenceX's configurations of those runs are ``{tp: k, ep: k}`` (.github/configs/nvidia-master.yaml
       @13962fcfa ``minimaxm2.5-fp8-b200-vllm``: ``{ tp: 4, ep: 4 }``, ``{ tp: 2, ep: 2 }``). The run
       used k chips: attention TP k, MoE EP k. A configuration that adds ``dp-attn: true`` (the FP4
       MiniMax ones at high concurrency) ran attention DP k instead (its launch script passes
       ``--data-parallel-size=$TP``); the fields do not tell the two apart, so TP k is read (assumption:
       the two differ in which weights each chip reads for attention, not in chips or experts). A real
       attention TP k x DP k run with MoE EP k*k would be written the same; no row of the sample is one
       (every id that names its run names ``tp{k}_ep{k}``), and an id naming k*k chips keeps the fields.

    The 13 TensorRT-LLM 1.3.0rc 4000/1000 rows whose concurrency is ``batch_size * tp`` with no
    ``attention_dp_size`` keep their fields: they are NVIDIA gap-analysis harness rows, whose ``batch_size`` is one
    instance's of several (:func:`harness_agg_instances`), not one attention-DP rank's (round 19 replaced the
    attention-DP reading of 57b5c27: the same harness job's Qwen3-32B TP2 rows state DP 1 at concurrency / batch
    = 32, and its disaggregated rows name the 64-GPU cluster every one of its aggregated rows fills).

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
        return (
            tp_k,
            dp_k,
            k,
            (
                f"fields tp={tp} dp={dp1} moe_tp={moe_tp} moe_ep={moe_ep} are the inflated form "
                f"of a {k}-chip run: used attention TP{tp_k} DP{dp_k}, MoE EP{k}"
            ),
        )
    if moe_tp == 1 and tp >= 2 and dp1 == tp and moe_ep == tp * tp and n_id in (None, tp):
        return (
            tp,
            1,
            tp,
            (
                f"fields tp={tp} dp={dp1} moe_tp={moe_tp} moe_ep={moe_ep} are the squared form "
                f"of a {tp}-chip run: used attention TP{tp}, MoE EP{tp}"
            ),
        )
    moe_world = (moe_tp or 1) * (moe_ep or 1)
    if dp is None and moe_world > tp and moe_world % tp == 0:
        return (
            tp,
            moe_world // tp,
            moe_ep or 1,
            (
                f"moe_tp={moe_tp} moe_ep={moe_ep} span more chips than tp={tp}: "
                f"attention DP{moe_world // tp} (vLLM data parallelism)"
            ),
        )
    ep = moe_ep or 1
    if m_tp and tp * dp1 != n_id:
        # some rows store sizes inflated against the run their id names (id tp8_ep8 with tp_size 64): trust the id
        n = n_id
        ep_id = int(m_tp.group(2)) if m_tp.group(2) else min(ep, n)
        return n, 1, ep_id, f"fields tp={tp} dp={dp1} ep={ep} disagree with the id: used TP{n} EP{ep_id}"
    return tp, dp1, ep, ""


#: The last day InferenceX's results writer stored a GB200 multi-node run as TP = its GPU count: its
#: multi-node integration (SemiAnalysisAI/InferenceX 93e1b3ca1 "feat: multinode first class integration",
#: merged 2025-12-05) replaced the workflow; the sample's 2026-04-06 export still carries that count in
#: the twins measured on 2025-12-05 (prefill_tp = decode_tp = 36, no worker counts).
MULTINODE_TOTAL_GPU_UNTIL = "2025-12-05"


def multinode_total_gpu_run(system: str, client: str, measured: str, dp: int | None, moe_ep: int | None) -> str:
    """Why an aggregated row is a GB200 multi-node disaggregated InferenceX run whose ``tp_size`` is the
    run's GPU count ("" when it is not one): the caller skips it, since no field keeps the prefill /
    decode split.

    ``system``: catalog id; ``client``: fit/aic_rows.aic_client of the row; ``measured``: the row's
    ``measured=`` UTC date (fit/aic_sweeps.measured_date, "" when absent); ``dp`` / ``moe_ep``: its
    ``attention_dp_size`` / ``moe_ep_size``.

    Source: until 2025-12-05 InferenceX ran GB200 only through ``benchmark-multinode-tmpl.yml`` ("a
    workaround until we can integrate GB200 into master configs": .github/workflows/full-sweep-1k1k-scheduler.yml
    @0ba7aa3ff, job ``benchmark-gb200``: Dynamo TRT-LLM FP4 and Dynamo SGLang FP8 DeepSeek-R1, disaggregated
    prefill and decode workers), whose "Process results" step runs utils/process_result.py with
    ``TP=$gpus`` (the run's GPU count, read off the result file name), ``EP_SIZE=1``, ``DP_ATTENTION=false``,
    and marks the run ``disagg`` only when the file name also gives ``_ctx_`` / ``_gen_`` GPU counts. Evidence
    in aiconfigurator-core 0.12.0's sample: each of its 55 GB200 DeepSeek-R1 aggregated rows of the 2026-04-06
    InferenceX export (TRT-LLM FP4 "TP12" to "TP64", SGLang FP8 "TP72", measured 2025-11-16/17) has a
    disaggregated twin in the same export at the same lengths, concurrency and count (52 within 4% TPOT, e.g.
    8k/1k C = 2150 "TP32": 43.88 ms agg, 43.98 ms disagg of 2025-12-05; the SGLang 1k/1k ones at C = 1024,
    2048, 4096 ran 20-26% faster in their 2025-12-05 twins, after InferenceX 175fe5364 refreshed the GB200
    SGLang submission); the TRT-LLM ones also match the 2025-12-19 twins that carry a real split (8k/1k
    C = 2150 "TP48" 32.60 ms vs prefill TP4 EP4 + decode TP16 EP4, 32.88 ms).
    The writer's fields are required (attention DP and MoE EP at most 1); a row without a ``measured=`` date
    is kept.

    >>> multinode_total_gpu_run("gb200-nvl72", "inferencex-db", "2025-11-17", 1, 1)[:40]
    'a GB200 multi-node disaggregated run of '
    >>> multinode_total_gpu_run("gb200-nvl72", "inferencex-db", "2025-12-06", 1, 1)
    ''
    """
    if system != "gb200-nvl72" or client != "inferencex-db" or not measured or measured > MULTINODE_TOTAL_GPU_UNTIL:
        return ""
    if (dp or 1) > 1 or (moe_ep or 1) > 1:
        return ""
    return (
        "a GB200 multi-node disaggregated run of InferenceX's pre-2025-12-05 workflow exported as aggregated: "
        "its tp_size is the run's GPU count (prefill + decode, EP_SIZE=1, DP_ATTENTION=false), not a layout; "
        "the prefill/decode split is not in the row (fit/aic_layout.multinode_total_gpu_run)"
    )


#: The mark of a row NVIDIA's gap-analysis harness measured: its ``silicon_data_source`` names the harness's
#: ``gtl_job_id`` / ``gtl_task_id`` (aiconfigurator-core 0.12.0's sample: the Dynamo TensorRT-LLM runtime images)
HARNESS_SOURCE = "gtl_"


def harness_agg_instances(source: str, concurrency: float, batch_size: float | None) -> tuple[int, str]:
    """(instances, note) of an aggregated row of NVIDIA's gap-analysis harness: the client's concurrency
    (``silicon_concurrency``) is the whole cluster's, ``batch_size`` one instance's, so the run served
    ``concurrency / batch_size`` identical instances of the row's layout; (1, "") for any other row.

    Evidence (aiconfigurator-core 0.12.0's sample, ``scripts/aic_harness_rows.py``): the harness writes its
    disaggregated rows as ``concurrency = decode_batch_size x decode_num_workers`` with the worker counts stated,
    and in the TensorRT-LLM 1.3.0rc5 files those counts make a 64-GPU cluster (Qwen3-32B NVFP4 15000/500 on
    B200 and GB200: 40 prefill TP1 + 6 decode TP4 workers, C 480 = 80 x 6 and C 552 = 92 x 6). Their aggregated
    rows leave the instance count out, but ``concurrency / batch_size`` times the layout's chips is the same
    64 in every one: DeepSeek-V3.1 NVFP4 4000/1000 TP8 C 448 / 56 = 8 (B200) and C 320 / 40 = 8 (GB200),
    Qwen3-32B NVFP4 15000/500 TP2 C 416 / 13 = 32 (B200) and C 448 / 14 = 32 (GB200; attention_dp_size 1 stated,
    so the ratio is not attention DP), all of one harness job (gtl_job_id 23803065) with the B200 and one of the
    GB200 disaggregated rows. The 1.3.0rc1 files
    (B200 DeepSeek-R1 NVFP4, H100 gpt-oss-120b, GB200 Qwen3-32B) are written the same way (ratios 2, 4 and 8)
    and are read alike: one writer, one convention. Rows whose concurrency the source does not state
    (``silicon_concurrency`` absent: batch_size is the only count), or whose ratio is not a whole number of
    at least 2, keep one instance.

    >>> harness_agg_instances("gtl_job_id=1; silicon_concurrency=448", 448.0, 56.0)[0]
    8
    >>> harness_agg_instances("source_file=x.csv; silicon_concurrency=448", 448.0, 56.0)
    (1, '')
    >>> [harness_agg_instances(f"gtl_task_id=2; silicon_concurrency={c:g}", c, b)[0] for c, b in ((2, 1), (12, 5))]
    [2, 1]
    """
    if (
        HARNESS_SOURCE not in source
        or "silicon_concurrency=" not in source
        or not batch_size
        or batch_size != batch_size
        or batch_size <= 0
    ):
        return 1, ""
    ratio = concurrency / batch_size
    if ratio < 2 or abs(ratio - round(ratio)) > 1e-9:
        return 1, ""
    n = int(round(ratio))
    return n, (
        f"NVIDIA gap-analysis harness row: concurrency {concurrency:g} is its cluster's, batch_size "
        f"{batch_size:g} one instance's: {n} instances (fit/aic_layout.harness_agg_instances)"
    )
