"""sa-bench's disaggregated rows priced with two client terms: a fixed floor every request pays and the idle-start
burst share (issue 18 item 6b, round 47; shipped on: :data:`CLIENT_FLOOR_ON`).

The InferenceX-export rows of multi-node runs (client ``inferencex-db``, fit/aic_rows.aic_client) were timed by
srt-slurm's sa-bench (NVIDIA/srt-slurm @c88ef731, ``src/srtctl/benchmarks/scripts/sa-bench/``): ``bench.sh`` runs a
2·C warm-up in its own ``benchmark_serving.py`` process, then the counted 10·C prompts at ``--request-rate inf``
under a semaphore of C through Dynamo's HTTP front end (``--backend dynamo``); each request opens its own aiohttp
session and its clock starts before the POST (``async_request_dynamo_completions``), and the run reports the mean
over every counted request. So the connect, Dynamo's tokenise-and-route and the first chunk's detokenise are a floor
in every disaggregated row's TTFT (its size is not published), beside the client's front end that stack_fit fits at
C ≤ 4 on aggregated and disaggregated rows alike.

:data:`DISAGG_TERMS` holds, per (client, engine family), the floor F (s, added to ``request_overhead_s``) and the
burst share w (replacing ``prefill_burst_fraction``) that ``scripts/aic_gb_ttft_terms47.py`` fitted jointly on the
declared fit split's disaggregated rows of main d3e3fcc (grid F 0-0.4 s by 12.5 ms, w 0.05-1 by 0.05, loss mean
|log(model / measured)|); the held-out rows were not used (tests/unit/test_client_floor_fit.py refits them from
the script's priced parts). Fit rows: SGLang 51, TensorRT-LLM 77, vLLM 8 — vLLM's two constants rest on 8 Kimi-K2.5
GB200 rows of two lengths (its 6 held-out rows: median 27.2 → 15.6%, bias −20.1 → +9.7%), a thin fit. On the held-out rows (`jalapeno validate --held-out`,
the switch on against off) aiconfigurator ALL TTFT goes 14.3 / 46.8 / −4.2 → 14.2 / 45.8 / −3.8%, GB200 20.5 → 17.7%,
GB300 29.3 → 23.7%; InferenceX, MLPerf and the fidelity guard do not move; worse: B200 TensorRT-LLM disaggregated
15.7 → 20.2%, H200's disaggregated bias −10.8 → −21.9% (docs/gap_aic_ttft.md, round 47). F is fitted, not sourced;
the shares here stand in for stack_fit's on these rows (data/stack_fits.toml keeps the ones fitted without a floor;
fit/stack_fit does not read this module, so the stack fits do not move; a refit of both in the chain is the next
step). Read by fit/measured_point.point_stack only: measured
rows, never a user's ``predict``.
"""

from __future__ import annotations

import re
from dataclasses import replace

from jalapeno.specs.stack_profile import memo_copy

#: price the disaggregated ``inferencex-db`` rows with :data:`DISAGG_TERMS` (shipped on, round 47; module docstring)
CLIENT_FLOOR_ON = True

#: (client, engine family) → (floor s, burst share), fitted by scripts/aic_gb_ttft_terms47.py on the fit split of
#: main d3e3fcc's disaggregated rows (module docstring); families without an entry are left as they are
DISAGG_TERMS: dict[tuple[str, str], tuple[float, float]] = {
    ("inferencex-db", "sglang"): (0.05, 0.60),
    ("inferencex-db", "trtllm"): (0.0375, 0.30),
    ("inferencex-db", "vllm"): (0.1625, 0.45),
}

_FAMILY = re.compile(r"[@+]")
#: (id of a profile, (floor, share)) -> (that profile, its copy with the floor); specs/stack_profile.memo_copy
_COPIES: dict[tuple[int, tuple[float, float]], tuple] = {}


def engine_family(name: str) -> str:
    """A stack profile's engine family: its name before any release (``@``) or switch (``+``) suffix.

    >>> engine_family("trtllm@1.3.0rc5.post1+ar_rms"), engine_family("sglang")
    ('trtllm', 'sglang')
    """
    return _FAMILY.split(name, maxsplit=1)[0]


def with_client_floor(stack, client: str, mode: str, on: bool | None = None):
    """``stack`` (specs/stack_profile.Stack, already for ``client``) with its (client, family) entry of
    :data:`DISAGG_TERMS` where ``mode`` is ``"disagg"`` and the switch is on: ``request_overhead_s`` + F and
    ``prefill_burst_fraction`` = w; else ``stack`` itself. One copy per profile and entry (points are grouped by stack
    identity: fit/validate.predict_points).

    Args:
        stack: the point's profile; client: the client that timed the point (MeasuredPoint.timed_by);
        mode: ``"agg"`` or ``"disagg"``; on: the switch, None = :data:`CLIENT_FLOOR_ON`.

    Raises:
        ValueError: the profile has no ``request_overhead_s`` to add the floor to (name the client's front end in
            data/stack_fits.toml ``clients.<client>``).
    """
    if not (CLIENT_FLOOR_ON if on is None else on) or mode != "disagg":
        return stack
    terms = DISAGG_TERMS.get((client, engine_family(stack.name)))
    if terms is None:
        return stack
    if stack.request_overhead_s is None:
        raise ValueError(
            f"stack {stack.name!r}: request_overhead_s is not set for client {client!r}; the floor adds to "
            "it (set clients.<client>.request_overhead_s in data/stack_fits.toml)"
        )
    floor, share = terms
    return memo_copy(
        _COPIES,
        terms,
        stack,
        lambda: replace(stack, request_overhead_s=stack.request_overhead_s + floor, prefill_burst_fraction=share),
    )
