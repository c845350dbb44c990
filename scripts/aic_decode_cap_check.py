"""Cross-check of the decode caps fit/aic_decode_caps.py gives the GB200/GB300 disaggregated aiconfigurator rows
against the recipes read independently (docs/gap_aic_itl.md, "GB200/GB300 attention-TP decode pools", item 1).
Nothing here is shipped.

For each sweep below (the InferenceX commit whose perf-changelog entry triggered it, its configuration key, and the
srt-slurm commit whose recipe files that configuration names at the run's date), every search-space entry without
speculative decoding gives a decode cap: the recipe's decode ``max_batch_size`` (TensorRT-LLM, per attention-DP
rank) or ``max-num-seqs`` (vLLM), or the 2025 configurations' inline ``DECODE_MAX_BATCH_SIZE`` (whose ``conc-list``
counts per decode worker: config_id 237's c564 is 141 x 4 workers). A row of the sweep matches an entry on ISL/OSL,
decode workers, decode chips and a concurrency; the script prints, per row, that cap, the shipped one
(``Deployment.max_running``) and, where they differ, the TPOT and TTFT errors under each.

Usage: python scripts/aic_decode_cap_check.py INFERENCEX_REPO SRT_SLURM_REPO   (git directories; about 20 s)
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import yaml

#: (catalog system, model, engine release, precision, measured date) -> (InferenceX commit, configuration key,
#: srt-slurm commit of its recipes at the run's date; "" where the configuration sets the cap inline)
SWEEPS = {
    ("gb200-nvl72", "deepseek-r1", "trtllm 0.5.1-rc0.pre3", "fp4", "2025-12-19"): (
        "c040b5cf2",
        "dsr1-fp4-gb200-dynamo-trt",
        "",
    ),
    ("gb200-nvl72", "deepseek-r1", "trtllm 0.8.1.post2", "fp4", "2026-03-23"): (
        "f316a0ef6",
        "dsr1-fp4-gb200-dynamo-trt",
        "5063eb43",
    ),
    ("gb200-nvl72", "deepseek-r1", "trtllm 0.8.1.post2", "fp8", "2026-02-05"): (
        "c50fd355d",
        "dsr1-fp8-gb200-dynamo-trt",
        "5063eb43",
    ),
    ("gb300-nvl72", "deepseek-r1", "trtllm 0.8.1.post2", "fp4", "2026-02-03"): (
        "3eb1b779c",
        "dsr1-fp4-gb300-dynamo-trt",
        "5063eb43",
    ),
    ("gb300-nvl72", "deepseek-r1", "trtllm 0.8.1.post2", "fp8", "2026-02-07"): (
        "7f11856ed",
        "dsr1-fp8-gb300-dynamo-trt",
        "5063eb43",
    ),
    ("gb200-nvl72", "kimi-k2.5", "trtllm 1.1.0-dev.2", "fp4", "2026-04-18"): (
        "e8924a6a4",
        "kimik2.5-fp4-gb200-dynamo-trt",
        "94903bdb",
    ),
    ("gb200-nvl72", "kimi-k2.5", "vllm 0.18.0", "fp4", "2026-04-07"): (
        "235b232d2",
        "kimik2.5-fp4-gb200-dynamo-vllm",
        "8294e64e",
    ),
}


def _show(repo: str, spec: str) -> str:
    return subprocess.run(["git", "-C", repo, "show", spec], capture_output=True, text=True).stdout


def recipe_cap(recipe: dict) -> int | None:
    """The decode cap a srt-slurm recipe sets: TensorRT-LLM ``max_batch_size``, vLLM ``max-num-seqs``.

    >>> recipe_cap({"backend": {"vllm_config": {"decode": {"max-num-seqs": 16}}}})
    16
    >>> recipe_cap({"backend": {"trtllm_config": {"decode": {"max_batch_size": 32}}}})
    32
    """
    be = recipe.get("backend") or {}
    trt = ((be.get("trtllm_config") or {}).get("decode") or {}).get("max_batch_size")
    vllm = ((be.get("vllm_config") or {}).get("decode") or {}).get("max-num-seqs")
    return int(trt) if trt is not None else None if vllm is None else int(vllm)


def configuration_caps(cfg: dict, read_recipe):
    """[(isl, osl, decode workers, decode chips, concurrencies, cap, recipe)] of a configuration's entries without
    speculative decoding (``cfg``: one key of ``nvidia-master.yaml``; ``read_recipe(path)``: the recipe's parsed
    YAML, or None when not stored). An entry naming no recipe but an inline ``DECODE_MAX_BATCH_SIZE`` (the 2025
    form) has its ``conc-list`` counted per decode worker.

    >>> cfg = {"seq-len-configs": [{"isl": 1024, "osl": 1024, "search-space": [
    ...     {"conc-list": [1, 141], "prefill": {}, "decode": {"num-worker": 4, "tp": 8,
    ...      "additional-settings": ["DECODE_MAX_BATCH_SIZE=128"]}},
    ...     {"spec-decoding": "mtp", "conc-list": [4], "prefill": {}, "decode": {"num-worker": 4, "tp": 8}}]}]}
    >>> configuration_caps(cfg, lambda path: None)
    [(1024, 1024, 4, 8, [4, 564], 128, 'DECODE_MAX_BATCH_SIZE=128')]
    """
    out = []
    for sl in cfg["seq-len-configs"]:
        for e in sl["search-space"]:
            if e.get("spec-decoding", "none") != "none":
                continue
            d, conc = e["decode"], [int(c) for c in e["conc-list"]]
            files = [
                s.split("=", 1)[1] for s in e["prefill"].get("additional-settings", []) if s.startswith("CONFIG_FILE=")
            ]
            inline = [
                s.split("=", 1)[1] for s in d.get("additional-settings", []) if s.startswith("DECODE_MAX_BATCH_SIZE=")
            ]
            if files:
                recipe = read_recipe(files[0])
                cap, name = (recipe_cap(recipe) if recipe else None), files[0].rsplit("/", 1)[-1]
            elif inline:
                cap, name = int(inline[0]), f"DECODE_MAX_BATCH_SIZE={inline[0]}"
                conc = [c * int(d["num-worker"]) for c in conc]
            else:
                continue
            if cap is not None:
                out.append((sl["isl"], sl["osl"], int(d["num-worker"]), int(d["tp"]), conc, cap, name))
    return out


def entry_caps(ix: str, ss: str, commit: str, key: str, ss_commit: str):
    """:func:`configuration_caps` of ``key`` at InferenceX ``commit``, its recipes read at srt-slurm ``ss_commit``."""
    cfg = yaml.safe_load(_show(ix, f"{commit}:.github/configs/nvidia-master.yaml"))[key]

    def read(path: str):
        text = _show(ss, f"{ss_commit}:{path}") if ss_commit else ""
        return yaml.safe_load(text) if text else None

    return configuration_caps(cfg, read)


def main(ix: str, ss: str) -> None:
    from jalapeno.fit.table_lookup import load_any_pricer
    from jalapeno.fit.validate import load_aiconfigurator, point_stack, point_workload, with_stack_mtp
    from jalapeno.serve.point import serve_at_concurrency
    from jalapeno.specs.catalog import load_model

    caps = {k: entry_caps(ix, ss, *v) for k, v in SWEEPS.items()}
    pts, _ = load_aiconfigurator()
    agree = 0
    for p in pts:
        dep = p.deployment
        if dep.prefill is None:
            continue
        for (system, model, fw, prec, _day), entries in caps.items():
            # one sweep per system, model, release and precision among the rows with worker counts (the
            # dated db-dump rows); the day names the run the recipes are read for
            if (p.system, p.model, p.framework, p.precision) != (system, model, fw, prec):
                continue
            lay = dep.decode.layout
            hit = {
                c
                for isl, osl, w, chips, conc, c, _ in entries
                if (isl, osl, w, chips) == (p.isl, p.osl, dep.decode.workers, lay.tp * lay.dp)
                and int(p.concurrency) in conc
            }
            mine = hit.pop() if len(hit) == 1 else None
            shipped = None if dep.max_running is None else dep.max_running * dep.rank_scale(lay) // lay.dp
            binds = mine is not None and p.concurrency > mine * lay.dp * dep.decode.workers
            if mine == shipped or (not binds and shipped is None):
                agree += 1
                continue
            if mine is None:
                print(f"{p.id:60s} {lay.label:30s} shipped {shipped} recipe: no single STP entry")
                continue
            st = point_stack(p)
            pr = load_any_pricer(p.system, "calibrated", pricer="roofline", stack=st)
            base, wl = with_stack_mtp(dep, st, p.model), point_workload(p)
            errs = []
            for d in (base, replace(base, max_running=mine * lay.dp // base.rank_scale(lay))):
                r = serve_at_concurrency(load_model(p.model), pr, d, wl, [p.concurrency])
                errs.append(
                    f"TPOT {r.tpot_s[0] / p.measured['tpot_s'] - 1:+.3f} TTFT "
                    f"{r.ttft_s[0] / p.measured['ttft_s'] - 1:+.3f}"
                )
            print(f"{p.id:60s} {lay.label:30s} shipped {shipped} recipe {mine}: {errs[0]} -> {errs[1]}")
    print(f"{agree} rows of these sweeps: the shipped cap and the recipe's agree (or neither binds)")


if __name__ == "__main__":
    main(*sys.argv[1:3])
