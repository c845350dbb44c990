"""Expert popularity of a MoE router: how unevenly real traffic spreads over the routed experts.

A layer's routed experts do not receive equal shares of the token-expert assignments. The
share p_e of expert e (Σ p_e = 1) is modelled as a lognormal popularity,

    p_e ∝ exp(σ · z_e),   z_e = Φ⁻¹((e + ½) / E),   e = 0 … E−1,

a deterministic quantile profile (the expected order statistics of E lognormal draws, no
randomness). σ = 0 is uniform routing (p_e = 1/E), the reference of DESIGN.md §7.

Measured σ (``MEASURED_ROUTING_SIGMA``): NVIDIA's TensorRT-LLM tech blog 4, "Scaling Expert
Parallelism in TensorRT-LLM (Part 1)", Table 1 (DeepSeek-R1, 32 GB200, EP32, 8 experts per
rank, a machine-translation dataset, decode with 256 sequences per rank): routed tokens per
expert have mean 128 and standard deviation 164.1, averaged over MoE layers and iterations.
Removing the binomial sampling variance (≈ mean, CV² = 1/128) leaves a popularity coefficient of
variation sqrt(1.282² − 1/128) = 1.279; the E = 256 quantile profile has that CV at σ = 1.03
(tests/unit/test_routing.py recomputes it). The same table is the held-out check: the hottest
expert at 11.95x the mean (the profile gives 11.6x) and the busiest EP32 rank at 2.56x the mean
rank (deploy/eplb.py predicts it).

Default: uniform. The skew above was measured on natural text (a translation dataset), where
DeepSeek's report attributes it to experts specialising by domain; InferenceX prompts — the
workloads the comparisons follow — are random token ids, for which no routing statistics are
published. With the measured σ as the default the InferenceX throughput error rose from 12.8% to
16.0% median (+5% bias: a skewed router touches fewer distinct experts, so memory-bound steps
get faster than measured), which is consistent with random prompts routing closer to uniform;
``--routing measured`` models natural-text traffic.

Generated tokens (``--routing generated``): a serving run routes two kinds of tokens. The prompt
is the workload's (InferenceX and aiconfigurator's silicon rows, which republish InferenceX runs,
send random token ids); the tokens decode feeds back are the model's own generations, natural text
whatever the prompt. ``generated`` keeps the prompt uniform and gives generated tokens (decode rows
and MTP drafts) the family's measured σ (``MoESpec.decode_routing_sigma``); cost/ops.py mixes the two
by the step's share of each (cost/moe.mixed_touched_fraction, and the busiest EP rank's share
averaged the same way). A named assumption, not a measurement: no source publishes expert loads
for generations that follow a random prompt. On the shipped points (no stack refit) it takes the
InferenceX SGLang DeepSeek-R1 TPOT bias on H200 from +6.9% to −2.3% and on MI325X from +7.4% to
+1.1%, but moves aiconfigurator's H200 rows the wrong way (docs/model.md §3.6), so it is an
option, not the default.

Families (``family_routing_sigma``): the measured σ applies to routers trained like DeepSeek-V3,
without an auxiliary balance loss (``topk_method = noaux_tc``: DeepSeek-V3/R1/V3.2, Kimi K2.5,
which shares the architecture). The DeepSeek-V3 report (§2.1.2, §4.5.3 and its expert-load
figures) shows that auxiliary-loss-free routing lets experts specialise by domain, unlike
aux-loss training, so its per-expert loads are the uneven ones. Routers trained with an
auxiliary balance loss (gpt-oss, Qwen3, Mixtral) have no published per-expert load statistics;
they keep uniform routing (σ = 0), an assumption that understates their skew.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from jalapeno.errors import SpecError, choice_hint

#: lognormal σ of expert popularity fitted to the per-expert token CV 1.279 measured on DeepSeek-R1
#: (TensorRT-LLM tech blog 4, Table 1; see the module docstring)
MEASURED_ROUTING_SIGMA = 1.03
#: routing modes of the CLI's ``--routing``: uniform top-k (default), the measured popularity for
#: every token, or for generated tokens only (the prompt uniform)
ROUTING_MODES = ("uniform", "measured", "generated")
#: the CLI help of ``--routing`` (one text for every command)
ROUTING_HELP = (
    "MoE expert popularity: uniform (default; InferenceX prompts are random tokens), measured "
    "(DeepSeek-R1 on natural text, TRT-LLM tech blog 4; aux-loss-free routers only) or generated "
    "(measured for the tokens decode generates, uniform for the prompt)."
)


@lru_cache(maxsize=64)
def _profile(num_experts: int, sigma: float) -> np.ndarray:
    z = np.array([NormalDist().inv_cdf((i + 0.5) / num_experts) for i in range(num_experts)])
    w = np.exp(sigma * (z - z.max()))  # shifted for range; normalised below
    p = np.sort(w / w.sum())[::-1]
    p.setflags(write=False)
    return p


def expert_popularity(num_experts: int, sigma: float) -> np.ndarray:
    """Share of a layer's token-expert assignments each routed expert receives, hottest first.

    Shape (E,), sums to 1; σ = 0 gives 1/E each. Read-only (cached).

    >>> p = expert_popularity(4, 0.0); [float(x) for x in p]
    [0.25, 0.25, 0.25, 0.25]
    >>> round(float(expert_popularity(256, MEASURED_ROUTING_SIGMA)[0] * 256), 1)  # hottest / mean
    11.6

    Raises:
        SpecError: fewer than one expert, or a negative σ.
    """
    if num_experts < 1:
        raise SpecError("num_experts", f"must be >= 1, got {num_experts}", "give a positive expert count")
    if not sigma >= 0:
        raise SpecError("routing_sigma", f"must be >= 0, got {sigma}", "use 0 for uniform routing")
    return _profile(int(num_experts), float(sigma))


def family_routing_sigma(moe) -> float:
    """σ of a router's family: ``MEASURED_ROUTING_SIGMA`` for auxiliary-loss-free routers
    (``moe.aux_loss_free``), else 0 (no published measurement; see the module docstring)."""
    return MEASURED_ROUTING_SIGMA if moe.aux_loss_free else 0.0


def with_routing(model, mode: str):
    """``model`` with the routing popularity of ``mode``: ``measured`` (its family's σ,
    :func:`family_routing_sigma`, for every token), ``generated`` (that σ for the tokens decode
    generates, ``MoESpec.decode_routing_sigma``; the prompt uniform) or ``uniform`` (σ = 0).

    Raises:
        SpecError: an unknown mode (names ``--routing`` and the valid modes).
    """
    if mode not in ROUTING_MODES:
        raise SpecError(
            "--routing",
            f"unknown routing {mode!r}{choice_hint(mode, ROUTING_MODES)}",
            f"use one of {', '.join(ROUTING_MODES)}",
        )
    if mode != "uniform" and (model.moe is None or not model.moe.aux_loss_free):
        what = (
            "is dense" if model.moe is None else "has an auxiliary-loss router, for which no routing skew is published"
        )
        raise SpecError(
            "--routing",
            f"{mode} routing applies to auxiliary-loss-free MoE routers (DeepSeek-V3 family); {model.name} {what}",
            "leave --routing at uniform for this model",
        )
    if model.moe is None:
        return model
    sigma = family_routing_sigma(model.moe) if mode != "uniform" else 0.0
    return dataclasses.replace(
        model,
        moe=dataclasses.replace(
            model.moe, routing_sigma=sigma if mode == "measured" else 0.0, decode_routing_sigma=sigma
        ),
    )
