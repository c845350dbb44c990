"""``audit --claims`` sweeps each distinct frontier once and runs its groups of claims in workers
(cli/audit_set.run_claims), giving the same bytes as one claim after the other with no memo; and docs/audit.md §7's
by-hand table is what the command answers (DeepSeek-R1's four rows: the cheap group, ~2 s; the whole file ~17 s)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import jalapeno.analysis.sweep as sweep_mod
from jalapeno.analysis.claim_set import load_claims
from jalapeno.analysis.claims import ClaimContext
from jalapeno.analysis.workers import ENV
from jalapeno.cli.audit_set import run_claims
from jalapeno.errors import JalapenoError

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = load_claims(ROOT / "examples" / "claims_jalapeno.toml")
DSR1 = [c for c in CLAIMS if c["model"] == "deepseek-r1"]
GPT_OSS_PER_KW = next(c for c in CLAIMS if c["name"] == "gpt-oss-120b tok/W @50 vs GB200")


def _file(tmp_path: Path, claims: list[dict], name: str = "c.toml") -> Path:
    """A claims file of ``claims`` (dicts of analysis/claim_set.KEYS), each key in its own table."""
    text = "".join("[[claim]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in c.items()) for c in claims)
    p = tmp_path / name
    p.write_text(text)
    return p


def _counted(path: Path, memo: bool = True) -> tuple[list[dict], int]:
    """run_claims' rows and the sweeps it ran; ``memo=False``: every full sweep fresh (the path before the memo)."""
    calls = []
    real = sweep_mod.sweep
    full = ClaimContext.full
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENV, "1")
        mp.setattr(sweep_mod, "sweep", lambda *a, **k: calls.append(1) or real(*a, **k))
        if not memo:
            mp.setattr(ClaimContext, "full", lambda self, pricer, claim, names=None: full(self, pricer, claim))
        rows = run_claims(str(path), "flat", None)
    return rows, len(calls)


@pytest.fixture(scope="module")
def dsr1(tmp_path_factory) -> tuple[list[dict], int]:
    return _counted(_file(tmp_path_factory.mktemp("claims"), DSR1))


def test_each_frontier_is_swept_once_and_the_answer_is_the_same_bytes(tmp_path, dsr1):
    rows, n = dsr1
    # all four DeepSeek-R1 claims hold (docs/audit.md §7), so each audit sweeps only its prediction, its two band
    # ends, its physical limit and its baseline: 4 x 5 = 20 sweeps claim by claim. Shared: Jalapeño's prediction,
    # low and high ends and limit (both power conventions are all-in, so the same limit) once each, and the two
    # baselines once each: 4 + 2 = 6.
    fresh, n_fresh = _counted(_file(tmp_path, DSR1), memo=False)
    assert (n, n_fresh) == (6, 20)
    assert json.dumps(rows) == json.dumps(fresh)


def test_groups_in_workers_give_the_same_bytes_in_file_order(tmp_path, monkeypatch, dsr1):
    # two groups (gpt-oss-120b; DeepSeek-R1) in two worker processes, the file's order kept across them
    path = _file(tmp_path, [DSR1[0], GPT_OSS_PER_KW, DSR1[1]])
    monkeypatch.setenv(ENV, "2")
    rows = run_claims(str(path), "flat", None)
    alone, _ = _counted(_file(tmp_path, [GPT_OSS_PER_KW], "g.toml"))
    assert [r["name"] for r in rows] == [DSR1[0]["name"], GPT_OSS_PER_KW["name"], DSR1[1]["name"]]
    assert json.dumps(rows) == json.dumps([dsr1[0][0], alone[0], dsr1[0][1]])


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_first_bad_claim_in_the_file_raises_as_claim_by_claim(tmp_path, monkeypatch, workers):
    # claim 2 (gpt-oss-120b's group) and claim 3 (DeepSeek-R1's, after a good claim 1) name no system: one claim
    # after the other stops at claim 2, whatever order the groups finish in
    bad = [DSR1[0], {**GPT_OSS_PER_KW, "system": "no-such-chip"}, {**DSR1[1], "system": "no-such-chip-either"}]
    monkeypatch.setenv(ENV, workers)
    with pytest.raises(JalapenoError, match=r"claim\[2\]"):
        run_claims(str(_file(tmp_path, bad)), "flat", None)


def _doc_rows() -> dict[str, list[str]]:
    """docs/audit.md §7's table of the twelve statements: {statement: its cells}."""
    text = (ROOT / "docs" / "audit.md").read_text()
    sec = text[text.index("## 7. A whole claim") :]
    rows = {}
    for line in sec.splitlines():
        cells = [x.strip() for x in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 6 and cells[0] not in ("statement", "---"):
            rows[cells[0]] = cells
    return rows


def test_the_doc_table_names_the_twelve_statements_of_the_file():
    assert sorted(_doc_rows()) == sorted(c["name"] for c in CLAIMS)


def test_the_doc_table_quotes_what_the_command_answers(dsr1):
    """The quoted predicted ratio, band, status (verdict) and flip (the fall of Jalapeño's figure; the W per chip
    that turns a per-kW claim) of DeepSeek-R1's four rows, against a fresh run: a prediction that moves fails here
    until docs/audit.md §7 is updated."""
    rows, _ = dsr1
    doc = _doc_rows()
    text = (ROOT / "docs" / "audit.md").read_text()
    watts = {round(r["power_w_per_chip"]) for r in rows if r["power_w_per_chip"]}
    assert watts == {1150} and "all-in W per chip, now 1,150)" in text
    for r in rows:
        _, pred, band, st, _, flip = doc[r["name"]]
        p = r["predicted"]
        assert pred == f"{p['value']:.2f}x", r["name"]
        assert band == f"{p['low']:.2f}-{p['high']:.2f}", r["name"]
        assert st == (r["status"] if r["status"] == "held" else f"{r['status']} ({r['verdict']})"), r["name"]
        # "Jalapeño -48%, or above 2,204 W" quotes "fails if jalapeno falls 48% (...); its power above 2,204 W"
        fall = re.search(r"falls (\d+)%", r["flip"]).group(1)
        assert re.search(rf"-{fall}%", flip), (r["name"], flip, r["flip"])
        said, quoted = (re.findall(r"above ([\d,]+) W", t) for t in (r["flip"], flip))
        assert said == quoted, (r["name"], flip, r["flip"])
