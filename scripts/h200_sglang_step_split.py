"""Where the model's TPOT for InferenceX's H200 DeepSeek-R1 FP8 SGLang TP8 EP1 rows goes, per decode batch
(docs/gap_aic_itl.md, "round 35, h200ix35"). Nothing here is shipped; nothing is fitted or written.

For each decode batch B (the rows' concurrencies 4-64) and mean context (1k/1k: 0.9 x 1024 + 512 = 1,434 tokens;
8k/1k: 0.9 x 8192 + 512 = 7,885, InferenceX's lengths uniform in [0.8 L, L]) it runs
``jalapeno step -s h200 -m deepseek-r1 -p fp8 --kv-dtype bf16 --tp 8 --ep 1 --stack sglang`` (the recipe
sglang-h200-dsr1-fp8: TP8, no EP, BF16 KV) and prints the one step's time split into the routed experts
(``moe.experts``), the MLA decode kernel (``attn.mla_decode``), the all-reduces (every ``*.all_reduce``), the ops the
overhead constraint binds (a fixed per-step sum) and the step total, all in ms. A pure step: no prefill chunks, no
scheduler or sampling time, so it sits below the rows' TPOT.

Usage: python scripts/h200_sglang_step_split.py [--batches 4,8,16,32,64]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

CONTEXTS = {"1k/1k": 1434, "8k/1k": 7885}
BASE = [
    "-s",
    "h200",
    "-m",
    "deepseek-r1",
    "-p",
    "fp8",
    "--kv-dtype",
    "bf16",
    "--tp",
    "8",
    "--ep",
    "1",
    "--stack",
    "sglang",
]


def parse_step(text: str) -> dict:
    """The split of one ``jalapeno step`` table: ms per term (experts, MLA decode, all-reduce, overhead, step).

    Terms a table lacks are NaN (the all-reduce sum 0); tests/unit/test_h200_sglang_step_split.py checks it by hand.
    """

    def op_us(name: str) -> float:
        m = re.search(rf"│ {re.escape(name)}\s*│[^\n]*?│\s*([\d.]+)\s*│\s*[a-z(][^│]*│\s*$", text, re.M)
        return float(m.group(1)) if m else float("nan")

    ar = sum(float(m.group(1)) for m in re.finditer(r"│ \S+\.all_reduce\s*│[^\n]*?│\s*([\d.]+)\s*│ \w+\s*│", text))
    step = re.search(r"step time ([\d.]+) ms", text)
    over = re.search(r"overhead ([\d.]+)\s*\n?\s*ms", text) or re.search(r"overhead ([\d.]+) ms", text)
    return {
        "experts": op_us("moe.experts") / 1e3,
        "mla_decode": op_us("attn.mla_decode") / 1e3,
        "all_reduce": ar / 1e3,
        "overhead": float(over.group(1)) if over else float("nan"),
        "step": float(step.group(1)) if step else float("nan"),
    }


def run(batch: int, context: int) -> dict:
    """One ``jalapeno step`` at decode batch ``batch`` and mean context ``context`` (tokens), parsed."""
    cmd = [sys.executable, "-m", "jalapeno", "step", *BASE, "-b", str(batch), "-c", str(context)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=None).stdout
    return parse_step(re.sub(r"\s*\n\s*ms", " ms", out))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", default="4,8,16,32,64")
    args = ap.parse_args(argv)
    print(f"{'lengths':7s} {'B':>3s} {'experts':>8s} {'mla':>6s} {'allred':>7s} {'overhead':>8s} {'step':>7s}")
    for name, ctx in CONTEXTS.items():
        for b in (int(x) for x in args.batches.split(",")):
            r = run(b, ctx)
            print(
                f"{name:7s} {b:3d} {r['experts']:8.2f} {r['mla_decode']:6.2f} {r['all_reduce']:7.2f} "
                f"{r['overhead']:8.2f} {r['step']:7.2f}"
            )


if __name__ == "__main__":
    main()
