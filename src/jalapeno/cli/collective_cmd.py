"""``jalapeno collective``: time, algorithm and effective bandwidth of one collective."""

from __future__ import annotations

import re

import numpy as np
import typer
from rich.table import Table

from jalapeno.cli.common import console, efficiency_option, list_items, print_json, stack_option
from jalapeno.cli.system_opts import SET_OPTION, system_pricer
from jalapeno.cost.collectives import COLLECTIVES
from jalapeno.errors import SpecError


def collective(
    system: str = typer.Option(..., "--system", "-s", help="System name or TOML path."),
    op: str = typer.Option("all_reduce", "--op", help=f"One of {', '.join(COLLECTIVES)}."),
    group: int = typer.Option(8, "--group", "-g", help="Chips in the group."),
    bytes_: str = typer.Option("1e6", "--bytes", "-b", help="Message bytes per chip; comma-separated for several."),
    placement: str = typer.Option("packed", "--placement", help="packed (contiguous) or spread (one per domain)."),
    efficiency: str = efficiency_option(),
    sets: list[str] = SET_OPTION,
    stack: str = stack_option(engine=False),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Price one collective on a system's link hierarchy (time, algorithm, bandwidths)."""
    pr = system_pricer(system, efficiency, sets, stack)
    s = pr.system
    items = list_items(bytes_, "--bytes", "1e6,1e8", numbers=True)
    try:
        sizes = np.array([float(v) for v in items])
    except ValueError:
        in_bytes = _unit_bytes(items)
        if in_bytes is not None:  # '64KB' was told only 'not a number': the number it means, in bytes
            raise SpecError(
                "--bytes",
                f"{bytes_!r} carries a unit: --bytes takes plain bytes",
                f"write --bytes {','.join(_plain(v) for v in in_bytes)} (KB/MB/GB = 1e3/1e6/1e9 bytes, "
                "KiB/MiB/GiB = 2^10/2^20/2^30)",
            ) from None
        raise SpecError(
            "--bytes", f"{bytes_!r} is not a number or list of numbers", "write e.g. --bytes 1e6,1e8"
        ) from None
    if sizes.size == 0:
        raise SpecError("--bytes", "no message size given", "write e.g. --bytes 1e6")
    if not np.all(np.isfinite(sizes)) or np.any(sizes < 0):
        raise SpecError("--bytes", f"message sizes must be finite and >= 0, got {bytes_!r}", "write e.g. --bytes 1e6")
    twice = next((v for i, v in enumerate(sizes) if v in sizes[:i]), None)
    if twice is not None:  # 1e6,1e6 printed the same row twice, where --at and --concurrency refuse a repeat
        raise SpecError("--bytes", f"{twice:g} is given twice", "list each size once, e.g. --bytes 1e6,1e8")
    frac = sizes[sizes != np.floor(sizes)]
    if frac.size:  # --bytes 0.5 priced half a byte per chip
        raise SpecError("--bytes", f"{frac[0]:g} is not a whole number of bytes", "write whole bytes, e.g. --bytes 1e6")
    cap = s.chip.hbm_capacity_bytes
    if np.any(sizes > cap):
        raise SpecError(
            "--bytes",
            f"{sizes.max():.3g} bytes per chip is more than {s.name}'s {cap / 2**30:.1f} GiB of "
            "HBM per chip (a collective's per-chip buffer lives in device memory)",
            f"give at most {cap:.3g} bytes, e.g. --bytes 1e9",
        )
    if group < 2:
        raise SpecError(
            "--group",
            f"must be >= 2, got {group} (one chip has no collective)",
            "give the number of chips in the group, e.g. --group 8",
        )
    if group > s.max_chips:  # the library's "group size" field, named as the option
        raise SpecError(
            "--group", f"{group} chips exceed {s.name}'s {s.max_chips}", f"give at most --group {s.max_chips}"
        )
    r = pr.collective(op, group, sizes, placement=placement)
    g = group
    factor = {
        "all_reduce": 2 * (g - 1) / g,
        "all_gather": (g - 1) / g,
        "reduce_scatter": (g - 1) / g,
        "all_to_all": (g - 1) / g,
        "send_recv": 1.0,
    }[op]
    rows = []
    for m, t, alg in zip(sizes, r.time_s, r.algorithm):
        alg_bw = m / t if t > 0 else float("nan")
        rows.append(
            {
                "bytes": float(m),
                "time_s": float(t),
                "algorithm": str(alg),
                "level": r.level,
                "scope": r.scope,
                "algbw_bytes_per_s": alg_bw,
                "busbw_bytes_per_s": alg_bw * factor,
            }
        )
    if json_out:
        print_json(
            {
                "system": s.name,
                "op": op,
                "group": group,
                "placement": placement,
                "efficiency_source": pr.efficiency.source,
                "results": rows,
            }
        )
        return
    t = Table(title=f"{op} over {group} chips on {s.name} ({placement}); bounded by level '{r.level}' ({r.scope})")
    for col in ("bytes", "time us", "algorithm", "algbw GB/s", "busbw GB/s"):
        t.add_column(col, justify="right")
    for row in rows:
        t.add_row(
            f"{row['bytes']:.3g}",
            f"{row['time_s'] * 1e6:.2f}",
            row["algorithm"],
            f"{row['algbw_bytes_per_s'] / 1e9:.1f}",
            f"{row['busbw_bytes_per_s'] / 1e9:.1f}",
        )
    console.print(t)


_SIZE = re.compile(r"([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKMGT]?)(i?)B", re.ASCII)


def _unit_bytes(items: list[str]) -> list[float] | None:
    """``items`` in bytes where each is a number or a number with a byte unit (B, KB/kB, MB, GB, TB: powers of
    1,000; KiB, MiB, GiB, TiB: powers of 1,024), else None (some item is neither).

    >>> _unit_bytes(["64KB", "1 MiB", "1e3"])
    [64000.0, 1048576.0, 1000.0]
    >>> _unit_bytes(["abc"]) is None
    True
    """
    out = []
    for item in items:
        try:
            out.append(float(item))
            continue
        except ValueError:
            pass
        m = _SIZE.fullmatch(item.strip())
        if m is None or (m[3] and not m[2]):  # 'iB' alone is no unit
            return None
        power = " KMGT".index(m[2].upper()) if m[2] else 0
        out.append(float(m[1]) * (1024 if m[3] else 1000) ** power)
    return out


def _plain(v: float) -> str:
    """A byte count as --bytes reads it back exactly: ``1e6`` where that is exact, else every digit.

    >>> _plain(1e6), _plain(1048576.0), _plain(64000.0), _plain(1.5e9)
    ('1e6', '1048576', '64000', '1.5e9')
    """
    short = f"{v:g}".replace("e+0", "e").replace("e+", "e")
    return short if float(short) == v else f"{v:.0f}"
