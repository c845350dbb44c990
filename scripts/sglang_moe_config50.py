"""Which Triton fused-MoE configuration SGLang's H200 DeepSeek-R1 FP8 TP8 decode runs, release by release, against
the configuration aiconfigurator's H200 SGLang kernel tables measured (issue 18, round 50, h200int50;
docs/gap_aic_itl.md "round 50, h200int50"). Diagnosis: nothing is fitted, priced or written into the package.

Run: python scripts/sglang_moe_config50.py [--wheel SGLANG_WHEEL ...] [--aic-repo AIC_CHECKOUT]

Part 1 (``--wheel``, repeatable: PyPI ``sglang`` wheels, ``pip download --no-deps sglang==V``). SGLang picks the
fused-MoE kernel configuration from a JSON file named by the local expert count E, the expert intermediate slice N,
the device and the dtype (``fused_moe_triton_config.get_moe_configs``): first in ``configs/triton_<running Triton>``,
then (to 0.5.9) the fixed list 3.4.0, 3.3.1, 3.2.0, 3.1.0, or (0.5.14) every ``triton_*`` folder newest first
(:func:`resolve_config`; :data:`FALLBACK`); the batch's row count M picks the file's nearest key. DeepSeek-R1 at MoE
TP8 EP1 has N = 2048 / 8 = 256; SGLang fuses the shared expert on Hopper (models/deepseek_v2.py
``determine_num_fused_shared_experts``; round 42), so the served engine loads E = 257, while a collector that builds
the 256 routed experts alone loads E = 256. From 0.5.9 a Hopper FP8 step swaps A and B in ``tl.dot`` when
BLOCK_SIZE_M < 64 and BLOCK_SIZE_N >= 64 (``should_enable_swap_ab``, sgl-project/sglang PRs #15712 and #17965;
:func:`swap_ab`). Printed per release and E: the file loaded and, at M = 4 … 64, BLOCK_SIZE_M / N / K and SwapAB.

Part 2 (``--aic-repo``: a checkout of github.com/ai-dynamo/aiconfigurator, e.g. commit 095f58a51c4c, holding
``aic-core/src/aiconfigurator_core/systems/data/h200_sxm``). The H200 SGLang ``moe_perf`` rows at DeepSeek-R1's
shape (hidden 7168, intermediate 2048, 256 experts, top-8, MoE TP8 EP1, ``fp8_block``, ``sglang_fused_moe_triton``)
by release, ms per MoE layer at T = 4 … 64 tokens (``power_law_1.01`` and ``balanced``); the 0.5.12 folder's
``reuse.yaml`` (which release's rows stand for 0.5.12); and the effective HBM rate of the balanced rows once all
256 experts are touched (T >= 32: 256 × 3 × 7168 × 256 B = 1.409 GB a rank), beside H200's 4.8 TB/s.

Part 3 (``--aic-repo``). The H200 SGLang ``generation_mla_perf`` rows (kernel ``flash_attention``, BF16 KV,
16 heads a rank = TP8) by release: µs per layer at batch 4 … 64 and context 1,023 / 8,191.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import zipfile
from pathlib import Path

from jalapeno.errors import SpecError
from jalapeno.fit.kernel_tables import REPO_DATA, load_repo_table

#: the served shape: DeepSeek-R1 routed experts + the fused shared expert (257) and the routed ones alone (256),
#: expert intermediate 2048 / TP8 = 256, H200, FP8 W8A8 block [128, 128]
CONFIG_NAME = "E={e},N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json"
EXPERT_COUNTS = (256, 257)
#: rows per step (decode tokens) printed
ROWS = (4, 8, 16, 32, 64)
#: get_moe_configs' fallback before 0.5.14 (``supported_triton_versions``, newest first; 0.5.6.post2 and 0.5.9
#: alike); ``None``: every ``triton_*`` folder of the wheel, newest first (0.5.14)
FALLBACK: dict[str, tuple[str, ...] | None] = {"list": ("3.4.0", "3.3.1", "3.2.0", "3.1.0"), "discover": None}
#: the Triton each release runs (its wheel's torch pin: torch 2.9.1 ships Triton 3.5.1, torch 2.11.0 Triton 3.6.0)
#: and its fallback rule; SwapAB from 0.5.9 on every SM90 part (0.5.8 / 0.5.8.post1: H20 only; before: none)
RELEASES: dict[str, dict] = {
    "0.5.6.post2": {"triton": "3.5.1", "fallback": "list", "swap_ab": False},
    "0.5.7": {"triton": "3.5.1", "fallback": "list", "swap_ab": False},
    "0.5.9": {"triton": "3.5.1", "fallback": "list", "swap_ab": True},
    "0.5.12": {"triton": "3.6.0", "fallback": "discover", "swap_ab": True},
    "0.5.14": {"triton": "3.6.0", "fallback": "discover", "swap_ab": True},
}
#: DeepSeek-R1 routed expert weights a rank holds at MoE TP8 (FP8, bytes): gate + up + down of 256 experts
EXPERT_BYTES_TP8 = 256 * 3 * 7168 * 256
#: H200 HBM3e peak (bytes/s; NVIDIA H200 datasheet, 4.8 TB/s)
H200_HBM = 4.8e12


def _version(folder: str) -> tuple[int, ...]:
    return tuple(int(x) for x in folder.removeprefix("triton_").split("_"))


def resolve_config(folders: dict[str, set[str]], name: str, triton: str, fallback: str) -> str | None:
    """The ``triton_*`` folder whose file ``name`` SGLang's ``get_moe_configs`` loads, or None (its default config).

    Args:
        folders: folder name (``triton_3_5_1``) → the config file names in it.
        name: the JSON file name. triton: the running Triton (``3.5.1``). fallback: a key of :data:`FALLBACK`.
    """
    own = "triton_" + triton.replace(".", "_")
    if name in folders.get(own, ()):
        return own
    order = FALLBACK[fallback]
    tries = (
        ["triton_" + v.replace(".", "_") for v in order]
        if order is not None
        else sorted(folders, key=_version, reverse=True)
    )
    for f in tries:
        if f != own and name in folders.get(f, ()):
            return f
    return None


def nearest(config: dict[int, dict], m: int) -> dict:
    """The entry SGLang runs for M rows: the nearest key (``min(keys, key=|k − M|)``, the first on a tie)."""
    return config[min(config, key=lambda k: abs(k - m))]


def swap_ab(entry: dict) -> bool:
    """SGLang's SM90 SwapAB test (0.5.9+): BLOCK_SIZE_M < 64 and BLOCK_SIZE_N >= 64."""
    return entry["BLOCK_SIZE_M"] < 64 and entry["BLOCK_SIZE_N"] >= 64


def down_name(name: str) -> str:
    """The second GEMM's file name for a config file name (``..._down.json``; get_config_file_name ``down_moe``)."""
    return name.removesuffix(".json") + "_down.json"


def wheel_configs(path: str) -> dict[str, dict[str, dict]]:
    """folder → {file name → parsed JSON} of the H200 DeepSeek-R1 TP8 FP8 files in one sglang wheel."""
    wanted = {n for e in EXPERT_COUNTS for n in (CONFIG_NAME.format(e=e), down_name(CONFIG_NAME.format(e=e)))}
    out: dict[str, dict[str, dict]] = {}
    with zipfile.ZipFile(path) as z:
        for n in z.namelist():
            m = re.search(
                r"layers/moe/(?:fused_moe_triton|moe_runner/triton_utils)/configs/(triton_[0-9_]+)/([^/]+)$", n
            )
            if m:
                folder = out.setdefault(m.group(1), {})
                if m.group(2) in wanted:
                    folder[m.group(2)] = {int(k): v for k, v in json.loads(z.read(n)).items()}
    return out


def part1(wheels: list[str]) -> None:
    print("Part 1: the fused-MoE config file SGLang loads (H200, FP8 block, N = 256), by release and expert count")
    print(f"  {'release':<12} {'E':>9} {'file folder':<14} " + " ".join(f"M={m:<14}" for m in ROWS))
    for w in wheels:
        release = re.search(r"sglang-([0-9][^-]*)-", Path(w).name).group(1)
        rule = RELEASES.get(release)
        if rule is None:
            print(f"  {release}: not in RELEASES (Triton pin and fallback unread); skipped")
            continue
        cfg = wheel_configs(w)
        files = {f: set(v) for f, v in cfg.items()}
        for e in EXPERT_COUNTS:
            for gemm, name in (("", CONFIG_NAME.format(e=e)), (" down", down_name(CONFIG_NAME.format(e=e)))):
                folder = resolve_config(files, name, rule["triton"], rule["fallback"])
                if folder is None:
                    print(f"  {release:<12} {f'{e}{gemm}':>9} {'none' if gemm else 'default':<14}")
                    continue
                cells = []
                for m in ROWS:
                    c = nearest(cfg[folder][name], m)
                    flag = "swap" if rule["swap_ab"] and swap_ab(c) else "-"
                    cells.append(f"{c['BLOCK_SIZE_M']}/{c['BLOCK_SIZE_N']}/{c['BLOCK_SIZE_K']} {flag:<5}")
                print(f"  {release:<12} {f'{e}{gemm}':>9} {folder:<14} " + " ".join(f"{x:<16}" for x in cells))
    print(
        "  (cells BLOCK_SIZE_M/N/K, swap = SwapAB on; 'down': the second GEMM's own file, 'none': it runs the first's"
        " config)"
    )


def _moe_rows(repo: str, version: str):
    d = load_repo_table(repo, "h200_sxm", "moe", "moe_perf", "sglang", version)
    return d[
        (d.hidden_size == 7168)
        & (d.inter_size == 2048)
        & (d.num_experts == 256)
        & (d.topk == 8)
        & (d.moe_tp_size == 8)
        & (d.moe_ep_size == 1)
        & (d.moe_dtype == "fp8_block")
        & (d.kernel_source == "sglang_fused_moe_triton")
    ]


def _table_versions(repo: str, family: str) -> list[str]:
    base = Path(repo).joinpath(*REPO_DATA, "h200_sxm", family, "sglang")
    return sorted(
        (p.name for p in base.iterdir() if p.is_dir()), key=lambda v: tuple(int(x) for x in re.findall(r"\d+", v))
    )


def reuse_of(repo: str, family: str, version: str) -> dict[str, str]:
    """table → the release whose rows stand in, from a release folder's ``reuse.yaml`` ({} when it has none)."""
    f = Path(repo).joinpath(*REPO_DATA, "h200_sxm", family, "sglang", version, "reuse.yaml")
    if not f.is_file():
        return {}
    pairs = re.findall(r"table:\s*(\S+)\s*\n\s*from_version:\s*(\S+)", f.read_text())
    return dict(pairs)


def part2(repo: str) -> None:
    print("\nPart 2: aiconfigurator H200 SGLang moe_perf, DeepSeek-R1 TP8 EP1 fp8_block, ms per MoE layer")
    for v in _table_versions(repo, "moe"):
        reuse = reuse_of(repo, "moe", v)
        if "moe_perf" in reuse:
            print(f"  {v:<12} no rows of its own: reuse.yaml takes moe_perf from {reuse['moe_perf']}")
            continue
        try:
            q = _moe_rows(repo, v)
        except SpecError:  # a folder with no moe_perf (wide-EP tables only)
            continue
        if q.empty:
            print(f"  {v:<12} no DeepSeek-R1 TP8 EP1 fp8_block rows")
            continue
        for dist in ("power_law_1.01", "balanced"):
            s = q[q.distribution == dist].groupby("num_tokens").latency.mean()
            if s.empty:
                continue
            cells = " ".join(f"T={t}:{s.get(t, float('nan')):.3f}" for t in ROWS)
            rate = ""
            if dist == "balanced" and 32 in s.index:
                tb = EXPERT_BYTES_TP8 / (float(s[32]) * 1e-3) / 1e12
                rate = f"  all 256 experts at T=32: {tb:.2f} TB/s ({tb / (H200_HBM / 1e12):.2f}x HBM peak)"
            print(f"  {v:<12} {dist:<15} {cells}{rate}")


def part3(repo: str) -> None:
    print("\nPart 3: aiconfigurator H200 SGLang generation_mla_perf (flash_attention, BF16 KV, 16 heads), µs per layer")
    for v in _table_versions(repo, "mla"):
        reuse = reuse_of(repo, "mla", v)
        if "generation_mla_perf" in reuse:
            print(
                f"  {v:<12} no rows of its own: reuse.yaml takes generation_mla_perf from {reuse['generation_mla_perf']}"
            )
            continue
        try:
            d = load_repo_table(repo, "h200_sxm", "mla", "generation_mla_perf", "sglang", v)
        except SpecError:  # a folder with wide-EP tables only
            continue
        q = d[(d.kv_cache_dtype == "bfloat16") & (d.tp_size == 8) & (d.num_heads == 16)]
        if q.empty:  # some releases file the TP8 slice under the per-rank head count only
            q = d[(d.kv_cache_dtype == "bfloat16") & (d.tp_size == 8)]
        for step in (1023, 8191):
            s = q[q.step == step].groupby("batch_size").latency.mean()
            print(f"  {v:<12} ctx {step:<5} " + " ".join(f"B={b}:{1e3 * s.get(b, float('nan')):.1f}" for b in ROWS))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", action="append", default=[], help="an sglang wheel (repeatable)")
    ap.add_argument("--aic-repo", help="a checkout of github.com/ai-dynamo/aiconfigurator (e.g. @095f58a51c4c)")
    a = ap.parse_args(argv)
    if not a.wheel and not a.aic_repo:
        ap.error("give --wheel and/or --aic-repo")
    for w in a.wheel:
        if not zipfile.is_zipfile(w):
            ap.error(f"--wheel {w}: not a wheel (fetch one with: pip download --no-deps sglang==VERSION)")
    if a.aic_repo and not Path(a.aic_repo).joinpath(*REPO_DATA, "h200_sxm").is_dir():
        ap.error(
            f"--aic-repo {a.aic_repo}: no {'/'.join(REPO_DATA)}/h200_sxm in it (a checkout of "
            "github.com/ai-dynamo/aiconfigurator, e.g. commit 095f58a51c4c)"
        )
    if a.wheel:
        part1(a.wheel)
    if a.aic_repo:
        part2(a.aic_repo)
        part3(a.aic_repo)
    return 0


if __name__ == "__main__":
    sys.exit(main())
