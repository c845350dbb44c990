"""What-if: the FP8 block-scale activation quantiser and the NVFP4 checkpoint's own layer formats on the
aiconfigurator DeepSeek-R1 TensorRT-LLM TPOT rows (issue 18, round 47, fp4layers47; docs/gap_aic_itl.md).

Round 47 (trtllm47) found the TRT-LLM FP4 decode rows about 7 points over the FP8 rows of the same release and
decode layout, and a measured FP8 - FP4 step gap at one sequence a rank (1.5-1.8 ms) twice the model's. Two
sourced differences between the formats' decode steps are priced alike today:

* TensorRT-LLM runs an FP8 block-scale linear as two kernels (``_torch/modules/linear.py``
  ``FP8BlockScalesLinearMethod.apply``: per-token 1x128 quantiser, then the DeepGEMM / block-scale GEMM), a BF16
  linear as one; the model charges the quantiser for NVFP4 linears only (cost/ops.ACT_QUANT_KERNELS).
  Switch: cost/ops.FP8_BLOCK_ACT_QUANT_ON (shipped off).
* nvidia's NVFP4 DeepSeek checkpoints keep the attention q_a / q_b / kv_a / kv_b projections BF16 and quantise
  o_proj, the shared experts and the dense FFN to NVFP4 (hf_quant_config exclusions, docs/gap_aic_itl.md round 47
  item 9); the ``fp4`` preset prices attention, shared experts and dense FFN as FP8 block-scale. The what-if
  preset ``ckpt`` sets attention BF16 and shared experts / dense FFN NVFP4 (o_proj cannot be split from the
  attention module, so it is BF16 here: one kernel short and twice its bytes).

Columns (median signed TPOT error %, n rows, per system x mode x decode attention layout x release x format):
``shipped``; ``quant`` (the switch on); ``ckpt`` (the FP4 rows on the ``ckpt`` preset); ``both``. No stack is
refitted: the stacks' fitted fixed costs were fitted with neither term, so the levels move and only the
format gap inside one group (``fp4 - fp8``) reads directly.

Input: none (serves the shipped aiconfigurator rows as validation does, fit/validate helpers).
Run: python scripts/fp8_act_quant47.py [--systems b200,gb200-nvl72,gb300-nvl72]   (about a minute)
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import pandas as pd

from jalapeno.cost import ops as ops_mod
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import PRESETS
from jalapeno.specs.fp4_checkpoint import checkpoint_precision
from trt_fp4_fp8_split47 import served_trt_rows, settings_medians, tpot_error_row


def ckpt_preset():
    """The ``fp4`` preset at NVIDIA's DeepSeek-R1 FP4 checkpoint's module formats (a Precision; what-if only, not
    registered): specs/fp4_checkpoint.checkpoint_precision with its switch forced on (its CHECKPOINT_MODULES and
    their sources; round 48 built this script's what-if into the package)."""
    return checkpoint_precision("deepseek-r1", PRESETS["fp4"], on=True)


SETTINGS = {"shipped": (False, False), "quant": (True, False), "ckpt": (False, True), "both": (True, True)}


def serve_rows(systems: tuple[str, ...], setting: str) -> pd.DataFrame:
    """One row per aiconfigurator DeepSeek-R1 TensorRT-LLM row with a decode pool and a measured TPOT on
    ``systems``: system, precision, mode, decode (``TPn`` / ``DPn``), release (``.postN`` dropped), meas_ms and the
    signed TPOT error (%) under ``setting`` (a :data:`SETTINGS` key). One setting a process: the serving path
    keeps per-process state, so :func:`main` runs each setting in its own interpreter."""
    on, use_ckpt = SETTINGS[setting]
    ops_mod.FP8_BLOCK_ACT_QUANT_ON = on
    model, ckpt, out = load_model("deepseek-r1"), ckpt_preset(), []
    for p, st, pricer, wl, dep in served_trt_rows(systems):  # the rows trt_fp4_fp8_split47 serves, served alike
        if use_ckpt and p.precision == "fp4":
            dep = replace(dep, precision=ckpt)
        tpot = float(serve_at_concurrency(model, pricer, dep, wl, [p.concurrency]).tpot_s[0])
        out.append(tpot_error_row(p, st, tpot, setting))
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default="b200,gb200-nvl72,gb300-nvl72")
    ap.add_argument("--setting", choices=sorted(SETTINGS), help=argparse.SUPPRESS)  # one setting, CSV to stdout
    a = ap.parse_args()
    if a.setting:
        serve_rows(tuple(a.systems.split(",")), a.setting).to_csv(sys.stdout, index=False)
        return
    cols = list(SETTINGS)
    g, keys = settings_medians([__file__, "--systems", a.systems], cols)
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.float_format", "{:+.1f}".format):
        print("Median signed TPOT error (%) by group and setting (no refit)\n")
        print(g.to_string(index=False))
        pair = g.pivot_table(index=keys[:-1], columns="precision", values=cols)
        pair = pair.dropna()
        if not pair.empty:
            gap = pd.DataFrame({c: pair[(c, "fp4")] - pair[(c, "fp8")] for c in cols})
            print("\nGroups with both formats: fp4 - fp8 (points)\n")
            print(gap.reset_index().to_string(index=False))


if __name__ == "__main__":
    main()
