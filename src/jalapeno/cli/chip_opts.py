"""Options and output of the chip-internal model (``--chip-model``, ``--placement``, ``step --slices``)."""

from __future__ import annotations

import typer
from rich.table import Table

from jalapeno.cli.common import console, fmt_si
from jalapeno.errors import SpecError

CHIP_MODEL_HELP = (
    "flat (one roofline per chip, default), sliced (slices with local HBM joined by an on-die "
    "network) or tiled (GEMM efficiency from the tile mapping); docs/chip.md."
)
PLACEMENT_HELP = (
    "With --chip-model sliced: local_first, striped or best (default: the chip's own — striped on "
    "GPUs, local_first on Jalapeño)."
)


def chip_model_option(default: str | None = "flat") -> str:
    """``--chip-model``; ``default=None`` lets a command tell an explicit ``flat`` from the default."""
    return typer.Option(default, "--chip-model", help=CHIP_MODEL_HELP, show_default=default is not None)


def placement_option() -> str:
    """``--placement``: where the sliced chip keeps an op's weights and KV cache (local_first, striped or best;
    cost/sliced.py), "" = the chip's own (``die.placement``)."""
    return typer.Option("", "--placement", help=PLACEMENT_HELP)


def chip_model_line(pricers) -> str | None:
    """The line compare and frontier print under their tables when ``--chip-model`` is not flat (their
    figures moved with no word of it: 14,610 -> 13,368 tok/s/chip for Jalapeño on DeepSeek-R1 8K/1K):
    the model and, for sliced, each system's slices and the placement used."""
    from jalapeno.cost.sliced import SlicedPricer
    from jalapeno.cost.tiles import TiledPricer

    if any(isinstance(p, SlicedPricer) for p in pricers):
        parts = [
            f"{p.system.name} {p.die.slices} slice{'s' if p.die.slices != 1 else ''}, {p.placement_used}"
            for p in pricers
        ]
        return f"chip model: sliced ({'; '.join(parts)}); docs/chip.md"
    if any(isinstance(p, TiledPricer) for p in pricers):
        return "chip model: tiled (GEMM efficiency from the tile mapping); docs/chip.md"
    return None


def refuse_die_sets(pricers, command: str) -> None:
    """Refuse a ``die.*`` ``--set`` on a command that prices the flat chip only (``simulate``, ``plan``, ``report``):
    the flat chip never reads the on-die keys, so ``simulate --set die.link_bandwidth_tb_per_s=0.3`` gave the flat
    chip's figures with no word (slice53), where step, predict, frontier and compare refuse it under the flat chip
    model (cost/sliced.chip_model_pricer). ``pricers``: one pricer or a list (every system of the command).

    Raises:
        SpecError: naming the key and the commands that price the sliced chip.
    """
    prs = pricers if isinstance(pricers, (list, tuple)) else [pricers]
    for p in prs:
        origin = getattr(p.system, "origin", None)
        keys = [k for k, _ in getattr(origin, "overrides", ()) if k.startswith("die.")]
        if keys:
            raise SpecError(
                "--set",
                f"{keys[0]} changes only the sliced chip model, and {command} prices the flat chip (it has no "
                "--chip-model)",
                "drop the die.* override, or price the sliced chip with step, predict, frontier or compare "
                "--chip-model sliced (docs/chip.md)",
            )


def chip_model_pricers(pricers: list, chip_model: str, placement: str) -> tuple:
    """(system pricer, baseline pricer or None) of ``audit`` / ``sensitivity`` under ``--chip-model`` / ``--placement``
    (cost/sliced.chip_model_pricer; as step, compare and frontier take them): the audit's and sensitivity's what-ifs keep the pricer's kind
    (analysis/uncertain.apply), so the sliced chip reads the on-die ``die.*`` parameters the flat chip never does.

    Raises:
        SpecError: an unknown chip model, a placement without the sliced one or on chips of one slice, a ``die.*``
            ``--set`` under another chip model (named)."""
    from jalapeno.cost.sliced import chip_model_pricer, refuse_idle_placement

    out = [chip_model_pricer(p, chip_model, placement) for p in pricers]
    refuse_idle_placement(out, placement)
    return out[0], (out[1] if len(out) > 1 else None)


def chip_model_name(pricer) -> str:
    """The ``--chip-model`` that built ``pricer`` (cost/sliced.chip_model_pricer): ``sliced``, ``tiled`` or ``flat``."""
    from jalapeno.cost.sliced import SlicedPricer
    from jalapeno.cost.tiles import TiledPricer

    return "sliced" if isinstance(pricer, SlicedPricer) else "tiled" if isinstance(pricer, TiledPricer) else "flat"


def chip_model_json(pricers: list, parameters: list[str]) -> dict:
    """sensitivity's and audit's ``--json`` fields about the chip model (ux53: they took ``--chip-model`` since arch52,
    and their JSON did not say which priced them): ``chip_model`` (:func:`chip_model_name` of the system's pricer,
    ``pricers[0]``), ``placement`` (each system's placement under the sliced model, ``{}`` under another) and
    ``chip_model_notes`` (the lines the terminal prints under the table, :func:`chip_model_lines`)."""
    sliced = chip_model_name(pricers[0]) == "sliced"
    return {
        "chip_model": chip_model_name(pricers[0]),
        "placement": {p.system.name: p.placement_used for p in pricers} if sliced else {},
        "chip_model_notes": chip_model_lines(pricers, parameters),
    }


def chip_model_lines(pricers: list, parameters: list[str]) -> list[str]:
    """The lines under sensitivity's and audit's tables about the chip model: which one priced them where it is not
    flat (cli/chip_opts.chip_model_line), and under the flat one why the on-die ``die.*`` parameters read 0 / do not
    move (the flat chip never reads them: Jalapeño's die.link_bandwidth_tb_per_s 0.28-4.4 TB/s swung 0 with no word;
    newuser52). ``pricers``: the system's (and a baseline's); ``parameters``: the rows' keys."""
    from jalapeno.cost.sliced import SlicedPricer

    line = chip_model_line(pricers)
    die = [k for k in parameters if k.startswith("die.")]
    if die and not isinstance(pricers[0], SlicedPricer):
        kind = "tiled" if line else "flat"
        return ([line] if line else []) + [
            f"{', '.join(die)}: read by the sliced chip model only, so they do not move the metric under the {kind} one "
            f"(--chip-model {kind}{'' if line else ', the default'}); --chip-model sliced prices the on-die network "
            "they describe (docs/chip.md)"
        ]
    return [line] if line else []


def chip_model_band_lines(pricers, model: str) -> list[str]:
    """compare --bands under a sliced or tiled chip model: a line per measured system whose shipped band covers
    ``model`` but is dropped because validate measured the flat chip (analysis/measured_bands.band_of), so its
    figures, shown without a band, do not read as exact (analyst49: GB300 on DeepSeek-R1 lost 17,313 to 21,413
    tok/s/chip in silence)."""
    from jalapeno.analysis.measured_bands import load_measured_bands, validated_set

    lines = []
    for p in pricers:
        kind = type(p).__name__
        band = load_measured_bands().get(p.system.name)
        if (
            kind in ("SlicedPricer", "TiledPricer")
            and band is not None
            and model in band.models
            and validated_set(p.efficiency.source)
        ):
            lines.append(
                f"no band for {p.system.name} under the {kind[:-6].lower()} chip model: its measured error "
                f"band (validate's, on {', '.join(band.models)}) is the flat chip model's; "
                "--chip-model flat gives it"
            )
    return lines


def print_slices(summary: dict) -> None:
    """The per-slice table of ``jalapeno step --slices`` (cost/sliced.slice_summary)."""
    s = summary["slices"]
    net = (
        f"{summary['topology']} on-die network (port {fmt_si(summary['port_bandwidth_bytes_per_s'], 'B/s')}, "
        f"bisection {fmt_si(summary['bisection_bandwidth_bytes_per_s'], 'B/s')} per direction)"
        if s > 1
        else "no on-die network: one slice is the flat chip"
    )
    # a one-slice chip said 'Every placement is balanced, so the rows are equal' over its one row (followup51)
    bytes_text = (
        "HBM read from the slice's own stacks and from other slices' stacks (over the on-die network), and "
        "activations exchanged between slices (gathers, partial-sum combines). Every placement is balanced, "
        "so the rows are equal"
        if s > 1
        else "HBM read from the chip's stacks; nothing crosses an on-die network. The chip has one slice, so "
        "there is one row, whatever the placement"
    )
    t = Table(
        title=f"{s} slice{'s' if s != 1 else ''}, placement {summary['placement']}, {net}",
        caption="per slice, over every op of the step: compute, HBM and on-die time each summed whether "
        "or not it binds the op (the step time and its attribution below take each op's binding "
        f"time only); bytes per step: {bytes_text}",
    )
    for col in (
        "slice",
        "compute ms (sum)",
        "HBM ms (sum)",
        "on-die ms (sum)",
        "HBM B local",
        "HBM B remote",
        "exchange B",
    ):
        t.add_column(col, justify="right")
    for r in summary["per_slice"]:
        t.add_row(
            str(r["slice"]),
            f"{r['compute_s'] * 1e3:.3f}",
            f"{r['hbm_s'] * 1e3:.3f}",
            f"{r['network_s'] * 1e3:.3f}",
            fmt_si(r["hbm_local_bytes"]),
            fmt_si(r["hbm_remote_bytes"]),
            fmt_si(r["exchange_bytes"]),
        )
    console.print(t)
    ops = summary["network_bound_ops"]
    used = sorted(set(summary["splits"].values()))
    console.print(
        f"on-die network bytes {fmt_si(summary['on_die_bytes'], 'B')} per step (remote HBM + exchange, "
        "whole chip); "
        f"ops bound by the on-die network: {', '.join(ops) if ops else 'none'}"
        + (f"; placements used: {', '.join(used)}" if summary["placement"] == "best" else ""),
        markup=False,
    )


def print_tiles(rows: list[dict]) -> None:
    """The GEMM tile table of ``jalapeno step --tiles`` (cost/tiles.tile_rows)."""
    t = Table(
        title="GEMM tile mapping (cost/tiles.py): structural efficiency x the calibrated asymptote vs the "
        "calibrated curve"
    )
    for col in ("op", "fmt", "m", "k", "n", "tile", "split-K", "waves", "η struct", "η tiled", "η calibrated"):
        t.add_column(col, justify="left" if col in ("op", "fmt", "tile") else "right")
    for r in rows:
        t.add_row(
            r["op"],
            r["format"],
            f"{r['m']:.4g}",
            f"{r['k']:.0f}",
            f"{r['n']:.0f}",
            r["tile"],
            f"{r['split_k']:.0f}",
            f"{r['waves']:.0f}",
            f"{r['eta_struct']:.3f}",
            f"{r['eta_tiled']:.3f}",
            f"{r['eta_calibrated']:.3f}",
        )
    console.print(t)
