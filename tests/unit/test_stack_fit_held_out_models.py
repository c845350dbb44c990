"""The stack fits never read the rows of a held-out model (fit/stack_fit.HELD_OUT_MODELS): MiniMax-M2.5's
aiconfigurator rows are validation evidence only (a leave-one-model-out check of the fitted engine costs)."""

from __future__ import annotations

import pytest

pytest.importorskip("aiconfigurator_core")


def test_minimax_rows_are_validated_but_never_fitted():
    from jalapeno.fit import stack_fit
    from jalapeno.fit.validate import load_aiconfigurator

    rows = load_aiconfigurator()[0]
    minimax = [p for p in rows if p.model == "minimax-m2.5" and p.mapping == "matched" and p.deployment is not None]
    # the sample's MiniMax-M2.5 rows (B200, B300, H100, H200 on vLLM/SGLang/TRT-LLM) are mapped to deployments
    assert len(minimax) > 100
    fitted = stack_fit.load_points()
    assert not [p for p in fitted if p.model == "minimax-m2.5"]
    assert {"deepseek-r1", "kimi-k2.5"} <= {p.model for p in fitted}
