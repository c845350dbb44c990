#!/usr/bin/env python3
"""TensorRT-LLM's 8k prompt step per release, split into what slows decode and what only delays the first token (issue 18, round 43, trt8k43; diagnosis, nothing fitted or shipped).

Round 42 (refill42, docs/gap_aic_itl.md) read the low-load attention-TP "twins" of the refill rows (aiconfigurator
DeepSeek-R1 TensorRT-LLM aggregated rows, same system / precision / release, 8k/1k, attention DP1, C <= 16) as an
under-priced prompt step: measured/predicted TTFT 1.45 (H200 FP8 1.1.0rc2), 1.41 (B200 FP4 1.1.0rc2), 1.08 (B200 FP4
1.2.0rc6.post3). A TTFT ratio mixes two things: a prompt step that costs more than the model's (it also stalls
every other user's decode, so TPOT moves too) and a per-request delay before the first token (TTFT only; round 16
counted one in engine iterations, docs/gap_aic_ttft.md "The TensorRT-LLM residue is counted in iterations").

Parts (VALIDATE_CSV: ``jalapeno validate --json -o``):

1. Per (system, precision, release, ISL): n, median measured/predicted TTFT, the same for TPOT, and the TTFT gap in
   measured TPOTs (a delay counted in tokens). Also the MoE form (MoE TP vs EP) of the B200 FP4 1.1.0rc2 rows, to
   separate the release from EP4 vs MoE TP4.
2. ``--price`` (about 2 s a row): for the 8k twins, the model's decode-only step (the row's decode batch, no prompt;
   as served, serve/open_loop.decode_pool_step) and one whole prompt step alone, and the prompt-step factor the
   measured TPOT implies,
   s = 1 + (TPOT_meas − TPOT_model)/(TPOT_model − TPOT_dec) (all TPOT error put on the prompt share of TPOT;
   TPOT_dec = decode-only step / tokens a step), and the one the measured TTFT implies if every missing second were
   prompt-step time, s_ttft = 1 + (TTFT_meas − TTFT_model)/(prompt step). Where s_ttft > s_tpot the rest of the TTFT
   gap is a delay before the first token, not prompt work.
3. Which InferenceX held-out rows the mechanism can touch: refill rows and TensorRT-LLM 1.1.0rc2 rows, against
   the InferenceX GB200 throughput group (every row disaggregated, 1.2.0rc6.post2 or release unstated).

Findings (docs/gap_aic_itl.md, round 43): the 8k prompt-step factor is about 2.0-2.2x on B200 FP4 1.1.0rc2 (TPOT and
TTFT agree: 2.15 / 2.04), 2.6-3.1x on B200 FP8, 1.5 (TPOT) / 1.9 (TTFT) on H200 FP8, and 0.97 / 0.96 on B200 FP4
1.2.0rc6.post2; round 42's 1.41-1.45 are TTFT ratios, front end included. The release, not EP4 vs MoE TP: the B200
FP4 1.1.0rc2 8k rows read 1.45 at MoE TP8 and 1.36 at EP4. Per prompt token the excess is about the same on both
chips and at TP4 and TP8: median 15.6 us over the 11 fit-split 1.1.0rc2 rows (held out 7.1-28.3, n 6), which
data/stacks.toml carries as a named assumption (cost/step.PROMPT_TOKEN_STEP_ON, shipped off). At 1k on H200 the
excess is a first-token delay (TTFT 2.13, TPOT 1.01). No InferenceX GB200 throughput row is a refill row or a
1.1.0rc2 row: neither this term nor the gate schedule can move that group's +6.0 bias.

Usage: python scripts/trt_prompt_release43.py VALIDATE_CSV [--price] [--heldout HELDOUT_CSV]
"""

from __future__ import annotations

import argparse
import csv
import re
import statistics
import sys
from collections import defaultdict

TWIN_FORM = re.compile(r"attn TP(\d+) DP1 · MoE TP(\d+) EP(\d+)")


def is_twin(r: dict) -> bool:
    """An aiconfigurator DeepSeek-R1 TensorRT-LLM aggregated row at a stated release, OSL 1024, attention TP
    (DP1) and concurrency <= 16: a TTFT of about one prompt step plus the front end."""
    return (
        r["source"] == "aiconfigurator"
        and r["model"] == "deepseek-r1"
        and r["mode"] == "agg"
        and r["framework"].startswith("trtllm")
        and "@" in r["stack"]
        and r["osl"] == "1024"
        and TWIN_FORM.search(r["deployment"]) is not None
        and float(r["concurrency"]) <= 16
    )


def twin_groups(rows: list[dict]) -> dict[tuple, list[dict]]:
    """Twin rows with both TTFT and TPOT, keyed (system, precision, release, ISL); each value a list of
    {id, split, moe, ttft (meas, pred), tpot (meas, pred)} dicts, ``moe`` 'EP' (MoE EP > 1) or 'TP'."""
    by: dict[str, dict] = defaultdict(dict)
    for r in rows:
        if is_twin(r) and r["metric"] in ("ttft_s", "tpot_s"):
            by[r["id"]][r["metric"]] = r
    out: dict[tuple, list[dict]] = defaultdict(list)
    for rid, d in by.items():
        if len(d) < 2:
            continue
        t = d["ttft_s"]
        ep = int(TWIN_FORM.search(t["deployment"]).group(3))
        out[(t["system"], t["precision"], t["stack"].split("@")[1], t["isl"])].append(
            {
                "id": rid,
                "split": t["split"],
                "moe": "EP" if ep > 1 else "TP",
                "ttft": (float(t["measured"]), float(t["predicted"])),
                "tpot": (float(d["tpot_s"]["measured"]), float(d["tpot_s"]["predicted"])),
            }
        )
    return out


def _ratio(pair: tuple[float, float]) -> float:
    return pair[0] / pair[1]


def part1(groups: dict[tuple, list[dict]]) -> None:
    """Print part 1 of the module docstring."""
    print("system precision release ISL | n | TTFT meas/model | TPOT meas/model | TTFT gap in measured TPOTs")
    for k in sorted(groups):
        v = groups[k]
        lag = statistics.median((x["ttft"][0] - x["ttft"][1]) / x["tpot"][0] for x in v)
        print(
            f"{' '.join(k)} | {len(v)} | {statistics.median(_ratio(x['ttft']) for x in v):.2f} | "
            f"{statistics.median(_ratio(x['tpot']) for x in v):.2f} | {lag:+.1f}"
        )
    print("\nB200 FP4 1.1.0rc2.post2 8k by MoE form (median TTFT meas/model, n):")
    for form in ("TP", "EP"):
        v = [x for x in groups.get(("b200", "fp4", "1.1.0rc2.post2", "8192"), []) if x["moe"] == form]
        if v:
            print(f"  MoE {form}: {statistics.median(_ratio(x['ttft']) for x in v):.2f} ({len(v)})")


def implied_factors(
    tpot: tuple[float, float], ttft: tuple[float, float], tpot_dec: float, prompt_step: float
) -> tuple[float, float]:
    """(s_tpot, s_ttft): the prompt-step factors a row's measured TPOT and TTFT imply (module docstring, part 2).

    ``tpot`` and ``ttft`` are (measured, model) in s; ``tpot_dec`` the model's decode-only time per output token,
    s; ``prompt_step`` the model's step of one whole prompt alone, s.

    Raises:
        ValueError: a model TPOT not above the decode-only one (no prompt share to scale) or a prompt step <= 0.
    """
    if tpot[1] <= tpot_dec:
        raise ValueError(f"tpot_dec: {tpot_dec} is not below the model TPOT {tpot[1]}; no prompt share to scale")
    if prompt_step <= 0:
        raise ValueError(f"prompt_step: {prompt_step} must be > 0 s")
    return 1 + (tpot[0] - tpot[1]) / (tpot[1] - tpot_dec), 1 + (ttft[0] - ttft[1]) / prompt_step


def excess_per_token(factors: tuple[float, float], prompt_step: float, isl: float) -> float:
    """Prompt-step time a row's measured TPOT and TTFT both imply beyond the model's, per prompt token, s:
    (min(s_tpot, s_ttft) − 1)·prompt_step/ISL, floored at 0 (prompt work must show in both metrics; the rest of
    a TTFT gap is a first-token delay). ``factors`` from :func:`implied_factors`; ``prompt_step`` s; ``isl`` tokens.

    >>> round(excess_per_token((2.0, 3.0), 0.1, 8192) * 1e6, 1)  # 0.1 s more a prompt, over 8,192 tokens
    12.2

    Raises:
        ValueError: ``isl`` <= 0.
    """
    if isl <= 0:
        raise ValueError(f"isl: {isl} must be > 0 tokens")
    return max(min(factors) - 1.0, 0.0) * prompt_step / isl


def _points(ids: set[str]) -> list:
    from jalapeno.fit.validate import load_aiconfigurator

    return [p for p in load_aiconfigurator()[0] if p.id in ids]


def part2(groups: dict[tuple, list[dict]]) -> None:
    """Print part 2 of the module docstring for the 8k twins."""
    import numpy as np

    from jalapeno.cost.step import Batch, pool_step_cost
    from jalapeno.fit.mlperf_scenarios import priced_point
    from jalapeno.serve.limits import decode_step_s
    from jalapeno.serve.open_loop import decode_pool_step
    from jalapeno.serve.point import serve_at_concurrency

    want = {x["id"]: (k, x) for k, v in groups.items() if k[3] == "8192" for x in v}
    print("\nrow | split | release | C | decode-only ms/token | prompt step ms | s_tpot | s_ttft | excess us/token")
    per: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    fit_excess: list[float] = []
    for p in sorted(_points(set(want)), key=lambda q: (want[q.id][0], q.concurrency)):
        k, x = want[p.id]
        model, pricer, dep, wl = priced_point(p)
        lay, c = dep.decode.layout, int(p.concurrency)
        b = float(serve_at_concurrency(model, pricer, dep, wl, [c]).decode_batch[0])
        dec = decode_pool_step(model, pricer, dep, wl.decode_ctx, [b])
        per_tok = float(decode_step_s(dec, pricer.efficiency, dep, np.array([b]), lay)[0])
        per_tok /= dep.mtp.tokens_per_step if dep.mtp is not None else 1.0
        pre = Batch.make(
            decode_seqs=np.array([0.0]),
            decode_ctx=0.0,
            prefill_tokens=np.array([wl.mean_isl]),
            prefill_ctx=0.0,
            prefill_seqs=np.array([1.0]),
        )
        pstep = float(pool_step_cost(model, pricer, dep, lay, pre).step_time_s[0])
        try:
            s = implied_factors(x["tpot"], x["ttft"], per_tok, pstep)
        except ValueError as e:
            print(f"{p.id[-40:]} | {k[2]} | {c} | skipped: {e}")
            continue
        per[k].append(s)
        e = excess_per_token(s, pstep, wl.mean_isl)
        if x["split"] == "fit" and k[2].startswith("1.1.0rc2"):
            fit_excess.append(e)
        print(
            f"{p.id[-40:]} | {x['split']} | {' '.join(k[:3])} | {c} | {per_tok * 1e3:.1f} | {pstep * 1e3:.0f} | "
            f"{s[0]:.2f} | {s[1]:.2f} | {e * 1e6:.1f}"
        )
    if fit_excess:
        print(
            f"\n1.1.0rc2 fit-split rows: median excess {statistics.median(fit_excess) * 1e6:.1f} us/token "
            f"(n {len(fit_excess)}; {', '.join(f'{v * 1e6:.1f}' for v in sorted(fit_excess))})"
        )
    print("\nmedian per group: s_tpot / s_ttft (n)")
    for k, v in sorted(per.items()):
        print(
            f"  {' '.join(k)}: {statistics.median(a for a, _ in v):.2f} / "
            f"{statistics.median(b for _, b in v):.2f} ({len(v)})"
        )


def part3(heldout: list[dict]) -> None:
    """Print part 3 of the module docstring."""
    print("\nInferenceX held-out rows a refill or 1.1.0rc2 term can touch (throughput/interactivity error %):")
    for r in heldout:
        if r["source"] != "inferencex" or r["metric"] not in ("throughput_per_chip", "interactivity"):
            continue
        if "dispatch refill" in r["deployment"] or "1.1.0rc2" in r["stack"]:
            print(
                f"  {r['id']} {r['system']} {r['stack']} {r['mode']} {r['isl']}/{r['osl']} C{r['concurrency']} "
                f"{r['metric']} {100 * float(r['error']):+.1f}"
            )
    print("InferenceX GB200 throughput rows (mode, stack, error %):")
    for r in heldout:
        if r["source"] == "inferencex" and r["system"] == "gb200-nvl72" and r["metric"] == "throughput_per_chip":
            print(
                f"  {r['id']} {r['model']} {r['mode']} {r['stack']} {r['isl']}/{r['osl']} C{r['concurrency']} "
                f"{100 * float(r['error']):+.1f}"
            )


def main(argv: list[str] | None = None) -> int:
    """Parts 1-3 of the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("validate_csv")
    ap.add_argument("--price", action="store_true", help="part 2: price each 8k twin's decode-only and prompt step")
    ap.add_argument("--heldout", help="a `validate --held-out --json -o` CSV for part 3")
    args = ap.parse_args(argv)
    with open(args.validate_csv) as f:
        groups = twin_groups(list(csv.DictReader(f)))
    part1(groups)
    if args.price:
        part2(groups)
    if args.heldout:
        with open(args.heldout) as f:
            part3(list(csv.DictReader(f)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
