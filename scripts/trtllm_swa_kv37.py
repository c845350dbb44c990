"""gpt-oss on TensorRT-LLM keeps its sliding-window layers' KV at full length: the rows' KV knees against the model's
pool with that storage, and the validation what-if (issue 18, round 37, swakv37; diagnosis, nothing shipped).

TensorRT-LLM's PyTorch backend sizes one KV pool for every layer at ``max_seq_len`` unless the launch sets
``kv_cache_config.max_attention_window`` (``tensorrt_llm/_torch/pyexecutor/resource_manager.py`` KVCacheManager:
"if kv_cache_config.max_attention_window is None: # Use max_seq_len as default max_attention_window"); gpt-oss's
model file passes its 128-token window to the attention kernel only (``modeling_gpt_oss.py`` AttentionBlock:
``attention_window_size = self.sliding_window`` in ``forward``), and no launch script of these rows sets the
window list (InferenceX ``gptoss_fp4_{h200,b200}_trt*.sh`` at every commit the rows cite; ai-dynamo/dynamo
``performance_sweeps/scripts/gen_yaml.py``). TensorRT-LLM PR #18767 (2026-09-06) is the first to derive the
per-layer windows from ``layer_types``: before it "every layer [is] placed in one full-context pool ... unless the
user passes kv_cache_config.max_attention_window by hand". docs/gap_aic_itl.md (round 37, swakv37) has the record.

Parts:

1. KV bytes of one gpt-oss-120b request (one replica): the model's windowed storage against full length, BF16 and
   FP8, at the 8k/1k and 1k/8k mean request InferenceX draws (0.9 x 9,216 = 8,294 tokens).
2. Every TensorRT-LLM gpt-oss row of a validate CSV whose measured TTFT and TPOT imply fewer sequences decoding
   than its concurrency (N = C·D/(TTFT + D), D = (mean OSL − 1)·TPOT, N < 0.9 C): the tokens those residents
   reserve (N x mean ISL + OSL: TensorRT-LLM's default GUARANTEED_NO_EVICT admission reserves prompt + max_tokens,
   resource_manager.py get_needed_resource_to_completion), against the model's KV pool for the row's deployment in
   tokens, windowed (at the row's mean request) and at full length: the factor left unexplained.
3. With ``--whatif OUT.csv``: ``jalapeno validate`` run in-process with every layer's KV at full length
   (``ModelSpec.window_counts`` patched: KV memory only; attention still reads the window), its TensorRT-LLM rows
   merged into the base CSV's (the other engines keep theirs), and the rows that move. With ``--fp8-on SYSTEMS``
   the what-if also stores FP8 KV on the InferenceX search-space gpt-oss runs (fit/searched.py: row 40, whose
   script sets ``kv_cache_config.dtype: fp8`` while validation prices BF16), and only those systems' rows are merged.

Run: python scripts/trtllm_swa_kv37.py BASE.csv [--whatif OUT.csv] [--held-out] [--fp8-on b200]
(BASE.csv from ``jalapeno validate --json -o BASE.csv``, with ``--held-out`` for a held-out run.)
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import re
import sys

import numpy as np

#: mean length of InferenceX's uniform [0.8 L, L] draws, as a fraction of L
MEAN_FRACTION = 0.9
#: the software stacks of TensorRT-LLM runs in validation (data/stacks.toml; a release pin follows an "@")
TRT_STACKS = ("trtllm", "dynamo-trtllm")
#: a row is "short of its concurrency" when fewer than this share of its users decode at once
SHORT = 0.9


def implied_resident(concurrency: float, ttft_s: float, tpot_s: float, osl_mean: float) -> float:
    """Sequences decoding at once in a closed loop of ``concurrency`` users: C·D/(TTFT + D), D = (OSL − 1)·TPOT.

    >>> round(implied_resident(64, 4.287, 0.0313, 0.9 * 1024), 1)  # InferenceX row 43
    55.7
    """
    d = (osl_mean - 1.0) * tpot_s
    return concurrency * d / (ttft_s + d)


def request_kv_bytes(model, kv_bytes_per_elem: float, tokens: float, full_length: bool) -> float:
    """KV bytes one request of ``tokens`` tokens holds over all layers, one replica (all KV heads).

    Per layer and token 2·kv_heads·head_dim·b (K and V); a sliding-window layer holds min(tokens, window) tokens
    unless ``full_length`` (TensorRT-LLM without ``max_attention_window``: every layer at the request's length).

    >>> from jalapeno.specs.catalog import load_model
    >>> m = load_model("gpt-oss-120b")  # 36 layers, 8 KV heads x 64, 18 with a 128-token window
    >>> request_kv_bytes(m, 2, 8294, False), request_kv_bytes(m, 2, 8294, True)
    (310468608.0, 611500032.0)
    """
    a = model.attention
    per_layer_token = 2.0 * a.num_kv_heads * a.head_dim * kv_bytes_per_elem
    total = 0.0
    for w, count in model.window_counts:
        held = tokens if (full_length or not w) else min(tokens, w)
        total += count * held * per_layer_token
    return total


def part1() -> None:
    """Print the KV bytes of one mean 8k/1k request (part 1)."""
    from jalapeno.specs.catalog import load_model

    m = load_model("gpt-oss-120b")
    tokens = MEAN_FRACTION * 9216
    print(f"1. gpt-oss-120b KV of one {tokens:.0f}-token request (one replica; MB)")
    for name, b in (("BF16", 2), ("FP8", 1)):
        win, full = request_kv_bytes(m, b, tokens, False), request_kv_bytes(m, b, tokens, True)
        print(f"   {name}: windowed {win / 1e6:7.1f}  full length {full / 1e6:7.1f}  ({full / win:.2f}x)")


_LAYOUT = re.compile(r"attn TP(\d+) DP(\d+) · MoE TP\d+ EP(\d+)")


def row_layout(deployment: str):
    """The aggregated Layout a validate row's ``deployment`` label names (None for a disaggregated one).

    >>> lay = row_layout("agg attn TP2 DP1 · MoE TP2 EP2 [mxfp4]")
    >>> lay.tp, lay.dp, lay.ep
    (2, 1, 2)
    """
    from jalapeno.deploy.layout import Layout

    hit = _LAYOUT.search(deployment)
    if hit is None or not deployment.startswith("agg"):
        return None
    tp, dp, ep = (int(g) for g in hit.groups())
    return Layout(tp=tp, dp=dp, ep=ep, moe=True)


def pool_tokens(system: str, stack: str, deployment: str, concurrency: float, mean_request: float):
    """The model's KV pool of a row's aggregated instance in tokens: (windowed at ``mean_request``-token requests,
    full length), from deploy/kv_capacity.kv_capacity_seqs at the validation efficiency set; None if not aggregated."""
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.deploy.memory_fit import kv_bytes_per_seq_per_chip
    from jalapeno.deploy.kv_capacity import kv_capacity_seqs
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision

    lay = row_layout(deployment)
    if lay is None:
        return None
    m = load_model("gpt-oss-120b")
    prec = get_precision("mxfp4")
    kv = re.search(r"kv=(\w+)", deployment)
    prec = prec.with_options(kv=kv.group(1)) if kv else prec
    pr = load_pricer(system, stack=stack.split("@")[0])
    ctx = np.array([mean_request])
    seqs = float(kv_capacity_seqs(m, pr.system, lay, prec, ctx, np.array([concurrency]), pr.efficiency)[0])
    per_seq = float(kv_bytes_per_seq_per_chip(m, lay, prec, mean_request))
    per_token_full = float(kv_bytes_per_seq_per_chip(m, lay, prec, 1.0))  # one token: every layer holds it
    pool_bytes = seqs * per_seq / lay.dp
    return seqs * mean_request, pool_bytes / per_token_full * lay.dp


def short_rows(rows: list[dict]) -> list[dict]:
    """TensorRT-LLM gpt-oss rows (one dict per row id, measured metrics as keys) decoding fewer than
    :data:`SHORT` of their users."""
    pts: dict[str, dict] = {}
    for r in rows:
        if r["model"] == "gpt-oss-120b" and r["stack"].split("@")[0] in TRT_STACKS:
            pts.setdefault(r["id"], dict(r))[r["metric"]] = float(r["measured"])
    out = []
    for p in pts.values():
        if "ttft_s" not in p or "tpot_s" not in p:
            continue
        c, osl = float(p["concurrency"]), int(p["osl"])
        p["resident"] = implied_resident(c, p["ttft_s"], p["tpot_s"], MEAN_FRACTION * osl)
        if p["resident"] < SHORT * c:
            out.append(p)
    return sorted(out, key=lambda p: (p["system"], p["isl"], p["osl"], float(p["concurrency"]), p["id"]))


def part2(rows: list[dict]) -> None:
    """Print the rows short of their concurrency against the model's pool (part 2)."""
    print(
        f"\n2. TensorRT-LLM gpt-oss rows decoding < {SHORT:g} C: reserved tokens the residents imply vs the "
        "model's pool (k tokens)"
    )
    print(
        f"   {'row':44s} {'system':7s} {'ISL/OSL':>10s} {'C':>5s} {'TTFT s':>7s} {'N':>6s} {'reserved':>9s} "
        f"{'windowed':>9s} {'full len':>9s} {'full/res':>8s}"
    )
    for p in short_rows(rows):
        isl, osl, c = int(p["isl"]), int(p["osl"]), float(p["concurrency"])
        mean_request = MEAN_FRACTION * (isl + osl)
        reserved = p["resident"] * mean_request
        pool = pool_tokens(p["system"], p["stack"], p["deployment"], c, mean_request)
        tail = (
            "  (disaggregated: not priced here)"
            if pool is None
            else (f" {pool[0] / 1e3:9.0f} {pool[1] / 1e3:9.0f} {pool[1] / reserved:8.2f}")
        )
        print(
            f"   {p['id'][-44:]:44s} {p['system'][:7]:7s} {isl:>5d}/{osl:<4d} {c:5.0f} {p['ttft_s']:7.2f} "
            f"{p['resident']:6.1f} {reserved / 1e3:9.0f}{tail}"
        )


@contextlib.contextmanager
def full_length_kv():
    """Every layer's KV at full length while inside (``ModelSpec.window_counts`` reports one full window; only the
    KV memory functions read it: deploy/memory_fit.kv_bytes_per_seq_per_chip, ModelSpec.kv_bytes_per_token)."""
    from jalapeno.specs.model import ModelSpec

    orig = ModelSpec.window_counts
    ModelSpec.window_counts = property(lambda self: ((0, sum(c for _, c in orig.fget(self))),))
    try:
        yield
    finally:
        ModelSpec.window_counts = orig


@contextlib.contextmanager
def fp8_searched():
    """FP8 KV on the InferenceX search-space MXFP4 runs while inside (fit/searched.py's ``with_launch_kv``)."""
    import jalapeno.fit.searched as searched

    orig = searched.with_launch_kv

    def fp8(prec, kw):
        p = orig(prec, kw)
        return p.with_options(kv="fp8") if p.name == "mxfp4" else p

    searched.with_launch_kv = fp8
    try:
        yield
    finally:
        searched.with_launch_kv = orig


def run_whatif(out: str, held_out: bool, fp8: bool = False) -> None:
    """Write ``jalapeno validate --json -o out`` (``--held-out`` too) with every layer's KV at full length (and,
    with ``fp8``, FP8 KV on the search-space MXFP4 runs)."""
    from jalapeno.cli.app import main

    argv = ["jalapeno", "validate", "--json", "-o", out] + (["--held-out"] if held_out else [])
    saved = sys.argv
    with (
        full_length_kv(),
        fp8_searched() if fp8 else contextlib.nullcontext(),
        open(os.devnull, "w") as null,
        contextlib.redirect_stdout(null),
    ):
        sys.argv = argv
        try:
            main()
        except SystemExit as e:
            if e.code not in (0, None):
                raise
        finally:
            sys.argv = saved


def merge_trt(base: list[dict], whatif: list[dict], systems: tuple[str, ...] = ()) -> list[dict]:
    """``base`` with its TensorRT-LLM rows (stack trtllm / dynamo-trtllm, any release; of ``systems`` only, if given)
    taken from ``whatif``.

    >>> b = [{"id": "a", "metric": "tpot_s", "stack": "vllm", "predicted": "1"},
    ...      {"id": "b", "metric": "tpot_s", "stack": "trtllm@1.2.0rc2", "predicted": "1"}]
    >>> w = [{**r, "predicted": "2"} for r in b]
    >>> [r["predicted"] for r in merge_trt(b, w)]
    ['1', '2']
    """
    wi = {(r["id"], r["metric"]): r for r in whatif}
    return [
        wi.get((r["id"], r["metric"]), r)
        if r["stack"].split("@")[0] in TRT_STACKS and (not systems or r["system"] in systems)
        else r
        for r in base
    ]


def part3(base: list[dict], whatif: list[dict], systems: tuple[str, ...] = ()) -> None:
    """Print the TensorRT-LLM rows the full-length what-if moves (part 3)."""
    merged = merge_trt(base, whatif, systems)
    print("\n3. full-length KV on the TensorRT-LLM rows: rows that move (error %, base -> what-if)")
    n = 0
    for r, s in zip(base, merged):
        if r is s or r["predicted"] == s["predicted"] or not r["error"] or not s["error"]:
            continue
        n += 1
        print(
            f"   {r['source'][:5]} {r['id'][-44:]:44s} {r['system']:12s} {r['metric']:20s} "
            f"{float(r['error']) * 100:+8.1f} -> {float(s['error']) * 100:+8.1f}"
        )
    print(f"   {n} row-metrics move")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="jalapeno validate --json -o FILE")
    ap.add_argument("--whatif", help="write (if absent) and read the full-length what-if validate CSV here")
    ap.add_argument("--held-out", action="store_true", help="the CSVs are held-out runs (validate --held-out)")
    ap.add_argument("--fp8-on", nargs="*", default=[], help="with FP8 KV on the search-space runs; merge these systems")
    args = ap.parse_args(argv)
    with open(args.csv) as f:
        base = list(csv.DictReader(f))
    part1()
    part2(base)
    if args.whatif:
        if not os.path.exists(args.whatif):
            run_whatif(args.whatif, args.held_out, bool(args.fp8_on))
        with open(args.whatif) as f:
            part3(base, list(csv.DictReader(f)), tuple(args.fp8_on))


if __name__ == "__main__":
    main()
