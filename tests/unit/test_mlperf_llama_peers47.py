"""The MLPerf Llama TensorRT-engine harness term (fit/mlperf_engines.LLAMA_TRT_HARNESS_STEP_S, round 47) and its fit
script, scripts/mlperf_llama_peers47.py: which rows carry it, the peer runs' loads by hand, the fit split."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from jalapeno.fit.mlperf import load_mlperf
from jalapeno.fit.mlperf_rows import _harness_step_s
from jalapeno.fit.mlperf_engines import DSR1_HARNESS_STEP_S, LLAMA_TRT_HARNESS_ON, LLAMA_TRT_HARNESS_STEP_S

_SPEC = importlib.util.spec_from_file_location(
    "mlperf_llama_peers47", Path(__file__).resolve().parents[2] / "scripts" / "mlperf_llama_peers47.py"
)
lp = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(lp)

H200_INT = "mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama2-70b-99_Interactive"
DYNAMO = "mlperf51_NVIDIA_GB200-NVL72_GB200-186GB_aarch64x72_Dynamo_llama3p1-405b_Interactive"


def test_term_by_row_kind():
    h = LLAMA_TRT_HARNESS_STEP_S["h200"]
    assert _harness_step_s(H200_INT, "trt", "llama-2-70b", "h200", llama_on=True) == h
    assert _harness_step_s(H200_INT, "trt", "llama-2-70b", "h200", llama_on=False) == 0.0
    # the Blackwell family is not fitted (its groups disagree in sign), the Dynamo row runs another harness
    b200 = "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_llama2-70b-99_Interactive"
    assert _harness_step_s(b200, "trt", "llama-2-70b", "b200", llama_on=True) == 0.0
    assert _harness_step_s(DYNAMO, "trt", "llama-3.1-405b", "gb200-nvl72", llama_on=True) == 0.0
    # DeepSeek-R1 keeps its own term whatever the switch; vLLM rows carry none
    dsr1 = "mlperf51_NVIDIA_B200-SXM-180GBx8_TRT_deepseek-r1_Server"
    assert _harness_step_s(dsr1, "trt", "deepseek-r1", "b200", llama_on=False) == DSR1_HARNESS_STEP_S
    assert _harness_step_s("mlperf51_AMD_8xMI300X_x", "vllm", "llama-2-70b", "mi300x", llama_on=True) == 0.0


def test_rows_carry_the_shipped_switch():
    # shipped on since round 47 (the switch's comment: validate --mlperf H200 6.6 / 19.6 / +6.6 -> 2.0 / 8.7 / +0.0);
    # tests55: this test read the switch and expected no row to carry the term when it was off, so a switch flipped
    # off kept every test green
    assert LLAMA_TRT_HARNESS_ON is True
    pts, _ = load_mlperf()
    for p in pts:
        if p.model.startswith("llama") and "_TRT_" in p.id:
            assert p.harness_step_s == LLAMA_TRT_HARNESS_STEP_S.get(p.system, 0.0), p.id
    on = [p.id for p in pts if p.harness_step_s and p.model.startswith("llama")]
    # the six Nebius H200 Llama rows (Offline / Server / Interactive x 2 models)
    assert len(on) == 6 and all(i.startswith("mlperf51_Nebius_H200-SXM-141GBx8_TRT_") for i in on)
    assert 0.005 < LLAMA_TRT_HARNESS_STEP_S["h200"] < 0.010  # the script's 7.47 ms (round 47: 7.25)


def test_switch_is_read_where_it_lives(monkeypatch):
    # review47: fit/mlperf imported a copy of the switch, so setting fit/mlperf_engines.LLAMA_TRT_HARNESS_ON (as the
    # project's other switches are set, where they are defined) left the six H200 rows at 7.25 ms
    import jalapeno.fit.mlperf_engines as me

    for on, want in ((False, 0.0), (True, me.LLAMA_TRT_HARNESS_STEP_S["h200"])):
        monkeypatch.setattr(me, "LLAMA_TRT_HARNESS_ON", on)
        rows = {p.id: p.harness_step_s for p in load_mlperf()[0]}
        assert rows[H200_INT] == pytest.approx(want)
        assert rows["mlperf51_Nebius_H200-SXM-141GBx8_TRT_llama3p1-405b_Offline"] == pytest.approx(want)
    monkeypatch.setattr(me, "LLAMA_TRT_HARNESS_STEP_S", {"h200": 1e-3})
    assert {p.id: p.harness_step_s for p in load_mlperf()[0]}[H200_INT] == pytest.approx(1e-3)


def test_peer_loads_by_littles_law():
    rows = {(r["group"], r["who"]): r for r in lp.peer_rows()}
    # Cisco C885 H200 Interactive: 19,621.88 output tok/s on 8 GPUs x median TPOT 34.84 ms = 85.5 a GPU (TP1)
    cisco = rows[(("llama2-70b-99", "h200", "Interactive"), "Cisco C885_H200x8_TRT")]
    assert cisco["per_instance"] == pytest.approx(19621.88 / 8 * 0.03484, rel=1e-6)
    assert not cisco["val"]
    # Quanta D74U H200 Llama-3.1-405B Server, one TP8 instance on its 8 GPUs: 295.52 tok/s x median TPOT 53.19 ms
    q = [r for (g, w), r in rows.items() if g == ("llama3.1-405b", "h200", "Server") and w.startswith("Quanta")][0]
    assert q["per_instance"] == pytest.approx(295.52 * 0.05319, rel=1e-6)
    # the validation runs are the rows' own (Nebius H200, NVIDIA B200), every other run is a fit run
    ids = {p.id for p in load_mlperf()[0]}
    for (g, who), r in rows.items():
        sub, system = who.split(" ", 1)
        tag = {"llama2-70b-99": "llama2-70b-99", "llama3.1-405b": "llama3p1-405b"}[g[0]]
        own = f"mlperf51_{sub}_{system.replace('_TRT', '')}_TRT_{tag}_{g[2]}" in ids
        assert r["val"] == own, who
    # Nebius H200 and NVIDIA B200: 2 models x 2 scenarios each; GB200 x4 Llama-2-70B Server; GB200 x72 405B Int + Server
    assert sum(r["val"] for r in rows.values()) == 4 + 4 + 1 + 2


def test_boards_and_gpus():
    assert lp.catalog_system("D75E-4U_H200-NVL-141GBx4_TRT") is None  # H200 NVL: another board
    assert lp.catalog_system("XE7745_H200_NVL_141GBx8_TRT") is None
    assert lp.catalog_system("GB200-NVL72_GB200-186GB_aarch64x72_Dynamo") is None
    assert lp.catalog_system("C885_H200x8_TRT") == "h200"
    assert lp.catalog_system("G894-SD1_B200-SXM-180GBx8_TRT") == "b200"
    assert lp.gpus("C885A_M8_H200_SXM_141GBx16_TRT") == 16
    assert lp.gpus("GB200-NVL72_GB200-186GB_aarch64x4_TRT") == 4


def test_fit_reproduces_the_constant_and_refuses_an_empty_family():
    h = lp.fitted_term_s(("h200",))
    assert h == pytest.approx(LLAMA_TRT_HARNESS_STEP_S["h200"], abs=0.1e-3)
    # with it the H200 fit groups' mean residual is zero; without it every H200 group is 6-9 ms short
    g0 = lp.group_residuals([r for r in lp.peer_rows() if r["group"][1] == "h200"], 0.0, fit=True)
    assert all(0.005 < sum(v) / len(v) < 0.010 for v in g0.values())
    with pytest.raises(ValueError, match="no fit run"):
        lp.fitted_term_s(("mi300x",))
