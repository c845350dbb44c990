"""Rows timed without a client warm-up (fit/client_warmup.py): out of the front-end and burst fits, in every figure."""

from __future__ import annotations

import pandas as pd
import pytest

from jalapeno.fit import stack_fit
from jalapeno.fit.client_warmup import WARMUP_FROM, aic_row_dates, cold_client_ids, is_cold
from jalapeno.specs.stacks import Stack


class _P:
    """A fit point as fit/stack_fit reads it (fit/validate.MeasuredPoint's fields that step 2 and 4 use)."""

    def __init__(self, i, conc, mode="agg"):
        self.id, self.concurrency, self.mode = f"aic:r{i:02d}", conc, mode
        self.framework, self.source, self.client, self.system = "sglang", "aiconfigurator", "inferencex-db", "b200"
        self.model, self.isl, self.osl = "m", 1024, 1024

    @property
    def timed_by(self):
        return self.client


def test_the_rule_is_the_client_and_the_date_of_inferencex_pr_480():
    # InferenceX PR #480 (d053ae24e) merged on 2026-01-21: the day before is cold, the day itself warm
    assert WARMUP_FROM == "2026-01-21"
    assert is_cold("inferencex-db", "2026-01-20") and not is_cold("inferencex-db", "2026-01-21")
    # NVIDIA's gap-analysis client ran 2·C warm-ups whatever the date; an undated row is not known to be cold
    assert not is_cold("aiconfigurator", "2025-10-01") and not is_cold("inferencex-db", "")
    frame = pd.DataFrame({"id": ["a", "b", "c"], "silicon_data_source": [
        "source_file=2026-04-06.csv; measured=2025-11-02T10:00:00Z", "source_file=2026-04-06.csv; measured=2026-02-05T19:55:05Z",
        float("nan")]})
    assert aic_row_dates(frame) == {"aic:a": "2025-11-02", "aic:b": "2026-02-05", "aic:c": ""}
    pts = [_P(i, 4) for i in range(3)]
    for p, rid in zip(pts, ("aic:a", "aic:b", "aic:c")):
        p.id = rid
    assert cold_client_ids(pts, aic_row_dates(frame)) == {"aic:a"}


def test_cold_rows_leave_the_front_end_and_burst_fits_and_stay_in_the_errors(monkeypatch):
    """Fake TTFT = 0.1 s + a (client front end) + w·1 s (its aggregated burst share, zero at C <= 4): the warm
    rows measure a = 0.05 s, w = 0.3; the cold ones (two rows in three of each load) 0.5 s more at C <= 4 and 1 s
    more above (a one-off first-wave stall that grows with the load). Left out, the fit gives the warm values exactly; left in, the cold majority pulls both up.
    The cold rows' TTFT is still in the report's errors (n counts them)."""
    pts = [_P(i, c) for i, c in enumerate(c for c in (1, 2, 3, 4, 16, 32, 64, 128) for _ in range(6))]
    cold = frozenset(p.id for i, p in enumerate(pts) if i % 6 >= 2)  # fit (even i): 1 warm, 2 cold of each load

    def ttft(p, a, w):
        return 0.1 + a + (w if p.concurrency > 4 else 0.0)

    def fake_predict(points, st):
        rows = []
        for p in points:
            s = st.for_client(p.client)
            pred = ttft(p, s.request_overhead_s or 0.0, s.agg_burst_fraction or 0.1)
            meas = ttft(p, 0.05, 0.3) + (0.5 if p.concurrency <= 4 else 1.0) * (p.id in cold)
            rows.append({"id": p.id, "metric": "ttft_s", "predicted": pred, "measured": meas,
                         "error": pred / meas - 1})
        return pd.DataFrame(rows)

    monkeypatch.setattr(stack_fit, "_predict", fake_predict)
    monkeypatch.setattr(stack_fit, "PLAN", {"sglang": ()})
    sp = stack_fit.split(pts)
    assert {sp[i] for i in cold} == {"fit", "held_out"}
    got = stack_fit.fit_stack("sglang", pts, sp, Stack("sglang", "s", "s"), front_end=True, cold=cold)
    entry = got["clients"]["inferencex-db"]
    assert entry["request_overhead_s"] == pytest.approx(0.05)
    assert entry["agg_burst_fraction"] == pytest.approx(0.3)
    after = got["report"]["after"]
    n_fit = sum(sp[p.id] == "fit" for p in pts)
    assert after["fit"]["ttft_s"]["n"] == n_fit and after["held_out"]["ttft_s"]["n"] == len(pts) - n_fit
    assert after["held_out"]["ttft_s"]["bias"] < 0  # the cold rows are reported, too fast as they are
    with_them = stack_fit.fit_stack("sglang", pts, sp, Stack("sglang", "s", "s"), front_end=True)
    assert with_them["clients"]["inferencex-db"]["request_overhead_s"] > 0.05
    assert with_them["clients"]["inferencex-db"]["agg_burst_fraction"] > 0.3


def test_a_cold_sample_row_is_kept_in_the_validate_figures():
    """aiconfigurator-core 0.12.0's B200 TensorRT-LLM DeepSeek-R1 FP4 TP8 1k/1k C = 16 row, measured 2025-11-02
    (InferenceX export, before the client's warm-up): cold, loaded, and in ``jalapeno validate``'s figures."""
    pytest.importorskip("aiconfigurator_core")
    from importlib.resources import files

    from jalapeno.fit.validate import load_aiconfigurator
    from jalapeno.fit.validation_run import run_validation

    rid = "2026_04_06_deepseek_r1_b200_sxm_trtllm_fp4_agg_1024x1024_c16_tp8_ep1_98"
    frame = pd.read_csv(files("aiconfigurator_core") / "systems" / "silicon_sample.csv")
    frame = frame[frame["id"] == rid]
    assert len(frame) == 1
    pts = load_aiconfigurator(frame)[0]
    assert cold_client_ids(pts, aic_row_dates(frame)) == {f"aic:{rid}"}
    rows = run_validation(aic_frame=frame, systems=("b200",))["rows"]
    ttft = rows[(rows["id"] == f"aic:{rid}") & (rows.metric == "ttft_s")]
    assert len(ttft) == 1 and ttft.quality.iloc[0] == "" and ttft.error.notna().all()
