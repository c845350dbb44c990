"""The drafting passes of MTP speculative decoding, priced as the MTP module they run.

With k drafts, one verify step of the main model is followed by k forward passes of the model's
MTP module (DeepSeek-V3 §2.2: the 2h -> h projection ``eh_proj`` of the normed embedding and
hidden state, one MoE decoder layer, the shared head's norm and the LM head shared with the main
model), chained autoregressively (TensorRT-LLM's MTP Eagle path, the default for DeepSeek-V3/R1:
TensorRT-LLM tech blog 2, "MTP Eagle"; ``tensorrt_llm/_torch/speculative/mtp.py``
``MTPEagleWorker.forward``):

- pass 1 runs the module's layer over every verified row of each decoding sequence (the
  accepted tokens, ``1 + k`` rows per sequence: ``prepare_drafter_inputs`` flattens
  ``accepted_tokens``; the CUDA graph keeps the full width) and its LM head over one row per
  sequence (the last accepted token's, ``gather_ids``);
- passes 2..k run the layer and the LM head over one row per sequence.

Per pass::

    pass_1   = layer(rows = seqs·(1 + k)) + eh_proj(seqs·(1 + k)) + head(seqs)
    pass_i   = layer(rows = seqs)         + eh_proj(seqs)          + head(seqs)     (i = 2..k)
    draft_s  = pass_1 + (k − 1)·pass_i                              (points with decode sequences)

``layer`` is the op and collective table of one MoE decoder layer of the model on the same layout
(cost/ops.build_step_ops on a one-layer copy of the model: attention over the sequences' context,
the MoE with its all-to-all or all-reduce), ``head`` the same table's edge ops (embedding, LM head,
logits gather), each priced by the step's pricer, with no step overhead (the passes run inside the
verify step's CUDA graph: tech blog 2, "both the verification and draft stages can be captured in
one graph"). The module's weights are priced in the deployment's precision, like a main MoE layer
(assumption: nvidia/DeepSeek-R1-FP4 stores ``model.layers.61`` unquantised, in BF16 —
hf_quant_config.json ``exclude_modules`` 'model.layers.61*', quoted in vLLM PR #25987 — but which
format an engine runs it in is not settled: SGLang casts the BF16 MTP MoE to FP8 on some paths,
PR #13115 ``enable_nextn_moe_bf16_cast_to_fp8``; docs/gap_gb200_fp4_8k1k.md Update 9 gives the
effect of pricing it in BF16). ``eh_proj`` is taken as replicated on every rank, in the attention
projections' format (assumption: the module's projection is a plain ``Linear`` without a
tensor-parallel mode in the engines read; 2h·h weights).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from jalapeno.cost.ops import build_step_ops
from jalapeno.cost.optable import OpBuilder
from jalapeno.cost.pricer import Pricer
from jalapeno.deploy.deployment import MTP
from jalapeno.deploy.layout import Layout
from jalapeno.specs.formats import Precision
from jalapeno.specs.fp4_checkpoint import checkpoint_precision
from jalapeno.specs.model import ModelSpec


def mtp_module(model: ModelSpec) -> ModelSpec:
    """One MTP module of ``model`` as a one-layer model: a decoder layer of the kind the model's
    last layers are (MoE for DeepSeek), with the model's embedding and LM head (shared, DeepSeek-V3
    §2.2). ``eh_proj`` and the module's extra norms are not in it (:func:`mtp_draft_s` adds eh_proj)."""
    moe_layer = model.moe is not None and model.num_moe_layers > 0
    return replace(model, name=f"{model.name}.mtp", num_layers=1, dense_layers=() if moe_layer else (0,))


def mtp_draft_s(
    model: ModelSpec, pricer: Pricer, layout: Layout, precision: Precision, batch, mtp: MTP, all_to_all: bool
) -> np.ndarray:
    """Seconds the k drafting passes of one decode step take on one chip (module docstring).

    Args:
        model, layout, precision: the deployment (the MTP module runs in its precision).
        pricer: the step's pricer (its MoE and attention backends included).
        batch: a decode-only cost/batch.Batch of N points (the step's decoding sequences and their
            mean context; prefill sequences draft nothing here).
        mtp: the MTP setting (k = ``mtp.draft_tokens``).
        all_to_all: the engine runs the MoE all-to-all where the layout has one (as the step).

    Returns:
        (N,) seconds; 0 where no sequence decodes.
    """
    module, prec = mtp_module(model), checkpoint_precision(model.name, precision)  # eh_proj's format too
    seqs = np.asarray(batch.decode_seqs, dtype=float)
    k = mtp.draft_tokens

    def priced(qlen: int) -> tuple[np.ndarray, np.ndarray]:
        """(layer seconds, head seconds) of one pass whose layer sees ``qlen`` rows per sequence."""
        ops, colls = build_step_ops(
            module, pricer.system.chip, layout, prec, batch, pricer.efficiency, qlen, all_to_all
        )
        t, ct = pricer.op_times(ops).time_s, pricer.collective_times(colls).time_s
        p2p = colls.pipeline_p2p
        layer = t[ops.per_stage].sum(axis=0) + ct[colls.per_stage & ~p2p].sum(axis=0)
        head = t[~ops.per_stage].sum(axis=0) + ct[~colls.per_stage & ~p2p].sum(axis=0)
        return layer + _eh_proj_s(model, pricer, prec, seqs * qlen / layout.dp), head

    first_layer, _ = priced(1 + k)
    layer_1, head_1 = priced(1)
    total = first_layer + head_1 + (k - 1) * (layer_1 + head_1)
    return np.where(seqs > 0, total, 0.0)


def _eh_proj_s(model: ModelSpec, pricer: Pricer, prec: Precision, rows: np.ndarray) -> np.ndarray:
    """The module's 2h -> h projection over ``rows`` rows per rank, at the attention weights' format."""
    h = model.hidden_size
    mp = prec.modules["attention"]
    fmt = prec.compute_for(mp.compute, pricer.system.chip.formats, "the MTP projection")
    ob = OpBuilder(rows.shape[0])
    ob.gemm(
        "mtp.eh_proj",
        fmt,
        rows,
        2 * h,
        h,
        mp.weight.bytes_per_elem,
        1.0 if fmt in ("fp8", "fp4") else 2.0,
        key=mp.weight.gemm_key(fmt),
    )
    ops, _ = ob.build()
    return pricer.op_times(ops).time_s.sum(axis=0)
