"""TensorRT-LLM's and SGLang's shared-expert streams, switched on: what they hide and what a refit makes of them
(issue 18, round 26, sharedtrt26; docs/gap_aic_itl.md "Kimi K2.5 too slow on every system (round 26)", item 5).

cost/shared_stream.py sources both engines' rules (``TRTLLM_STREAM``: decode-only steps, the CUDA-graph steps,
any size; ``SGLANG_STREAM``: <= 1024 rows, not DeepEP, not DeepSeek-R1 at EP 1 where SGLang fuses the shared
expert into the routed MoE) but prices only vLLM's. This script switches the two on in-process
(``SHARED_EXPERT_STREAMS``) and prints, for a few decode steps, the model's step time in series and the seconds
the rule hides; with ``--refit`` it also refits the ``trtllm`` and ``sglang`` profiles (fit/stack_fit.fit_all,
the declared split) with the rules on and prints the held-out errors against the shipped fit's
(data/stack_fits.toml). The validate figures of the docs come from the same switch, a refit written with
scripts/fit_stacks.py and ``jalapeno validate``.

Run: python scripts/shared_stream_engines.py [--refit]   (seconds; --refit a few minutes)
"""

from __future__ import annotations

import argparse
import contextlib
import tomllib
from importlib import resources

import jalapeno.cost.shared_stream as ss
from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.layout import Layout
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

#: (label, model, precision, system, stack, layout, sequences per worker)
STEPS = (
    ("Kimi K2.5 GB200 TRT-LLM TP8 EP8, 1 seq", "kimi-k2.5", "fp4", "gb200-nvl72", "trtllm", Layout(tp=8, ep=8), 1),
    ("Kimi K2.5 GB200 TRT-LLM TP8 EP8, 48 seqs", "kimi-k2.5", "fp4", "gb200-nvl72", "trtllm", Layout(tp=8, ep=8), 48),
    ("DeepSeek-R1 B200 TRT-LLM TP8 EP8, 32 seqs", "deepseek-r1", "fp4", "b200", "trtllm", Layout(tp=8, ep=8), 32),
    ("DeepSeek-R1 H200 TRT-LLM TP8 EP8, 32 seqs", "deepseek-r1", "fp8", "h200", "trtllm", Layout(tp=8, ep=8), 32),
    (
        "DeepSeek-R1 B200 SGLang TP8 EP1, 32 seqs (fused)",
        "deepseek-r1",
        "fp8",
        "b200",
        "sglang",
        Layout(tp=8, ep=1),
        32,
    ),
    ("DeepSeek-R1 B200 SGLang TP8 EP8, 32 seqs", "deepseek-r1", "fp8", "b200", "sglang", Layout(tp=8, ep=8), 32),
    (
        "DeepSeek-R1 B200 SGLang DP8 EP8, 32 seqs (DeepEP)",
        "deepseek-r1",
        "fp8",
        "b200",
        "sglang",
        Layout(tp=1, dp=8, ep=8),
        32,
    ),
)


@contextlib.contextmanager
def engines_on(names=("trtllm", "sglang")):
    """``SHARED_EXPERT_STREAMS`` with the sourced rules of ``names`` (cost/shared_stream.UNPRICED_STREAMS) added."""
    saved = ss.SHARED_EXPERT_STREAMS
    ss.SHARED_EXPERT_STREAMS = {**saved, **{n: ss.UNPRICED_STREAMS[n] for n in names}}
    try:
        yield
    finally:
        ss.SHARED_EXPERT_STREAMS = saved


def step_ms(model: str, precision: str, system: str, stack: str, layout: Layout, seqs: int) -> float:
    """The decode step (context 1,536) in ms, per worker of ``seqs`` sequences."""
    b = Batch.make(decode_seqs=float(seqs * layout.dp), decode_ctx=1536.0)
    return 1e3 * step_cost(
        load_model(model), load_pricer(system, stack=stack), layout, get_precision(precision), b
    ).time_s(0)


def rows() -> list[tuple[str, float, float]]:
    """(label, step in series ms, ms hidden with the rule on) for each of :data:`STEPS`."""
    out = []
    for label, *args in STEPS:
        off = step_ms(*args)
        with engines_on():
            on = step_ms(*args)
        out.append((label, off, off - on))
    return out


def _held_out(report: dict) -> str:
    return ", ".join(f"{m} {d['median_ape']:.1%}/{d['bias']:+.1%}" for m, d in report["after"]["held_out"].items())


def refit() -> None:
    """Refit ``trtllm`` and ``sglang`` with the rules on; print values and held-out errors against the shipped fit."""
    from jalapeno.fit.stack_fit import fit_all

    shipped = tomllib.loads(resources.files("jalapeno.data").joinpath("stack_fits.toml").read_text())["fits"]
    with engines_on():
        fits = fit_all(("trtllm", "sglang"))
    for name, f in fits.items():
        print(f"{name}: shipped {shipped[name]['values']}\n    held out {_held_out(shipped[name]['report'])}")
        print(f"  refit   {f['values']}\n    held out {_held_out(f['report'])}")


def main(with_refit: bool = False) -> None:
    for label, off, hid in rows():
        print(f"{label:52s} step {off:7.3f} ms in series, {hid:6.3f} ms hidden with the rule on")
    if with_refit:
        refit()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--refit", action="store_true", help="also refit trtllm and sglang with the rules on (minutes)")
    main(ap.parse_args().refit)
