"""Do the W4A16 expert tables support a width term or a large-load term? Held-out error with and without (kimi42).

data/w4a16_moe_forms.toml fits one roofline form per (chip, kernel) over every expert TP and every token count
(fit/w4a16_forms.py: no width term, no second ramp). Its held-out p90 is 31-47%. This script refits each form on the
same declared split (fit/kernels.fit_moe's ``tokens``: even powers of two of tokens fitted, odd ones held out) with

- ``width``: the width term of fit/moe_backend_width.fit_width_form (cost/moe_width.width_factor; its (c, p) with the
  peak fraction and half rows refitted, HBM fraction and floor held): the mechanism that fits vLLM's Marlin MoE on
  H100 / H200 / B200 (data/moe_backend_kernels.toml);
- ``stream2``: a second weight-stream regime, the stream time times k (fitted, with pf, half rows and HBM fraction;
  floor held) where the rows per expert exceed :data:`TILE_ROWS`: a hypothesis read off the tables (MXINT4's TP1 time
  doubles from 2.2 to 4.4 ms between 384 and 512 tokens on GB300, 8.0 → 10.7 rows per expert, and stays flat to
  6,144), with the threshold at trtllm-gen's smallest token tile (8 tokens per CTA, SGLang's / vLLM's
  ``_get_tile_tokens_dim``: "Cap to 8-64 tokens per CTA tile"); no source says the weights are re-read there;

and prints, per (chip, kernel), the held-out median / p90 absolute error of each form, overall and split at 384
tokens (the decode-sized rows and the prompt-sized ones).

Run: PYTHONPATH=src python scripts/w4a16_form_terms.py   (about a minute; needs the [calibrate] extra)
Figures: docs/model.md §11.3 "W4A16 experts on SM100-family chips".
"""

from __future__ import annotations

import math

import numpy as np

from jalapeno.fit.kernels import _ape, _sig, moe_rows, moe_times
from jalapeno.fit.moe_backend_width import fit_width_form, width_model_s
from jalapeno.fit.w4a16_forms import W4A16_DTYPES, W4A16_KERNELS, W4A16_SYSTEMS, _rows
from jalapeno.specs.catalog import load_system
from jalapeno.specs.w4a16_moe import w4a16_forms

#: rows per expert above which ``stream2`` prices a second stream regime (trtllm-gen's smallest token tile)
TILE_ROWS = 8.0
#: token count splitting the decode-sized rows from the prompt-sized ones in the printed errors
SPLIT_TOKENS = 384


def stream2_model_s(system, r, form: dict, k: float) -> np.ndarray:
    """Per-layer time (s) of ``r``'s rows under ``form`` with the weight stream times ``k`` above :data:`TILE_ROWS`
    rows per expert."""
    t = moe_times(system, r, "bf16", form["peak_fraction"], form["half_rows"], form["hbm_fraction"], form["floor_s"])
    rows = (r.load / np.maximum(r.touched, 1e-30)).to_numpy(float)
    mem = t.memory_s[0] * np.where(rows > TILE_ROWS, k, 1.0)
    return np.maximum(t.compute_s[0], mem) + t.overhead_s[0]


def fit_stream2(system, train, form: dict) -> tuple[dict, float]:
    """(form with pf, half rows and HBM fraction refitted, k) on ``train``; floor held; soft-L1 on log time as
    fit/kernels.fit_moe, the better of two starts."""
    from scipy.optimize import least_squares

    def trial(x) -> dict:
        return {**form, "peak_fraction": _sig(x[0]), "half_rows": math.exp(x[1]), "hbm_fraction": _sig(x[2])}

    def resid(x):
        return np.log(stream2_model_s(system, train, trial(x), math.exp(x[3])) / train.t.to_numpy())

    # two starts (k = 1 and 2): from k = 1 alone B200's and B300's fits stayed at the start (k 1.03)
    sols = [
        least_squares(resid, [0.0, math.log(form["half_rows"]), 0.5, math.log(k0)], loss="soft_l1", f_scale=0.2)
        for k0 in (1.0, 2.0)
    ]
    x = min(sols, key=lambda s: s.cost).x
    return trial(x), math.exp(x[3])


def _errs(pred, r) -> str:
    small = r.num_tokens.to_numpy() <= SPLIT_TOKENS
    parts = [_ape(pred, r.t), _ape(pred[small], r.t[small]), _ape(pred[~small], r.t[~small])]
    return " | ".join(f"{100 * e['median_ape']:.1f} / {100 * e['p90_ape']:.1f}" for e in parts)


def main() -> int:
    print("| kernel | chip | form | terms | held-out all: median / p90 % | ≤ 384 tokens | > 384 tokens |")
    print("|---|---|---|---|---|---|---|")
    for kernel in W4A16_KERNELS:
        for name in W4A16_SYSTEMS:
            system = load_system(name)
            d, _ = _rows(name, kernel)
            r = moe_rows(d, "balanced", W4A16_DTYPES)
            held = np.round(np.log2(r.num_tokens.to_numpy(float))).astype(int) % 2 == 1
            train, test = r[~held], r[held]
            form = dict(w4a16_forms()[(name, kernel)])
            base = moe_times(
                system, test, "bf16", form["peak_fraction"], form["half_rows"], form["hbm_fraction"], form["floor_s"]
            ).time_s[0]
            print(
                f"| {kernel} | {name} | shipped | pf {form['peak_fraction']:.3f}, half {form['half_rows']:.1f}, "
                f"HBM {form['hbm_fraction']:.3f} | {_errs(base, test)} |"
            )
            w = fit_width_form(system, r, "bf16", form)
            wf = {**form, "peak_fraction": w["peak_fraction"], "half_rows": w["half_rows"]}
            pw = width_model_s(system, test, "bf16", wf, w["c_elems"], w["exponent"])
            print(
                f"| | | width | pf {w['peak_fraction']:.3f}, half {w['half_rows']:.1f}, c {w['c_elems']:.0f}, "
                f"p {w['exponent']:.2f} | {_errs(pw, test)} |"
            )
            s2, k = fit_stream2(system, train, form)
            ps = stream2_model_s(system, test, s2, k)
            print(
                f"| | | stream2 | pf {s2['peak_fraction']:.3f}, half {s2['half_rows']:.1f}, "
                f"HBM {s2['hbm_fraction']:.3f}, k {k:.2f} | {_errs(ps, test)} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
