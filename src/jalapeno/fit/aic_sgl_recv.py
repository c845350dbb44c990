"""The decode worker's receive interval of a disaggregated SGLang aiconfigurator row, from the recipe that ran it.

aiconfigurator-core 0.12.0's disaggregated SGLang rows exported from InferenceX (the GB200 / GB300 DeepSeek-R1
sweeps ``dsr1-fp{4,8}-gb{200,300}-dynamo-sglang``) state both pools' layouts and worker counts, not the engine
flags. The low-latency entries of those sweeps (the only ones with one-node tensor-parallel pools) ran recipes
that set SGLang's ``--scheduler-recv-interval`` on the decode worker, which the model prices as the
pre-allocation poll's period (serve/handshake.recv_poll_wait_s; the prefill worker's own interval costs nothing:
a prefill step forces a read). :data:`DECODE_RECV_INTERVALS` holds, per (system, precision, ISL/OSL, prefill
pool, decode pool), the releases whose runs the recipe launched and its decode value; a row whose deployment
matches one entry exactly (layout tp / attention dp and worker counts of both pools) and whose release is
listed takes it. An exact match of both pools and the release is taken as the recipe that ran it (assumption,
as fit/aic_decode_caps.py does for the TensorRT-LLM recipes). Entries at 1 record recipes that set 1 (no change).

Sources (read, not assumed): NVIDIA/srt-slurm @5063eb43 (the sa-submission-q1-2026 branch the InferenceX runners
checked out; each recipe's last change to the key predates the sweep that ran it: gb300-fp4 1310a2d4 2026-02-04,
gb300-fp8 3c922355 2026-01-29, gb200-* 75f6e32a 2026-01-27), named per entry by InferenceX
.github/configs/nvidia-master.yaml ``CONFIG_FILE`` (GB300 FP4 @3282fdeba 2026-02-11, GB200 FP4 @2767db504
2026-02-07, GB200 / GB300 FP8 @37f353be2 2026-02-09); the SGLang 0.5.5.post2 GB200 FP4 1k/1k low-latency run:
ai-dynamo/dynamo @75b4a35fca94 examples/backends/sglang/slurm_jobs/scripts/gb200-fp4/disagg/1k1k-low-latency.sh
(data/validation/aic_sweeps.toml names it). Its 8k/1k script and the GB200 FP8 0.5.5.post2 one were not read:
those rows keep 1.
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.deploy.deployment import Deployment, Pool

_TP4_1 = (4, 1, 1)  # (attention tp, attention dp, workers) of a pool


def _tp(tp: int, workers: int) -> tuple[int, int, int]:
    return tp, 1, workers


_SRT = "NVIDIA/srt-slurm @5063eb43 "
#: (system, precision, isl, osl, prefill (tp, dp, workers), decode (tp, dp, workers)) ->
#: (releases the recipe ran, decode --scheduler-recv-interval, source)
DECODE_RECV_INTERVALS: dict[tuple, tuple[tuple[str, ...], int, str]] = {
    ("gb300-nvl72", "fp4", 1024, 1024, _TP4_1, _tp(4, 2)): (
        ("0.5.8.post1",),
        10,
        _SRT + "recipes/gb300-fp4/1k1k/low_latency.yaml (decode scheduler-recv-interval: 10)",
    ),
    ("gb300-nvl72", "fp4", 8192, 1024, _TP4_1, _tp(4, 4)): (
        ("0.5.8.post1",),
        10,
        _SRT + "recipes/gb300-fp4/8k1k/low_latency.yaml (decode scheduler-recv-interval: 10)",
    ),
    ("gb300-nvl72", "fp8", 1024, 1024, _TP4_1, _tp(4, 4)): (
        ("0.5.8.post1",),
        1,
        _SRT + "recipes/gb300-fp8/1k1k/stp/low-latency.yaml (decode scheduler-recv-interval: 1)",
    ),
    ("gb300-nvl72", "fp8", 8192, 1024, _TP4_1, _tp(4, 1)): (
        ("0.5.8.post1",),
        1,
        _SRT + "recipes/gb300-fp8/8k1k/stp/low-latency.yaml (decode scheduler-recv-interval: 1)",
    ),
    ("gb200-nvl72", "fp4", 1024, 1024, _TP4_1, _tp(4, 2)): (
        ("0.5.8", "0.5.5.post2"),
        10,
        _SRT + "recipes/gb200-fp4/1k1k/low-latency.yaml (decode scheduler-recv-interval: "
        "10); 0.5.5.post2: ai-dynamo/dynamo @75b4a35fca94 .../gb200-fp4/disagg/1k1k-low-latency.sh (decode "
        "--scheduler-recv-interval 10)",
    ),
    ("gb200-nvl72", "fp4", 8192, 1024, _TP4_1, _tp(4, 4)): (
        ("0.5.8",),
        10,
        _SRT + "recipes/gb200-fp4/8k1k/low-latency.yaml (decode scheduler-recv-interval: 10)",
    ),
    ("gb200-nvl72", "fp8", 1024, 1024, _TP4_1, _tp(4, 1)): (
        ("0.5.8.post1",),
        10,
        _SRT + "recipes/gb200-fp8/1k1k/low-latency.yaml (decode scheduler-recv-interval: 10)",
    ),
    ("gb200-nvl72", "fp8", 8192, 1024, _tp(8, 1), _tp(8, 1)): (
        ("0.5.8.post1",),
        10,
        _SRT + "recipes/gb200-fp8/8k1k/low-latency.yaml (decode scheduler-recv-interval: 10)",
    ),
}


def _key(pool: Pool) -> tuple[int, int, int]:
    return pool.layout.tp, pool.layout.dp, pool.workers


def with_decode_recv_interval(
    dep: Deployment, backend: str, system: str, precision: str, isl: int, osl: int, release: str
) -> tuple[Deployment, str]:
    """(deployment, note): a disaggregated SGLang row's ``dep`` with the decode worker's receive interval of the
    recipe that ran it (:data:`DECODE_RECV_INTERVALS`; module docstring: the rule), and a note naming the recipe;
    ``dep`` unchanged and "" for other rows. ``release``: the row's SGLang release (``0.5.8.post1``).

    >>> from jalapeno.deploy.layout import Layout
    >>> from jalapeno.specs.formats import get_precision
    >>> d = Deployment(get_precision("fp4"), Pool(Layout(tp=4), 4), prefill=Pool(Layout(tp=4)))
    >>> with_decode_recv_interval(d, "sglang", "gb300-nvl72", "fp4", 8192, 1024, "0.5.8.post1")[0].recv_interval
    10
    >>> with_decode_recv_interval(d, "sglang", "gb300-nvl72", "fp4", 8192, 1024, "0.5.9")[0].recv_interval
    1
    """
    if backend != "sglang" or dep.prefill is None:
        return dep, ""
    entry = DECODE_RECV_INTERVALS.get((system, precision, isl, osl, _key(dep.prefill), _key(dep.decode)))
    if entry is None or release not in entry[0] or entry[1] == dep.recv_interval:
        return dep, ""
    return replace(dep, recv_interval=entry[1]), (
        f"decode worker --scheduler-recv-interval {entry[1]} (serve/handshake.recv_poll_wait_s): {entry[2]}"
    )
