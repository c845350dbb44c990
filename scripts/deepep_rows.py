"""H100 Dynamo-TRT rows priced as their recipes say (DeepEP, not the all-gather): the step gap left.

Every H100 Dynamo-TRT recipe file (NVIDIA/srt-slurm @5063eb43, recipes/trtllm/h100-fp8/...) sets
TRTLLM_FORCE_ALLTOALL_METHOD=DeepEP with the WIDEEP MoE backend on its prefill pools and DEP16 decode
pools. For InferenceX rows 27 and 33 (docs/model.md §3.8) this prints, for the DEP16-decode entry:

- the prediction with the shipped exchange (the profile's all-gather + reduce-scatter) and with the
  all-to-all the recipes run (moe_exchange = all_to_all: k copies per decode row, NVLink inside a node,
  the NICs between the two nodes — the DeepEP low-latency byte pattern, checked against DeepEP's
  published figures in docs/collectives.md);
- one MoE layer's DeepEP dispatch + combine at the decode step's tokens per rank from
  cost/deepep.py, low-latency and normal kernels (TensorRT-LLM's forced ``DeepEP`` method is the
  normal family: "no CUDA Graphs support", tensorrt_llm/_torch/modules/fused_moe/.../communication);
- the measured step (TPOT × tokens per step at the model's acceptance) and the gap per MoE layer.

Nothing is fitted. Run: python scripts/deepep_rows.py [ROW ...]   (default 27 33)
"""

from __future__ import annotations

import dataclasses
import sys
from importlib.resources import files

from jalapeno.cost.deepep import deepep_call
from jalapeno.fit.table_lookup import load_any_pricer
from jalapeno.fit.validate import point_stack, with_stack_mtp, point_workload
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.serve.point import serve_at_concurrency
from jalapeno.specs.catalog import load_model


def main(rows: list[str]) -> None:
    pts, _ = load_inferencex(files("jalapeno") / "data/validation/inferencex_points.csv")
    want = {f"inferencex_points:{r}" for r in rows}
    for p in pts:
        if p.id not in want:
            continue
        model = load_model(p.model)
        wl = point_workload(p)
        cands = p.candidates if p.candidates else ((p.deployment, (p.concurrency,)),)
        cands = [c if isinstance(c, tuple) else (c, (p.concurrency,)) for c in cands]
        print(
            f"== row {p.id.split(':')[1]} {p.system} ISL/OSL {p.isl}/{p.osl} C={p.concurrency}: measured "
            f"{p.measured['throughput_per_chip']:.0f} tok/s/chip, TPOT {p.measured['tpot_s'] * 1e3:.1f} ms"
        )
        for dep, _ in cands:
            if dep.decode is None or dep.decode.layout.dp <= 1:
                continue  # TEP decode: no all-to-all in decode
            out = {}
            for exch in ("shipped", "all_to_all"):
                st = point_stack(p)
                if exch != "shipped":
                    st = dataclasses.replace(st, moe_exchange=exch)
                d = with_stack_mtp(dep, st, p.model)
                pricer = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
                r = serve_at_concurrency(model, pricer, d, wl, [p.concurrency])
                out[exch] = (float(r.throughput_per_chip[0]), float(r.tpot_s[0]), d, pricer)
            d, pricer = out["all_to_all"][2], out["all_to_all"][3]
            a = d.mtp.tokens_per_step if d.mtp else 1.0
            lay = d.decode.layout
            per_rank = d.running_cap if d.budget_per == "rank" else d.running_cap / lay.dp
            tokens = per_rank * (1 + (d.mtp.draft_tokens if d.mtp else 0))  # the slots bind at these loads
            print(f"  {d.label[:100]}")
            for k, (thr, tpot, _, _) in out.items():
                print(
                    f"    {k:10s}: {thr:7.1f} tok/s/chip ({thr / p.measured['throughput_per_chip'] - 1:+.0%}), "
                    f"TPOT {tpot * 1e3:6.1f} ms ({tpot / p.measured['tpot_s'] - 1:+.0%}), step {tpot * a * 1e3:6.1f} ms"
                )
            layers = model.num_moe_layers
            for mode in ("low_latency", "normal"):
                c = [
                    deepep_call(
                        mode, kind, lay.ep, tokens, model.hidden_size, model.moe.top_k, pricer.system, pricer.efficiency
                    )
                    for kind in ("dispatch", "combine")
                ]
                t = sum(x.time_s for x in c)
                print(
                    f"    DeepEP {mode:11s} at {tokens:.0f} tokens/rank: dispatch {c[0].time_s * 1e6:5.1f} + combine "
                    f"{c[1].time_s * 1e6:5.1f} us per layer ({c[0].bound}/{c[1].bound}), x{layers} MoE layers = {t * layers * 1e3:5.2f} ms"
                )
            meas_step = p.measured["tpot_s"] * a
            gap = meas_step - out["all_to_all"][1] * a
            print(
                f"    measured step at {a:.2f} tokens/step: {meas_step * 1e3:.1f} ms; gap to the all-to-all step "
                f"{gap * 1e3:+.1f} ms = {gap / layers * 1e6:+.0f} us per MoE layer"
            )


if __name__ == "__main__":
    main(sys.argv[1:] or ["27", "33"])
