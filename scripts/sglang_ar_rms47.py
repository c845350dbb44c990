"""What-if (not shipped): SGLang's default FlashInfer all-reduce + residual add + RMSNorm fusion switched on for the
``sglang`` profile, with or without the stack refit it needs (issue 18, round 47, sglbatch47; docs/gap_aic_itl.md
"round 47, sglbatch47").

SGLang auto-enables ``enable_flashinfer_allreduce_fusion`` for DeepSeek-V3/R1, Kimi K2.5, gpt-oss and Qwen3-MoE on
SM90 / SM100 at TP > 1 without attention DP (sgl-project/sglang PR #14764, December 2025) and fuses every step of at
most 2,048 tokens (``FUSE_ALLREDUCE_MAX_BATCH_SIZE``). The ``sglang`` profile states it (data/stacks.toml
``allreduce_rms_fusion = true``, ``allreduce_rms_rule = "sglang"``; cost/allreduce_rms.py prices it), read only while
specs/stacks.SGLANG_AR_RMS_ON, shipped off. This script sets that switch in-process and runs a command:

    python scripts/sglang_ar_rms47.py fit FITS.toml          # the stack refit (scripts/fit_stacks.py), ~5 min
    python scripts/sglang_ar_rms47.py [--fits FITS.toml] validate --held-out --json -o X.csv > X.json
    python scripts/sglang_ar_rms47.py [--fits FITS.toml] steps   # the H200 / B200 DeepSeek-R1 TP8 decode saving

``--fits``: price with the fitted stack values of FITS.toml instead of data/stack_fits.toml. ``steps`` prints the
model's TPOT (ms) of ``predict`` on H200 and B200 (DeepSeek-R1 FP8, TP8 EP1, 1k/1k and 8k/1k) at C = 4 … 64 with the
switch off and on, and their difference: a level that grows slowly with the batch (the two add + RMSNorm kernels
a layer and their activation bytes), not the batch shape of the H200 / MI325X misses.
"""

from __future__ import annotations

import sys
import tomllib


def _switch(on: bool, fits_path: str | None) -> None:
    from jalapeno.specs import stacks

    stacks.SGLANG_AR_RMS_ON = on
    stacks.load_stacks.cache_clear()
    if fits_path:
        with open(fits_path, "rb") as f:
            fits = tomllib.load(f).get("fits", {})
        built = stacks.build_stacks(fits)
        stacks.load_stacks = lambda with_fits=True: built if with_fits else stacks.build_stacks({})


def _tpot_ms(system: str, isl: int, c: int) -> float:
    """The model's TPOT (ms) of DeepSeek-R1 FP8 at attention TP8, MoE TP8 EP1 under the ``sglang`` profile
    (``jalapeno predict --json``, run in-process)."""
    import contextlib
    import io
    import json

    from jalapeno.cli.app import main as cli

    out = io.StringIO()
    sys.argv = [
        "jalapeno",
        "predict",
        "-s",
        system,
        "-m",
        "deepseek-r1",
        "-p",
        "fp8",
        "--isl",
        str(isl),
        "--osl",
        "1024",
        "-c",
        str(c),
        "--tp",
        "8",
        "--ep",
        "1",
        "--stack",
        "sglang",
        "--json",
    ]
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        cli()
    return 1e3 * json.loads(out.getvalue())["tpot_s"]


def steps(fits_path: str | None) -> None:
    """Print the TPOT with the fusion off and on (module docstring)."""
    cs = (4, 8, 16, 32, 64)
    for system in ("h200", "b200"):
        for isl in (1024, 8192):
            rows = []
            for on in (False, True):
                _switch(on, fits_path)
                rows.append([_tpot_ms(system, isl, c) for c in cs])
            diff = " ".join(f"{b - a:+.2f}" for a, b in zip(*rows))
            print(
                f"{system} {isl // 1024}k/1k  off {' '.join(f'{v:.2f}' for v in rows[0])}  "
                f"on {' '.join(f'{v:.2f}' for v in rows[1])}  on - off {diff}  (C = {', '.join(map(str, cs))})"
            )


def main(argv: list[str]) -> None:
    fits_path = None
    if argv[:1] == ["--fits"]:
        fits_path, argv = argv[1], argv[2:]
    if argv[:1] == ["steps"]:
        steps(fits_path)
        return
    _switch(True, fits_path)
    if argv[:1] == ["fit"]:
        import runpy
        from pathlib import Path

        from jalapeno.fit.stack_fit import fit_all

        to_toml = runpy.run_path(str(Path(__file__).with_name("fit_stacks.py")))["to_toml"]
        Path(argv[1]).write_text(to_toml(fit_all()))
        print(f"wrote {argv[1]} (SGLang all-reduce + RMSNorm fusion on)")
        return
    from jalapeno.cli.app import main as cli

    sys.argv = ["jalapeno", *argv]
    cli()


if __name__ == "__main__":
    main(sys.argv[1:])
