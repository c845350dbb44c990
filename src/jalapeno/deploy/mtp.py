"""Multi-token prediction (MTP): the speculative decoding a deployment runs with the model's own draft module.

A step verifies 1 + k rows per decoding sequence (the sequence and its k drafts) and emits, in expectation,
(1 − α^(k+1)) / (1 − α) tokens at per-position acceptance α (Leviathan et al. 2023, "Fast Inference from
Transformers via Speculative Decoding", §3.1); the draft module (DeepSeek ``num_nextn_predict_layers``) stays
resident beside the weights. ``Deployment.mtp`` (deploy/deployment.py) holds one :class:`MTP` or None.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from jalapeno.errors import SpecError

#: Longest MTP draft chain accepted: engines run 1-4 drafts for DeepSeek (TRT-LLM nextn <= 3-4,
#: SGLang num_steps 1-3); past 16 the accepted length is flat and the verify cost dominates.
MAX_DRAFT_TOKENS = 16


def check_mtp(mtp: MTP | None, model) -> None:
    """MTP needs the model's own MTP module (DeepSeek ``num_nextn_predict_layers``).

    Raises:
        SpecError: MTP on a model without one (a separate draft model is not modelled).
    """
    if mtp is not None and not model.mtp_layers:
        raise SpecError(
            "mtp",
            f"{model.name} has no MTP module (num_nextn_predict_layers = 0)",
            "leave MTP off for this model (draft-model speculative decoding is not modelled)",
        )


def query_len(mtp: MTP | None) -> int:
    """Rows per decoding sequence in a step: 1, or 1 + k drafts to verify with MTP."""
    return mtp.verify_rows if mtp else 1


def resident_draft_modules(model, mtp: MTP | None) -> int:
    """MTP modules kept in memory: the model's own (one, DeepSeek) when MTP is on, else none."""
    return min(model.mtp_layers, 1) if mtp else 0


@dataclass(frozen=True, slots=True)
class MTP:
    """Multi-token prediction / speculative decoding.

    Attributes:
        draft_tokens: k draft tokens per step.
        acceptance: per-position acceptance probability alpha of a draft token.
    """

    draft_tokens: int
    acceptance: float

    def __post_init__(self) -> None:
        # numbers.Integral/Real: numpy's scalars (np.int64, np.float32) are numbers too; bool (and np.bool_,
        # which is no numbers.Number) is not
        if (
            isinstance(self.draft_tokens, bool)
            or not isinstance(self.draft_tokens, numbers.Integral)
            or self.draft_tokens < 1
        ):
            raise SpecError(
                "mtp",
                f"draft length must be a positive integer, got {self.draft_tokens!r}",
                "give --mtp K with K >= 1 (or leave MTP off)",
            )
        if self.draft_tokens > MAX_DRAFT_TOKENS:
            raise SpecError(
                "mtp",
                f"draft length {self.draft_tokens} is beyond {MAX_DRAFT_TOKENS}",
                f"give --mtp K with 1 <= K <= {MAX_DRAFT_TOKENS} (engines run 1-4 MTP drafts)",
            )
        a = self.acceptance  # '0.5' raised a TypeError from the comparison; true was read as 1
        if isinstance(a, bool) or not isinstance(a, numbers.Real):
            raise SpecError(
                "mtp-acceptance",
                f"must be a number in [0, 1), got {a!r}",
                "give the measured per-token acceptance rate as a number, e.g. 0.7",
            )
        if not 0 <= a < 1:
            raise SpecError(
                "mtp-acceptance",
                f"must be in [0, 1), got {self.acceptance}",
                "give the measured per-token acceptance rate, e.g. 0.7",
            )

    @property
    def tokens_per_step(self) -> float:
        """Expected tokens emitted per verify step: (1 − α^(k+1)) / (1 − α) (Leviathan et al. 2023).

        >>> round(MTP(3, 0.8).tokens_per_step, 4)  # (1 - 0.8**4) / 0.2 = 0.5904 / 0.2 by hand
        2.952
        """
        a, k = self.acceptance, self.draft_tokens
        return (1 - a ** (k + 1)) / (1 - a)

    @property
    def verify_rows(self) -> int:
        """Rows each decoding sequence runs through a verify step: itself + the k drafts."""
        return 1 + self.draft_tokens

    def as_dict(self) -> dict:
        """MTP as JSON: draft tokens, acceptance, tokens per step."""
        return {
            "draft_tokens": self.draft_tokens,
            "acceptance": self.acceptance,
            "tokens_per_step": self.tokens_per_step,
        }
