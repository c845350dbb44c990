"""gpt-oss-120b vLLM on gfx942: the TP1 -> TP2 step scaling the InferenceX rows imply, against the model's.

InferenceX row 51 (MI325X, gpt-oss-120b MXFP4, vLLM 0.17.0, 1k/1k, C = 64, TP2 by the closed-loop
identity) is the AMD row furthest off on held-out data (interactivity -33%). Its like-for-like siblings
are the same publication's rows on MI300X (same image vllm/vllm-openai-rocm:v0.17.0 and launch script,
InferenceX PR #889, 2026-03-09; data/engines.toml recipe vllm-mi300x-gptoss-fp4): row 53 (MI300X, 1k/1k,
C = 64, TP1) and the 8k/1k pair rows 45 / 44 (MI300X / MI325X, both TP1).

The rows' TPOTs are split into a chip ratio and a TP ratio:

- chip ratio r = TPOT(45) / TPOT(44): the same TP1 run on both chips (8k/1k, C = 64);
- MI325X's TP1 1k/1k TPOT implied by it: T1 = TPOT(53) / r;
- TP ratio s = T1 / TPOT(51).

A step of the model's form at a fixed batch, T(TP) = F + V / TP + L(TP), with F >= 0 the per-step cost
that does not shrink with TP (host, launches, overhead-bound ops), V the work split over the ranks and
L(1) = 0 <= L(2) the TP2 collectives, gives T(1) - 2 T(2) = -F - 2 L(2) <= 0, i.e. s <= 2, and
F + 2 L(2) = 2 T(2) - T(1). The script prints that figure from the rows: where it is negative no
non-negative fixed cost and collective can meet both rows, whatever V is. It also prints the chip ratio
at which F + 2 L would be zero, and row 51's TPOT under the best case the form allows: the model's own
MI325X TP1 step (its MI300X TP1 TPOT over its own chip ratio) halved, F = L = 0, and the same with the
measured chip ratio in place of the model's. Nothing here is fitted and no prediction moves
(docs/model.md §12).

Run: python scripts/gfx942_tp_scaling.py
"""

from __future__ import annotations

from jalapeno.fit.validate import predict_points
from jalapeno.fit.ix_points import load_inferencex
from jalapeno.fit.validation_run import DEFAULT_POINTS, calibrated_systems

#: the four like-for-like rows: role -> InferenceX point id (data/validation/inferencex_points.csv line)
ROWS = {
    "mi325x_tp2_1k": "inferencex_points:51",
    "mi300x_tp1_1k": "inferencex_points:53",
    "mi325x_tp1_8k": "inferencex_points:44",
    "mi300x_tp1_8k": "inferencex_points:45",
}


def scaling(t_tp2_325: float, t_tp1_300: float, t8_325: float, t8_300: float) -> dict:
    """Chip ratio, implied MI325X TP1 TPOT, TP ratio and the fixed cost + 2 x collectives, seconds.

    Args:
        t_tp2_325: TPOT of the MI325X TP2 1k/1k row, s.
        t_tp1_300: TPOT of the MI300X TP1 1k/1k row, s.
        t8_325: TPOT of the MI325X TP1 8k/1k row, s.
        t8_300: TPOT of the MI300X TP1 8k/1k row, s.

    Returns:
        ``chip`` (MI300X / MI325X TPOT at TP1), ``t1`` (MI325X TP1 1k/1k TPOT implied, s), ``tp``
        (TP1 / TP2 TPOT on MI325X), ``f_plus_2l`` (2 T(2) - T(1), s: F + 2 L(2) under T = F + V/TP + L)
        and ``chip_at_zero`` (the chip ratio at which F + 2 L(2) = 0).
    """
    chip = t8_300 / t8_325
    t1 = t_tp1_300 / chip
    return {
        "chip": chip,
        "t1": t1,
        "tp": t1 / t_tp2_325,
        "f_plus_2l": 2.0 * t_tp2_325 - t1,
        "chip_at_zero": t_tp1_300 / (2.0 * t_tp2_325),
    }


def main() -> None:
    ix, _ = load_inferencex(DEFAULT_POINTS)
    want = set(ROWS.values())
    pts = [p for p in ix if p.id in want]
    df = predict_points(pts, calibrated_systems())
    tpot = df[df.metric == "tpot_s"].set_index("id")
    print("| row | system | ISL/OSL | layout | measured TPOT ms | model TPOT ms | error |")
    print("|---|---|---|---|---|---|---|")
    for role, pid in ROWS.items():
        r = tpot.loc[pid]
        print(
            f"| {pid.split(':')[1]} | {r.system} | {r.isl}/{r.osl} | {r.deployment} | "
            f"{r.measured * 1e3:.1f} | {r.predicted * 1e3:.1f} | {r.error:+.1%} |"
        )
    for col, label in (("measured", "measured"), ("predicted", "model")):
        v = {role: float(tpot.loc[pid, col]) for role, pid in ROWS.items()}
        s = scaling(v["mi325x_tp2_1k"], v["mi300x_tp1_1k"], v["mi325x_tp1_8k"], v["mi300x_tp1_8k"])
        if col == "predicted":
            meas = {role: float(tpot.loc[pid, "measured"]) for role, pid in ROWS.items()}
            m_chip = meas["mi300x_tp1_8k"] / meas["mi325x_tp1_8k"]
            t51 = meas["mi325x_tp2_1k"]
            best, best_m = s["t1"] / 2.0, v["mi300x_tp1_1k"] / m_chip / 2.0
            print(
                f"\nrow 51 at the form's best case (F = L = 0, the model's TP1 step halved): {best * 1e3:.1f} ms "
                f"({best / t51 - 1:+.1%} against {t51 * 1e3:.1f} ms); with the measured chip ratio "
                f"{m_chip:.3f}: {best_m * 1e3:.1f} ms ({best_m / t51 - 1:+.1%})"
            )
        print(
            f"\n{label}: chip ratio MI300X/MI325X {s['chip']:.3f}; MI325X TP1 1k/1k TPOT {s['t1'] * 1e3:.1f} ms; "
            f"TP1/TP2 {s['tp']:.3f}; F + 2 L(TP2) = 2 T(2) - T(1) = {s['f_plus_2l'] * 1e3:+.2f} ms; "
            f"chip ratio for F + 2 L = 0: {s['chip_at_zero']:.3f}"
        )


if __name__ == "__main__":
    main()
