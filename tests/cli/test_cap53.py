"""cap53: compare names what sets a peak, the bound AND the admission cap, in one wording every command shares.

On llama-3.3-70b 1k1k at fp8, b200's and h200's peak-throughput points are capped by their KV capacity: compare's
headline said only "compute", hiding that HBM capacity (not a FLOP/s or bandwidth figure) set the peak. predict said
"; capped by X", frontier " · X" and the chart's hover " · limit: X"; compare said nothing.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from cli_runner import run


#: the case: llama-3.3-70b on b200 and h200, 1k1k, one precision (fp8-tensor: FP8 weights and FP8 KV cache)
CASE = ("-m", "llama-3.3-70b", "-w", "1k1k", "-s", "b200,h200", "-p", "fp8-tensor")

#: the KV cap by hand, one TP1 instance (the peak's deployment on both), activations left out:
#:   llama-3.3-70b config.json: 80 layers, 8 KV heads x 128 head dim; FP8 KV: 2 (K, V) x 80 x 8 x 128 x 1 B
#:   = 163,840 B/token; the 1k1k workload draws lengths in [819.2, 1024] (mean 921.6), so a decoding sequence holds
#:   921.6 + 921.6 / 2 = 1,382.4 tokens on average: 163,840 x 1,382.4 = 226.49 MB per sequence.
#:   weights: 70,553,706,496 params, of which 2 x 1,050,673,152 (embedding, untied lm_head) stay BF16 (2 B) and the
#:   rest FP8 (1 B): 68,452,360,192 + 4,202,692,608 = 72.655 GB.
#:   usable HBM x 0.96 (efficiency.memory_reserve_fraction 0.04): b200 180 GB (MLPerf hw_notes) -> 172.8 GB;
#:   h200 141 GB -> 135.36 GB.  Sequences: b200 (172.8 - 72.655) / 0.22649 = 442.2; h200 (135.36 - 72.655) /
#:   0.22649 = 276.9.  The model's cap subtracts the step's activations too, so the peak's batch sits a few % below.
HAND_KV_SEQS = {"b200": 442.2, "h200": 276.9}


def test_cap_words_one_helper():
    """One wording: the bound, then '; capped by X' where a cap binds (and nothing where none does)."""
    from jalapeno.analysis.bound_words import cap_text, point_bound_capped, with_cap

    assert cap_text("kv_capacity") == "capped by kv_capacity"
    assert cap_text("") == ""
    assert with_cap("hbm_bandwidth", "kv_capacity") == "hbm_bandwidth; capped by kv_capacity"
    assert with_cap("decode compute; prefill compute (33% of chips)", "") == (
        "decode compute; prefill compute (33% of chips)"
    )
    p = SimpleNamespace(bound="hbm_bandwidth", prefill_bound="compute", prefill_chip_share=0.25, limit="max_running")
    # ux54: a disaggregated point's cap names its pool (max_running caps the decode pool's batch)
    assert point_bound_capped(p) == (
        "decode hbm_bandwidth; prefill compute (25% of chips); decode pool capped by max_running"
    )


def test_hover_says_the_cap_in_compares_words():
    """The chart's hover said ' · limit: kv_capacity'; it now says compare's '; capped by kv_capacity'."""
    from jalapeno.report.html import hover_text

    dep = SimpleNamespace(label="agg attn TP1 DP1 · FFN TP1 [fp8-tensor]", mtp=None)
    p = SimpleNamespace(
        deployment=dep,
        chips=1.0,
        concurrency=428.0,
        in_flight=428.0,
        bound="compute",
        prefill_bound="",
        prefill_chip_share=0.0,
        limit="kv_capacity",
        ttft_s=0.3,
        tpot_s=0.07,
        e2e_s=70.0,
        throughput_per_chip=11524.0,
        interactivity=14.0,
    )
    text = hover_text(p)
    assert "bound: compute; capped by kv_capacity<br>" in text and "limit:" not in text


def test_compare_headline_and_json_name_the_kv_cap(capsys):
    """The headline's 'bound at peak' cell says 'compute; capped by kv_capacity' on both systems, --json carries
    limit_at_peak (a field added; bound_at_peak unchanged), and the cap is real: the peak's decode batch is at most
    the sequences the free HBM holds by hand (HAND_KV_SEQS) and within 10% of it (the activations)."""
    code, out, err = run(capsys, "compare", *CASE, "--json")
    assert code == 0, err
    d = json.loads(out)
    for name in ("b200", "h200"):
        h = d["systems"][name]["headline"]
        assert h["limit_at_peak"] == "kv_capacity", name
        assert h["bound_at_peak"] == "compute", name  # unchanged: the cap is added beside it
        peak = max(d["systems"][name]["frontier"], key=lambda q: q["throughput_per_chip"])
        assert peak["limit"].startswith("kv_capacity"), name
        batch = peak["decode_batch"]
        assert 0.9 * HAND_KV_SEQS[name] <= batch <= HAND_KV_SEQS[name], (name, batch)
    rows = next(iter(d["comparisons"].values()))["iso_interactivity"]["throughput_per_chip"]
    assert all("limit_a" in r and "limit_b" in r for r in rows)
    code, out, err = run(capsys, "compare", *CASE, "--html", "")
    assert code == 0, err
    head = out.split("ratios vs")[0]
    flat = " ".join(head.replace("│", " ").split())
    # the cells wrap inside their column: two cells (b200, h200) and the caption's line name the cap
    assert head.count("kv_capacity") == 3 and head.count("capped") >= 2, head
    assert "capped by X: what stopped the decode batch growing" in flat
    assert "kv_capacity: the HBM left after the weights holds the KV cache of no more sequences" in flat


def test_frontier_and_predict_use_the_same_words(capsys):
    """frontier's bound column said 'compute · kv_capacity' and predict 'compute (...); capped by kv_capacity':
    both now print compare's '; capped by X', and each --json carries limit_text (added; limit unchanged)."""
    one = ("-m", "llama-3.3-70b", "-w", "1k1k", "-s", "b200", "-p", "fp8-tensor")
    code, out, err = run(capsys, "frontier", *one, "--json")
    assert code == 0, err
    pts = json.loads(out)["frontier"]
    assert any(q["limit"] for q in pts)
    for q in pts:
        assert q["limit_text"] == (f"capped by {q['limit']}" if q["limit"] else "")
    code, out, err = run(capsys, "frontier", *one)
    assert code == 0, err
    assert "· kv_capacity" not in out and "capped by" in out
    code, out, err = run(capsys, "predict", *one, "--tp", "1", "-c", "2000", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["limit"] == "kv_capacity (queueing)" and d["limit_text"] == "capped by kv_capacity (queueing)"


def test_report_page_headline_names_the_cap(capsys, tmp_path):
    """The report page's headline prints the same cell and the cap's meaning under it."""
    path = tmp_path / "r.html"
    code, out, err = run(capsys, "report", *CASE, "--html", str(path))
    assert code == 0, err
    page = path.read_text()
    assert "compute; capped by kv_capacity" in page
    assert "kv_capacity: the HBM left after the weights holds the KV cache of no more sequences" in page
