"""Check the MLPerf datasets' reference output lengths against the runs' own outputs.

The v5.1 submissions' TEST06 compliance logs (``compliance/<system>/<benchmark>/<scenario>/TEST06/
accuracy/mlperf_log_accuracy.json`` of mlcommons/inference_results_v5.1) list, for a sample of
requests, the dataset index (``qsl_idx``) and the output token count the run produced
(``token_count``). Paired with the shipped dataset lengths (fit/mlperf.benchmark_spread, in dataset
order) they show how well the reference outputs stand in for the model's own: their correlation,
coefficients of variation and the decode context each gives. Prints; no prediction depends on it.

    python scripts/mlperf_test06_lengths.py PATH_TO_inference_results_v5.1_GIT_DIR
"""

from __future__ import annotations

import argparse
import json
import subprocess

import numpy as np

from jalapeno.fit.mlperf import benchmark_spread


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def run_outputs(repo: str, bench: str) -> dict[int, list[int]]:
    """qsl_idx -> the output token counts the TEST06 logs of ``bench`` report (every submission)."""
    out: dict[int, list[int]] = {}
    for path in _git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines():
        if f"/{bench}/" not in path or not path.endswith("TEST06/accuracy/mlperf_log_accuracy.json"):
            continue
        try:
            rows = json.loads(_git(repo, "show", f"HEAD:{path}"))
        except (subprocess.CalledProcessError, json.JSONDecodeError):
            continue  # a file the snapshot lacks, or a truncated log
        for r in rows:
            if "token_count" in r:
                out.setdefault(int(r["qsl_idx"]), []).append(int(r["token_count"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo", help="a clone of mlcommons/inference_results_v5.1 (bare or not)")
    repo = ap.parse_args().repo
    for bench in ("llama2-70b-99", "deepseek-r1"):
        runs = run_outputs(repo, bench)
        spread = benchmark_spread(bench)
        idx = np.array(sorted(runs))
        gen = np.array([np.mean(runs[i]) for i in idx])
        ref, isl = spread.osl_tokens[idx], spread.isl_tokens[idx]
        scaled = ref * gen.mean() / ref.mean()

        def ctx(o):
            return float(((o - 1) * (isl + o / 2)).sum() / (o - 1).sum())

        print(
            f"{bench}: {len(idx)} samples; run outputs mean {gen.mean():.0f}, CV {gen.std() / gen.mean():.2f}; "
            f"reference mean {ref.mean():.0f}, CV {ref.std() / ref.mean():.2f}; correlation "
            f"{np.corrcoef(gen, ref)[0, 1]:.2f}; decode context {ctx(gen):,.0f} (run) vs {ctx(scaled):,.0f} "
            "(reference scaled to the run's mean)"
        )


if __name__ == "__main__":
    main()
