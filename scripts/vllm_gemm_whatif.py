"""What-if (not shipped): vLLM's per-tensor FP8 GEMMs on Hopper priced with the row-count shape of vLLM's own table.

Runs ``jalapeno <args>`` (e.g. ``validate --json -o FILE``) with every pool priced with the ``flash_attn``
attention backend (the aiconfigurator vLLM rows on H100/H200, fit/aic_row_engine.ROW_ATTENTION_BACKENDS) on the systems
of ``GEMM_SYS`` (comma-separated, default ``h200``) wrapped so that each GEMM op of per-tensor FP8 (kind ``gemm``,
key ``fp8``) has its compute and memory time multiplied by s(m), m = the op's rows at the point:

    r(m) = median over shapes with n·k >= 2^24 of latency_vLLM(m, n, k) / latency_TRT-LLM(m, n, k)
    s(m) = r(m) / median(r(m') for m' <= 16)          (GEMM_MODE=norm, default; GEMM_MODE=raw: s = r)

linear in m between the table's m, held at its ends; ``GEMM_MMAX``: s = 1 above that m (decode rows only).
Sources: aiconfigurator-core 0.12.0 ``systems/data/<chip>_sxm/gemm/vllm/0.24.0/gemm_perf.parquet``
(CutlassFP8ScaledMMLinearKernel) and ``.../gemm/trtllm/1.3.0rc20/gemm_perf.parquet`` (the H100/H200 sets'
calibration), ``gemm_dtype == "fp8"``, fastest row per (m, n, k). The normalisation is a named assumption: the
set prices vLLM's GEMMs right at m <= 16 (the raw table says vLLM's kernel is 16% faster there, which the
measured small-batch rows do not show), and vLLM departs from that by its own table's shape above 16 rows.
Figures: docs/gap_aic_itl.md, "vLLM's FP8 GEMM row-count dip as a what-if".
Run: GEMM_SYS=h200 python scripts/vllm_gemm_whatif.py validate --json -o FILE   (~30 s)
"""

import os
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from jalapeno.cost import pool_backends as PB
from jalapeno.cost import pricer as P
from jalapeno.cost.moe_backend import _WrapsPricer
from jalapeno.cost.roofline import OpTimes

MODE = os.environ.get("GEMM_MODE", "norm")
MMAX = float(os.environ.get("GEMM_MMAX", "inf"))


def ratio_curve(chip: str) -> tuple[np.ndarray, np.ndarray]:
    """(m, s(m)) of ``chip`` (``h200``) from the two aiconfigurator tables (module docstring)."""
    import aiconfigurator_core

    root = Path(aiconfigurator_core.__file__).parent / "systems" / "data" / f"{chip}_sxm" / "gemm"
    lat = {}
    for name, version in (("vllm", "0.24.0"), ("trtllm", "1.3.0rc20")):
        t = pd.read_parquet(root / name / version / "gemm_perf.parquet")
        lat[name] = t[t.gemm_dtype == "fp8"].groupby(["m", "n", "k"]).latency.min()
    j = pd.concat([lat["vllm"].rename("v"), lat["trtllm"].rename("t")], axis=1).dropna().reset_index()
    j = j[j.n * j.k >= 2**24]
    g = (j.v / j.t).groupby(j.m).median()
    ref = g[g.index <= 16].median() if MODE == "norm" else 1.0
    s = (g / ref).where(g.index <= MMAX, 1.0)
    return g.index.to_numpy(float), s.to_numpy()


@dataclass(frozen=True, slots=True)
class GemmRowPricer(_WrapsPricer):
    """The wrapped pricer with per-tensor FP8 GEMM ops scaled by s(rows) (module docstring)."""

    inner: object
    m: np.ndarray
    s: np.ndarray

    def op_times(self, ops):
        base = self.inner.op_times(ops)
        hit = [i for i, (k, key) in enumerate(zip(ops.kind, ops.keys)) if k == "gemm" and key == "fp8"]
        if not hit:
            return base
        c, mem = base.compute_s.copy(), base.memory_s.copy()
        for i in hit:
            f = np.interp(np.asarray(ops.rows[i], dtype=float), self.m, self.s)
            c[i], mem[i] = base.compute_s[i] * f, base.memory_s[i] * f
        return OpTimes.combine(c, mem, base.overhead_s, base.network_s)

    def with_efficiency(self, efficiency):
        return replace(self, inner=self.inner.with_efficiency(efficiency))


def main() -> None:
    curves = {c: ratio_curve(c) for c in os.environ.get("GEMM_SYS", "h200").split(",")}
    orig = PB.with_attention_backend  # with_pool_backends calls the one of its own module

    def patched(pricer, backend, kv_format=None):
        out, root = orig(pricer, backend, kv_format), P._root(pricer.system)
        return GemmRowPricer(out, *curves[root]) if backend == "flash_attn" and root in curves else out

    PB.with_attention_backend = patched
    from jalapeno.cli.app import main as cli

    cli()


if __name__ == "__main__":
    main()
