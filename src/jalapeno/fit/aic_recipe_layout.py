"""The prefill layout InferenceX's own metadata audit gives aiconfigurator rows measured before it (issue 18, round 51).

aiconfigurator-core's ``silicon_sample.csv`` republishes InferenceX runs (fit/aic_rows.py), and a disaggregated
row's prefill layout (``prefill_tp_size``, ``prefill_attention_dp_size``, ``prefill_moe_ep_size``) is the layout
InferenceX's ``nvidia-master.yaml`` *declared* for the entry at the run's date — metadata beside the recipe file
(``CONFIG_FILE=recipes/trtllm/...``) the run actually launched. SemiAnalysisAI/InferenceX commit f316a0ef6
(PR #919, 2026-03-23, "Fix nvidia-master.yaml metadata to align with recipe files") audited that metadata against
the recipe files and found 34 mismatches, "metadata-only ... No recipe files were modified":

- ``dsr1-fp8-b200-dynamo-trt`` 8k/1k: 15 prefill ``ep`` 8 → 1 (the prefill workers run attention DP8 with MoE TP8,
  not EP8), and the ``ctx1_gen1_tp8_batch1`` entry's prefill ``dp-attn`` true → false as well (attention TP8, MoE TP8);
- ``dsr1-fp8-h200-dynamo-trt``: 17 prefill ``dp-attn`` mismatches — 1k/1k false → true (attention DP8 prefill),
  8k/1k true → false (attention TP8 prefill); after the fix every H200 1k/1k entry declares DP8 and every 8k/1k entry
  TP8 (nvidia-master.yaml @475cc1dbc, 2026-04-09);
- ``dsr1-fp4-gb200-dynamo-trt`` 8k/1k: 2 *decode* ``dp-attn`` true → false on entries with 4 decode workers; no
  aiconfigurator GB200 row measured before the fix has that decode pool (run 225: 3 x TEP8 and 1 x DEP32), so none
  is touched here.

The rows measured before the fix (H200 runs of 2026-02-14, B200 FP8 runs of 2026-02-12) therefore state the wrong
prefill layout, and the rows measured after it state the right one: the same recipes re-run on 2026-03-23 give
twins that differ only in the stated prefill layout and measure the same request rate to 0.05-0.3% (H200 8k
cfg291 / cfg675, cfg294 / cfg679, cfg334 / cfg673, cfg325 / cfg674; H200 1k cfg303 / cfg590; B200 8k cfg553 / cfg661,
cfg554 / cfg669, cfg555 / cfg667, cfg549 / cfg666; scripts/adp_prefill_twins51.py). :func:`with_recipe_layout`
prices a row measured before 2026-03-23 at the layout the audit gives, behind :data:`RECIPE_LAYOUT_ON`.
"""

from __future__ import annotations

from dataclasses import replace

from jalapeno.deploy.deployment import Deployment
from jalapeno.deploy.layout import Layout

#: round 51 (adpprefill51): price the pre-audit aiconfigurator TensorRT-LLM disaggregated rows at the prefill layout
#: InferenceX PR #919 gives their recipes. The judgement (held-out figures on vs off) is in docs/gap_aic_ttft.md
#: "Round 51 (adpprefill51)".
RECIPE_LAYOUT_ON = False

#: the date InferenceX's metadata fix landed (f316a0ef6, 2026-03-23T13:00Z); rows measured on or after it state the
#: audited layout already
AUDIT_DATE = "2026-03-23"

AUDIT_SOURCE = "SemiAnalysisAI/InferenceX f316a0ef6 (PR #919, 2026-03-23: nvidia-master.yaml metadata aligned with the recipe files)"


def recipe_prefill_layout(
    system: str,
    model: str,
    backend: str,
    precision: str,
    isl: int,
    stated: Layout,
    decode: Layout,
    decode_workers: int,
    decode_batch: int | None,
) -> Layout | None:
    """The prefill layout the audit gives a pre-audit row of these fields, or None where it changes nothing.

    ``stated``: the row's prefill layout as the sample writes it; ``decode`` / ``decode_workers`` / ``decode_batch``:
    its decode pool (the B200 ``ctx1_gen1_tp8_batch1`` entry is the one with one TP8 decode worker at batch 1).

    >>> L = Layout
    >>> recipe_prefill_layout("h200", "deepseek-r1", "trtllm", "fp8", 1024, L(tp=8, ep=8), L(tp=8, ep=8), 9, 64)
    Layout(tp=1, dp=8, ep=8, pp=1, cp=1, eplb=None, moe=True, dp_dispatch='balanced')
    >>> recipe_prefill_layout("h200", "deepseek-r1", "trtllm", "fp8", 8192, L(dp=8, ep=8), L(dp=8, ep=8), 1, 16).tp
    8
    >>> recipe_prefill_layout("b200", "deepseek-r1", "trtllm", "fp8", 8192, L(dp=8, ep=8), L(tp=8), 4, 8).ep
    1
    >>> recipe_prefill_layout("b200", "deepseek-r1", "trtllm", "fp8", 8192, L(dp=8, ep=8), L(tp=8), 1, 1)
    Layout(tp=8, dp=1, ep=1, pp=1, cp=1, eplb=None, moe=True, dp_dispatch='balanced')
    >>> recipe_prefill_layout("h200", "deepseek-r1", "trtllm", "fp8", 1024, L(dp=8, ep=8), L(tp=8, ep=8), 9, 64) is None
    True
    """
    if model != "deepseek-r1" or backend != "trtllm" or precision != "fp8" or stated.pp != 1:
        return None
    want = None
    if system == "h200" and stated.tp * stated.dp == 8:
        want = Layout(dp=8, ep=stated.ep) if isl == 1024 else Layout(tp=8, ep=stated.ep) if isl == 8192 else None
    elif system == "b200" and isl == 8192 and stated.tp * stated.dp == 8:
        one = decode_workers == 1 and decode.tp == 8 and decode.dp == 1 and decode_batch == 1
        want = Layout(tp=8, ep=1) if one else Layout(tp=stated.tp, dp=stated.dp, ep=1)
    if want is None or (want.tp, want.dp, want.ep) == (stated.tp, stated.dp, stated.ep):
        return None
    return want


def with_recipe_layout(
    dep: Deployment,
    system: str,
    model: str,
    backend: str,
    precision: str,
    isl: int,
    measured: str,
    decode_batch: int | None,
) -> tuple[Deployment, str]:
    """(deployment, note): ``dep`` with its prefill pool at the audited layout when :data:`RECIPE_LAYOUT_ON`, the row
    was measured before :data:`AUDIT_DATE` and the audit changes its layout; else ``dep`` unchanged and "".

    >>> import jalapeno.fit.aic_recipe_layout as m
    >>> from jalapeno.deploy.deployment import Pool
    >>> from jalapeno.specs.formats import get_precision
    >>> d = Deployment(get_precision("fp8"), Pool(Layout(dp=8, ep=8)), prefill=Pool(Layout(dp=8, ep=8)))
    >>> m.with_recipe_layout(d, "h200", "deepseek-r1", "trtllm", "fp8", 8192, "2026-02-14", 16)[0] is d  # switch off
    True
    >>> m.RECIPE_LAYOUT_ON = True
    >>> e, note = m.with_recipe_layout(d, "h200", "deepseek-r1", "trtllm", "fp8", 8192, "2026-02-14", 16)
    >>> (e.prefill.layout.tp, e.prefill.layout.dp), note.startswith("prefill TP1 DP8 EP8 as stated")
    ((8, 1), True)
    >>> m.with_recipe_layout(d, "h200", "deepseek-r1", "trtllm", "fp8", 8192, "2026-03-23", 16)[0] is d  # after the fix
    True
    >>> m.RECIPE_LAYOUT_ON = False
    """
    if not RECIPE_LAYOUT_ON or dep.prefill is None or not measured or measured >= AUDIT_DATE:
        return dep, ""
    pre = dep.prefill.layout
    want = recipe_prefill_layout(
        system, model, backend, precision, isl, pre, dep.decode.layout, dep.decode.workers, decode_batch
    )
    if want is None:
        return dep, ""
    s = lambda lay: f"TP{lay.tp} DP{lay.dp} EP{lay.ep}"  # noqa: E731
    note = (
        f"prefill {s(pre)} as stated, priced {s(want)}: the recipe's layout per the metadata audit measured after "
        f"this row ({AUDIT_SOURCE}) (fit/aic_recipe_layout.py)"
    )
    return replace(dep, prefill=replace(dep.prefill, layout=want)), note
