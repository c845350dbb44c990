"""``jalapeno audit --claims FILE`` (analysis/claim_set.py, cli/audit_set.py): a whole vendor claim, each of its
statements audited, one table as the answer. Expected values by hand in the comments; the CLI checks hold the file's
answer against the single-claim audit and the ``frontier`` command (another path to the same figure)."""

from __future__ import annotations

import json
import math

import pytest
from cli_runner import check_error, run, run_captured

from jalapeno.analysis.claim_set import flip_condition, load_claims, status
from jalapeno.errors import SpecError

ARGS = ("--system", "jalapeno", "--model", "gpt-oss-120b", "--workload", "8k1k", "--serving", "agg")
FILE = """
system = "jalapeno"
model = "gpt-oss-120b"
workload = "8k1k"
serving = "agg"
[[claim]]
name = "trivial"
claim = "max_interactivity=1"
[[claim]]
claim = "max_interactivity=100000"
"""


def test_load_claims_merges_the_defaults_and_names_each_claim(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text(FILE)
    a, b = load_claims(p)
    assert (a["name"], a["system"], a["model"], a["serving"]) == ("trivial", "jalapeno", "gpt-oss-120b", "agg")
    assert b["name"] == "max_interactivity=100000"  # no name: the claim text


def test_a_claims_file_saved_with_a_byte_order_mark_reads_as_without(tmp_path):
    """A claims file goes through specs/files.read_user_text as every user file does: an editor's UTF-8 byte-order
    mark is dropped (tomllib alone refuses '\ufeff' as an invalid statement)."""
    p = tmp_path / "c.toml"
    p.write_text('\ufeffsystem = "jalapeno"\n[[claim]]\nclaim = "max_interactivity=1"\n', encoding="utf-8")
    (c,) = load_claims(p)
    assert (c["system"], c["claim"]) == ("jalapeno", "max_interactivity=1")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (None, ("no file",)),
        ('system = "jalapeno"\n', ("no [[claim]] tables",)),
        ('[[claim]]\nclaim = "max_interactivity=1"\nsystem = "jalapeno"\nmodle = "x"\n', ("claim 1", "modle")),
        ('nope = 1\n[[claim]]\nclaim = "max_interactivity=1"\nsystem = "jalapeno"\n', ("defaults", "nope")),
        ("[[claim\n", ("is not TOML",)),
    ],
)
def test_a_bad_claims_file_names_what_is_wrong(tmp_path, text, words):
    p = tmp_path / "c.toml"
    if text is not None:
        p.write_text(text)
    with pytest.raises(SpecError) as e:
        load_claims(p)
    assert e.value.field == "--claims"
    for w in words:
        assert w in str(e.value)


def test_a_claim_without_a_system_names_its_table(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('[[claim]]\nclaim = "max_interactivity=1"\n')
    with pytest.raises(SpecError) as e:
        load_claims(p)
    assert e.value.field == "claim[1]" and "no system" in str(e.value)


def test_status_reads_the_band_against_the_claim():
    # the DeepSeek-R1 per-kW claim at 50 tok/s/user vs GB300 (fp8): 1.404x, band 0.987-2.19 → the low end misses 1.0
    assert status(1.404, 0.987, 2.19, 1.0) == "within band"
    assert status(1.404, 1.01, 2.19, 1.0) == "held"  # the whole band at or above 1.0
    assert status(0.795, 0.571, 0.999 * 0.998, 1.0) == "not held"  # 0.997 is more than 0.1% short of 1.0
    assert status(0.795, 0.571, 0.9995, 1.0) == "within band"  # within 0.1% meets (audit.RTOL)
    assert status(1.1, math.nan, 1.3, 1.0) == "within band"  # the low set never reaches @X: undefined, not met
    assert status(5.0, 4.0, 6.0, 5.5, higher=False) == "within band"  # E2E: lower is better, 4.0 meets 5.5
    assert status(5.0, 4.0, 5.4, 5.5, higher=False) == "held"


def test_flip_condition_by_hand():
    r = {
        "claim": {"value": 1.0, "system": "jalapeno", "baseline": "gb300-nvl72", "metric": "max_interactivity_ratio"},
        "predicted": {"value": 1.043},
        "verdict": "holds",
        "changes": [],
    }
    # 1 - 1/1.043 = 4.1% fall of Jalapeño's figure; 1.043 - 1 = 4.3% rise of the baseline's
    assert flip_condition(r) == "fails if jalapeno falls 4% (or gb300-nvl72 rises 4%)"
    r.update(
        predicted={"value": 0.5},
        verdict="plausible",
        changes=[
            {"parameter": "a", "required": 2.0, "factor": 1.5, "within_band": False},
            {"parameter": "b", "required": 3.0, "factor": 3.0, "within_band": True},
            {"parameter": "c", "required": None, "factor": None, "within_band": False},
        ],
    )
    # 1/0.5 - 1 = 100%; the in-band change comes first however far it moves
    assert flip_condition(r) == "holds if jalapeno rises 100%; nearest: b 3 (3x, inside its band)"
    r.update(verdict="impossible", changes=[])
    assert flip_condition(r).endswith("not even the physical limit gets there under the stated specs")


@pytest.fixture(scope="module")
def claims_json(tmp_path_factory) -> dict:
    p = tmp_path_factory.mktemp("claims") / "c.toml"
    p.write_text(FILE)
    code, out, err = run_captured("audit", "--claims", str(p), "--json")
    assert code == 0, err
    return json.loads(out)


def test_the_file_gives_what_the_single_claim_audit_gives(capsys, claims_json):
    code, out, err = run(capsys, "audit", *ARGS, "--claim", "max_interactivity=1", "--json")
    assert code == 0, err
    one = json.loads(out)
    row = claims_json["claims"][0]
    assert row["predicted"] == one["predicted"] and row["verdict"] == one["verdict"] == "holds"
    # 1 tok/s/user is far under any band end: held; 100,000 is past the physical limit: not held
    assert [r["status"] for r in claims_json["claims"]] == ["held", "not held"]
    assert claims_json["tally"] == {"held": 1, "within band": 0, "not held": 1}
    assert claims_json["claims"][1]["verdict"] == "impossible"


def test_the_operating_point_is_the_frontier_s_fastest_point(capsys, claims_json):
    # max_interactivity is read at the frontier's fastest point: the frontier command's last point, by another path
    code, out, err = run(capsys, "frontier", *ARGS, "--json")
    assert code == 0, err
    last = max(json.loads(out)["frontier"], key=lambda p: p["interactivity"])
    op = claims_json["claims"][0]["operating_point"]["system"]
    assert op["interactivity"] == pytest.approx(last["interactivity"], rel=1e-9)
    assert op["bound"] == last["bound"] and op["deployment"] == last["deployment"]["label"]
    assert claims_json["claims"][0]["operating_point"]["baseline"] is None  # no baseline: no second point


def test_the_table_names_status_verdict_and_flip(tmp_path, capsys):
    p = tmp_path / "c.toml"
    p.write_text(FILE.split("[[claim]]\nclaim")[0])  # the trivial claim alone
    code, out, err = run(capsys, "audit", "--claims", str(p))
    assert code == 0, err
    # cells wrap at the test console's width: read tokens. 1 tok/s/user against ~364: falls 1 - 1/364 = 99.7%
    assert "(holds)" in out and "99.7%" in out and "tally: held 1, within band 0, not held 0 of 1" in out


def test_options_the_file_sets_are_refused_beside_it(tmp_path, capsys):
    p = tmp_path / "c.toml"
    p.write_text(FILE)
    code, out, err = run(capsys, "audit", "--claims", str(p), "--model", "deepseek-r1")
    check_error(code, out, err, "--claims", "--model", "beside it would be ignored")
    code, out, err = run(capsys, "audit", "--claim", "max_interactivity=1")
    check_error(code, out, err, "--system", "--claims FILE")


def test_a_ratio_claim_reads_what_compare_reads(tmp_path, capsys):
    # the same question through compare's ratio table (analysis/compare.py, another path): the per-kW ratio at
    # 50 tok/s/user and the bound of each side's nearest frontier point
    p = tmp_path / "c.toml"
    p.write_text(
        'system = "jalapeno"\nmodel = "gpt-oss-120b"\nserving = "agg"\n[[claim]]\nbaseline = "gb300-nvl72"\n'
        'claim = "tok_s_per_kw_ratio@50=1.0"\npower = "all-in"\n'
    )
    code, out, err = run(capsys, "audit", "--claims", str(p), "--json")
    assert code == 0, err
    row = json.loads(out)["claims"][0]
    code, out, err = run(
        capsys,
        "compare",
        "-s",
        "jalapeno,gb300-nvl72",
        "-m",
        "gpt-oss-120b",
        "--serving",
        "agg",
        "--at",
        "50",
        "--json",
    )
    assert code == 0, err
    iso = json.loads(out)["comparisons"]["jalapeno"]["iso_interactivity"]
    kw, chip = iso["tok_s_per_kw"][0], iso["throughput_per_chip"][0]
    assert row["predicted"]["value"] == pytest.approx(kw["ratio"], rel=1e-9)
    # by hand: per kW = per chip x the baseline's all-in W over the system's, 2,100 / 1,150 (GB300: InferenceX
    # constants.ts GPU_SPECS all-in kW; Jalapeño's 1,150 W an estimate from components, `jalapeno hardware show`)
    assert kw["ratio"] == pytest.approx(chip["ratio"] * 2100 / 1150, rel=1e-9)
    op = row["operating_point"]
    assert (op["system"]["bound"], op["baseline"]["bound"]) == (kw["bound_a"], kw["bound_b"])
    # the per-kW claim turns where Jalapeño's all-in W per chip (1,150, `jalapeno hardware list`) grows by the ratio
    assert row["power_w_per_chip"] == 1150
    assert f"its all-in power above {1150 * row['predicted']['value']:,.0f} W per chip (now 1,150 W)" in row["flip"]


def test_the_shipped_claims_file_states_the_twelve_statements():
    # 3 models x 2 baselines x {tokens per watt at a matched speed, max per-user speed}, each "beats": >= 1.0
    from pathlib import Path

    rows = load_claims(Path(__file__).resolve().parents[2] / "examples" / "claims_jalapeno.toml")
    got = {(r["model"], r["baseline"], r["claim"]) for r in rows}
    assert len(rows) == len(got) == 12
    assert got == {
        (m, b, c)
        for m in ("deepseek-r1", "gpt-oss-120b", "kimi-k2.5")
        for b in ("gb200-nvl72", "gb300-nvl72")
        for c in ("tok_s_per_kw_ratio@50=1.0", "max_interactivity_ratio=1.0")
    }
    assert {r["system"] for r in rows} == {"jalapeno"} and {r["workload"] for r in rows} == {"8k1k"}


def test_the_single_audit_says_where_it_reads_the_claim_and_what_turns_it(capsys):
    # the claims table's two columns, under one audit's table too: 1 tok/s/user is met by the whole band (held);
    # the fastest frontier point is overhead-bound (as the frontier command's last point: the test above)
    code, out, err = run(capsys, "audit", *ARGS, "--claim", "max_interactivity=1")
    assert code == 0, err
    read = next(line for line in out.splitlines() if line.startswith("read at: jalapeno "))
    assert "tok/s/user on agg " in read and ", bound " in read
    turns = next(line for line in out.splitlines() if line.startswith("status "))
    assert turns.startswith("status held (the band's unfavourable end meets the claim); turns: fails if jalapeno falls")


@pytest.mark.parametrize(
    ("line", "field", "words"),
    [
        # each key is an audit option's text: name = 5 was a traceback in the table's rendering (rich cannot render
        # an int), precision = ["fp8"] one in the grouping (a list is unhashable), system = 5 was told "no system"
        ("name = 5", "claim[1].name", ("an integer 5",)),
        ('precision = ["fp8"]', "claim[1].precision", ("an array ['fp8']",)),
        ("system = 5", "claim[1].system", ("an integer 5",)),
        ("baseline = true", "claim[1].baseline", ("a boolean true", "drop it for a plain claim")),
        ('name = ""', "claim[1].name", ("an empty string",)),
    ],
)
def test_a_claim_key_that_is_not_a_string_is_named(tmp_path, line, field, words):
    p = tmp_path / "c.toml"
    system = "" if line.startswith("system") else 'system = "jalapeno"\n'  # TOML refuses a key given twice
    p.write_text(f'[[claim]]\nclaim = "max_interactivity=1"\n{system}{line}\n')
    with pytest.raises(SpecError) as e:
        load_claims(p)
    assert e.value.field == field
    assert "must be a non-empty string" in str(e.value)
    for w in words:
        assert w in str(e.value)


def test_a_top_level_default_that_is_not_a_string_is_named(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('model = 3\n[[claim]]\nclaim = "max_interactivity=1"\nsystem = "jalapeno"\n')
    with pytest.raises(SpecError) as e:
        load_claims(p)
    assert e.value.field == "model (the file's top-level default)" and "an integer 3" in str(e.value)


@pytest.mark.parametrize(
    ("tables", "words"),
    [
        # two tables named alike: the answer's rows (and --json's) could not be told apart
        ('name = "a"\nmodel = "gpt-oss-120b"', "'a' is also claim[1]'s name: "),
        # no name: each is named by its claim text, the same on two models
        ('model = "gpt-oss-120b"', "'max_interactivity=1' is also claim[1]'s name (a claim without a name"),
    ],
)
def test_two_claims_of_one_name_are_refused(tmp_path, tables, words):
    one = f'[[claim]]\nclaim = "max_interactivity=1"\nsystem = "jalapeno"\n{tables}\n'
    p = tmp_path / "c.toml"
    p.write_text(one + one.replace("gpt-oss-120b", "deepseek-r1"))
    with pytest.raises(SpecError) as e:
        load_claims(p)
    assert e.value.field == "claim[2].name" and words in str(e.value)


def test_a_claims_path_that_is_a_directory_is_named_as_one(tmp_path):
    """It was told "no file" (the path exists); specs/files.read_user_text names a directory as such."""
    with pytest.raises(SpecError) as e:
        load_claims(tmp_path)
    assert e.value.field == str(tmp_path) and "is a directory, not a claims TOML file" in str(e.value)


def test_a_claims_file_read_from_a_pipe_is_read(tmp_path):
    """``audit --claims <(...)`` (a pipe, not a regular file) was refused as "no file"; read_user_text reads it."""
    import os
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    text = '[[claim]]\nclaim = "max_interactivity=1"\nsystem = "jalapeno"\n'
    writer = threading.Thread(target=lambda: fifo.write_text(text))
    writer.start()
    (c,) = load_claims(fifo)
    writer.join()
    assert (c["system"], c["claim"]) == ("jalapeno", "max_interactivity=1")


def test_a_claims_table_with_a_non_string_name_is_one_error_on_the_command_line(capsys, tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('[[claim]]\nclaim = "max_interactivity=1"\nsystem = "jalapeno"\nname = 5\n')
    code, out, err = run(capsys, "audit", "--claims", str(p))
    check_error(code, out, err, "claim[1].name", "an integer 5")
