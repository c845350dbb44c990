"""Round 37 new-user pass and break-it (newuser37): report/HTML inputs, plan's shown arithmetic, custom files."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from cli_runner import error_line, run

POINTS = Path(__file__).resolve().parents[2] / "src" / "jalapeno" / "data" / "validation" / "inferencex_points.csv"


def _points(tmp_path: Path, **cells) -> Path:
    """A one-row InferenceX points CSV: the shipped file's first row with ``cells`` replaced."""
    rows = list(csv.reader(POINTS.open()))
    head, row = rows[0], list(rows[1])
    for k, v in cells.items():
        row[head.index(k)] = v
    p = tmp_path / "mine.csv"
    with p.open("w", newline="") as f:
        csv.writer(f).writerows([head, row])
    return p


def test_report_measured_file_of_which_no_row_reads_is_refused(capsys, tmp_path):
    """report --measured mine.csv, every row unreadable (a hardware name not in the catalog), warned and wrote a page
    without them, exit 0; validate --points refuses the same file. Now one error line, before the sweep, and no page."""
    p = _points(tmp_path, hardware="GB999")
    page = tmp_path / "r.html"
    line = error_line(*run(capsys, "report", "--systems", "gb200-nvl72", "--workload", "1k1k", "--measured", str(p),
                           "--html", str(page)))
    assert line.startswith("error: --measured mine.csv: no measured point could be read; 1 row(s) skipped (first: "
                           "mine:2: hardware/model 'GB999'/'DeepSeek-R1-0528' not in the catalog"), line
    assert line.endswith("Fix: check the CSV's hardware/model names and numbers against the InferenceX points format, "
                         "or pass --measured none"), line
    assert not page.exists()


def _num(s: str) -> float:
    return float(s.replace(",", ""))


@pytest.mark.parametrize("args", [
    ("--system", "jalapeno", "--model", "kimi-k2.5", "--target", "1e6", "--min-interactivity", "50"),
    ("--system", "gb200-nvl72", "--power-mw", "20", "--min-interactivity", "50"),
])
def test_plan_arithmetic_checks_by_hand(capsys, args):
    """plan shows its arithmetic, and a factor rounded to one decimal broke it: '562.0 tok/s/chip x 732 chips =
    411,360 tok/s' (411,384 by hand), '9,408 chips x 1,173.6 ... = 11,040,776' (11,041,229), '8,625 concurrent per
    instance x 3 = 25,874' (25,875). Every 'N x F = T' line now gives F to the decimals T needs: N·F, rounded as T is
    printed, is T."""
    code, out, err = run(capsys, "plan", "--workload", "8k1k", *args)
    assert code == 0, err
    text = " ".join(out.split())
    pats = [r"delivered: ([\d,]+) (?:chips |instances )?x ([\d,.]+) (?:output tok/s(?:/chip)? )?(?:\([^)]*\) )?= ([\d,]+)",
            r"users: ([\d,.]+) concurrent per instance .*? x ([\d,]+) = ([\d,]+);",
            r"power \(all-in: all-in provisioned\): ([\d,]+) x ([\d,.]+) W = ([\d,.]+) kW",
            r"cost: ([\d,]+) x \$([\d.]+)/chip-hour.*? = \$([\d,.]+)/hour"]
    seen = 0
    for pat in pats:
        for m in re.finditer(pat, text):
            a, b, total = (_num(g) for g in m.groups())
            dec = len(m.group(3).split(".")[1]) if "." in m.group(3) else 0
            scale = 1e3 if pat.startswith("power") else 1.0
            assert round(a * b / scale, dec) == total, m.group(0)
            seen += 1
    assert seen >= 3, text


TINY = """schema_version = 1
name = "tiny"
description = "8 chips of 16 GB, one switched node"
[chip]
name = "Tiny"
peak_dense_tflops.bf16 = { value = 1000, source = "assumption: test" }
peak_dense_tflops.fp8 = { value = 2000, source = "assumption: test" }
hbm_capacity_gb = { value = 16, source = "assumption: test" }
hbm_bandwidth_tb_per_s = { value = 4, source = "assumption: test" }
hbm_stacks = { value = 4, source = "assumption: test" }
tdp_w = { value = 700, source = "assumption: test" }
[[levels]]
name = "node"
chips = 8
scope = "scale_up"
topology = "switched"
bandwidth_gb_per_s = { value = 450, source = "assumption: test" }
latency_us = { value = 1.0, source = "assumption: test" }
[power]
allin_kw_per_chip = { value = 1.5, source = "assumption: test" }
[cost]
usd_per_chip_hour = { value = 2.0, source = "assumption: test" }
"""


def test_report_lists_a_system_that_cannot_run_the_model(capsys, tmp_path):
    """compare lists a system no deployment of the model fits on as 'infeasible' with the reason; report's page
    dropped it without a word (a page of the other systems only). 8 x 16 GB (32 chips at most: 512 GB) cannot hold
    DeepSeek-R1's ~671 GB of FP8 weights."""
    sys_file = tmp_path / "tiny.toml"
    sys_file.write_text(TINY)
    page = tmp_path / "r.html"
    code, out, err = run(capsys, "report", "--systems", f"{sys_file},h100", "-w", "1k1k", "-p", "fp8", "--serving",
                         "agg", "--measured", "none", "--html", str(page))
    assert code == 0, err
    assert "note: tiny cannot run the model (no layout of deepseek-r1 (fp8) fits on tiny" in err
    text = page.read_text()
    assert re.search(r"<td>tiny</td><td>infeasible</td>(<td>-</td>){8}<td>cannot run the model: no layout", text)


def test_compare_store_without_pyarrow_is_refused_before_the_sweep(capsys, tmp_path, monkeypatch):
    """README's first install (no [explore] extra): compare --store DIR swept every system, then failed on the Parquet
    write and left DIR/runs/compare-...-1 empty. Now refused first, nothing created."""
    import sys

    import jalapeno.analysis.comparison as comparison

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError

    def no_sweep(*a, **k):
        raise AssertionError("swept before the store was checked")

    monkeypatch.setattr(comparison, "compare_systems", no_sweep)
    store = tmp_path / "st"
    line = error_line(*run(capsys, "compare", "--systems", "h100", "-w", "1k1k", "--store", str(store)))
    assert line == ('error: --store: needs the pyarrow package, which is not installed. Fix: install the extra: '
                    'pip install -e ".[explore]"')
    assert not store.exists()


def test_set_fp4_block_formats_without_its_source_gives_its_own_form(capsys):
    """--set chip.fp4_block_formats.formats=[...] on a chip without the entry said 'give both: --set
    chip.fp4_block_formats={value = <number>, ...}, or the bare number': that entry is {formats, source}, no number."""
    line = error_line(*run(capsys, "hardware", "show", "jalapeno", "--set", 'chip.fp4_block_formats.formats=["mxfp4"]'))
    assert line == ("error: --set: chip.fp4_block_formats.source: is missing. Fix: give both: --set "
                    "'chip.fp4_block_formats={formats = [\"mxfp4\", \"nvfp4\"], source = \"<where it comes from>\"}' "
                    "(the FP4 block formats the FP4 tensor cores consume)")


@pytest.mark.parametrize("value, got", [("nvfp4", "'nvfp4'"), ('["nvfp4"]', "['nvfp4']")])
def test_set_fp4_block_formats_to_a_bare_value_gives_the_set_form(capsys, value, got):
    """--set chip.fp4_block_formats=nvfp4 (or a bare list) was told to write the key 'as a table ([...] in the file)',
    a file's form for a command-line value (review37b); now the --set form of the {formats, source} entry."""
    line = error_line(*run(capsys, "hardware", "show", "jalapeno", "--set", f"chip.fp4_block_formats={value}"))
    assert line == (f"error: --set: chip.fp4_block_formats: must be a table of its keys, got {got}. Fix: give both: "
                    "--set 'chip.fp4_block_formats={formats = [\"mxfp4\", \"nvfp4\"], source = \"<where it comes "
                    "from>\"}' (the FP4 block formats the FP4 tensor cores consume)")


def test_set_the_source_of_a_sourced_number_names_the_table_form(capsys):
    """--set chip.tdp_w.source=... was told only 'write chip.tdp_w=<value>', which cannot set a source."""
    line = error_line(*run(capsys, "hardware", "show", "jalapeno", "--set", "chip.tdp_w.source=my datasheet"))
    assert line == ("error: --set: chip.tdp_w.source: chip.tdp_w is a value, not a table. Fix: write chip.tdp_w=<value> "
                    "(its source then records the override), or chip.tdp_w={value = <number>, source = \"<where it "
                    "comes from>\"}")


def test_hardware_show_prints_the_optional_chip_keys_and_the_die(capsys, monkeypatch):
    """A file's compute_units, sram_per_unit_kib, mma_tile_m, fp4_block_formats and [die] were read and priced (the tile
    model, the FP4 format check, the sliced pricer) but hardware show printed none of them. MI355X's file: 256 CUs,
    160 KiB LDS per CU, MFMA M = 16, MXFP4 only, 2 I/O dies holding 8 XCDs on a pair at 2.75 TB/s and 150 ns."""
    monkeypatch.setenv("COLUMNS", "250")
    code, out, err = run(capsys, "hardware", "show", "mi355x")
    assert code == 0, err
    rows = {ln.split("│")[1].strip(): ln.split("│")[2].strip() for ln in out.splitlines() if ln.count("│") >= 3}
    assert rows["compute units"] == "256" and rows["SRAM per unit"] == "160 KiB" and rows["MMA tile M"] == "16"
    assert rows["FP4 block formats"] == "mxfp4"
    assert "die (docs/chip.md): 2 slices (8 compute dies), pair, 2.75 TB/s per link, 150 ns per hop, placement striped" \
        in " ".join(out.split())
    code, out, _ = run(capsys, "hardware", "show", "h100")
    assert "die (docs/chip.md)" not in out  # one slice: no on-die network


def test_agentic_compare_lists_a_system_that_cannot_run_the_model(capsys, tmp_path):
    """compare -w 8k1k lists a system no deployment fits on as infeasible and compares the rest; compare -w agentic:…
    stopped the whole comparison with 'deployment: no aggregated layout of deepseek-r1 fits on tiny'. Now the same
    as the fixed-length table; the baseline falls to a system that runs unless --baseline named the infeasible one."""
    sys_file = tmp_path / "tiny.toml"
    sys_file.write_text(TINY)
    args = ("compare", "--systems", f"h100,{sys_file}", "-w", "agentic:chat-agent", "-p", "fp8")
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["infeasible"] == {"tiny": "no aggregated layout of deepseek-r1 fits on tiny"}
    assert d["baseline"] == "h100" and list(d["systems"]) == ["h100"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert re.search(r"│ tiny +│ infeasible +│", out) and "cannot run" in out, out
    code, out, err = run(capsys, *args, "--baseline", "tiny")
    # the file's note (no base, no [efficiency]) is said in every run since round 54 (per invocation): the error after it
    line = error_line(code, out, "\n".join(ln for ln in err.splitlines() if not ln.startswith("note: ")))
    assert line == ("error: --baseline: tiny cannot run deepseek-r1 (no aggregated layout of deepseek-r1 fits on tiny). "
                    "Fix: pick a system that can as --baseline")


def test_sensitivity_unknown_metric_does_not_offer_ratio_metrics(capsys):
    """sensitivity --metric bogus listed the metrics '(each also as <metric>_ratio)', the claim parser's words; a
    ratio metric is then refused ('sensitivity is of one system's metric, not a ratio')."""
    line = error_line(*run(capsys, "sensitivity", "--system", "jalapeno", "--metric", "bogus"))
    assert line.startswith("error: --metric: unknown metric 'bogus'. Fix: use one of peak_throughput_per_chip, "), line
    assert "_ratio" not in line and line.endswith("throughput_per_chip@X, tok_s_per_kw@X"), line


def test_set_name_colon_takes_a_user_files_system_name(capsys, tmp_path):
    """--systems my/tiny.toml,h100 --set tiny:KEY=V was refused ('tiny' is not among --systems): NAME: took only the
    entry as typed, though the tables call the system tiny and --baseline tiny works. Now the file's name works too;
    a miss lists each file entry with its name."""
    sys_file = tmp_path / "tiny.toml"
    sys_file.write_text(TINY.replace("value = 16,", "value = 192,"))  # 192 GB: a chip that runs gpt-oss-120b
    args = ("compare", "--systems", f"{sys_file},h100", "-m", "gpt-oss-120b", "-w", "1k1k", "--serving", "agg",
            "--json")
    code, out, err = run(capsys, *args, "--set", "tiny:chip.tdp_w=650")
    assert code == 0, err
    assert "tiny+chip.tdp_w=650" in json.loads(out)["systems"]
    line = error_line(*run(capsys, *args, "--set", "tiyn:chip.tdp_w=650"))
    # the near miss names the file's own name (break50)
    assert line == (f"error: --set: 'tiyn' is not among --systems (did you mean 'tiny'?). Fix: use one of {sys_file} "
                    "(tiny), h100 before the colon, or drop NAME: to set all")


def test_results_show_takes_the_name_results_list_shows(tmp_path):
    """results list shows a run's folder ('explore-700w') and its name ('700w', the explore file's name); results
    show 700w was 'no run '700w''. The name now finds the run where exactly one run has it; two runs of one name
    (compare --store twice: compare-m-w-1, compare-m-w-2) still need the folder."""
    from jalapeno.analysis.results_store import run_dir
    from jalapeno.errors import SpecError

    for folder, name in (("explore-700w", "700w"), ("compare-r1-8k1k-1", "r1-8k1k"), ("compare-r1-8k1k-2", "r1-8k1k")):
        (tmp_path / "runs" / folder).mkdir(parents=True)
        (tmp_path / "runs" / folder / "meta.json").write_text(json.dumps({"run": folder, "name": name}))
    assert run_dir(tmp_path, "700w") == tmp_path / "runs" / "explore-700w"
    assert run_dir(tmp_path, "explore-700w") == tmp_path / "runs" / "explore-700w"
    with pytest.raises(SpecError) as e:  # review37b: said 'no run' beside two list rows of that name
        run_dir(tmp_path, "r1-8k1k")
    assert str(e.value) == (f"RUN: 'r1-8k1k' names 2 runs in {str(tmp_path)!r} (compare-r1-8k1k-1, compare-r1-8k1k-2). "
                            "Fix: give one by its folder name (results list's run column): compare-r1-8k1k-1 or "
                            "compare-r1-8k1k-2")
    with pytest.raises(SpecError) as e:  # a name no run has: every folder
        run_dir(tmp_path, "r1-1k1k")
    assert e.value.fix == "use one of: compare-r1-8k1k-1, compare-r1-8k1k-2, explore-700w"
