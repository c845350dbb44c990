"""What-if (not shipped): validated points with generated-token routing skew, variants v1 and v2, with a stack refit.

``--routing generated`` (specs/routing.py) routes the prompt uniformly and the tokens decode generates (decode
rows, MTP drafts) with DeepSeek-R1's measured expert popularity, σ = 1.03 (TensorRT-LLM tech blog 4, Table 1:
DeepSeek-R1 EP32 decode, routed tokens per expert mean 128, std 164.1). This script prices every point of
``jalapeno validate`` / ``scripts/fit_stacks.py`` that way for the aux-loss-free MoE models (MoESpec.aux_loss_free:
DeepSeek-R1, Kimi K2.5, MiniMax-M2.5), which the shipped commands price uniformly. Two variants (ROUTING_VARIANT):

- ``v1`` the shipped ``generated`` mode: the skew lowers the distinct experts a step touches
  (cost/moe.mixed_touched_fraction) and raises the busiest EP rank's popularity share (cost/ops.py mixes
  deploy/eplb.busiest_rank_share of the two σ by the step's generated share φ);
- ``v2`` (default): the distinct experts touched as in v1, the busiest EP rank's share kept at the prompt's
  (uniform) σ. The reading behind it: with TP-sharded experts (EP 1) every rank reads a slice of each expert
  the step touches, so fewer distinct experts means fewer weight bytes; with EP the step waits for the busiest
  rank, whose extra share the skew measured at EP32 on natural text would add, and v2 does not credit that.

Nothing in src/ changes: the script wraps ``jalapeno.specs.catalog.load_model`` (fit/validate.predict_points
imports it at call time) and, for v2, ``jalapeno.cost.ops.busiest_rank_share`` (σ forced to 0; every MoE model
priced here has a uniform prompt, so that is the prompt's share). Run:

    python scripts/routing_generated_whatif.py fit FITS.toml          # the stack refit (scripts/fit_stacks.py), ~3 min
    python scripts/routing_generated_whatif.py [--fits FITS.toml] validate --json -o X.csv > X.json

``--fits``: price with the fitted stack values of FITS.toml instead of data/stack_fits.toml.
Figures: docs/gap_aic_itl.md, "InferenceX H200 / MI325X DeepSeek-R1 SGLang interactivity".
"""

from __future__ import annotations

import os
import sys
import tomllib

VARIANT = os.environ.get("ROUTING_VARIANT", "v2")


def _patch(fits_path: str | None) -> None:
    from jalapeno.cost import ops
    from jalapeno.specs import catalog, stacks
    from jalapeno.specs.routing import with_routing

    if VARIANT not in ("v1", "v2"):
        raise SystemExit(f"ROUTING_VARIANT: {VARIANT!r} is not v1 or v2")
    load = catalog.load_model

    def load_generated(name):
        m = load(name)
        return with_routing(m, "generated") if m.moe is not None and m.moe.aux_loss_free else m

    catalog.load_model = load_generated
    if VARIANT == "v2":
        share = ops.busiest_rank_share
        ops.busiest_rank_share = lambda experts, sigma, ep, redundant: share(experts, 0.0, ep, redundant)
    if fits_path:
        with open(fits_path, "rb") as f:
            fits = tomllib.load(f).get("fits", {})
        built = stacks.build_stacks(fits)
        stacks.load_stacks = lambda with_fits=True: built if with_fits else stacks.build_stacks({})


def main(argv: list[str]) -> None:
    fits_path = None
    if argv[:1] == ["--fits"]:
        fits_path, argv = argv[1], argv[2:]
    _patch(fits_path)
    if argv[:1] == ["fit"]:
        import runpy
        from pathlib import Path

        from jalapeno.fit.stack_fit import fit_all

        to_toml = runpy.run_path(str(Path(__file__).with_name("fit_stacks.py")))["to_toml"]
        Path(argv[1]).write_text(to_toml(fit_all()))
        print(f"wrote {argv[1]} (routing {VARIANT})")
        return
    from jalapeno.cli.app import main as cli

    sys.argv = ["jalapeno", *argv]
    cli()


if __name__ == "__main__":
    main(sys.argv[1:])
