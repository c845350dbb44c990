"""Every link between the docs pages resolves: the page it names exists and, when it names an anchor, a heading of
that page has it (docs53: the long pages got contents lists of anchor links, scripts/gen_doc_toc.py; a heading
renamed without its list regenerated would leave a dead link)."""

import re
from pathlib import Path

from script_module import load_script

ROOT = Path(__file__).resolve().parents[2]
toc = load_script("gen_doc_toc")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def dead_links(page: Path, text: str) -> list[str]:
    """``target`` of each relative link in ``text`` (code fences and code spans left out) whose page is missing or
    whose ``#anchor`` no heading of that page has; links with a scheme (http:, mailto:) are not checked."""
    out, fenced = [], False
    for ln in text.splitlines():
        if ln.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"`[^`]*`", "", ln)):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                out.append(target)
            elif anchor and dest.suffix == ".md" and anchor not in toc.anchors(dest.read_text()):
                out.append(target)
    return out


def test_every_relative_link_and_anchor_in_the_docs_resolves():
    dead = {p.name: d for p in PAGES if (d := dead_links(p, p.read_text()))}
    assert not dead, f"dead links (page: targets); fix the link or run python scripts/gen_doc_toc.py: {dead}"


def test_a_dead_anchor_and_a_missing_page_are_caught():
    page = ROOT / "docs" / "model.md"
    text = "[ok](#1-number-formats-and-bytes-per-element-specsformatspy) [bad](#no-such-heading) [gone](nowhere.md)\n"
    text += "```\n[in a fence](#not-checked)\n```\n`[in a span](#not-checked)` [web](https://example.com/#x)\n"
    assert dead_links(page, text) == ["#no-such-heading", "nowhere.md"]


def test_anchors_are_githubs():
    # by hand, GitHub's rule: lower case, drop what is not a letter/digit/_/-/space, spaces to hyphens, no merging
    assert toc.slug("8.7 Prefill queueing under load and InferenceX's idle start (`serve/queueing.py`)") == (
        "87-prefill-queueing-under-load-and-inferencexs-idle-start-servequeueingpy"
    )
    assert toc.slug("Round 31 (adprank31): E[⌈S/dp⌉] over Poisson steps, priced — not shipped") == (
        "round-31-adprank31-esdp-over-poisson-steps-priced--not-shipped"
    )
    assert toc.slug("See [the page](other.md) now") == "see-the-page-now"
    # a repeated heading's second anchor is -1; a '#' inside a fence is no heading
    text = "# T\n## A b\n```\n## not a heading\n```\n## A b\n### C_d\n"
    assert [a for _, _, a in toc.headings(text)] == ["t", "a-b", "a-b-1", "c_d"]


def test_contents_lists_are_current():
    assert toc.main(["--check"]) == 0, "run python scripts/gen_doc_toc.py"


def test_contents_block_is_replaced_and_the_rest_kept():
    page = "# Title\n\nIntro.\n\n## One\ntext\n### Sub\n## Two\n"
    once = toc.with_contents(page)
    assert once.startswith(
        "# Title\n\n<!-- contents -->\n**Contents**\n\n- [One](#one)\n  - [Sub](#sub)\n- [Two](#two)\n"
    )
    assert once.endswith("<!-- /contents -->\n\nIntro.\n\n## One\ntext\n### Sub\n## Two\n")
    assert toc.with_contents(once) == once  # idempotent: the block's own lines are not headings


def test_the_docs_index_links_every_page():
    """docs/README.md (the index) has a line for every docs page, so a new page is not left out of it."""
    index = (ROOT / "docs" / "README.md").read_text()
    missing = [
        p.name for p in sorted((ROOT / "docs").glob("*.md")) if p.name != "README.md" and f"]({p.name})" not in index
    ]
    assert not missing, f"add a line for each to docs/README.md (the question it answers, when to read it): {missing}"


def test_check_fails_on_a_stale_page_and_writing_mends_it(tmp_path, monkeypatch, capsys):
    """--check exits 1 naming a page whose contents list no longer matches its headings, and writes nothing; a run
    without --check rewrites the list, after which --check passes (review53: the currency test above passes on the
    repository's pages whatever --check returns, so a --check that always said 0 went unseen)."""
    page = tmp_path / "gap_x.md"
    stale = "# T\n\n<!-- contents -->\n**Contents**\n\n- [Old](#old)\n<!-- /contents -->\n\n## New\n"
    page.write_text(stale)
    monkeypatch.setattr(toc, "pages", lambda: [page])
    monkeypatch.setattr(toc, "ROOT", tmp_path)
    assert toc.main(["--check"]) == 1
    assert "gap_x.md: contents out of date" in capsys.readouterr().err
    assert page.read_text() == stale
    assert toc.main([]) == 0
    assert "- [New](#new)" in page.read_text() and "#old" not in page.read_text()
    assert toc.main(["--check"]) == 0
