"""NIXL descriptor posting in disaggregated prefill: does the KV sender's host time bind the SGLang and vLLM pools? (issue 18)

Round 27 (scripts/sgl_prefill_forward_vs_served.py, docs/gap_aic_ttft.md) found SGLang's GB200/GB300 DeepSeek-R1
prefill pools serving 0.35-0.77 of the model's forward rate, and named a lead: SGLang's NIXL KV sender posts up to
61 / 64 = 0.95 transfer descriptors a prompt token on the prefill scheduler thread. This prices that lead from
sources and asks whether it binds. Three readings of the source (facts, no code copied):

* **SGLang, rows' releases 0.5.5.post2-0.5.8.post1** (InferenceX moved its GB200 FP4 image to 0.5.8 on 2026-01-28):
  ``disaggregation/nixl/conn.py`` ``NixlKVSender.send`` calls ``NixlKVManager.add_transfer_request`` →
  ``send_kvcache`` in the scheduler's own call: it groups the chunk's page indices into runs contiguous on both
  sides, appends one (address, length) pair per layer per run, and runs ``get_xfer_descs`` / ``initialize_xfer``
  / ``transfer`` there and then. The asynchronous worker-pool sender came later (sgl-project/sglang PR #23967,
  merged 2026-04-28: "Previously, add_transfer_request performed each chunk transfer synchronously"), and so did
  the prepped two-step API (PR #26406, merged 2026-05-26). Descriptors a request: ``layers x runs``, runs between
  1 (a contiguous pool) and ceil(ISL / page) (no two pages adjacent; page 64 with ``trtllm_mla``).
* **vLLM 0.18.0 (the Kimi K2.5 rows)**: the srt-slurm recipes (NVIDIA/srt-slurm, branch sa-submission-q2-2026,
  ``recipes/vllm/kimi-k2.5/*/disagg-gb200-*.yaml``) set ``NixlConnector``, ``block-size: 64``, ``FLASHINFER_MLA``,
  fp8 KV, and ``enforce-eager: true`` on the prefill worker. ``NixlConnector`` is the pull connector: the *decode*
  worker's ``_read_blocks`` issues ``make_prepped_xfer("READ", ...)`` on descriptor lists prepared at the handshake
  (one per layer per block). The prefill worker posts nothing: no prefill-side posting time exists to price.
* **TensorRT-LLM (Dynamo) DeepSeek-R1 GB200/GB300 rows**: every ``recipes/trtllm/gb200-*`` / ``gb300-*`` recipe of
  that branch sets ``cache_transceiver_config.backend: UCX`` (154 files), not NIXL.

The per-descriptor posting figures (:data:`POSTING`) are read from public reports, each a count of descriptors and
a posting time. A first transfer posts at 40-100 µs a descriptor, tens of times the warm ones (nixl #1401: 52 µs, then 1.3), so
the steady-state budget uses the warm reports; UCX's own declared per-operation overhead of its ``cuda_ipc``
transport (the MNNVL path on GB200/GB300) bounds them from above.

A diagnosis: nothing is fitted, no shipped value changes.
Run: python scripts/nixl_descriptor_budget.py (instant; no model pricing)
"""

from __future__ import annotations

import math
from typing import NamedTuple


class Posting(NamedTuple):
    """One published posting measurement: ``descriptors`` posted in ``post_s`` seconds (``warm``: not a first
    transfer)."""

    source: str
    descriptors: int
    post_s: float
    warm: bool

    @property
    def us_per_descriptor(self) -> float:
        return 1e6 * self.post_s / self.descriptors


#: Published NIXL posting times. nixl #1401 (2026-03-05, SGLang + NIXL telemetry, 690.54 MB transfers): the first
#: transfer posts 61 descriptors in 3,156 µs, the next ones 122 in 156-171 µs (164 taken); vLLM PR #25388
#: (2025-09-22, the first telemetry line: one transfer, 56 descriptors, post 5.693 ms); vLLM #34054 (2026-02-07,
#: 80 transfers averaging 40,064 descriptors, post 129.127 ms); nixl #1514 (2026-04-10, LIBFABRIC backend, 18,880
#: descriptors, "~46ms of CPU time"); nixl #176 (2025-04-22, before the prepped API: 15k segments, transfer() 0.6 s).
POSTING = (
    Posting("nixl #1401 first transfer (SGLang)", 61, 3156e-6, False),
    Posting("nixl #1401 warm transfers (SGLang)", 122, 164e-6, True),
    Posting("vllm PR #25388 single transfer", 56, 5.693e-3, False),
    Posting("vllm #34054 80-transfer mean", 40064, 129.127e-3, True),
    Posting("nixl #1514 LIBFABRIC", 18880, 46e-3, True),
    Posting("nixl #176 (2025-04, pre-prepped API)", 15000, 0.6, False),
)
#: UCX's declared per-operation software overhead of its cuda_ipc transport, µs: 7 in ``ucx_info -d`` (quoted in
#: vllm-project/vllm #26382, 2025-10-07); 4 in UCX's ``uct_cuda_ipc_estimate_perf`` (openucx/ucx PR #8760)
UCX_CUDA_IPC_OVERHEAD_US = 7.0
#: round 27's model forward rate (16,384 tokens a rank) and the served plateau, prompt tokens/s per prefill GPU,
#: keyed (system, precision, nominal ISL); quoted from docs/gap_aic_ttft.md §"SGLang's disaggregated prefill on
#: GB200/GB300" (disttft27), not recomputed
ROUND27 = {
    ("gb200-nvl72", "fp4", 1024): (29211.0, 11631.0),
    ("gb200-nvl72", "fp8", 1024): (21895.0, 10340.0),
    ("gb300-nvl72", "fp4", 1024): (32863.0, 11387.0),
    ("gb300-nvl72", "fp8", 1024): (23993.0, 10543.0),
    ("gb200-nvl72", "fp4", 8192): (21559.0, 13336.0),
    ("gb200-nvl72", "fp8", 8192): (16916.0, 12974.0),
}
#: DeepSeek-R1 / Kimi K2.5 layers with an MLA KV buffer each (config.json num_hidden_layers 61)
LAYERS = 61
#: SGLang's page with ``attention-backend trtllm_mla`` (server_args.py forces 64); vLLM's recipe block-size 64
PAGE = 64


def sglang_descriptors(isl: int, layers: int = LAYERS, page: int = PAGE, contiguous: bool = False) -> int:
    """Descriptors SGLang's NIXL sender posts for one ``isl``-token prompt sent as one chunk: one per layer per run
    of pages contiguous on both sides; ``contiguous`` one run, else every page its own run.

    >>> sglang_descriptors(1024), sglang_descriptors(1024, contiguous=True), sglang_descriptors(8192)
    (976, 61, 7808)
    """
    if isl < 1:
        raise ValueError(f"isl: {isl} is not a prompt length; give the prompt's tokens (>= 1)")
    return layers * (1 if contiguous else math.ceil(isl / page))


def additive_us_per_token(forward: float, served: float) -> float:
    """Host time a served prompt token costs outside the forward when the host work runs between forwards, µs:
    1/served − 1/forward (rates in prompt tokens/s per GPU).

    >>> round(additive_us_per_token(29211.0, 11631.0), 2)
    51.74
    """
    if forward <= 0 or served <= 0:
        raise ValueError(f"forward, served: {forward}, {served} must be positive tokens/s")
    return 1e6 * (1.0 / served - 1.0 / forward)


def per_request_split(short: tuple[int, float], long: tuple[int, float]) -> tuple[float, float]:
    """(per-request s, per-token µs) of a host cost a + b·ISL through two (ISL, additive µs a token) points.

    >>> a, b = per_request_split((1024, 51.74), (8192, 28.60)); round(a * 1e3, 1), round(b, 2)
    (27.1, 25.29)
    """
    (l1, h1), (l2, h2) = short, long
    if l1 == l2:
        raise ValueError(f"isl: both points have {l1} tokens; give two prompt lengths")
    t1, t2 = h1 * l1 * 1e-6, h2 * l2 * 1e-6
    b = (t2 - t1) / (l2 - l1)
    return t1 - b * l1, b * 1e6


def posting_us_per_token(us_per_descriptor: float, isl: int, contiguous: bool = False) -> float:
    """Posting time a prompt token costs the prefill scheduler at ``us_per_descriptor``, µs.

    >>> round(posting_us_per_token(7.0, 1024), 2), round(posting_us_per_token(7.0, 1024, contiguous=True), 3)
    (6.67, 0.417)
    """
    return us_per_descriptor * sglang_descriptors(isl, contiguous=contiguous) / isl


def main() -> None:
    print("Published NIXL posting times, µs a descriptor")
    for p in POSTING:
        print(
            f"  {p.source:40s} {p.descriptors:7,d} descriptors {p.post_s * 1e3:9.3f} ms  {p.us_per_descriptor:6.1f}"
            f"  {'warm' if p.warm else 'first/cold'}"
        )
    warm = [p.us_per_descriptor for p in POSTING if p.warm]
    hi = max(max(warm), UCX_CUDA_IPC_OVERHEAD_US)
    print(
        f"  warm range {min(warm):.1f}-{max(warm):.1f} µs; UCX cuda_ipc declared overhead {UCX_CUDA_IPC_OVERHEAD_US:.0f} µs"
        f" -> upper bound used {hi:.0f} µs"
    )
    print("\nSGLang prefill pools (round 27): host time a token outside the forward vs what NIXL posting can give, µs")
    print(
        f"  {'system':12s} {'prec':4s} {'ISL':>5s} {'additive':>9s} {'alone':>6s} {'NIXL frag':>10s} {'NIXL contig':>12s}"
        f" {'share':>6s} {'c needed':>9s}"
    )
    for (system, prec, isl), (fwd, served) in ROUND27.items():
        add, alone = additive_us_per_token(fwd, served), 1e6 / served
        frag, cont = posting_us_per_token(hi, isl), posting_us_per_token(hi, isl, contiguous=True)
        need = add * isl / sglang_descriptors(isl)
        print(
            f"  {system:12s} {prec:4s} {isl:5d} {add:9.1f} {alone:6.1f} {frag:10.2f} {cont:12.3f} {frag / add:6.0%}"
            f" {need:9.1f}"
        )
    for prec in ("fp4", "fp8"):
        (f1, s1), (f8, s8) = ROUND27[("gb200-nvl72", prec, 1024)], ROUND27[("gb200-nvl72", prec, 8192)]
        a, b = per_request_split((1024, additive_us_per_token(f1, s1)), (8192, additive_us_per_token(f8, s8)))
        print(
            f"  GB200 {prec.upper()} DEP: additive = {a * 1e3:.1f} ms a request + {b:.1f} µs a token; NIXL at {hi:.0f} µs:"
            f" {LAYERS * hi / 1e3:.2f} ms a request (contiguous) or {hi * LAYERS / PAGE:.1f} µs a token (fragmented)"
        )
    print("\nvLLM 0.18.0 Kimi K2.5 (NixlConnector = pull): the decode worker posts READs; prefill-side posting 0.")
    print("TensorRT-LLM DeepSeek-R1 GB200/GB300 recipes: cache transceiver backend UCX, not NIXL.")


if __name__ == "__main__":
    main()
