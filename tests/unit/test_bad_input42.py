"""Bad input to round 41's additions and an explicit option the fabric lacks (robust42): each refused with one
SpecError naming the field and the fix, where before it was served silently or raised deep inside."""

import copy
import re
import csv
import tomllib
from importlib import resources

import pytest

from jalapeno.cost.collectives import collective_time
from jalapeno.deploy.recipe import _recipe
from jalapeno.errors import SpecError
from jalapeno.fit.aic_sweeps import load_sweeps
from jalapeno.fit.mlperf import DEFAULT_MLPERF, load_mlperf
from jalapeno.fit.mlperf_rows import _result_key
from jalapeno.specs.catalog import load_system
from jalapeno.specs.efficiency import DEFAULT_EFFICIENCY
from jalapeno.specs.w4a16_moe import parse_w4a16_forms, w4a16_forms

# ---- collective_time: an algorithm the fabric lacks --------------------------------------------------------------


def test_in_switch_on_a_fabric_without_it_is_refused():
    mi300x = load_system("mi300x")  # Infinity Fabric full mesh: no switch to reduce in (in_network_reduction false)
    assert not mi300x.levels[0].in_network_reduction
    with pytest.raises(SpecError, match=r"algorithms: none of \('in_switch',\) runs a 8-chip all_reduce") as e:
        collective_time("all_reduce", 8, 1e6, mi300x, DEFAULT_EFFICIENCY, algorithms=("in_switch",))
    assert "ring" in str(e.value) and "algorithms=None" in e.value.fix  # the candidates it has, and the way out
    # an all-gather has no in-switch route on any fabric here (NVLS reduces; _flat prices it for all-reduce only)
    with pytest.raises(SpecError, match=r"none of \('in_switch',\) runs a 8-chip all_gather"):
        collective_time("all_gather", 8, 1e6, load_system("b200"), DEFAULT_EFFICIENCY, algorithms=("in_switch",))


def test_a_request_with_one_available_algorithm_and_the_default_keep_choosing():
    mi300x = load_system("mi300x")
    ring = collective_time("all_reduce", 8, [1e8], mi300x, DEFAULT_EFFICIENCY, algorithms=("ring",))
    both = collective_time("all_reduce", 8, [1e8], mi300x, DEFAULT_EFFICIENCY, algorithms=("ring", "in_switch"))
    assert list(both.algorithm) == ["ring"] and both.time_s[0] == ring.time_s[0]  # in_switch skipped, not refused
    auto = collective_time("all_reduce", 8, [1e8], mi300x, DEFAULT_EFFICIENCY)  # None: the fastest of all, as before
    assert auto.time_s[0] <= ring.time_s[0] and "in_switch" not in str(auto.algorithm[0])


# ---- data/engines.toml: the load-sized --max_num_tokens keys -----------------------------------------------------


@pytest.fixture(scope="module")
def sized_recipe():
    raw = tomllib.loads((resources.files("jalapeno") / "data" / "engines.toml").read_text(encoding="utf-8"))
    return next(r for r in raw["recipe"] if r.get("max_num_tokens_sized") and r.get("max_batch_dp_attention"))


@pytest.mark.parametrize("value", ["conc/0", "conc/00", "conc/-4", "conc/DP", 4, "conc/4.5", None])
def test_bad_max_batch_dp_attention_is_refused(sized_recipe, value):
    raw = dict(copy.deepcopy(sized_recipe), max_batch_dp_attention=value)
    with pytest.raises(SpecError, match=r"\.max_batch_dp_attention") as e:  # conc/0 divided by zero in the rule
        _recipe(raw, 0)
    assert "N >= 1" in e.value.fix


def test_sized_tokens_on_an_engine_that_is_not_tensorrt_llm_is_refused(sized_recipe):
    raw = dict(copy.deepcopy(sized_recipe), engine="sglang")  # was priced by TensorRT-LLM's script rule
    with pytest.raises(SpecError, match=r"max_num_tokens_sized: is true on the 'sglang' engine") as e:
        _recipe(raw, 0)
    assert "TensorRT-LLM recipe" in e.value.fix
    assert _recipe(dict(copy.deepcopy(sized_recipe), engine="dynamo-trt"), 0).max_num_tokens_sized is True


def test_per_rank_cap_without_sized_tokens_is_refused(sized_recipe):
    raw = copy.deepcopy(sized_recipe)
    raw.pop("max_num_tokens_sized")  # the cap was read by nothing
    with pytest.raises(SpecError, match=r"max_batch_dp_attention: 'conc/\w+' without max_num_tokens_sized") as e:
        _recipe(raw, 0)
    assert "add max_num_tokens_sized = true" in e.value.fix


SWEEP = (
    '[[sweep]]\nsystem = "b200"\nmodel = "deepseek-r1"\nengine = "trtllm"\nversion = "1"\nprecision = "fp8"\n'
    'measured = "2026-02-05"\nconfig_key = "k"\nspec = "none"\nsource = "s"\n'
)


def test_sweep_per_rank_cap_of_zero_and_malformed_toml_are_refused(tmp_path):
    f = tmp_path / "sweeps.toml"
    f.write_text(SWEEP + 'max_batch_dp_attention = "conc/0"\n')
    with pytest.raises(SpecError, match=r"sweep\[0\]\.max_batch_dp_attention") as e:
        load_sweeps(f)
    assert "(N >= 1)" in e.value.fix
    f.write_text(SWEEP + "max_batch_dp_attention = \n")  # a TOMLDecodeError, naming neither file nor fix
    with pytest.raises(SpecError, match=r"sweeps\.toml: malformed TOML"):
        load_sweeps(f)


# ---- data/w4a16_moe_forms.toml --------------------------------------------------------------------------------

FORM = (
    '[[form]]\nsystem = "b200"\nkernel = "mxint4"\npeak_fraction = 0.33\nhalf_rows = 54.0\nhbm_fraction = 0.62\n'
    "floor_s = 2.8e-5\nheld_out_median_ape = 0.076\n"
)


def test_the_shipped_forms_parse():
    forms = w4a16_forms()
    assert ("b200", "mxint4") in forms and ("b200", "marlin") in forms
    assert forms[("gb300-nvl72", "mxint4")]["peak_fraction"] == pytest.approx(0.339688)  # the file's own figure


@pytest.mark.parametrize(
    ("text", "field", "problem"),
    [
        (FORM + "half_rows = \n", "data/w4a16_moe_forms.toml", "malformed TOML"),
        (FORM.replace('system = "b200"\n', ""), "form[0].system", "missing or not a name"),
        (FORM.replace("mxint4", "mxint8"), "form b200/mxint8.kernel", "is not one of mxint4, marlin"),
        (FORM.replace("peak_fraction = 0.33", "peak_fraction = -0.33"), "peak_fraction", r"\(0, 1\], got -0.33"),
        (FORM.replace("peak_fraction = 0.33", "peak_fraction = 33.0"), "peak_fraction", "got 33.0"),
        (FORM.replace("peak_fraction = 0.33", 'peak_fraction = "0.33"'), "peak_fraction", "got '0.33'"),
        (FORM.replace("peak_fraction = 0.33\n", ""), "peak_fraction", "got None"),
        (FORM.replace("half_rows = 54.0", "half_rows = -1.0"), "half_rows", ">= 0, got -1.0"),
        (FORM.replace("hbm_fraction = 0.62", "hbm_fraction = nan"), "hbm_fraction", "got nan"),
        (FORM.replace("floor_s = 2.8e-5", "floor_s = 28.0"), "floor_s", r"\[0, 1e-3\].*got 28.0"),  # µs written as s
        (FORM + FORM, "form b200/mxint4", "given twice"),
    ],
)
def test_a_malformed_forms_file_is_refused(text, field, problem):
    with pytest.raises(SpecError, match=rf"{re.escape(field)}.*: .*{problem}") as e:
        parse_w4a16_forms(text)
    assert "scripts/fit_w4a16_forms.py" in e.value.fix


def test_a_form_at_the_edges_of_its_ranges_is_read():
    f = parse_w4a16_forms(
        FORM.replace("peak_fraction = 0.33", "peak_fraction = 1.0")
        .replace("half_rows = 54.0", "half_rows = 0.0")
        .replace("floor_s = 2.8e-5", "floor_s = 0.0")
    )
    assert (f[("b200", "mxint4")]["peak_fraction"], f[("b200", "mxint4")]["floor_s"]) == (1.0, 0.0)


# ---- MLPerf mapping inputs --------------------------------------------------------------------------------------

OFFLINE = "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline"
SERVER = "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Server"


def _one_result(tmp_path, key, edit):
    with open(DEFAULT_MLPERF, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    mine = [dict(r) for r in rows if _result_key(r["id"]) == key]
    assert mine, key
    mine = edit(mine) or mine
    p = tmp_path / "points.csv"
    with open(p, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(mine)
    return p


def _set(field, value, metric=None):
    def edit(rows):
        for r in rows:
            if metric is None or r["metric"] == metric:
                r[field] = value

    return edit


def test_the_result_as_published_loads(tmp_path):
    pts, skipped = load_mlperf(_one_result(tmp_path, OFFLINE, lambda rs: None))
    assert [p.chips for p in pts] == [8] and not skipped


@pytest.mark.parametrize("scenario", ["Offlin", "offline", ""])
def test_a_misspelt_scenario_is_refused(tmp_path, scenario):
    # was skipped as "<scenario> result without a mean TPOT"
    with pytest.raises(SpecError, match=r"Offline concurrency_or_batch: scenario .* is not one of Offline, Server"):
        load_mlperf(_one_result(tmp_path, OFFLINE, _set("concurrency_or_batch", scenario)))


def test_a_fractional_chip_count_is_refused(tmp_path):
    with pytest.raises(SpecError, match=r"num_chips: '2.5' is not a whole number of chips"):  # was priced as 2 chips
        load_mlperf(_one_result(tmp_path, OFFLINE, _set("num_chips", "2.5")))


def test_a_second_row_of_one_result_and_metric_is_refused(tmp_path):
    def dup(rows):
        return rows + [dict(r, value="1") for r in rows if r["metric"] == "output_tok_s_system"]

    with pytest.raises(SpecError, match=r"a second output_tok_s_system row of result .*Server") as e:
        load_mlperf(_one_result(tmp_path, SERVER, dup))  # the later row was read: 0.2 tok/s/chip
    assert "one row per result and metric" in e.value.fix


def test_a_run_log_mean_below_two_tokens_is_refused_naming_the_notes(tmp_path):
    with pytest.raises(SpecError, match=r"Server notes: 'mean output tok/sample ~0' is below 2 tokens"):
        load_mlperf(_one_result(tmp_path, SERVER, _set("notes", "mean output tok/sample ~0", "output_tok_s_system")))


@pytest.mark.parametrize(
    ("field", "value", "metric", "reason"),
    [
        ("num_chips", "0", None, "num_chips '0' not a number > 0"),
        ("num_chips", "abc", None, "num_chips 'abc' not a number > 0"),
        ("value", "-5", "output_tok_s_system", "output_tok_s_system '-5' not a number > 0"),
    ],
)
def test_a_missing_number_is_skipped_naming_its_column(tmp_path, field, value, metric, reason):
    pts, skipped = load_mlperf(_one_result(tmp_path, OFFLINE, _set(field, value, metric)))
    assert not pts and skipped == [(OFFLINE, reason)]


# ---- --set efficiency.moe.w4a16.* on a model whose experts are not weight-only INT4 ------------------------------


def test_w4a16_override_on_a_model_without_int4_experts_is_noted(capsys):
    from jalapeno.cli.system_notes import note_unread_efficiency
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision

    sets = ["efficiency.moe.w4a16.peak_fraction=0.05", "chip.hbm_stacks=8"]
    pr = load_pricer("b200", "calibrated", (), None)
    note_unread_efficiency(sets, load_model("deepseek-r1"), get_precision("fp8"), pr)  # changed nothing, no word
    err = capsys.readouterr().err
    assert "--set efficiency.moe.w4a16.peak_fraction is not read: deepseek-r1 at fp8" in err
    assert "hbm_stacks" not in err
    note_unread_efficiency(sets, load_model("kimi-k2.5"), get_precision("int4"), pr)  # INT4 experts read the entry
    note_unread_efficiency(["chip.hbm_stacks=8"], load_model("deepseek-r1"), get_precision("fp8"), pr)
    assert capsys.readouterr().err == ""
