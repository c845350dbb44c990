"""SGLang B200 DeepSeek-R1 aggregated TTFT: the cold rows split by whether the first wave is chunked.

docs/gap_aic_ttft.md, "The cold SGLang FP4 rows and the chunked-prefill boundary (round 25, sglcold25)".

A row's first wave is the C prompts the closed-loop client sends at once. Their lengths are uniform in
[0.8 L, L] (InferenceX ``--random-range-ratio 0.8``), so their total lies in [0.8 C L, C L] tokens.
SGLang admits at most ``--chunked-prefill-size`` prompt tokens a step and splits the prompt that
crosses it (``--chunked-prefill-size`` of the sweep's launch script, ``CHUNK`` below), so:

- ``never``: C L <= chunk — no prompt of the first wave is ever split;
- ``always``: 0.8 C L > chunk — some prompt of the first wave is always split, and its second part
  runs with a prefix (SGLang 0.5.5 ``handle_attention_trtllm_mla`` → ``MHA_CHUNKED_KV``, whose
  ``_chunked_prefix_attn_mha`` reads the prefix's latent cache back and attends to it);
- ``maybe``: in between (no row of these sweeps falls there).

For each (warm-up, precision, class) group the script prints n, the median measured − predicted
TTFT (s) and the first-wave stall S that excess would be under effect (10) of docs/model.md §8.7
(S = R × excess, R = serve/queueing.REQUESTS_PER_USER prompts per user: a stall met by the C requests
of the first wave adds S/R to the run's mean). Nothing is fitted.

Run: python scripts/sgl_cold_chunk_split.py VALIDATE.csv   (``jalapeno validate -o VALIDATE.csv``)
"""

from __future__ import annotations

import sys
from importlib.resources import files

import pandas as pd

from jalapeno.fit.aic_sweeps import measured_date
from jalapeno.fit.client_warmup import WARMUP_FROM  # InferenceX PR #480: rows measured before it ran cold
from jalapeno.serve.queueing import REQUESTS_PER_USER

#: --chunked-prefill-size of the launch script each group ran, tokens (SemiAnalysisAI/InferenceX):
#: fp4: benchmarks/dsr1_fp4_b200_docker.sh @e06929c70 and @d8fe8f73e (cold, 2025-11), and
#: benchmarks/single_node/dsr1_fp4_b200.sh @12ba0ae07 (warm, v0.5.9): 16384;
#: fp8: benchmarks/dsr1_fp8_b200_docker.sh @d8fe8f73e / @189ae51cc (cold, 2025-11; with
#: --max-prefill-tokens 32768) and dsr1_fp8_b200.sh @12ba0ae07 at TP8 (warm): 32768 (TP4: 8192).
CHUNK = {("fp4", 4): 16384, ("fp4", 8): 16384, ("fp8", 8): 32768, ("fp8", 4): 8192}
#: InferenceX's length range: prompts uniform in [RANGE_RATIO · L, L]
RANGE_RATIO = 0.8


def chunk_class(conc: float, isl: int, chunk: int) -> str:
    """'never' / 'maybe' / 'always': whether the first wave's prompts overrun one step's chunk.

    >>> chunk_class(16, 1024, 16384), chunk_class(32, 1024, 16384), chunk_class(4, 8192, 32768)
    ('never', 'always', 'never')
    """
    if conc * isl <= chunk:
        return "never"
    return "always" if RANGE_RATIO * conc * isl > chunk else "maybe"


def rows(validate_csv: str) -> pd.DataFrame:
    """The unflagged SGLang B200 DeepSeek-R1 aggregated TTFT rows of aiconfigurator with their
    measured date, warm-up, tensor-parallel size and chunk class."""
    v = pd.read_csv(validate_csv)
    v = v[
        (v.source == "aiconfigurator")
        & (v.metric == "ttft_s")
        & (v.system == "b200")
        & (v.model == "deepseek-r1")
        & (v["mode"] == "agg")
        & v["stack"].str.startswith("sglang")
        & v.quality.isna()
    ]
    raw = pd.read_csv(files("aiconfigurator_core") / "systems" / "silicon_sample.csv")
    date = {f"aic:{r.id}": measured_date(str(r.silicon_data_source)) for r in raw.itertuples()}
    v = v.assign(date=v.id.map(date))
    v = v.assign(warm=v.date >= WARMUP_FROM, tp=v.deployment.str.extract(r"attn TP(\d+)")[0].astype(int))
    cls = [chunk_class(r.concurrency, r.isl, CHUNK[(r.precision, r.tp)]) for r in v.itertuples()]
    return v.assign(chunked=cls, excess_s=v.measured - v.predicted)


def table(v: pd.DataFrame) -> pd.DataFrame:
    """n, median |error|, median error, median excess (s) and S = R × excess (s) per group."""
    g = v.groupby(["warm", "precision", "chunked"])
    out = g.agg(
        n=("error", "size"),
        med_abs=("error", lambda e: e.abs().median()),
        bias=("error", "median"),
        excess_s=("excess_s", "median"),
        excess_lo=("excess_s", "min"),
        excess_hi=("excess_s", "max"),
    )
    return out.assign(stall_s=REQUESTS_PER_USER * out.excess_s)


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        sys.exit("usage: python scripts/sgl_cold_chunk_split.py VALIDATE.csv")
    v = rows(argv[0])
    pd.set_option("display.width", 200)
    print(table(v).round(3).to_string())
    cold = v[~v.warm].sort_values(["precision", "isl", "osl", "tp", "concurrency"])
    print(
        cold[["date", "precision", "isl", "osl", "tp", "concurrency", "chunked", "measured", "predicted", "excess_s"]]
        .round(3)
        .to_string(index=False)
    )


if __name__ == "__main__":
    main(sys.argv[1:])
