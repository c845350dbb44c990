"""End-to-end CLI: compare, frontier, predict, step, hardware, models — and bad input.

Runs the console script in-process (``jalapeno.cli.app.main``) with stdout/stderr captured.
Contract (issue): a point has throughput_per_chip, output_throughput_per_chip, interactivity,
ttft_s, tpot_s, e2e_s, chips, power_w_per_chip, tok_s_per_kw, usd_per_mtok, bound, deployment;
``compare --json`` is {"systems": {NAME: {"frontier": [point, ...], "headline": {...}}},
"comparisons": {...}}. Bad input: one ``error:`` line on stderr, exit code 2, no traceback.
"""

from __future__ import annotations

import csv
import json

import pytest
from cli_runner import check_error, run

POINT_KEYS = {"throughput_per_chip", "output_throughput_per_chip", "interactivity", "ttft_s", "tpot_s",
              "e2e_s", "chips", "power_w_per_chip", "tok_s_per_kw", "usd_per_mtok", "bound", "deployment"}
SEED_MODELS = ("deepseek-r1", "kimi-k2.5", "gpt-oss-120b")
DISAGG = ["--prefill", "tp=4,ep=4,workers=2", "--decode", "dp=8,ep=8,workers=1"]




def run_json(capsys, *args: str):
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "Traceback" not in out + err
    return json.loads(out)


def check_point(pt: dict) -> None:
    missing = POINT_KEYS - set(pt)
    assert not missing, missing
    for k in POINT_KEYS - {"bound", "deployment"}:
        assert isinstance(pt[k], (int, float)), (k, pt[k])
    assert pt["throughput_per_chip"] > 0 and pt["interactivity"] > 0
    assert pt["throughput_per_chip"] >= pt["output_throughput_per_chip"]
    assert pt["interactivity"] == pytest.approx(1 / pt["tpot_s"], rel=1e-9)
    assert pt["tok_s_per_kw"] == pytest.approx(pt["throughput_per_chip"] / (pt["power_w_per_chip"] / 1000), rel=1e-9)
    assert isinstance(pt["bound"], str) and isinstance(pt["deployment"], dict)


def check_compare(d: dict, systems: set[str]) -> None:
    assert set(d["systems"]) == systems
    assert set(d["comparisons"]) == systems
    for s in d["systems"].values():
        assert s["frontier"], "empty frontier"
        for pt in s["frontier"]:
            check_point(pt)
        assert isinstance(s["headline"], dict) and s["headline"]["peak_throughput_per_chip"] > 0
    for c in d["comparisons"].values():
        for row in c["iso_interactivity"]["throughput_per_chip"]:
            if "unreachable" in (row["status_a"], row["status_b"]):
                assert row["ratio"] is None
            else:
                assert row["ratio"] > 0


# ---------------------------------------------------------------- compare


def test_compare_json_deepseek_default_systems(default_compare_json):
    code, out, err, folder = default_compare_json  # ``compare --json --html ''`` run in its own folder (conftest)
    assert code == 0, err
    assert "Traceback" not in out + err
    d = json.loads(out)
    check_compare(d, {"jalapeno", "gb200-nvl72", "gb300-nvl72", "vera-rubin-nvl72"})
    assert d["model"] == "deepseek-r1" and d["baseline"] == "gb300-nvl72"
    assert d["workload"]["isl"] == 8192 and d["workload"]["osl"] == 1024
    kinds = {pt["deployment"]["kind"] for s in d["systems"].values() for pt in s["frontier"]}
    assert kinds <= {"agg", "disagg"} and kinds
    # baseline against itself
    assert d["comparisons"]["gb300-nvl72"]["peak_ratio"]["throughput_per_chip"] == pytest.approx(1.0)
    assert list(folder.iterdir()) == []  # no jalapeno-compare.html, nor any other file


@pytest.mark.parametrize("model", ["kimi-k2.5", "gpt-oss-120b"])
def test_compare_json_other_seed_models(capsys, tmp_path, model):
    d = run_json(capsys, "compare", "--model", model, "--serving", "agg", "--systems", "jalapeno,gb200-nvl72",
                 "--baseline", "gb200-nvl72", "--json", "--html", str(tmp_path / "c.html"))
    check_compare(d, {"jalapeno", "gb200-nvl72"})
    assert d["model"] == model
    assert (tmp_path / "c.html").stat().st_size > 0


def test_compare_default_prints_table_and_writes_html(default_compare):
    code, out, err, folder = default_compare  # ``compare`` run in its own folder (tests/conftest.py)
    assert code == 0, err
    assert "Traceback" not in out + err
    for name in ("jalapeno", "gb200-nvl72", "gb300-nvl72", "vera-rubin-nvl72"):
        assert name in out
    html = folder / "jalapeno-compare.html"
    assert html.is_file()
    text = html.read_text()
    assert "<html" in text.lower() and "jalapeno" in text


# ---------------------------------------------------------------- frontier


def test_frontier_csv(capsys, tmp_path):
    out_csv = tmp_path / "f.csv"
    code, out, err = run(capsys, "frontier", "--system", "gb200-nvl72", "--model", "gpt-oss-120b",
                         "--out", str(out_csv))
    assert code == 0, err
    assert out_csv.is_file()
    rows = list(csv.DictReader(out_csv.open()))
    assert rows
    assert {"throughput_per_chip_tok_per_s", "interactivity_tok_per_s_per_user", "chips", "tok_s_per_kw",
            "usd_per_mtok", "bound", "deployment", "ttft_s", "tpot_s"} <= set(rows[0])
    assert not {"throughput_per_chip", "interactivity"} & set(rows[0])  # each rate names its unit
    x = [float(r["interactivity_tok_per_s_per_user"]) for r in rows]
    y = [float(r["throughput_per_chip_tok_per_s"]) for r in rows]
    assert x == sorted(x) and y == sorted(y, reverse=True)


def test_frontier_json(capsys):
    d = run_json(capsys, "frontier", "--system", "gb200-nvl72", "--model", "gpt-oss-120b", "--json")
    assert d["system"] == "gb200-nvl72" and d["model"] == "gpt-oss-120b"
    assert d["frontier"]
    for pt in d["frontier"]:
        check_point(pt)
        assert pt["feasible"] is True


# ---------------------------------------------------------------- predict


@pytest.mark.parametrize("model", SEED_MODELS)
def test_predict_aggregated(capsys, model):
    d = run_json(capsys, "predict", "--system", "jalapeno", "--model", model, "--concurrency", "32",
                 "--tp", "8", "--ep", "8", "--json")
    check_point(d)
    assert d["chips"] == 8
    assert d["deployment"]["kind"] == "agg"
    assert d["concurrency"] == pytest.approx(32, rel=0.02)
    assert d["model"] == model


@pytest.mark.parametrize("model", SEED_MODELS)
def test_predict_disaggregated(capsys, model):
    d = run_json(capsys, "predict", "--system", "jalapeno", "--model", model, "--concurrency", "64",
                 *DISAGG, "--json")
    check_point(d)
    assert d["chips"] == 2 * 4 + 1 * 8
    assert d["deployment"]["kind"] == "disagg"
    assert d["kv_transfer_s"] > 0
    assert d["ttft_s"] > d["kv_transfer_s"]
    assert d["concurrency"] == pytest.approx(64, rel=0.02)
    lam = d["request_rate_per_s"]
    assert lam * d["e2e_s"] == pytest.approx(64, rel=0.02)  # Little's law, whole deployment


def test_predict_table(capsys):
    code, out, err = run(capsys, "predict", "--system", "gb200-nvl72", "--model", "gpt-oss-120b",
                         "--concurrency", "16", "--tp", "4", "--ep", "4")
    assert code == 0, err
    assert "gpt-oss-120b" in out and "gb200-nvl72" in out


def test_predict_with_mtp(capsys):
    base = run_json(capsys, "predict", "--system", "gb200-nvl72", "--concurrency", "4", "--tp", "8", "--ep", "8",
                    "--json")
    mtp = run_json(capsys, "predict", "--system", "gb200-nvl72", "--concurrency", "4", "--tp", "8", "--ep", "8",
                   "--mtp", "1", "--mtp-acceptance", "0.8", "--json")
    assert mtp["deployment"]["mtp"]["tokens_per_step"] == pytest.approx(1.8)
    assert mtp["tpot_s"] < base["tpot_s"]


# ---------------------------------------------------------------- step, hardware, models


def test_step_json_and_table(capsys):
    d = run_json(capsys, "step", "--json")
    assert d["step_time_s"] > 0 and d["bound"] and d["ops"]
    code, out, err = run(capsys, "step", "--system", "h100", "--model", "gpt-oss-120b", "--tp", "8", "--dp", "1",
                         "--ep", "8")
    assert code == 0, err
    assert "step time" in out


def test_hardware_list_and_show(capsys):
    d = run_json(capsys, "hardware", "list", "--json")
    names = {s["name"] for s in d}
    assert {"jalapeno", "gb200-nvl72", "gb300-nvl72", "vera-rubin-nvl72", "h100"} <= names
    s = run_json(capsys, "hardware", "show", "jalapeno", "--json")
    # published figures (DESIGN §2.1): FP8 3.4 PFLOP/s, FP4 13.4, 15.4 TB/s, 700 W rated
    assert s["chip"]["peak_flop_per_s"]["fp8"] == pytest.approx(3.4e15)
    assert s["chip"]["peak_flop_per_s"]["fp4"] == pytest.approx(13.4e15)
    assert s["chip"]["hbm_bandwidth_bytes_per_s"] == pytest.approx(15.4e12)
    assert s["chip"]["tdp_w"] == pytest.approx(700)
    assert s["chip"]["hbm_capacity_bytes"] == pytest.approx(216 * 2**30)  # 216 GiB HBM4
    assert s["chip"]["hbm_stacks"] == 6
    code, out, err = run(capsys, "hardware", "list")
    assert code == 0 and "gb200-nvl72" in out


@pytest.mark.parametrize("model,total,active", [
    ("deepseek-r1", 671e9, 37e9),  # DeepSeek-R1: 671B total / 37B active
    ("kimi-k2.5", 1.0e12, 32e9),  # Kimi K2.5: 1T total / 32B active
    ("gpt-oss-120b", 117e9, 5.1e9),  # gpt-oss-120b: 117B / 5.1B active
])
def test_models_show_published_sizes(capsys, model, total, active):
    d = run_json(capsys, "models", "show", model, "--json")
    assert d["name"] == model
    assert d["total_params"] == pytest.approx(total, rel=0.05)
    assert d["active_params"] == pytest.approx(active, rel=0.05)


def test_models_list(capsys):
    d = run_json(capsys, "models", "list", "--json")
    assert set(SEED_MODELS) <= {m["name"] for m in d}


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("cmd", [
    ["predict", "--system", "nope", "--concurrency", "4"],
    ["frontier", "--system", "nope"],
    ["compare", "--systems", "jalapeno,nope", "--baseline", "jalapeno"],
])
def test_unknown_system(capsys, cmd):
    check_error(*run(capsys, *cmd), "system", "nope")


BAD = {
    "mtp_without_acceptance": (["predict", "--system", "gb200-nvl72", "--concurrency", "4", "--mtp", "1"], ["mtp"]),
    "prefill_without_decode": (["predict", "--system", "gb200-nvl72", "--concurrency", "4",
                                "--prefill", "tp=4,workers=2"], ["--decode"]),
    "malformed_prefill_key": (["predict", "--system", "gb200-nvl72", "--concurrency", "4",
                               "--prefill", "foo=3", "--decode", "dp=8,ep=8"], ["foo", "--prefill"]),
    "non_integer_pool_value": (["predict", "--system", "gb200-nvl72", "--concurrency", "4",
                                "--prefill", "tp=four", "--decode", "dp=8,ep=8"], ["tp", "four"]),
    "power_nonsense": (["predict", "--system", "gb200-nvl72", "--concurrency", "4", "--power", "nonsense"],
                       ["power", "nonsense"]),
    "isl_without_osl": (["predict", "--system", "gb200-nvl72", "--concurrency", "4", "--isl", "1000"],
                        ["osl"]),
    "negative_concurrency": (["predict", "--system", "gb200-nvl72", "--concurrency", "-4"], ["concurrency"]),
    "zero_concurrency": (["predict", "--system", "gb200-nvl72", "--concurrency", "0"], ["concurrency"]),
    "unknown_workload": (["predict", "--system", "gb200-nvl72", "--concurrency", "4", "--workload", "2k2k"],
                         ["workload"]),
    "unknown_precision": (["predict", "--system", "gb200-nvl72", "--concurrency", "4", "--precision", "fp3"],
                          ["precision"]),
    "unknown_model": (["predict", "--system", "gb200-nvl72", "--concurrency", "4", "--model", "gpt-5"],
                      ["model"]),
    "compare_mtp_without_acceptance": (["compare", "--mtp", "1", "--html", ""], ["mtp"]),
    "compare_bad_power": (["compare", "--power", "watts", "--html", ""], ["power"]),
    "compare_baseline_not_in_systems": (["compare", "--systems", "jalapeno", "--baseline", "h100",
                                         "--html", ""], ["baseline"]),
    "bad_serving": (["frontier", "--system", "h100", "--model", "gpt-oss-120b", "--serving", "sometimes"],
                    ["serving"]),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_one_line_error(capsys, tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    cmd, words = BAD[name]
    check_error(*run(capsys, *cmd), *words)
    assert not (tmp_path / "jalapeno-compare.html").exists()


def test_out_with_unknown_extension(capsys, tmp_path):
    target = tmp_path / "f.xlsx"
    check_error(*run(capsys, "frontier", "--system", "gb200-nvl72", "--model", "gpt-oss-120b",
                     "--out", str(target)), "--out", ".xlsx")
    assert not target.exists()


@pytest.mark.parametrize("cmd", [
    ["predict", "--system", "h100"],  # missing required --concurrency
    ["predict", "--system", "h100", "--concurrency", "abc"],  # not a number
    ["predict", "--system", "h100", "--concurrency", "4", "--bogus"],  # unknown option
    ["frobnicate"],  # unknown command
], ids=["missing-option", "bad-type", "unknown-option", "unknown-command"])
def test_usage_errors_exit_2_without_traceback(capsys, cmd):
    code, out, err = run(capsys, *cmd)
    assert code == 2
    assert "Traceback" not in out + err


@pytest.mark.parametrize("value", ["inf", "1e400"])
def test_infinite_concurrency_rejected(capsys, value):
    check_error(*run(capsys, "predict", "--system", "gb200-nvl72", "--concurrency", value, "--tp", "8",
                     "--ep", "8"), "concurrency")


# ---- the app itself: bare groups, version, usage-error hints ---------------------------------------

@pytest.mark.parametrize("args", [(), ("hardware",), ("models",)])
def test_bare_command_group_shows_help_and_exits_cleanly(capsys, args):
    code, out, err = run(capsys, *args)
    assert code == 0 and "Usage" in out and err == ""


def test_version_option(capsys):
    from importlib.metadata import version

    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"jalapeno {version('jalapeno')}"


def test_usage_error_hint_names_the_command_not_an_option(capsys):
    code, _, err = run(capsys, "--bogus")
    assert code == 2 and err.strip() == "error: No such option: --bogus. Fix: see `jalapeno --help`"
    code, _, err = run(capsys, "compare", "--bogus")
    assert code == 2 and err.strip().endswith("Fix: see `jalapeno compare --help`")


@pytest.mark.parametrize("args, words", [
    (["--prefill", "", "--decode", "tp=8"], ("--prefill", "empty pool")),
    (["--prefill", "tp=4,tp=8", "--decode", "tp=8"], ("--prefill tp", "twice")),
    (["--tp", "8", "--prefill", "tp=4", "--decode", "tp=8"], ("--tp:", "aggregated layout option", "tp= in the pools")),
    (["--tp", "8", "--mtp", "100000", "--mtp-acceptance", "0.7"], ("mtp", "beyond 16")),
    (["--tp", "8", "-m", "llama-3.3-70b", "--mtp", "3", "--mtp-acceptance", "0.7"], ("mtp", "no mtp module")),
])
def test_predict_rejects_ambiguous_pools_and_mtp(capsys, args, words):
    check_error(*run(capsys, "predict", "--system", "b200", "--concurrency", "16", *args), *words)


def test_predict_json_names_the_efficiency_set(capsys):
    code, out, err = run(capsys, "predict", "--system", "b200", "--concurrency", "16", "--tp", "8", "--json")
    assert code == 0, err
    src = json.loads(out)["efficiency_source"]
    assert "calibrated" in src and "b200.toml" in src


def test_predict_defaults_to_the_smallest_layout_that_fits_and_names_a_weight_misfit(capsys):
    """Issue 15 defect 5: DeepSeek-R1 (671B, fp8) cannot run on one B200 (180 GB): the default is the
    smallest fitting layout (8 chips: 671 GB of weights over 8 x ~173 GB usable), announced on stderr;
    an explicit TP2 says the weights do not fit and names that layout."""
    import json

    code, out, err = run(capsys, "predict", "--system", "b200", "--model", "deepseek-r1", "-c", "8", "--json")
    assert code == 0, err
    assert "smallest whose weights fit" in err
    assert json.loads(out)["chips"] == 8
    check_error(*run(capsys, "predict", "--system", "b200", "--model", "deepseek-r1", "--tp", "2", "-c", "8"),
                "weights do not fit", "attn TP1 DP8 · MoE TP1 EP8")


def test_simulate_defaults_to_the_smallest_layout_that_fits_like_predict(capsys):
    """Issue 15 defect 5 for ``simulate``: DeepSeek-R1 fp8 (~671 GB of weights) on GB200 (186 GB, 0.96
    of it usable = 178.6 GB): 2 chips hold ~337 GB each (no), 4 chips ~168 GB (yes) — so the default is
    a 4-chip layout, announced on stderr, and an explicit TP2 is refused as a weight misfit."""
    code, out, err = run(capsys, "simulate", "--system", "gb200-nvl72", "--model", "deepseek-r1", "-w", "1k1k",
                         "-c", "4", "--requests", "20", "--json")
    assert code == 0, err
    assert "smallest whose weights fit" in err and "TP4" in err
    check_error(*run(capsys, "simulate", "--system", "gb200-nvl72", "--model", "deepseek-r1", "-w", "1k1k",
                     "--tp", "2", "-c", "4", "--requests", "20"), "weights do not fit", "--tp 4")


@pytest.mark.parametrize(("args", "layout"), [
    ((), "attn TP1 DP8 · MoE TP1 EP8"),                     # no layout option: DEP8, as before
    (("--tp", "8"), "attn TP8 DP1 · MoE TP1 EP8"),          # was TP8 x DP8: 64 chips for "--tp 8"
    (("--tp", "8", "--ep", "1"), "attn TP8 DP1 · MoE TP8 EP1"),
    (("--dp", "32"), "attn TP1 DP32 · MoE TP1 EP32"),
    (("--ep", "16"), "attn TP1 DP16 · MoE TP1 EP16"),
])
def test_step_fills_the_layout_options_not_given_from_those_given(capsys, args, layout):
    code, out, err = run(capsys, "step", "-s", "b200", "-m", "deepseek-r1", *args)
    assert code == 0, err
    assert layout in " ".join(out.split())


@pytest.mark.parametrize(("args", "named"), [
    (("--ep", "0"), "--ep"),      # was reported as "dp: must be a positive integer" (dp is filled from --ep)
    (("--ep", "-1"), "--ep"),
    (("--dp", "0"), "--dp"),
    (("--tp", "0", "--ep", "8"), "--tp"),
])
def test_step_refuses_a_layout_option_below_one_by_its_own_name(capsys, args, named):
    check_error(*run(capsys, "step", "-s", "b200", "-m", "deepseek-r1", *args),
                f"{named}: must be a positive integer", f"give {named} 1 or more")


def test_step_refuses_ep_on_a_dense_model_instead_of_dropping_it(capsys):
    # --ep 4 on a dense model was dropped silently and, through the fill rule, became attention DP4
    check_error(*run(capsys, "step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "4", "--ep", "4"),
                "--ep: llama-3.3-70b is dense", "drop --ep, or give --ep 1")
    code, out, err = run(capsys, "step", "-s", "h200", "-m", "llama-3.3-70b", "--tp", "4")
    assert code == 0, err
    assert "attn TP4 DP1 · FFN TP4" in " ".join(out.split())


def test_predict_engine_sizes_the_kv_pool_as_validation_does(capsys):
    # The H200 SGLang recipe (sglang-h200-dsr1-fp8) runs --mem-fraction-static 0.82 with SGLang's
    # default BF16 KV: pool = 137.90 GiB x 0.82 = 113.08 GiB less 79.3 GiB of weights per GPU
    # = 33.8 GiB / 70,272 B per token = 0.516 M tokens; under ignore_eos admission each running
    # request holds ISL + OSL = 7,373 + 922 (means of InferenceX's 0.8-1.0 lengths) = 8,295 tokens,
    # so 62 run and 2 of 64 users queue, as in validation's row inferencex_points:65. `predict
    # --engine` now takes the same profile and KV dtype by default; `--engine-memory none` drops it.
    args = ("predict", "-s", "h200", "-m", "deepseek-r1", "-w", "8k1k", "-c", "64", "--tp", "8",
            "--engine", "sglang-h200-dsr1-fp8", "--json")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    d = json.loads(out)
    code, out, err = run(capsys, *args, "--engine-memory", "none")
    assert code == 0, err
    bare = json.loads(out)
    assert "kv_capacity" in d["limit"] and "kv_capacity" not in bare["limit"]
    assert d["engine_memory"][0]["max_total_tokens"] == pytest.approx(0.516e6, rel=0.005)  # the pool above
    assert d["ttft_s"] > 1.4 * bare["ttft_s"]
