"""Are per-kernel floors the chip's or the engine's? The fitted floors of the six NVIDIA systems side by side.

Prints (1) TensorRT-LLM's Triton MoE per-layer floor on every system whose tables hold it
(data/moe_backend_floors.toml, fit/floor_transfer.py) with the chip's SM count (``compute_units``) and the
measured one-token latency at EP1 and EP8 (aiconfigurator ``moe_perf``, gpt-oss-120b's shape), and the pooled
floor each system would take left out (the median over the others but its twin); (2) the kernel floors each
calibration reports but the NVIDIA sets do not price (``kernel_floor_s`` of the GEMM formats, the MoE block, MLA
and GQA decode: data/calibration/<system>.toml ``[report.*]``), per system, to show which are the same within a
GPU generation.

Run: python scripts/floor_transfer_check.py   (seconds; needs the [calibrate] extra for part 1's latencies)
"""

from __future__ import annotations

import tomllib
from importlib import resources

from jalapeno.fit.floor_transfer import FLOOR_SOURCES
from jalapeno.fit.kernel_tables import AIC_SYSTEM_DIRS, load_table
from jalapeno.fit.loso import withheld_systems
from jalapeno.specs.catalog import load_system
from jalapeno.specs.moe_backends import _floors, pooled_backend_floor

#: gpt-oss-120b's routed-expert shape (hidden, expert intermediate) in the tables
SHAPE = (2880, 2880)
#: report paths of the calibrations' reported (unpriced) kernel floors
REPORTED = (
    ("gemm.formats.bf16", "GEMM bf16"),
    ("gemm.formats.fp8", "GEMM fp8"),
    ("gemm.formats.fp8_block", "GEMM fp8_block"),
    ("moe", "MoE block"),
    ("mla.decode.fp8", "MLA decode fp8"),
    ("attention.decode", "GQA decode"),
)


def _one_token_ms(name: str, framework: str, source: str, dtype: str, ep: int) -> float:
    df, _ = load_table(AIC_SYSTEM_DIRS[name], "moe", "moe_perf", backend=framework)
    d = df[
        (df.kernel_source == source)
        & (df.moe_dtype == dtype)
        & (df.num_tokens == 1)
        & (df.moe_ep_size == ep)
        & (df.hidden_size == SHAPE[0])
        & (df.inter_size == SHAPE[1])
    ]
    return float(d.latency.min()) if len(d) else float("nan")


def main() -> None:
    for backend, systems in FLOOR_SOURCES.items():
        fitted = {s: f for b, s, f in _floors() if b == backend}
        print(
            f"\n{backend}: | system | SMs | fitted floor µs | 1 token EP1 µs | 1 token EP8 µs | pooled if left out µs |"
        )
        for name, (framework, source, dtypes, _) in systems.items():
            dtype = next(iter(dtypes))
            pooled = pooled_backend_floor(backend, withheld_systems(name))
            print(
                f"| {name} | {load_system(name).chip.compute_units} | {fitted[name] * 1e6:.1f} | "
                f"{_one_token_ms(name, framework, source, dtype, 1) * 1e3:.1f} | "
                f"{_one_token_ms(name, framework, source, dtype, 8) * 1e3:.1f} | "
                f"{'-' if pooled is None else f'{pooled * 1e6:.1f}'} |"
            )
    print("\nreported (unpriced) kernel floors, µs: | system | " + " | ".join(lbl for _, lbl in REPORTED) + " |")
    for name in FLOOR_SOURCES["triton"]:
        rep = tomllib.loads((resources.files("jalapeno") / "data" / "calibration" / f"{name}.toml").read_text())[
            "report"
        ]
        cells = []
        for path, _ in REPORTED:
            node = rep
            for k in path.split("."):
                node = node.get(k, {}) if isinstance(node, dict) else {}
            v = node.get("kernel_floor_s") if isinstance(node, dict) else None
            cells.append("-" if v is None else f"{v * 1e6:.1f}")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
