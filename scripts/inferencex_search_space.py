"""Write data/validation/inferencex_search.toml: InferenceX's benchmark search spaces, read from its
config files at the commits in force on given dates (issue 18).

InferenceX runs, per config key of ``.github/configs/nvidia-master.yaml`` and ``amd-master.yaml``, a
search space per ISL/OSL: aggregated entries ``{ tp, ep, dp-attn, conc-start, conc-end,
spec-decoding }`` (concurrencies conc-start, x2, ... capped at conc-end: the sweep generator's
default ``--step-size 2``, utils/matrix_logic/generate_sweep_configs.py) and disaggregated entries
``{ conc-list, prefill: { num-worker, tp, ep, dp-attn }, decode: {...}, spec-decoding }``. A "best
configuration" row is the best of what those runs measured; fit/searched.py bounds its prediction
by the same entries.

Only the seed models (DeepSeek-R1, gpt-oss-120b) and Kimi K2.5 (whose Dynamo + TensorRT-LLM GB200 entries name
the decode caps fit/aic_decode_caps.py reads; no InferenceX point of it is shipped) on the catalog's systems
are written. A key's
space is written again for a later date only when it changed. Needs PyYAML (installed with the
``explore`` extra's Ray; this script is not part of the package).

    python scripts/inferencex_search_space.py /path/to/InferenceX 2026-01-07 2026-04-06 ... \
        [--srt-slurm /path/to/NVIDIA/srt-slurm]

A disaggregated entry that names an srt-slurm recipe (``CONFIG_FILE=recipes/...``: a TensorRT-LLM
``recipes/trtllm/...`` or an SGLang ``recipes/b200-fp8/...`` one alike) ran the concurrencies of that
recipe's ``benchmark.concurrencies``, not its ``conc-list``: from 2026-01-28
(SemiAnalysisAI/InferenceX #585) to 2026-04-19 (#1000) the multi-node runners
(runners/launch_{h100,h200,b200,b300,gb200}-*.sh) clone ishandhanani/srt-slurm at branch
``sa-submission-q1-2026`` and run ``srtctl apply -f $CONFIG_FILE`` with the recipe unchanged but
for its name, and the results carry the concurrency of the recipe's run (``results_concurrency_<C>
_gpus_...``). The conc-list is then a label: the H200 Dynamo-TRT 1k/1k entry ``conc-list: [512]``
(c512_ctx1_gen2_dep8_batch256_eplb0_mtp1.yaml) ran 1,024 users; the B200 Dynamo-SGLang FP8 8k/1k
entry ``conc-list: [256, 512, 1024]`` (recipes/b200-fp8/8k1k/stp/max-tpt-dep8-2p1d.yaml, launched by
runners/launch_b200-dgxc-slurm.sh the same way) ran 256 users only. With ``--srt-slurm`` (a clone of
NVIDIA/srt-slurm, into which that branch was merged as 5063eb43, 2026-03-03, #202) the entries of
spaces dated in that window take their srt-slurm recipe's concurrencies at that commit; an
entry whose recipe is not there keeps its conc-list.

Two forms state the decode cap (``max_batch``) and count the concurrencies otherwise (round 25, kimidp25):

- *The 2025 inline form.* Before the srt-slurm recipes, a Dynamo + TensorRT-LLM entry sets its decode limits inline
  (``DECODE_MAX_BATCH_SIZE=128``, ``DECODE_MTP_SIZE=0`` under ``decode.additional-settings``): its benchmark script
  (InferenceX benchmarks/dsr1_fp4_gb200_dynamo-trt_slurm.sh @c040b5cf2, 2025-12-19) clones ai-dynamo/dynamo and
  runs components/backends/trtllm/performance_sweeps/benchmark_disagg.slurm, which passes DECODE_MAX_BATCH_SIZE
  as the decode workers' ``max_batch_size`` (per attention-DP rank) and the conc-list to scripts/bench.sh, which
  benchmarks each value times the decode workers (``concurrency=$((concurrency * num_gen_servers))``). So the
  entry ran conc x workers users with that cap (:func:`_inline_decode_limits`): the 2025-12-19 GB200 FP4 sweep's
  4 x TEP8 entry ``conc-list: [1, ..., 64, 141]`` ran 4 ... 564 users, the concurrencies aiconfigurator's rows of
  it (config_id 237) carry.
- *vLLM recipes.* The ``dynamo-vllm`` runner (runners/launch_gb200-nv.sh @235b232d2, 2026-04-07) clones
  NVIDIA/srt-slurm at branch ``sa-submission-q2-2026`` and runs the entry's ``CONFIG_FILE`` recipe; with
  ``--srt-slurm`` the entries of the spaces dated in :data:`SRT_SLURM_Q2_WINDOW` read the recipe's decode
  ``max-num-seqs`` (vLLM's running cap per engine, one engine per data-parallel rank) as their ``max_batch`` at
  :data:`SRT_SLURM_Q2_COMMIT` (:func:`recipe_decode_max_batch`).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src/jalapeno/data/validation/inferencex_search.toml"
MODELS = {"dsr1": "deepseek-r1", "gptoss": "gpt-oss-120b", "kimik2.5": "kimi-k2.5"}
RUNNERS = {
    "b200": "b200",
    "b300": "b300",
    "gb200": "gb200-nvl72",
    "gb300": "gb300-nvl72",
    "h100": "h100",
    "h200": "h200",
    "mi300x": "mi300x",
    "mi325x": "mi325x",
    "mi355x": "mi355x",
}
#: NVIDIA/srt-slurm "Merge sa-submission-q1-2026 into main (#202)", 2026-03-03: the recipes the
#: q1-2026 multi-node runners ran (ishandhanani/srt-slurm @ sa-submission-q1-2026)
SRT_SLURM_COMMIT = "5063eb43"
#: [first, last) space dates whose runners ran the srt-slurm recipes unchanged (module docstring)
SRT_SLURM_WINDOW = ("2026-01-28", "2026-04-19")
#: NVIDIA/srt-slurm branch sa-submission-q2-2026 at the Kimi K2.5 GB200 vLLM run (InferenceX #1008, 2026-04-07):
#: 8294e64e "Add Kimi-K2.5 vLLM recipes ... (#11)", 2026-04-06, the branch head then; the recipes/vllm/kimi-k2.5
#: files are unchanged on the branch through 2026-04-20 (git log sa-submission-q2-2026 -- recipes/vllm/kimi-k2.5)
SRT_SLURM_Q2_COMMIT = "8294e64e"
#: [first, last) space dates whose dynamo-vllm entries ran the recipes at :data:`SRT_SLURM_Q2_COMMIT`
SRT_SLURM_Q2_WINDOW = ("2026-04-07", "2026-04-21")
FILES = (
    ".github/configs/nvidia-master.yaml",
    ".github/configs/amd-master.yaml",
    "configs/nvidia-master.yaml",
    "configs/amd-master.yaml",
)  # moved to configs/ later in 2026


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def _concs(e: dict) -> list[int]:
    if "conc-list" in e:
        return [int(c) for c in e["conc-list"]]
    c, end, out = int(e["conc-start"]), int(e["conc-end"]), []
    while c <= end:
        out.append(c)
        if c == end:
            break
        c = min(c * 2, end)
    return out


def _pool(d: dict, workers: bool) -> str:
    tp, ep, dpa = int(d.get("tp", 1)), int(d.get("ep", 1)), bool(d.get("dp-attn", False))
    lay = f"tp = 1, dp = {tp}, ep = {ep}" if dpa else f"tp = {tp}, dp = 1, ep = {ep}"
    return "{ " + lay + (f", workers = {int(d.get('num-worker', 1))}" if workers else "") + " }"


def _states_layout(d: dict) -> bool:
    """Whether a pool's fields state its layout: some early disaggregated entries carry placeholders
    (``tp: 1, ep: 1, dp-attn: true`` under a comment saying "DEP4"; ``ep`` wider than the worker)."""
    tp, ep = int(d.get("tp", 1)), int(d.get("ep", 1))
    return not (d.get("dp-attn") and tp == 1) and ep <= tp


def recipe_concurrencies(text: str) -> list[int] | None:
    """The concurrencies an srt-slurm recipe's benchmark runs (``benchmark.concurrencies``: ``"1024"``,
    ``"512x1024"`` or a list), or None when it states none.

    >>> recipe_concurrencies('benchmark:\\n  type: "sa-bench"\\n  concurrencies: "512x1024"\\n')
    [512, 1024]
    """
    import yaml

    b = (yaml.safe_load(text) or {}).get("benchmark") or {}
    c = b.get("concurrencies")
    if c is None:
        return None
    return [int(x) for x in re.findall(r"\d+", str(c))]


def recipe_decode_max_batch(text: str) -> int | None:
    """The decode workers' running cap per attention-DP rank an srt-slurm recipe sets: TensorRT-LLM's
    ``backend.trtllm_config.decode.max_batch_size``, or vLLM's ``backend.vllm_config.decode.max-num-seqs`` (per
    engine; vLLM runs one engine per data-parallel rank); None when it sets neither.

    >>> recipe_decode_max_batch("backend:\\n  trtllm_config:\\n    decode:\\n      max_batch_size: 16\\n")
    16
    >>> recipe_decode_max_batch("backend:\\n  vllm_config:\\n    decode:\\n      max-num-seqs: 16\\n")
    16
    >>> recipe_decode_max_batch('benchmark:\\n  concurrencies: "4"\\n') is None
    True
    """
    import yaml

    be = (yaml.safe_load(text) or {}).get("backend") or {}
    trt = ((be.get("trtllm_config") or {}).get("decode") or {}).get("max_batch_size")
    b = trt if trt is not None else ((be.get("vllm_config") or {}).get("decode") or {}).get("max-num-seqs")
    return int(b) if isinstance(b, int) and not isinstance(b, bool) else None


def _inline_decode_limits(e: dict) -> tuple[int, int] | None:
    """(decode max_batch_size, MTP draft length) a 2025 inline-form entry sets (``DECODE_MAX_BATCH_SIZE=N``,
    ``DECODE_MTP_SIZE=K`` under ``decode.additional-settings``; K 0 where absent), or None for other entries
    (module docstring: such an entry ran each conc-list value times its decode workers).

    >>> _inline_decode_limits({"decode": {"additional-settings": ["DECODE_MAX_BATCH_SIZE=128", "DECODE_MTP_SIZE=0"]}})
    (128, 0)
    >>> _inline_decode_limits({"decode": {"tp": 8}}) is None
    True
    """
    got = dict(str(x).split("=", 1) for x in (e.get("decode") or {}).get("additional-settings", []) if "=" in str(x))
    if not re.fullmatch(r"\d+", got.get("DECODE_MAX_BATCH_SIZE", "")):
        return None
    return int(got["DECODE_MAX_BATCH_SIZE"]), int(got.get("DECODE_MTP_SIZE", "0") or 0)


def _entry(e: dict, recipe_conc=None, recipe_batch=None) -> str | None:
    if not all(_states_layout(e[k]) for k in ("prefill", "decode") if k in e) or (
        "decode" not in e and not _states_layout(e)
    ):
        return None
    mtp = str(e.get("spec-decoding", "none")).lower() == "mtp"
    concs = _concs(e)
    inline = _inline_decode_limits(e) if "decode" in e and "CONFIG_FILE=" not in str(e) else None
    if inline is not None:  # Dynamo's bench.sh runs each conc-list value times the decode workers (module docstring)
        concs = [c * int(e["decode"].get("num-worker", 1)) for c in concs]
    m = re.search(r"CONFIG_FILE=(recipes/[^'\"\]\s,]+\.yaml)", str(e))  # any srt-slurm recipe
    if recipe_conc is not None and "decode" in e and m:
        concs = recipe_conc(m.group(1)) or concs  # the recipe's benchmark ran these (module docstring)
    conc = ", ".join(str(c) for c in concs)
    if "decode" in e and int(e["decode"].get("num-worker", 1)) == 0:  # "Aggregated mode": one worker does both
        return f"  {{ agg = {_pool(e['prefill'], False)}, mtp = {str(mtp).lower()}, conc = [{conc}] }},"
    if "decode" in e:
        # TensorRT-LLM srt-slurm recipe names (CONFIG_FILE=...ctx<P>_gen<D>_dep<N>_batch<B>_eplb<S>_mtp<K>.yaml)
        # state the decode workers' max_batch_size B (per attention-DP rank) and the draft length K; where the
        # recipe the runners ran is read (recipe_batch), the max_batch_size its decode section sets wins: 9 of
        # the 328 named TensorRT-LLM recipes at NVIDIA/srt-slurm @5063eb43 set another value than their name
        # (b200-fp4/8k1k/stp/ctx1_gen5_tep8_batch8_eplb0_mtp0.yaml: decode max_batch_size 16)
        # (the Kimi K2.5 recipes of 2026-04 add "_allconc": one recipe for all the entry's concurrencies)
        m = re.search(r"_batch(\d+)(?:_allconc)?_eplb\d+_mtp(\d+)", str(e))
        cf = re.search(r"CONFIG_FILE=(recipes/[^'\"\]\s,]+\.yaml)", str(e))
        batch = m and ((recipe_batch(cf.group(1)) if recipe_batch is not None and cf else None) or int(m.group(1)))
        named = f", max_batch = {batch}, mtp_draft = {m.group(2)}" if m else ""
        if (
            not m
            and cf
            and cf.group(1).startswith("recipes/vllm/")
            and recipe_batch is not None
            and (read := recipe_batch(cf.group(1))) is not None
        ):
            named = f", max_batch = {read}, mtp_draft = 0"  # a vLLM recipe: its decode max-num-seqs, no drafting
        elif not m and inline is not None:
            named = f", max_batch = {inline[0]}, mtp_draft = {inline[1]}"
        return (
            f"  {{ prefill = {_pool(e['prefill'], True)}, decode = {_pool(e['decode'], True)}, "
            f"mtp = {str(mtp).lower()}{named}, conc = [{conc}] }},"
        )
    return f"  {{ agg = {_pool(e, False)}, mtp = {str(mtp).lower()}, conc = [{conc}] }},"


def main(repo: str, dates: list[str], srt_slurm: str | None = None) -> None:
    try:
        import yaml
    except ModuleNotFoundError:
        sys.exit('PyYAML is not installed: pip install -e ".[explore]" (Ray brings it) or pip install pyyaml')
    out = [
        "# InferenceX benchmark search spaces (SemiAnalysisAI/InferenceX .github/configs/*-master.yaml at the",
        "# commit named per space, the last one on or before each date), generated by",
        "# scripts/inferencex_search_space.py; read by fit/searched.py. Do not edit by hand: rerun the script.",
        "# Layouts: dp-attn true -> tp 1, dp = tp (attention data-parallel); workers = num-worker.",
        "# conc = the concurrencies the entry ran (conc-list, or conc-start x2 .. conc-end; an srt-slurm",
        "# recipe's benchmark.concurrencies where the runners ran it unchanged, scripts/inferencex_search_space.py);",
        "# max_batch, mtp_draft:",
        "# the decode max_batch_size (per attention-DP rank) and draft length its TRT-LLM recipe's file name states",
        "# (max_batch: the decode max_batch_size the recipe itself sets where the runners ran it unchanged;",
        "# a 2025 entry's inline DECODE_MAX_BATCH_SIZE / DECODE_MTP_SIZE, its conc-list then counted x decode workers;",
        "# a vLLM recipe's decode max-num-seqs).",
    ]
    seen: dict[tuple, list[str]] = {}
    for date in dates:
        commit = _git(repo, "rev-list", "-1", f"--before={date}T23:59:59Z", "HEAD").strip()
        cdate = _git(repo, "log", "-1", "--format=%cs", commit).strip()
        recipe_conc = recipe_batch = vllm_batch = None
        if srt_slurm and SRT_SLURM_Q2_WINDOW[0] <= cdate < SRT_SLURM_Q2_WINDOW[1]:

            def vllm_batch(path: str) -> int | None:
                try:
                    return recipe_decode_max_batch(_git(srt_slurm, "show", f"{SRT_SLURM_Q2_COMMIT}:{path}"))
                except subprocess.CalledProcessError:
                    return None

        if srt_slurm and SRT_SLURM_WINDOW[0] <= cdate < SRT_SLURM_WINDOW[1]:

            def recipe_conc(path: str) -> list[int] | None:
                try:
                    return recipe_concurrencies(_git(srt_slurm, "show", f"{SRT_SLURM_COMMIT}:{path}"))
                except subprocess.CalledProcessError:
                    return None

            def recipe_batch(path: str) -> int | None:
                try:
                    return recipe_decode_max_batch(_git(srt_slurm, "show", f"{SRT_SLURM_COMMIT}:{path}"))
                except subprocess.CalledProcessError:
                    return None

        for f in FILES:
            try:
                cfg = yaml.safe_load(_git(repo, "show", f"{commit}:{f}"))
            except subprocess.CalledProcessError:
                continue
            for key, c in sorted(cfg.items()):
                model = MODELS.get(c.get("model-prefix", key.split("-")[0]))
                system = RUNNERS.get(str(c.get("runner", "")).split("-")[0])  # b200-trt, b200-multinode, mi355x-disagg
                if not model or not system:
                    continue
                by_len: dict[tuple, list[str]] = {}  # a key may list one ISL/OSL in several sections
                for s in c.get("seq-len-configs", []):
                    vllm = c.get("framework") == "dynamo-vllm"
                    by_len.setdefault((key, int(s["isl"]), int(s["osl"])), []).extend(
                        _entry(e, None if vllm else recipe_conc, vllm_batch if vllm else recipe_batch)
                        for e in s.get("search-space", [])
                    )
                for k, all_lines in by_len.items():
                    lines = [x for x in all_lines if x is not None]
                    if not lines or seen.get(k) == lines:
                        continue
                    seen[k] = lines
                    src = f'source = "SemiAnalysisAI/InferenceX {f} @{commit[:12]} ({cdate})'
                    named = {
                        m
                        for s_ in c.get("seq-len-configs", [])
                        for e in s_.get("search-space", [])
                        for m in re.findall(r"CONFIG_FILE=recipes/(\w+)", str(e))
                    }
                    if recipe_conc is not None and named:
                        kind = "TRT-LLM" if named == {"trtllm"} else "srt-slurm"
                        src += f"; concurrencies of its {kind} recipes, NVIDIA/srt-slurm @{SRT_SLURM_COMMIT}"
                    out += [
                        "",
                        "[[space]]",
                        f'key = "{key}"',
                        f'system = "{system}"',
                        f'model = "{model}"',
                        f'precision = "{c["precision"]}"',
                        f'framework = "{c["framework"]}"',
                        f"disagg = {str(bool(c.get('disagg', False))).lower()}",
                        f"isl = {k[1]}",
                        f"osl = {k[2]}",
                        f'date = "{cdate}"',
                        src + '"',
                        *(
                            [f"# {len(all_lines) - len(lines)} entries left out: their fields do not state the layout"]
                            if len(lines) < len(all_lines)
                            else []
                        ),
                        "entries = [",
                        *lines,
                        "]",
                    ]
    OUT.write_text("\n".join(out) + "\n")
    print(f"wrote {OUT} ({len(seen)} spaces)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(
        description="Write data/validation/inferencex_search.toml from InferenceX's "
        "config files at the commits in force on the given dates."
    )
    ap.add_argument("repo", metavar="INFERENCEX_REPO", help="a clone of SemiAnalysisAI/InferenceX")
    ap.add_argument("dates", metavar="DATE", nargs="+", help="dates (YYYY-MM-DD) whose commits to read")
    ap.add_argument(
        "--srt-slurm",
        metavar="SRT_SLURM_REPO",
        help="a clone of NVIDIA/srt-slurm: srt-slurm recipe entries take their recipe's concurrencies",
    )
    a = ap.parse_args()
    main(a.repo, a.dates, a.srt_slurm)
