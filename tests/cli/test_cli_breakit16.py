"""Hostile-input findings of tester round 16 (breakit16): each bad input is one error naming the
field as the user wrote it and a fix that works; expected texts are the inputs' own keys."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path

import pytest
from cli_runner import check_error, error_line, run

from jalapeno.errors import SpecError

SHOW = ("hardware", "show")


def _variant(tmp_path, body: str, name: str = "v") -> str:
    f = tmp_path / name / "v.toml"  # a folder per body: load_variant caches by path
    f.parent.mkdir(exist_ok=True)
    f.write_text('base = "jalapeno"\n' + body)
    return str(f)


def test_a_variant_files_bad_value_is_named_as_written_with_a_fix_that_loads(tmp_path, capsys):
    # was: 'v.toml: chip.hbm_stacks.value: ... e.g. chip.hbm_stacks.value = 8'; written so, the file
    # then failed on 'chip.hbm_stacks.source: is missing' (a variant gives the bare number)
    for i, (body, words) in enumerate((('[chip]\nhbm_stacks = "eight"\n', ("must be a whole number", "e.g. chip.hbm_stacks = 8")),
                        ("chip.hbm_stacks = 4.5\n", ("got 4.5", "e.g. chip.hbm_stacks = 8")),
                        ("[chip]\nhbm_bandwidth_tb_per_s = -3\n", ("must be positive", "give chip.hbm_bandwidth_tb_per_s")),
                        ("[chip]\nhbm_bandwidth_tb_per_s = nan\n", ("finite number", "for chip.hbm_bandwidth_tb_per_s ")))):
        code, out, err = run(capsys, *SHOW, _variant(tmp_path, body, f"bad{i}"))
        key = "chip.hbm_stacks" if "stacks" in body else "chip.hbm_bandwidth_tb_per_s"
        check_error(code, out, err, f"v.toml: {key}:", *words)
        assert ".value" not in error_line(code, out, err)
    # the fix it gives loads
    code, out, err = run(capsys, *SHOW, _variant(tmp_path, "[chip]\nhbm_stacks = 8\n", "good"))
    assert code == 0, err
    # a {value, source} table keeps its entry's names (there .value is what the user wrote)
    code, out, err = run(capsys, *SHOW, _variant(tmp_path, '[chip]\nhbm_stacks = {value = 4.5, source = "my die"}\n', "table"))
    check_error(code, out, err, "chip.hbm_stacks", "whole number")


def test_a_design_space_bound_the_schema_refuses_is_named_not_a_derived_partner(tmp_path, capsys):
    # was: a peak FLOP range starting at 0 reported 'derived.chip.hbm_capacity_gib: usable 216.0 GiB
    # exceeds nominal 144.0 GiB' (a key tried alone, without its partner hbm_usable_gib)
    text = (Path(__file__).resolve().parents[2] / "examples" / "explore_700w.toml").read_text()
    assert "low = 1500" in text
    f = tmp_path / "space.toml"
    for low, got in (("0", "0.0"), ("-100", "-100.0")):
        f.write_text(text.replace("low = 1500", f"low = {low}", 1))
        check_error(*run(capsys, "explore", str(f)), "space.toml: params.chip.peak_dense_tflops.fp8:",
                    f"must be positive, got {got}", "give chip.peak_dense_tflops.fp8 a positive value")


def test_a_value_that_overflows_si_units_is_not_shown_as_inf_in_the_files_unit(tmp_path, capsys):
    # was: '1e300' TB/s shown as 'inf TB/s is outside the plausible range' (the SI conversion overflowed)
    code, out, err = run(capsys, *SHOW, _variant(tmp_path, "[chip]\nhbm_bandwidth_tb_per_s = 1e300\n"))
    check_error(code, out, err, "v.toml: chip.hbm_bandwidth_tb_per_s:", "past float range",
                "outside the plausible range 0.01-500 TB/s")
    assert "inf TB/s" not in err
    check_error(*run(capsys, *SHOW, "jalapeno", "--set", "chip.hbm_capacity_gib=1e308"),
                "--set: chip.hbm_capacity_gib:", "past float range", "GiB")


def test_torch_dtype_and_dtype_that_disagree_are_refused(tmp_path, capsys):
    # was: torch_dtype read, dtype (its name since transformers 4.56) ignored: "dtype": "int8" beside
    # "torch_dtype": "bfloat16" priced BF16 weights without a word
    cfg = json.loads(resources.files("jalapeno.data.models").joinpath("llama-3.3-70b.json").read_text())
    assert cfg["torch_dtype"] == "bfloat16"
    p = tmp_path / "m.json"
    p.write_text(json.dumps({**cfg, "dtype": "int8"}))
    check_error(*run(capsys, "models", "show", str(p)), "m.json: dtype:", "'int8' disagrees with torch_dtype "
                "'bfloat16'", "keep one of them")
    for same in ("bfloat16", "torch.bfloat16"):  # the same dtype twice is one statement
        p.write_text(json.dumps({**cfg, "dtype": same}))
        code, out, err = run(capsys, "models", "show", str(p))
        assert code == 0, err


def _touch_later(p: Path) -> None:
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))


def test_an_edited_system_or_model_file_is_read_again_in_the_same_process(tmp_path):
    # was: load_system / load_efficiency / load_model cached by path alone: a notebook that rewrote
    # its variant TOML or config.json and loaded it again got the first version back, silently
    from jalapeno.specs.catalog import load_efficiency, load_model, load_system

    v = tmp_path / "nb.toml"
    v.write_text('base = "jalapeno"\n[chip]\nhbm_stacks = 8\n[efficiency]\nkernel_launch_s = 1e-6\n')
    assert load_system(str(v)).chip.hbm_stacks == 8 and load_efficiency(str(v)).kernel_launch_s == 1e-6
    v.write_text('base = "jalapeno"\n[chip]\nhbm_stacks = 4\n[efficiency]\nkernel_launch_s = 2e-6\n')
    _touch_later(v)  # same size: a second write inside one kernel clock tick keeps the mtime
    assert load_system(str(v)).chip.hbm_stacks == 4 and load_efficiency(str(v)).kernel_launch_s == 2e-6
    cfg = json.loads(resources.files("jalapeno.data.models").joinpath("llama-3.3-70b.json").read_text())
    m = tmp_path / "m.json"
    m.write_text(json.dumps(cfg))
    assert load_model(str(m)).num_layers == 80  # the config's num_hidden_layers
    m.write_text(json.dumps({**cfg, "num_hidden_layers": 40}))
    _touch_later(m)
    assert load_model(str(m)).num_layers == 40


def test_an_edited_base_file_is_read_again_through_the_variant_that_names_it(tmp_path):
    # was: the cache key stamped the named file only: editing the file it names as its base (a chain
    # of two user files) kept the base's first version, silently (specs/files.chain_stamp)
    from jalapeno.specs.catalog import load_efficiency, load_system
    from jalapeno.specs.files import chain_stamp

    b, v = tmp_path / "b.toml", tmp_path / "v.toml"
    b.write_text('base = "jalapeno"\n[chip]\nhbm_stacks = 8\n[efficiency]\nkernel_launch_s = 1e-6\n')
    v.write_text('base = "b.toml"\nname = "v"\n')
    assert load_system(str(v)).chip.hbm_stacks == 8 and load_efficiency(str(v)).kernel_launch_s == 1e-6
    assert len(chain_stamp(str(v))) == 2  # v.toml, then b.toml; "jalapeno" is a catalog name: no file
    b.write_text('base = "jalapeno"\n[chip]\nhbm_stacks = 4\n[efficiency]\nkernel_launch_s = 2e-6\n')
    _touch_later(b)  # v.toml itself is untouched
    assert load_system(str(v)).chip.hbm_stacks == 4 and load_efficiency(str(v)).kernel_launch_s == 2e-6
    v.write_text('base = "v.toml"\n')  # a loop ends the chain; the loader refuses it with its own error
    _touch_later(v)
    assert len(chain_stamp(str(v))) == 2  # v.toml, then itself once: the chain stops at the repeat
    with pytest.raises(SpecError, match="base: the base chain loops back to this file"):
        load_system(str(v))


def test_a_qwen_config_with_use_sliding_window_slides_only_layers_past_max_window_layers(tmp_path, capsys):
    # Hugging Face Qwen2Config/Qwen3Config layer_types: with use_sliding_window, layer i slides only
    # when i >= max_window_layers (default 28); every layer was windowed here, silently
    from jalapeno.specs.model_file import load_model_file

    cfg = json.loads(resources.files("jalapeno.data.models").joinpath("qwen3-32b.json").read_text())
    assert cfg["num_hidden_layers"] == 64 and cfg["max_window_layers"] == 64
    p = tmp_path / "q.json"

    def windows(**changes):
        p.write_text(json.dumps({**{k: v for k, v in cfg.items() if k != "max_window_layers"},
                                 "use_sliding_window": True, "sliding_window": 4096, **changes}))
        return load_model_file(p).attention.windows

    assert windows(max_window_layers=64) == ()  # i >= 64 never: every layer full, as released
    assert windows(max_window_layers=60) == (0,) * 60 + (4096,) * 4
    assert windows() == (0,) * 28 + (4096,) * 36  # the key absent: Hugging Face's default 28
    p.write_text(json.dumps({**cfg, "use_sliding_window": "yes", "sliding_window": 4096}))
    check_error(*run(capsys, "models", "show", str(p)), "q.json: use_sliding_window: must be true or false")
