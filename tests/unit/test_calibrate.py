"""Calibration (fit/calibrate.py) on the committed aiconfigurator kernel samples, and the shipped sets.

Contract (issue): calibration runs on a small committed fixture (tests/fixtures/aiconfigurator,
with ATTRIBUTION.md); a calibration never sees the points it is judged on (the end-to-end
``silicon_sample`` rows are validation data only — the split is tested here); every efficiency
fraction stays in (0, 1]. No test needs the ``aiconfigurator-core`` package; the GEMM fit needs
scipy and the end-to-end ``calibrate_system`` run needs pyarrow (both skipped when absent).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import sys
import tomllib
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jalapeno.fit import calibrate as cal
from jalapeno.fit import kernel_tables as ktables
from jalapeno.fit import attention_kernels as attk
from jalapeno.fit import kernels as kern
from jalapeno.fit import amd
from jalapeno.fit.amd import AITER_CU
from jalapeno.fit.moe_transfer import MOE_POOL, POOLED_MOE_SYSTEMS
from jalapeno.errors import SpecError, UnknownNameError
from jalapeno.specs.calibration import (
    EFFICIENCY_SETS,
    base_efficiency,
    load_calibration,
)
from jalapeno.specs.catalog import list_systems, load_efficiency, load_system
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY, Efficiency, flatten_params

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "aiconfigurator"
AITER_FIX = Path(__file__).resolve().parents[1] / "fixtures" / "aiter"
SHIPPED = sorted(p.name[:-5] for p in (resources.files("jalapeno") / "data" / "calibration").iterdir()
                 if p.name.endswith(".toml"))
MEASURED = [n for n in SHIPPED if load_calibration(n)["kind"] == "measured"]
DERIVED = [n for n in SHIPPED if load_calibration(n)["kind"] == "derived"]
FRACTION_FIELDS = [f.name for f in dataclasses.fields(Efficiency) if "_fraction" in f.name]  # scalar ones
KERNEL_TABLES = {("gemm", "gemm_perf"), ("attention", "context_attention_perf"),
                 ("attention", "generation_attention_perf"), ("moe", "moe_perf"), ("comm", "nccl_perf"),
                 ("comm", "custom_allreduce_perf"), ("mla", "generation_mla_perf"), ("mla", "context_mla_perf"),
                 ("comm", "trtllm_alltoall_perf")}
GB200_PEAK_BF16 = 2.5e15  # dense BF16 FLOP/s of one GB200 GPU, as the catalog gives it
GB200_HBM = 8e12  # HBM bytes/s


# ---- fixtures ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gb200():
    return load_system("gb200-nvl72")


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    return {k: pd.read_csv(FIX / f"gb200_{k}_sample.csv")
            for k in ("gemm", "context_attention", "generation_attention", "nccl")}


@pytest.fixture(scope="module")
def silicon() -> pd.DataFrame:
    return pd.read_csv(FIX / "silicon_sample_subset.csv")


@pytest.fixture(scope="module")
def gemm_fit(gb200, tables):
    pytest.importorskip("scipy")
    return kern.fit_gemm(tables["gemm"], gb200, kern.SERIAL_K_KEYS, kern.SERIAL_K_FIT_ONLY_KEYS)  # as calibrate_system fits


@pytest.fixture(scope="module")
def t0(gemm_fit) -> float:
    """The kernel floor calibrate_system passes to fit_attention: median of the GEMM floors."""
    return float(np.median([f["kernel_floor_s"] for f in gemm_fit[1]["formats"].values()]))


@pytest.fixture(scope="module")
def attention_fit(gb200, tables, t0):
    """The attention fit as calibrate_system makes it (t0 from the GEMM fit)."""
    return attk.fit_attention(tables["context_attention"], tables["generation_attention"], gb200, t0)


T0_FIXED = 5e-6  # a kernel floor for the attention tests that do not need the (scipy) GEMM fit


@pytest.fixture(scope="module")
def nccl_fit(gb200, tables):
    return kern.fit_nccl(tables["nccl"], gb200)


def _in_unit(v) -> bool:
    return v is None or (isinstance(v, float) and 0.0 < v <= 1.0)


def _kernel_fractions(eff: Efficiency):
    """(name, value) of every fraction set in the GEMM and MoE tables (gemm.fp8.peak_fraction ...)."""
    for op in ("gemm", "moe"):
        for fmt, k in getattr(eff, op).items():
            for f in ("peak_fraction", "hbm_fraction"):
                if getattr(k, f) is not None:
                    yield f"{op}.{fmt}.{f}", getattr(k, f)


# ---- the fixture itself ---------------------------------------------------------------------------

def test_fixture_is_small_and_attributed():
    text = (FIX / "ATTRIBUTION.md").read_text()
    assert "Apache" in text and "aiconfigurator" in text
    for f in FIX.glob("*.csv"):
        assert f.name in text, f"{f.name} not named in ATTRIBUTION.md"
        assert sum(1 for _ in f.open()) <= 1000, f"{f.name} is not a small sample"


# ---- GEMM ---------------------------------------------------------------------------------------

def test_fit_gemm_fractions_in_unit_interval_and_fit_is_good(gemm_fit, tables):
    params, report = gemm_fit
    assert list(params) == ["gemm"]  # nested by format: {"gemm": {"bf16": {...}, ...}}
    # gb200 has bf16, fp8 and fp4 peaks; the sample has three dtypes, its FP8 rows block-scaled (fp8_block)
    for fmt in ("bf16", "fp8_block", "fp4"):
        g = params["gemm"][fmt]
        # the block-scaled entry also fits its serial k loop (fit/kernels.SERIAL_K_KEYS), in µs-scale seconds
        assert set(g) == {"peak_fraction", "half_rows", "hbm_fraction"} | ({"k_block_s"} if fmt == "fp8_block" else set())
        assert 0.0 < g.get("k_block_s", 1e-7) < 1e-6
        assert 0.0 < g["peak_fraction"] <= 1.0
        assert 0.0 < g["hbm_fraction"] <= 1.0
        assert g["half_rows"] > 0.0
    assert set(report["formats"]) == {"bf16", "fp8_block", "fp4"}
    assert all("held_out_median_ape" in f for f in report["formats"].values())  # every other shape refitted
    assert math.isfinite(report["median_ape"]) and report["median_ape"] < 0.5
    assert report["p90_ape"] >= report["median_ape"]
    # rows: every fixture row with m >= 8 (the fit's documented filter)
    assert report["rows"] == report["n"] == int((tables["gemm"].m >= 8).sum())
    for f in report["formats"].values():
        assert f["kernel_floor_s"] > 0 and math.isfinite(f["median_ape"])
    # the parameters are accepted by the efficiency validator
    Efficiency().with_overrides(params)


def _hand_gemm_s(m, n, k, peak, eta, m_half, eta_m, t0, w, wb, ab):
    """The module docstring's GEMM form, written out again."""
    compute = 2.0 * m * n * k / (peak * eta * m / (m + m_half))
    memory = (m * k * ab + k * n * wb + m * n * 2.0) / (w * eta_m)
    return max(compute, memory) + t0


def test_fit_gemm_model_matches_the_documented_formula(gemm_fit, gb200, tables):
    params, report = gemm_fit
    eta, mh, em = (params["gemm"]["bf16"][k] for k in ("peak_fraction", "half_rows", "hbm_fraction"))
    t0 = report["formats"]["bf16"]["kernel_floor_s"]
    assert gb200.chip.peak("bf16") == GB200_PEAK_BF16 and gb200.chip.hbm_bandwidth_bytes_per_s == GB200_HBM
    row = tables["gemm"].iloc[1]  # bfloat16, m=3072, n=7168, k=4096, 0.1172 ms
    assert (row.gemm_dtype, row.m, row.n, row.k) == ("bfloat16", 3072, 7168, 4096)
    hand = _hand_gemm_s(3072, 7168, 4096, GB200_PEAK_BF16, eta, mh, em, t0, GB200_HBM, 2.0, 2.0)
    tab = kern.gemm_table(np.array([3072.0]), np.array([7168.0]), np.array([4096.0]), "bf16", 2.0, 2.0)
    fn = float(kern.gemm_model_s(gb200, tab, "bf16", eta, mh, em, t0)[0])
    assert fn == pytest.approx(hand, rel=1e-12)
    # the fitted model is close to the measured time of this compute-bound row
    assert hand == pytest.approx(row.latency * 1e-3, rel=0.3)
    # the report's bf16 median error is the hand model's median error over the bf16 rows it fitted
    d = tables["gemm"][(tables["gemm"].gemm_dtype == "bfloat16") & (tables["gemm"].m >= 8)]
    errs = [abs(_hand_gemm_s(r.m, r.n, r.k, GB200_PEAK_BF16, eta, mh, em, t0, GB200_HBM, 2.0, 2.0)
                / (r.latency * 1e-3) - 1) for r in d.itertuples()]
    assert report["formats"]["bf16"]["n"] == len(d)
    assert report["formats"]["bf16"]["median_ape"] == pytest.approx(float(np.median(errs)), rel=1e-9)


def test_fit_gemm_peak_fraction_agrees_with_the_largest_measured_gemm(gemm_fit, tables):
    """Independent of the fit: a large BF16 GEMM is compute-bound, so 2mnk/(t·peak) ≈ its fraction of peak."""
    d = tables["gemm"][tables["gemm"].gemm_dtype == "bfloat16"]
    big = d.loc[(2.0 * d.m * d.n * d.k).idxmax()]
    assert big.m >= 8192  # in the flat part of eta(m) = eta · m / (m + m_half)
    implied = 2.0 * big.m * big.n * big.k / (big.latency * 1e-3 * GB200_PEAK_BF16)
    assert 0.0 < implied <= 1.0
    assert implied == pytest.approx(gemm_fit[0]["gemm"]["bf16"]["peak_fraction"], rel=0.25)


def test_fit_gemm_skips_formats_the_chip_lacks(tables):
    pytest.importorskip("scipy")
    h200 = load_system("h200")  # Hopper: no FP4 peak
    assert "fp4" not in h200.chip.peak_flop_per_s
    d = tables["gemm"][tables["gemm"].gemm_dtype.isin(["bfloat16", "nvfp4"])]
    params, report = kern.fit_gemm(d, h200)
    assert set(report["formats"]) == {"bf16"}
    assert set(params["gemm"]) == {"bf16"}
    assert report["rows"] == int(((d.gemm_dtype == "bfloat16") & (d.m >= 8)).sum())


# ---- attention ----------------------------------------------------------------------------------

def test_fit_attention_fractions_and_cap(gb200, tables):
    t0 = T0_FIXED
    params, report = attk.fit_attention(tables["context_attention"], tables["generation_attention"], gb200, t0)
    assert set(params) == {"attention_peak_fraction", "hbm_fraction"}
    assert 0.0 < params["attention_peak_fraction"] <= 1.0
    assert 0.0 < params["hbm_fraction"] <= 0.95  # the documented cap
    assert report["decode"]["kernel_floor_s"] >= 0.0
    assert math.isfinite(report["prefill"]["median_ape"]) and math.isfinite(report["decode"]["median_ape"])
    # prefill fraction by hand: median over BF16, full-attention rows with isl >= 2048 of flops/((t - t0)·F)
    c = tables["context_attention"]
    c = c[(c.attn_dtype == "bfloat16") & (c.window_size == 0) & (c.isl >= 2048)]
    assert report["prefill"]["rows"] == len(c) > 0
    fr = [4.0 * r.batch_size * r.num_heads * r.head_dim * r.isl ** 2 / 2 / ((r.latency * 1e-3 - t0) * GB200_PEAK_BF16)
          for r in c.itertuples()]
    assert params["attention_peak_fraction"] == pytest.approx(min(max(float(np.median(fr)), 0.05), 1.0), rel=1e-9)


def test_fit_attention_stays_in_range_on_extreme_data(gb200, tables):
    """Absurdly fast prefill kernels would imply > 100% of peak: the fit clips into (0, 1]; decode
    rows faster than peak HBM are no measurement of the KV read: left out, and refused when none
    is left."""
    ctx, gen = tables["context_attention"].copy(), tables["generation_attention"].copy()
    ctx["latency"] /= 1e3
    params, report = attk.fit_attention(ctx, gen, gb200, 0.0)
    assert 0.0 < params["attention_peak_fraction"] <= 1.0 and 0.0 < params["hbm_fraction"] <= 0.95
    assert report["decode"]["dropped_above_peak"] == 0
    fast = gen.copy()
    fast["latency"] /= 1e3
    with pytest.raises(SpecError, match="faster than the chip's peak HBM bandwidth"):
        attk.fit_attention(ctx, fast, gb200, 0.0)
    gen["latency"] /= 1e3
    ctx["latency"] *= 1e6
    gen["latency"] *= 1e6
    params, _ = attk.fit_attention(ctx, gen, gb200, 0.0)
    assert 0.0 < params["attention_peak_fraction"] <= 1.0 and 0.0 < params["hbm_fraction"] <= 0.95


def test_decode_fit_recovers_a_known_law_and_ignores_warm_l2_rows(gb200, tables):
    """Decode rows made by hand from t = 9 us + KV bytes / (GB200_HBM x 0.88), one query head per KV
    head (compute 1 FLOP per byte: negligible), BF16 KV: the fit on the rows that read >= 256 MiB
    gives 0.88 and the floor back; rows under it timed 2x faster (a KV cache warm in L2) and rows
    under 1,024 tokens of context (garbage latencies) do not move it."""
    pytest.importorskip("scipy")
    rows = []
    for b in (1, 4, 16, 64, 256, 1024):
        for step in (63, 1024, 4096, 16384, 65536):
            for kvh in (1, 8):
                byt = b * step * 2 * kvh * 128 * 2
                t = 9e-6 + byt / (GB200_HBM * 0.88)
                if step < 1024:
                    t = 1e-3  # not used
                elif byt < attk.DECODE_FIT_MIN_BYTES:
                    t = t / 2  # warm in L2: not a read from HBM
                rows.append({"window_size": 0, "step": step, "batch_size": b, "num_key_value_heads": kvh,
                             "num_heads": kvh, "head_dim": 128, "kv_cache_dtype": "bfloat16", "latency": t * 1e3})
    gen = pd.DataFrame(rows)
    params, report = attk.fit_attention(tables["context_attention"], gen, gb200, T0_FIXED)
    assert params["hbm_fraction"] == pytest.approx(0.88, rel=1e-3)
    assert report["decode"]["kernel_floor_s"] == pytest.approx(9e-6, rel=1e-2)
    big = (gen.step >= 1024) & (gen.batch_size * gen.step * 2 * gen.num_key_value_heads * 128 * 2 >= 2**28)
    assert report["decode"]["rows"] == int(big.sum()) > 0
    assert report["decode"]["median_ape"] < 1e-3
    # every row of context >= 1024 is judged, but those the halving pushed past peak HBM (dropped)
    assert report["decode"]["all_rows_n"] + report["decode"]["dropped_above_peak"] == int((gen.step >= 1024).sum())
    assert report["decode"]["all_rows_p90_ape"] == pytest.approx(1.0, rel=1e-3)  # warm rows: the law gives 2x


# ---- collectives --------------------------------------------------------------------------------

def test_fit_nccl_judges_without_fitting(nccl_fit, tables):
    """The NCCL ramps are fitted once on published data (fit/collectives.py): a system's own
    table is only judged, so nothing comes back as a parameter."""
    params, report = nccl_fit
    assert params == {}
    assert report["rows"] == len(tables["nccl"]) and math.isfinite(report["median_ape"])
    assert math.isfinite(report["bias"])


# ---- MoE layers -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def moe_table() -> pd.DataFrame:
    return pd.read_csv(FIX / "gb200_moe_sample.csv")


def _uniform_moe_quantities(tokens, topk, ep, experts, hidden, inter, wb, ab):
    """Balanced routing written out again: every rank gets T·k/ep picks; a token misses a given
    expert with probability 1 − k/E, and a rank's picks equal T tokens' worth of traffic."""
    load = tokens * topk / ep
    touched = (experts / ep) * (1.0 - (1.0 - topk / experts) ** tokens)
    flop = 2.0 * load * 3 * hidden * inter
    byt = touched * 3 * hidden * inter * wb + load * (hidden * ab + 2 * inter * 2 + inter * ab + hidden * 2)
    return load, touched, flop, byt


def test_moe_rows_keep_the_fastest_balanced_kernel_per_configuration(moe_table):
    rows = kern.moe_rows(moe_table)
    # the power-law row and the W4A8 row are dropped; two nvfp4 kernels per configuration become one
    assert set(rows.moe_dtype) == {"bfloat16", "fp8_block", "nvfp4"}
    assert not rows.duplicated(["moe_dtype", "num_tokens", "hidden_size", "moe_ep_size"]).any()
    r = rows[(rows.moe_dtype == "nvfp4") & (rows.hidden_size == 7168) & (rows.num_tokens == 128)].iloc[0]
    both = moe_table[(moe_table.moe_dtype == "nvfp4") & (moe_table.hidden_size == 7168)
                     & (moe_table.num_tokens == 128)]
    assert len(both) == 2 and r.t == pytest.approx(both.latency.min() * 1e-3)
    load, touched, flop, byt = _uniform_moe_quantities(128, 8, 8, 256, 7168, 2048, 0.5625, 0.5625)
    assert r.load == pytest.approx(load) and r.touched == pytest.approx(touched) and bool(r.held_out)
    # the op the calibration prices is the step's own routed-expert op (cost/expert_ops.add_routed_experts)
    op = kern.moe_table(rows[rows.index == r.name], "fp4")
    assert float(op.flop[0, 0]) == pytest.approx(flop) and float(op.bytes[0, 0]) == pytest.approx(byt)
    assert float(op.rows[0, 0]) == pytest.approx(load / touched)


def test_fit_moe_recovers_known_parameters_from_synthetic_layers(gb200, moe_table):
    """Latencies made from the documented form with chosen parameters: the fit returns them."""
    pytest.importorskip("scipy")
    truth = {"bf16": (0.45, 120.0, 0.8), "fp8": (0.15, 70.0, 0.55), "fp4": (0.14, 48.0, 0.75)}
    passes = {"bf16": 6.0, "fp8": 3.0, "fp4": 9.0}  # BF16 passes over every token of the EP group
    floor = 33e-6
    syn = moe_table.copy()
    dt = {"bfloat16": ("bf16", 2.0, 2.0), "fp8_block": ("fp8", 1.0, 1.0), "nvfp4": ("fp4", 0.5625, 0.5625)}
    for i, r in syn.iterrows():
        if r.moe_dtype not in dt:
            continue
        fmt, wb, ab = dt[r.moe_dtype]
        load, touched, flop, byt = _uniform_moe_quantities(r.num_tokens, r.topk, r.moe_ep_size, r.num_experts,
                                                           r.hidden_size, r.inter_size / r.moe_tp_size, wb, ab)
        eta, mh, em = truth[fmt]
        m = load / touched
        scan = passes[fmt] * r.num_tokens * r.hidden_size * 2.0
        t = max(flop / (gb200.chip.peak(fmt) * eta * m / (m + mh)), (byt + scan) / (GB200_HBM * em)) + floor
        syn.loc[i, "latency"] = t * 1e3
    params, report = kern.fit_moe(syn, gb200)
    assert report["kernel_floor_s"] == pytest.approx(floor, rel=0.05)
    for fmt, (eta, mh, em) in truth.items():
        p = params["moe"][fmt]
        assert p["hbm_fraction"] == pytest.approx(em, rel=0.05), fmt
        assert p["peak_fraction"] == pytest.approx(eta, rel=0.15), fmt
        assert p["token_passes"] == pytest.approx(passes[fmt], rel=0.15), fmt
        assert report["formats"][fmt]["fit"]["median_ape"] < 0.02
    assert "moe_floor_s" not in params  # reported, not used (CUDA graphs hide launch floors)
    Efficiency().with_overrides(params)


def test_fit_moe_fits_no_token_passes_on_a_single_ep_size(gb200, moe_table):
    """With one EP size the group's token scans scale like the assignments: not identified, not emitted."""
    pytest.importorskip("scipy")
    one = moe_table[moe_table.moe_ep_size == 8]
    params, _ = kern.fit_moe(one, gb200)
    assert params and not any("token_passes" in p for p in params["moe"].values())


def test_fit_moe_never_sees_the_held_out_shape(gb200, moe_table):
    """DeepSeek's shape is judged, not fitted: scaling its latencies changes only its error."""
    pytest.importorskip("scipy")
    p1, r1 = kern.fit_moe(moe_table, gb200)
    bent = moe_table.copy()
    ds = (bent.hidden_size == 7168) & (bent.num_experts == 256)
    bent.loc[ds, "latency"] *= 3.0
    p2, r2 = kern.fit_moe(bent, gb200)
    assert p1 == p2
    assert r2["formats"]["fp4"]["held_out_deepseek_shape"]["median_ape"] != pytest.approx(
        r1["formats"]["fp4"]["held_out_deepseek_shape"]["median_ape"])
    assert "held_out_deepseek_shape" not in r1["formats"]["bf16"]  # no bf16 row of that shape
    for k, v in flatten_params(p1).items():
        assert v > 0 and (v <= 1.0 if "_fraction" in k else True), k


def test_fit_moe_token_split_fits_every_shape_and_judges_the_odd_token_counts(gb200, moe_table):
    """split="tokens" (AMD): DeepSeek's shape is fitted; the rows whose token count is an odd power
    of two (32, 128, 512, ...) are held out, whatever their shape."""
    pytest.importorskip("scipy")
    p1, r1 = kern.fit_moe(moe_table, gb200, split="tokens")
    bent = moe_table.copy()
    ds = (bent.hidden_size == 7168) & (bent.num_experts == 256)
    bent.loc[ds, "latency"] *= 3.0
    p2, _ = kern.fit_moe(bent, gb200, split="tokens")
    assert p1 != p2  # DeepSeek's rows now move the fit
    rows = kern.moe_rows(moe_table)
    rows = rows[rows.fmt == "fp4"]
    odd_powers = {2, 8, 32, 128, 512, 2048, 8192, 32768, 131072}  # 2^1, 2^3, ... written out, not the fit's rule
    odd = sum(1 for t in rows.num_tokens if t in odd_powers)
    rep = r1["formats"]["fp4"]
    assert "held_out_deepseek_shape" not in rep
    assert rep["held_out_tokens"]["n"] == odd and rep["fit"]["n"] == len(rows) - odd


def test_fit_moe_unknown_split_is_one_clear_error(gb200, moe_table):
    with pytest.raises(SpecError, match="unknown split 'random'") as e:
        kern.fit_moe(moe_table, gb200, split="random")
    assert "shape, tokens" in e.value.fix


# ---- the split: calibration never sees end-to-end points ----------------------------------------

def test_fitting_functions_take_kernel_tables_only(gb200, silicon):
    """(b) The fits' inputs are kernel tables: a frame in the end-to-end silicon_sample format has
    none of their columns (gemm_dtype, attn_dtype, op_name, distribution) and is refused."""
    # ``withheld`` names table folders not to read (fit/loso.py), no data
    assert list(inspect.signature(cal.calibrate_system).parameters) == ["system", "withheld"]
    for fn, args in ((attk.fit_attention, (silicon, silicon, gb200, 0.0)), (kern.fit_nccl, (silicon, gb200)),
                     (kern.fit_moe, (silicon, gb200)), (kern.fit_gemm, (silicon, gb200))):
        if fn in (kern.fit_gemm, kern.fit_moe):
            pytest.importorskip("scipy")
        with pytest.raises((AttributeError, KeyError)):
            fn(*args)


def _fake_package(root: Path, tables: dict[str, pd.DataFrame], silicon: pd.DataFrame) -> Path:
    """The aiconfigurator-core ``systems`` layout for gb200, holding the fixture tables and an end-to-end file."""
    def put(sub: str, name: str, df: pd.DataFrame) -> None:
        d = root / "data" / "gb200" / sub
        d.mkdir(parents=True, exist_ok=True)
        df.to_parquet(d / f"{name}.parquet", index=False)

    put(f"gemm/trtllm/{ktables.PINNED_VERSION}", "gemm_perf", tables["gemm"])
    put(f"attention/trtllm/{ktables.PINNED_VERSION}", "context_attention_perf", tables["context_attention"])
    put(f"attention/trtllm/{ktables.PINNED_VERSION}", "generation_attention_perf", tables["generation_attention"])
    put("comm/nccl/2.29.2", "nccl_perf", tables["nccl"])
    silicon.to_csv(root / "silicon_sample.csv", index=False)
    return root


@pytest.fixture(scope="module")
def calibrated_with_perturbed_e2e(tmp_path_factory, tables, silicon, nccl_fit):
    """calibrate_system('gb200-nvl72') on a fake package whose end-to-end file is shuffled and scaled,
    with the real package blocked and any CSV read an error; returns (result, tables read).

    GEMM and attention are refitted for real. fit_nccl (a deterministic grid search, several
    seconds) is spied on (it judges, it fits nothing): the frame calibrate_system passes must equal the NCCL kernel table, and
    the spy then returns the direct fit of that same table.
    """
    pytest.importorskip("scipy")
    pytest.importorskip("pyarrow")
    perturbed = silicon.sample(frac=1.0, random_state=7).reset_index(drop=True)
    perturbed["silicon_ttft_ms"] *= 3.0
    perturbed["silicon_tpot_ms"] *= 0.25
    root = _fake_package(tmp_path_factory.mktemp("aic") / "systems", tables, perturbed)
    reads = []
    orig_load = ktables.load_table

    def spy(sdir, family, name):
        reads.append((sdir, family, name))
        return orig_load(sdir, family, name)

    def no_csv(*a, **k):
        raise AssertionError(f"calibration read a CSV: {a}")

    def nccl_spy(df, system, eff=None):
        reads.append(("gb200", "comm", "nccl_perf"))
        pd.testing.assert_frame_equal(df.reset_index(drop=True), tables["nccl"], check_exact=True)
        assert system.name == "gb200-nvl72"
        return nccl_fit

    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "aiconfigurator_core", None)  # the package is not needed
        mp.setattr(cal, "_root", lambda: root)
        mp.setattr(ktables, "_root", lambda: root)
        mp.setattr(cal, "package_version", lambda: "fixture")
        mp.setattr(cal, "load_table", spy)
        mp.setattr(pd, "read_csv", no_csv)
        mp.setattr(cal, "fit_nccl", nccl_spy)
        res = cal.calibrate_system(load_system("gb200-nvl72"))
    return res, reads


def test_calibration_is_identical_whatever_the_end_to_end_data(calibrated_with_perturbed_e2e, gemm_fit,
                                                               attention_fit, nccl_fit, tables):
    """(a) Fit twice — once directly on the kernel fixtures, once through calibrate_system with the
    end-to-end sample shuffled and rescaled beside the tables: the parameters are bit-identical
    (NCCL: the same table reaches the deterministic fit; see the fixture)."""
    res, reads = calibrated_with_perturbed_e2e
    # all_to_all_fraction is carried over from the shipped set, not fitted (fit/calibrate.py); all_to_all_latency_s
    # is not (round 28: a refit without its table keeps none of it) — the fixture has no measured all-to-all table
    shipped = load_calibration("gb200-nvl72")["parameters"]
    carried = {k: shipped[k] for k in ("all_to_all_fraction",) if k in shipped}
    # the NVLink 5 ramps, fitted on the generation's tables the package holds: here gb200's only
    from jalapeno.fit.collectives import aic_nccl_frame, fit_generation
    link, link_rep = fit_generation({"gb200-nvl72": aic_nccl_frame(tables["nccl"], load_system("gb200-nvl72"))})
    direct = {**gemm_fit[0], **attention_fit[0], **nccl_fit[0], **link, **carried}
    assert res["parameters"] == direct  # exact, not approx
    assert res["report"]["gemm"] == gemm_fit[1]
    assert res["report"]["attention"] == attention_fit[1]
    rep = res["report"]["nccl"]
    assert {k: v for k, v in rep.items() if k in nccl_fit[1]} == nccl_fit[1]
    assert rep["nvlink_generation"] == 5 and rep["ramp_systems"] == ["gb200-nvl72"]
    assert rep["ramp_rows"] == link_rep["rows"] and rep["held_out_rows"] == link_rep["held_out"]["gb200-nvl72"]["rows"]
    assert res["report"]["moe"] == {"rows": 0}  # no MoE table in the fixture
    assert res["report"]["custom_allreduce"] == {"rows": 0}  # nor a custom all-reduce table
    assert res["report"]["mla"] == {"rows": 0}  # nor MLA kernel tables
    assert {(f, n) for _, f, n in reads} <= KERNEL_TABLES
    assert ("comm", "nccl_perf") in {(f, n) for _, f, n in reads}
    assert {s for s, _, _ in reads} == {"gb200"}


def test_calibration_provenance_names_kernel_tables_only(calibrated_with_perturbed_e2e):
    res, _ = calibrated_with_perturbed_e2e
    prov = res["provenance"]
    assert set(prov) == {"package", "backend", "gemm_version", "attention_version", "system_dir"}
    assert prov["gemm_version"] == prov["attention_version"] == ktables.PINNED_VERSION
    assert prov["system_dir"] == "gb200" and prov["backend"] == ktables.BACKEND
    assert set(res["report"]) == {"gemm", "attention", "nccl", "custom_allreduce", "moe", "mla"}
    assert "silicon" not in repr(res).lower()
    eff = load_efficiency("gb200-nvl72", "spec").with_overrides(res["parameters"])
    for f in FRACTION_FIELDS:
        assert _in_unit(getattr(eff, f)), f
    for f, v in _kernel_fractions(eff):
        assert _in_unit(v), f


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_provenance_and_report_are_kernel_only(name):
    """(c) Every shipped file names only kernel tables / versions, and reports no end-to-end rows."""
    c = load_calibration(name)
    assert c["system"] == name and c["kind"] in ("measured", "derived", "partial")
    prov = c["provenance"]
    assert "silicon" not in repr(c).lower() and "inferencex" not in repr(c).lower()
    if c["kind"] == "partial":  # AMD: aiter kernel tables + the derived rest
        assert set(prov) == {"package", "tables", "measured", "derived_from", "range_over", "band_error", "band"}
        assert prov["package"].startswith("amd-aiter ")
        assert set(prov["tables"]) <= {"a8w8_blockscale_tuned_gemm", "a4w4_blockscale_tuned_gemm", "tuned_fmoe",
                                       "a8w8_blockscale_bpreshuffle_tuned_gemm",
                                       "a8w8_blockscale_bpreshuffle_tuned_gemm_dsv3", "a8w8_bpreshuffle_tuned_gemm"}
        assert set(prov["measured"]) <= set(flatten_params(c["parameters"]))
        assert {"gemm.fp8.peak_fraction", "gemm.fp8_block.peak_fraction"} <= set(prov["measured"])
        assert set(c["report"]) <= {"cu_num", "gemm", "moe", "fastest_kernel_s", "mla_decode", "moe_fp8_block"}
        assert c["report"]["gemm"]["rows"] > 0
        # MLA decode: a published aiter kernel benchmark (fit/amd.py), not an end-to-end figure
        assert c["report"]["mla_decode"]["source"].startswith("ROCm/aiter PR #")
        # the per-kernel cost is never above the fastest tuned kernel of the chip's tables
        assert c["parameters"]["kernel_launch_s"] <= c["report"]["fastest_kernel_s"]
        assert not {"link_fraction", "in_switch_fraction"} & set(c["parameters"])  # no NVLink ramps
    elif c["kind"] == "measured":
        assert set(prov) == {"package", "backend", "gemm_version", "attention_version", "system_dir",
                             "moe_version", "mla_version"}
        assert prov["package"].startswith("aiconfigurator-core ")
        assert prov["system_dir"] == ktables.AIC_SYSTEM_DIRS[name]
        assert set(c["report"]) <= {"gemm", "attention", "nccl", "custom_allreduce", "moe", "mla", "ordering",
                                    "all_to_all"}
        assert {"gemm", "attention"} <= set(c["report"])
        assert c["report"]["gemm"]["rows"] > 0
    else:
        # loso29: a derived set's routed-expert HBM fraction is pooled over the measured systems' fits
        assert set(prov) == {"derived_from", "range_over", "band_error", "band", "moe_hbm_pooled_over"}
        assert set(prov["moe_hbm_pooled_over"]) <= set(ktables.AIC_SYSTEM_DIRS)
        assert "report" not in c


# ---- shipped sets: fractions in (0, 1], bands ordered ----------------------------------------------

def test_every_catalog_system_has_a_calibration_file():
    assert set(SHIPPED) <= set(list_systems())
    partial = {n for n in SHIPPED if load_calibration(n)["kind"] == "partial"}
    assert set(MEASURED) == set(ktables.AIC_SYSTEM_DIRS) and partial == set(AITER_CU)
    assert set(DERIVED) | partial == set(cal.DERIVED_FROM)


@pytest.mark.parametrize("which", ["calibrated", "low", "high"])
@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_sets_keep_fractions_in_unit_interval(name, which):
    eff = base_efficiency(name, which)
    for f in FRACTION_FIELDS:
        assert _in_unit(getattr(eff, f)), (name, which, f, getattr(eff, f))
    for f, v in _kernel_fractions(eff):
        assert _in_unit(v), (name, which, f, v)
    assert eff.gemm["bf16"].half_rows > 0 and eff.collective_launch_s >= 0
    assert "calibrated" in eff.source and which in eff.source
    for fmt in ("bf16", "fp8", "fp4"):
        assert 0.0 < eff.gemm_peak(fmt) <= 1.0 and 0.0 < eff.gemm_hbm(fmt) <= 1.0 and eff.gemm_half(fmt) > 0


@pytest.mark.parametrize("name", DERIVED)
def test_derived_sets_are_banded_and_carry_provenance(name):
    c = load_calibration(name)
    mid_name, span = cal.DERIVED_FROM[name]
    assert c["provenance"]["derived_from"] == mid_name
    assert c["provenance"]["range_over"] == list(span)
    assert all(load_calibration(s)["kind"] == "measured" for s in (mid_name, *span))
    mid, low, high = (flatten_params(c[k]) for k in ("parameters", "low", "high"))  # gemm.fp8.peak_fraction
    assert set(low) == set(high) and set(low) <= set(mid)
    ramp = ("custom_ar_fraction", "custom_ar_half_bytes", "custom_ar_shape")
    eta = {w: d["custom_ar_fraction"] / (1 + (d["custom_ar_half_bytes"] / 2**20) ** d["custom_ar_shape"])
           for w, d in (("low", low), ("mid", mid), ("high", high))}
    assert eta["low"] <= eta["mid"] <= eta["high"]  # a ramp is banded as one curve (at 1 MiB)
    for k in set(low) - set(ramp):
        if "_fraction" in k:  # higher is better
            assert low[k] <= mid[k] <= high[k], k
        else:  # times and half-rows: lower is better
            assert low[k] >= mid[k] >= high[k], k
    # the band is the LOSO error around the borrowed set, recomputed from the shipped files
    again = cal.derived_set(name, {s: load_calibration(s) for s in (mid_name, *span, *MOE_POOL)})
    for k in ("parameters", "low", "high"):  # TOML keeps 8 significant digits
        assert flatten_params(again[k]) == pytest.approx(flatten_params(c[k]), rel=1e-7), k


@pytest.mark.parametrize("name", POOLED_MOE_SYSTEMS)
def test_a_chip_without_tables_pools_the_routed_experts_hbm_fraction(name):
    """Jalapeño and Vera Rubin have no MoE kernel tables: every moe[fmt].hbm_fraction of their set is the median of
    the six measured NVIDIA systems' fits over every format (fit/moe_transfer.py), counted here from their files (16
    values: FP4 on the four Blackwell systems only), not their family's FP8 value (GB300: 0.55); the other MoE fields
    stay the family's."""
    vals = [e["hbm_fraction"] for n in ("h100", "h200", "b200", "gb200-nvl72", "b300", "gb300-nvl72")
            for e in load_calibration(n)["parameters"]["moe"].values()]
    assert len(vals) == 16
    c, fam = load_calibration(name), load_calibration(cal.DERIVED_FROM[name][0])
    for fmt, e in c["parameters"]["moe"].items():
        assert e["hbm_fraction"] == pytest.approx(float(np.median(vals)), rel=1e-7), fmt
        assert e["token_passes"] == fam["parameters"]["moe"][fmt]["token_passes"]
    assert c["provenance"]["moe_hbm_pooled_over"] == list(MOE_POOL)
    with pytest.raises(SpecError, match="h100"):  # every pooled system is needed
        cal.derived_set(name, {s: load_calibration(s) for s in MOE_POOL if s != "h100"})


def test_derived_set_band_is_the_given_error():
    fam = {"a": {"parameters": {"hbm_fraction": 0.8, "collective_launch_s": 1e-5,
                                "gemm": {"bf16": {"half_rows": 50.0}, "fp8": {"peak_fraction": 0.5}},
                                "moe": {"fp4": {"hbm_fraction": 0.6, "token_passes": 3.0}}}},
           "b": {"parameters": {"hbm_fraction": 0.9}}}
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(cal.DERIVED_FROM, "x", ("a", ("a", "b")))
        d = cal.derived_set("x", fam, band_error=0.25)
    assert d["parameters"] == fam["a"]["parameters"]
    # fractions: low = mid / 1.25, high = min(mid * 1.25, 1); half rows, passes and times the reverse
    assert flatten_params(d["low"]) == pytest.approx(flatten_params(
        {"hbm_fraction": 0.64, "collective_launch_s": 1.25e-5, "gemm": {"bf16": {"half_rows": 62.5},
         "fp8": {"peak_fraction": 0.4}}, "moe": {"fp4": {"hbm_fraction": 0.48, "token_passes": 3.75}}}))
    assert flatten_params(d["high"]) == pytest.approx(flatten_params(
        {"hbm_fraction": 1.0, "collective_launch_s": 8e-6, "gemm": {"bf16": {"half_rows": 40.0},
         "fp8": {"peak_fraction": 0.625}}, "moe": {"fp4": {"hbm_fraction": 0.75, "token_passes": 2.4}}}))
    assert d["provenance"]["derived_from"] == "a" and d["provenance"]["band_error"] == 0.25


# ---- TOML -----------------------------------------------------------------------------------------

def test_to_toml_round_trips_a_measured_set(gemm_fit, attention_fit, nccl_fit):
    c = {"system": "gb200-nvl72", "parameters": {**gemm_fit[0], **attention_fit[0], **nccl_fit[0]},
         "report": {"gemm": gemm_fit[1], "attention": attention_fit[1], "nccl": {**nccl_fit[1], "nccl_folder": "2.29.2"}},
         "provenance": {"package": "aiconfigurator-core 0.12.0", "backend": "trtllm", "gemm_version": "1.3.0rc20",
                        "attention_version": "1.3.0rc20", "system_dir": "gb200"}}
    back = tomllib.loads(cal.to_toml(c, "measured"))
    assert (back["system"], back["kind"]) == ("gb200-nvl72", "measured")
    assert back["provenance"] == c["provenance"]
    flat, back_flat = flatten_params(c["parameters"]), flatten_params(back["parameters"])
    assert set(back_flat) == set(flat) and "gemm.fp4.half_rows" in flat
    for k, v in flat.items():
        assert back_flat[k] == pytest.approx(v, rel=1e-6, abs=1e-8), k
    assert set(back["report"]["gemm"]["formats"]) == {"bf16", "fp8_block", "fp4"}
    assert back["report"]["gemm"]["rows"] == gemm_fit[1]["rows"]
    assert back["report"]["nccl"]["nccl_folder"] == "2.29.2"
    eff = DEFAULT_EFFICIENCY.with_overrides(back["parameters"])
    assert eff.gemm_peak("fp4") == pytest.approx(gemm_fit[0]["gemm"]["fp4"]["peak_fraction"], abs=1e-8)


@pytest.mark.parametrize("name", DERIVED[:1] + MEASURED[:1])
def test_to_toml_reproduces_a_shipped_file(name):
    c = load_calibration(name)
    back = tomllib.loads(cal.to_toml(c, c["kind"]))
    assert back == c
    DEFAULT_EFFICIENCY.with_overrides(back["parameters"])
    for band in ("low", "high"):
        DEFAULT_EFFICIENCY.with_overrides(back.get(band, {}))


# ---- selection of sets by load_system ---------------------------------------------------------------

def test_load_system_spec_is_the_documented_defaults():
    assert load_efficiency("h200", "spec") == DEFAULT_EFFICIENCY
    assert base_efficiency("h200", "spec") == DEFAULT_EFFICIENCY
    assert EFFICIENCY_SETS == ("calibrated", "low", "high", "spec")


def test_load_system_default_is_calibrated():
    eff = load_efficiency("h200")
    assert "calibrated" in eff.source and "h200.toml" in eff.source
    assert eff.gemm_peak("bf16") == load_calibration("h200")["parameters"]["gemm"]["bf16"]["peak_fraction"]
    assert eff != DEFAULT_EFFICIENCY


def test_unknown_efficiency_set_names_efficiency():
    with pytest.raises(UnknownNameError) as e:
        load_efficiency("h200", "nonsense")
    assert e.value.field == "efficiency" and "efficiency" in str(e.value) and "nonsense" in str(e.value)
    with pytest.raises(UnknownNameError, match="efficiency"):
        base_efficiency("h200", "medium")


def test_calibrate_system_refuses_unmeasured_systems_and_a_missing_package(monkeypatch):
    with pytest.raises(SpecError, match="no measured kernel tables"):
        cal.calibrate_system(load_system("mi300x"))
    monkeypatch.setitem(sys.modules, "aiconfigurator_core", None)
    with pytest.raises(SpecError, match=r"\.\[calibrate\]"):
        cal.calibrate_system(load_system("h200"))


# ---- AMD: amd-aiter tuned-kernel tables (tests/fixtures/aiter, MIT, ATTRIBUTION.md) -----------------

@pytest.fixture(scope="module")
def aiter_tables() -> dict[str, pd.DataFrame]:
    return {p.stem: pd.read_csv(p) for p in AITER_FIX.glob("*.csv")}


def test_aiter_gemm_frame_keeps_one_chip_and_converts_units(aiter_tables):
    g = amd.gemm_frame(aiter_tables, 304)  # MI300X / MI325X rows only
    src = aiter_tables["a8w8_blockscale_tuned_gemm"]
    mi300 = src[src.cu_num == 304]
    assert len(g) == len(mi300) and set(g.gemm_dtype) == {"fp8_block"}  # no MXFP4 table rows at 304 CUs
    r = mi300.iloc[0]
    row = g[(g.m == r.M) & (g.n == r.N) & (g.k == r.K)]
    assert len(row) == 1 and row.latency.iloc[0] == pytest.approx(r.us / 1e3)  # us -> ms
    assert set(amd.gemm_frame(aiter_tables, 256).gemm_dtype) == {"fp8", "fp8_block", "mxfp4"}  # fp8: per-channel


def test_aiter_preshuffled_fp8_tables_replace_the_plain_one_where_they_have_rows(aiter_tables):
    g = amd.gemm_frame(aiter_tables, 256)
    pre = pd.concat([aiter_tables[n] for n in amd.PRESHUFFLED_TABLES])
    pre = pre[pre.cu_num == 256]
    fp8 = g[g.gemm_dtype == "fp8_block"]
    # MI355X: one row per shape of the two pre-shuffled samples, none of the plain table's
    assert len(fp8) == len(pre.drop_duplicates(["M", "N", "K"]))
    assert fp8.latency.min() * 1e3 == pytest.approx(pre.us.min())
    # MI300X/MI325X (304 CUs): no pre-shuffled rows, so the plain table stays
    assert len(amd.gemm_frame(aiter_tables, 304)) == int((aiter_tables["a8w8_blockscale_tuned_gemm"].cu_num == 304).sum())
    # the same shape in both tables: the faster kernel is kept (the tuner's best per shape)
    row = dict(cu_num=256, M=16, N=7168, K=2048)
    two = {"a8w8_blockscale_bpreshuffle_tuned_gemm": pd.DataFrame([{**row, "us": 9.0}]),
           "a8w8_blockscale_bpreshuffle_tuned_gemm_dsv3": pd.DataFrame([{**row, "us": 6.0}])}
    one = amd.gemm_frame(two, 256)
    assert len(one) == 1 and one.latency.iloc[0] == pytest.approx(6.0e-3)


def test_aiter_moe_frame_keeps_deepseek_recipes_only(aiter_tables):
    m = amd.moe_frame(aiter_tables["tuned_fmoe"], 256)
    assert set(m.moe_dtype) == {"bfloat16", "fp8_block"}  # per-token FP8 rows dropped
    assert (m.moe_ep_size == 1).all() and (m.moe_tp_size == 1).all()
    f = aiter_tables["tuned_fmoe"]
    assert len(m) == int(f.q_type.isin(["QuantType.No", "QuantType.per_1x128"]).sum())


def test_fit_amd_mi355x_measures_fp8_fp4_and_moe_with_floors(aiter_tables):
    pytest.importorskip("scipy")
    params, report = amd.fit_amd(load_system("mi355x"), aiter_tables)
    flat = flatten_params(params)
    for k in ("gemm.fp8.peak_fraction", "gemm.fp8.hbm_fraction", "gemm.fp8_block.peak_fraction",
              "gemm.fp8_block.hbm_fraction", "gemm.fp4.peak_fraction", "gemm.fp4.hbm_fraction", "moe.fp8.hbm_fraction"):
        assert 0.0 < flat[k] <= 1.0, k
    # per-channel FP8 (a8w8_bpreshuffle_tuned_gemm), block-scale FP8 and MXFP4, each its own entry
    assert report["cu_num"] == 256 and set(report["gemm"]["formats"]) == {"fp8", "fp8_block", "fp4"}
    # the per-kernel floor is the median of the formats' fitted GEMM floors bounded by the fastest
    # kernel the fit read (MI355X: the pre-shuffled block-scale FP8 and MXFP4 samples; the per-channel
    # FP8 kernels are left out of both, fit/kernels.FLOOR_EXCLUDED_DTYPES), the MoE floor the fit's
    floors = [f["kernel_floor_s"] for k, f in report["gemm"]["formats"].items() if k != "fp8"]
    fastest = min(d[d.cu_num == 256].us.min() for n, d in aiter_tables.items()
                  if n in (*amd.PRESHUFFLED_TABLES, "a4w4_blockscale_tuned_gemm")) * 1e-6
    assert fastest == pytest.approx(2.889e-6)  # bpreshuffle_tuned_gemm's fastest row in the sample
    assert params["kernel_launch_s"] == pytest.approx(min(float(np.median(floors)), fastest))
    assert params["kernel_launch_s"] == pytest.approx(fastest) and fastest < float(np.median(floors))  # it binds
    assert params["moe_floor_s"] == report["moe"]["kernel_floor_s"] > 0
    Efficiency().with_overrides(params)


def test_fit_amd_fits_deepseeks_moe_shape_and_lends_the_shape_held_out_fit(aiter_tables):
    """MI355X's own MoE fit holds out alternate token counts (DeepSeek's TP slices are fitted); the
    fit a chip of MOE_FROM borrows keeps DeepSeek's shape held out (fit/amd.MOE_DONOR_SPLIT)."""
    pytest.importorskip("scipy")
    mi355x = load_system("mi355x")
    _, own = amd.fit_amd(mi355x, aiter_tables)
    _, lent = amd.fit_amd(mi355x, aiter_tables, amd.MOE_DONOR_SPLIT)
    assert amd.MOE_SPLIT == "tokens" and amd.MOE_DONOR_SPLIT == "shape"
    assert own["moe"]["formats"] and set(own["moe"]["formats"]) == set(lent["moe"]["formats"])
    assert all("held_out_tokens" in f for f in own["moe"]["formats"].values())
    assert all("held_out_tokens" not in f for f in lent["moe"]["formats"].values())


def test_unbound_moe_compute_fills_only_unfitted_formats_with_the_chips_gemm_peak():
    params = {"moe": {"fp8": {"hbm_fraction": 0.7}, "bf16": {"hbm_fraction": 0.8, "peak_fraction": 0.4,
                                                             "half_rows": 30.0}}}
    # the FP8 MoE takes the block-scale GEMM's peak (specs/kernel_lookup.MOE_GEMM_KEY), not the per-channel one
    gemm = {"fp8_block": {"peak_fraction": 0.28, "half_rows": 120.0}, "fp8": {"peak_fraction": 0.5}}
    report = {"formats": {"fp8": {}, "bf16": {}, "fp4": {}}}
    amd.unbound_moe_compute(params, gemm, report)
    assert params["moe"]["fp8"] == {"hbm_fraction": 0.7, "peak_fraction": 0.28, "half_rows": 1.0}
    assert params["moe"]["bf16"] == {"hbm_fraction": 0.8, "peak_fraction": 0.4, "half_rows": 30.0}  # fitted: kept
    assert "fp4" not in params["moe"] and "compute" in report["formats"]["fp8"]
    assert "compute" not in report["formats"]["bf16"]


def test_amd_overlay_unbinds_its_own_moe_compute_not_a_borrowed_one(aiter_tables):
    """MI355X's own fused-MoE fit gets the GEMM peak with no row penalty; MI300X's borrowed one is lent as fitted."""
    pytest.importorskip("scipy")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(amd, "package_version", lambda: "0.0-test")
        own = amd.amd_overlay("mi355x", load_system("mi355x"),
                              cal.derived_set("mi355x", {s: load_calibration(s) for s in ("h200", "b200")}),
                              None, aiter_tables)
        donor = amd.fit_amd(load_system("mi355x"), aiter_tables, amd.MOE_DONOR_SPLIT)[0]
        lent = amd.amd_overlay("mi300x", load_system("mi300x"),
                               cal.derived_set("mi300x", {s: load_calibration(s) for s in ("h100", "h200")}),
                               donor, aiter_tables)
    fp8 = own["parameters"]["moe"]["fp8"]
    assert fp8["peak_fraction"] == own["parameters"]["gemm"]["fp8_block"]["peak_fraction"]
    assert fp8["half_rows"] == amd.MOE_UNBOUND_HALF_ROWS == 1.0
    assert "peak_fraction" not in lent["parameters"]["moe"]["fp8"]


def test_amd_overlay_measured_on_top_of_derived_and_borrows_amd_moe(aiter_tables):
    pytest.importorskip("scipy")
    fam = {s: load_calibration(s) for s in ("h100", "h200")}
    derived = cal.derived_set("mi300x", fam)
    donor = {"moe": {"fp8": {"hbm_fraction": 0.45}}, "moe_floor_s": 2e-5, "gemm": {"fp8": {"peak_fraction": 0.9}}}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(amd, "package_version", lambda: "0.0-test")
        mp.setattr(amd, "GFX942_PACKAGE", False)  # the switch off: the set as before round 39
        off = amd.amd_overlay("mi300x", load_system("mi300x"), derived, donor, aiter_tables)["parameters"]
        mp.setattr(amd, "GFX942_PACKAGE", True)
        out = amd.amd_overlay("mi300x", load_system("mi300x"), derived, donor, aiter_tables)
    p = out["parameters"]
    assert off["moe"] == {"fp8": {"hbm_fraction": 0.45}} and "mla_decode_tile_rows" not in off
    # measured on the MI300X rows, not taken from the donor or the NVIDIA family
    fp8 = p["gemm"]["fp8_block"]["peak_fraction"]
    assert fp8 != 0.9 and fp8 != derived["parameters"]["gemm"]["fp8_block"]["peak_fraction"]
    # per-tensor FP8: no MI300X rows, so the block fit x the CDNA3 per-channel / block-scale ratio of
    # the sample's cu_num 80 shapes (fit/amd.per_channel_ratio), its half rows and HBM fraction kept
    ratio, _ = amd.per_channel_ratio(aiter_tables, 80)
    assert p["gemm"]["fp8"]["peak_fraction"] == pytest.approx(fp8 * ratio)
    assert p["gemm"]["fp8"]["half_rows"] == p["gemm"]["fp8_block"]["half_rows"]
    assert out["report"]["gemm"]["fp8_borrowed"]["ratio_cu_num"] == 80
    # MoE: the AMD donor's (only moe keys); unmeasured NVIDIA MoE values removed
    assert {f: e for f, e in p["moe"].items() if f != "fp8_block"} == {"fp8": {"hbm_fraction": 0.45}}
    assert p["moe_floor_s"] == 2e-5  # NVIDIA's passes are not AMD's
    # gfx942: its own block-scale fused MoE (the vendored aiter 84493f0e5b rows, not the donor's) and the 64-row
    # MLA decode tile (16 heads x qSeqLen 4, aiter's a16w8 qh16 kernel)
    own, _ = amd.gfx942_block_moe()
    assert {f"moe.fp8_block.{k}": v for k, v in p["moe"]["fp8_block"].items()} == pytest.approx(own)
    assert p["moe"]["fp8_block"]["hbm_fraction"] > 0.45 and p["mla_decode_tile_rows"] == 64
    assert "moe" in derived["parameters"] and "moe" not in out["low"]
    assert out["report"]["moe"]["borrowed_from"] == "mi355x"
    # bands only on the derived parameters; provenance names both sources
    assert not set(flatten_params(out["low"])) & set(out["provenance"]["measured"])
    assert {"gemm.fp8.peak_fraction", "gemm.fp8_block.peak_fraction"} <= set(out["provenance"]["measured"])
    assert out["provenance"]["derived_from"] == "h200" and out["provenance"]["package"] == "amd-aiter 0.0-test"
    back = tomllib.loads(cal.to_toml(out, "partial"))
    assert back["kind"] == "partial" and flatten_params(back["parameters"]) == pytest.approx(flatten_params(p))


def test_amd_overlay_prices_mla_decode_at_aiters_published_best(aiter_tables):
    """aiter publishes no MLA table; its best MLA decode figure replaces the NVIDIA (FlashMLA) fit."""
    pytest.importorskip("scipy")
    derived = cal.derived_set("mi355x", {s: load_calibration(s) for s in ("h200", "b200")})
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(amd, "package_version", lambda: "0.0-test")
        out = amd.amd_overlay("mi355x", load_system("mi355x"), derived, None, aiter_tables)
    # ROCm/aiter PR #3188: 367 TFLOPS (MI300X, QH64 FP8, batch 128 x 32k) of the MI300X datasheet's
    # 2,614.9 TFLOPS FP8 dense: 367 / 2614.9 = 0.14035 (by hand)
    for f in ("bf16", "fp8"):
        assert out["parameters"]["mla_decode"][f]["peak_fraction"] == pytest.approx(0.14035, abs=1e-5)
        assert f"mla_decode.{f}.peak_fraction" in out["provenance"]["measured"]
        assert "peak_fraction" not in out["low"].get("mla_decode", {}).get(f, {})  # no NVIDIA band on it
        # the HBM fraction is not published: it stays the derived (NVIDIA-family) one
        assert (out["parameters"]["mla_decode"][f]["hbm_fraction"]
                == derived["parameters"]["mla_decode"][f]["hbm_fraction"])
    assert derived["parameters"]["mla_decode"]["fp8"]["peak_fraction"] > 3 * 0.14035  # FlashMLA's fit is far higher
    assert "PR #3188" in out["report"]["mla_decode"]["source"]


def test_amd_calibration_needs_the_package_and_says_how(monkeypatch):
    from importlib.metadata import PackageNotFoundError

    def missing(_):
        raise PackageNotFoundError("amd-aiter")
    monkeypatch.setattr("importlib.metadata.version", missing)
    with pytest.raises(SpecError, match=r"amd-aiter.*not installed") as e:
        amd.read_table("tuned_fmoe")
    assert ".[calibrate]" in e.value.fix


def test_an_efficiency_set_can_be_a_calibration_directory_or_file(tmp_path):
    """`calibrate --out-dir DIR` writes sets that `--efficiency DIR` (or DIR/<system>.toml) reads:
    the same parameters as the shipped file they copy, with the path as the set's source."""
    import shutil

    from jalapeno.specs.calibration import _DIR
    from jalapeno.specs.catalog import load_efficiency

    shutil.copy(str(_DIR / "h200.toml"), tmp_path / "h200.toml")
    by_dir = load_efficiency("h200", str(tmp_path))
    by_file = load_efficiency("h200", str(tmp_path / "h200.toml"))
    shipped = load_efficiency("h200")
    assert by_dir.gemm_peak("fp8") == by_file.gemm_peak("fp8") == shipped.gemm_peak("fp8")
    assert str(tmp_path) in by_dir.source and by_dir.source != shipped.source
    with pytest.raises(UnknownNameError, match="b200.toml not found"):
        load_efficiency("b200", str(tmp_path))


@pytest.mark.parametrize("edit, problem, fix", [
    (('system = "h200"', 'system = "h100"'), "was fitted for system 'h100', not h200",
     "pass h200's calibration (a directory holding h200.toml, or that file)"),
    (('kind = "measured"', 'kind = "guessed"'), "kind 'guessed' is not one of measured, derived, partial",
     "pass a file written by `jalapeno calibrate --out-dir DIR`"),
    # a hand-written [efficiency] table (what a variant file holds) has no kind: say so, and name --set
    (('kind = "measured"', ''), "has no top-level `kind` key",
     "pass a file written by `jalapeno calibrate --out-dir DIR`, or use `--set efficiency.NAME=VALUE` to "
     "change single efficiency parameters"),
])
def test_a_calibration_file_for_another_system_or_of_no_known_kind_is_refused(tmp_path, edit, problem, fix):
    """--efficiency FILE: an H100 file once priced an H200 without a word, and an unknown kind was
    labelled 'derived from ?'."""
    from jalapeno.specs.calibration import _DIR
    from jalapeno.specs.catalog import load_efficiency

    text = (_DIR / "h200.toml").read_text()
    assert edit[0] in text
    (tmp_path / "h200.toml").write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(SpecError) as ei:
        load_efficiency("h200", str(tmp_path / "h200.toml"))
    assert ei.value.field == "efficiency" and problem in ei.value.problem and ei.value.fix == fix

