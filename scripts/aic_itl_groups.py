"""Print the facts docs/gap_aic_itl.md reads on aiconfigurator's two worst interactivity groups.

1. B300 DeepSeek-R1 aggregated (SGLang 0.5.10.post1): each B300 row beside the B200 SGLang row of the
   same precision, layout (aiconfigurator's tp / dp / moe_tp / moe_ep fields), ISL/OSL and concurrency,
   measured TTFT and TPOT of both, with the image each row records.
2. The same B300 rows against the model: per layout and ISL, the least-squares slope of TPOT over
   concurrency (measured and model) and the measured-minus-model TTFT at concurrency 4.
3. H200 Qwen3-235B-A22B-FP8 aggregated: the vLLM 0.12.0 and SGLang 0.5.6.post2 rows of the same
   collection, median measured TPOT per engine and layout.

Reads aiconfigurator-core's ``systems/silicon_sample.csv`` (pip install -e ".[calibrate]") and runs the
model's prediction of those rows (fit/validate.predict_points). Nothing is fitted or written.
Run: python scripts/aic_itl_groups.py (about a minute)
"""

from __future__ import annotations

from importlib.resources import files

import numpy as np
import pandas as pd

from jalapeno.fit.validate import load_aiconfigurator, predict_points

KEY = ["precision", "tp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size", "isl", "osl", "batch_size"]


def _image(source: str) -> str:
    parts = [p.strip() for p in str(source).split(";")]
    return next((p.removeprefix("image=") for p in parts if "sglang:" in p), "?")


def b300_beside_b200(frame: pd.DataFrame) -> None:
    dsr1 = frame[
        frame.model_path.astype(str).str.contains("DeepSeek") & (frame["mode"] == "agg") & (frame.backend == "sglang")
    ]
    b300 = dsr1[dsr1.system == "b300_sxm"].copy()
    b200 = dsr1[dsr1.system == "b200_sxm"].drop_duplicates(KEY)
    both = b300.merge(b200, on=KEY, suffixes=("_b300", "_b200"))
    both["image_b300"] = both.silicon_data_source_b300.map(_image)
    both["image_b200"] = both.silicon_data_source_b200.map(_image)
    cols = KEY + [
        "silicon_tpot_ms_b200",
        "silicon_tpot_ms_b300",
        "silicon_ttft_ms_b200",
        "silicon_ttft_ms_b300",
        "image_b200",
        "image_b300",
    ]
    print(f"== B300 rows beside the B200 row of the same layout and load ({len(both)} of {len(b300)} B300 rows)")
    print(both[cols].sort_values(KEY).round(2).to_string(index=False))
    r = both.silicon_tpot_ms_b300 / both.silicon_tpot_ms_b200
    print(f"B300 / B200 measured TPOT: median {r.median():.2f}x, range {r.min():.2f}-{r.max():.2f}x")


def b300_against_model() -> None:
    pts = [p for p in load_aiconfigurator()[0] if p.system == "b300" and p.model == "deepseek-r1"]
    got = predict_points(pts)
    tpot, ttft = got[got.metric == "tpot_s"], got[got.metric == "ttft_s"]
    print("\n== B300 DeepSeek-R1: TPOT slope over concurrency (ms per sequence) and TTFT at concurrency 4 (s)")
    for (prec, dep, isl), s in tpot.groupby(["precision", "deployment", "isl"]):
        if s.concurrency.nunique() < 2:
            continue
        bm, bp = (np.polyfit(s.concurrency, s[c], 1)[0] * 1e3 for c in ("measured", "predicted"))
        t4 = ttft[(ttft.deployment == dep) & (ttft.isl == isl) & (ttft.concurrency == 4)]
        t4s = f"TTFT@4 measured {t4.measured.iloc[0]:.2f} model {t4.predicted.iloc[0]:.2f}" if len(t4) else ""
        print(
            f"{prec} {dep} ISL {isl}: slope measured {bm:.2f} model {bp:.2f} "
            f"(excess x 1023 tokens = {(bm - bp) * 1.023:.2f} s); {t4s}"
        )


def h200_qwen3(frame: pd.DataFrame) -> None:
    q = frame[
        frame.model_path.astype(str).str.contains("Qwen3-235B")
        & (frame["mode"] == "agg")
        & (frame.system == "h200_sxm")
    ]
    print("\n== H200 Qwen3-235B-A22B-FP8 aggregated: measured TPOT (ms) by engine and layout")
    print(
        q.groupby(
            ["backend", "backend_version", "tp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size"], dropna=False
        )
        .agg(
            n=("id", "size"),
            batch=("batch_size", "median"),
            isl=("isl", "median"),
            tpot_median=("silicon_tpot_ms", "median"),
            tpot_min=("silicon_tpot_ms", "min"),
            tpot_max=("silicon_tpot_ms", "max"),
        )
        .to_string()
    )
    print("collections:", sorted({str(s).split(";")[0] for s in q.silicon_data_source}))


def main() -> None:
    frame = pd.read_csv(files("aiconfigurator_core") / "systems" / "silicon_sample.csv", low_memory=False)
    b300_beside_b200(frame)
    b300_against_model()
    h200_qwen3(frame)


if __name__ == "__main__":
    main()
