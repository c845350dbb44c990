"""``jalapeno hardware`` and ``jalapeno models``: list and show the catalog."""

from __future__ import annotations

import typer
from rich.table import Table
from rich.text import Text

from jalapeno import units
from jalapeno.analysis.price_reason import BASIS_FIELD, system_basis
from jalapeno.cli.common import console, efficiency_option, fmt_si, print_json
from jalapeno.cli.system_opts import SET_OPTION, system_pricer
from jalapeno.specs.catalog import is_catalog_system, list_models, list_systems, load_model, load_system
from jalapeno.specs.efficiency import Efficiency
from jalapeno.specs.hardware import System

hardware_app = typer.Typer(no_args_is_help=True, help="Systems in the catalog.")
models_app = typer.Typer(no_args_is_help=True, help="Models in the catalog.")


def system_dict(s: System, eff: Efficiency) -> dict:
    """JSON-ready description of a system (SI units, with sources) and its efficiency set ``eff``."""
    c = s.chip
    return {
        "name": s.name,
        "description": s.description,
        "vendor_verified": s.vendor_verified,
        "chip": {
            "name": c.name,
            "peak_flop_per_s": dict(c.peak_flop_per_s),
            "hbm_capacity_bytes": c.hbm_capacity_bytes,
            "hbm_usable_bytes": c.hbm_usable_bytes,
            "hbm_bandwidth_bytes_per_s": c.hbm_bandwidth_bytes_per_s,
            "hbm_stacks": c.hbm_stacks,
            "sram_bytes": c.sram_bytes,
            "tdp_w": c.tdp_w,
            "sustained_w": c.sustained_w,
            "fp32_vector_flop_per_s": c.fp32_vector_flop_per_s,
            "compute_units": c.compute_units,
            "sram_per_unit_bytes": c.sram_per_unit_bytes,
            "mma_tile_m": c.mma_tile_m,
            "fp4_block_formats": sorted(c.fp4_block_formats) if c.fp4_block_formats else None,
            "compute_capability": _capability_text(c.compute_capability) if c.compute_capability else None,
            "die": None
            if c.die is None
            else {
                "slices": c.die.slices,
                "compute_dies": c.die.compute_dies or c.die.slices,
                "topology": c.die.topology,
                "mesh_shape": list(c.die.mesh_shape) or None,
                "link_bandwidth_bytes_per_s": c.die.link_bandwidth_bytes_per_s,
                "hop_latency_s": c.die.hop_latency_s,
                "placement": c.die.placement,
            },
        },
        "levels": [
            {
                "name": lv.name,
                "chips": lv.chips,
                "scope": lv.scope,
                "topology": lv.topology,
                "bandwidth_bytes_per_s": lv.bandwidth_bytes_per_s,
                "latency_s": lv.latency_s,
                "in_network_reduction": lv.in_network_reduction,
                "links_per_chip": lv.links_per_chip,
                "torus_dims": lv.torus_dims,
            }
            for lv in s.levels
        ],
        "host": None
        if s.host is None
        else {
            "location": s.host.location,
            "bandwidth_bytes_per_s": s.host.bandwidth_bytes_per_s,
            "latency_s": s.host.latency_s,
            "note": s.host.note,
        },
        "kv_tiers": [
            {
                "name": t.name,
                "link": t.link,
                "capacity_bytes_per_chip": t.capacity_bytes,
                "bandwidth_bytes_per_s": t.bandwidth_bytes_per_s,
                "latency_s": t.latency_s,
            }
            for t in s.kv_tiers
        ],
        "kv_tiers_absent": list(s.kv_tiers_absent),
        "allin_power_w_per_chip": s.allin_power_w_per_chip,
        "usd_per_chip_hour": s.usd_per_chip_hour,
        BASIS_FIELD: system_basis(s),
        "efficiency": eff.as_dict(),
        "sources": dict(s.sources),
        "path": s.path,
    }


@hardware_app.command("list")
def hardware_list(json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the shipped systems."""
    systems = [load_system(n) for n in list_systems()]
    if json_out:
        print_json([{"name": s.name, "description": s.description} for s in systems])
        return
    from jalapeno.report.cell_notes import ESTIMATE_MARK, estimate_caption, estimated_prices

    est = estimated_prices(systems)
    t = Table(title="Systems")
    # headers that break between words ("$/h per chip", not "$/chip-hour"): the table keeps one row per system at 100
    # characters; the caption's est. line names the per-chip-hour price
    for col in (
        "name",
        "chip",
        "FP8 PF",
        "FP4 PF",
        "HBM GiB",
        "HBM TB/s",
        "TDP W",
        "scale up",
        "all-in kW",
        "$/h per chip",
    ):
        t.add_column(col, overflow="fold")
    for s in systems:
        c = s.chip
        fp4 = c.peak_flop_per_s.get("fp4")
        t.add_row(
            s.name,
            c.name,
            f"{c.peak_flop_per_s['fp8'] / 1e15:.2f}" if "fp8" in c.peak_flop_per_s else "-",
            f"{fp4 / 1e15:.2f}" if fp4 else "-",
            f"{c.hbm_capacity_bytes / units.GiB:.1f}",
            f"{c.hbm_bandwidth_bytes_per_s / units.TB:.1f}",
            f"{c.tdp_w:,.0f}",
            f"{s.scale_up_chips:,}",
            f"{s.allin_power_w_per_chip / 1e3:.2f}",
            f"{s.usd_per_chip_hour:.2f}" + (ESTIMATE_MARK if s.name in est else ""),
        )
    if est:
        t.caption = estimate_caption(est)
    from jalapeno.report.narrow import fit_width

    # no word cut at the terminal's width (at 100 characters rich printed "gb200-n…" and "vera-ru…", the names every
    # other command takes, and "$/chip…"): each column its longest word, or the table on its side (report/narrow)
    for part in fit_width(t, console.width):
        console.print(part)


@hardware_app.command("show")
def hardware_show(
    name: str = typer.Argument(..., help="System name or path to a TOML file."),
    efficiency: str = efficiency_option(),
    sets: list[str] = SET_OPTION,
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show one system: chip, link hierarchy, power, cost, efficiencies and sources."""
    pr = system_pricer(name, efficiency, sets)
    s, eff = pr.system, pr.efficiency
    if json_out:
        print_json(system_dict(s, eff))
        return
    c = s.chip
    console.print(
        Text.assemble(
            (s.name, "bold"), f": {s.description}", ("" if s.vendor_verified else ("  (not vendor-verified)", "yellow"))
        )
    )
    t = Table(title="chip", show_header=False)
    t.add_column("field")
    t.add_column("value")
    t.add_column("source", overflow="fold")
    src = s.sources
    for fmt, v in c.peak_flop_per_s.items():
        t.add_row(f"dense {fmt}", fmt_si(v, "FLOP/s"), src.get(f"chip.peak_dense_tflops.{fmt}", ""))
    cap_key = next((k for k in src if k.startswith("chip.hbm_capacity")), "")
    use_key = next((k for k in src if k.startswith("chip.hbm_usable")), "")
    t.add_row("HBM nominal", f"{c.hbm_capacity_bytes / units.GiB:.1f} GiB", src.get(cap_key, ""))
    t.add_row("HBM usable", f"{c.hbm_usable_bytes / units.GiB:.1f} GiB", src.get(use_key, ""))
    t.add_row("HBM bandwidth", fmt_si(c.hbm_bandwidth_bytes_per_s, "B/s"), src.get("chip.hbm_bandwidth_tb_per_s", ""))
    t.add_row("HBM stacks", str(c.hbm_stacks), src.get("chip.hbm_stacks", ""))
    t.add_row(
        "SRAM", f"{c.sram_bytes / units.MiB:.0f} MiB" if c.sram_bytes else "not published", src.get("chip.sram_mib", "")
    )
    _optional_rows(t, c, src)  # the tile model's and FP32 / FP4-format keys, where the file gives them
    t.add_row("TDP", f"{c.tdp_w:,.0f} W", src.get("chip.tdp_w", ""))
    t.add_row("sustained", f"{c.sustained_w:,.0f} W" if c.sustained_w else "-", src.get("chip.sustained_w", ""))
    t.add_row("all-in power", f"{s.allin_power_w_per_chip:,.0f} W/chip", src.get("power.allin_kw_per_chip", ""))
    t.add_row("cost", f"{s.usd_per_chip_hour:.2f} $/chip-hour", src.get("cost.usd_per_chip_hour", ""))
    console.print(t)
    lt = Table(title="link hierarchy (per chip, per direction)")
    for col in ("level", "chips", "scope", "topology", "GB/s", "latency us", "source"):
        lt.add_column(col, overflow="fold")
    for lv in s.levels:
        topo = (
            lv.topology
            + (f" {list(lv.torus_dims)}" if lv.torus_dims and lv.topology == "torus3d" else "")
            + (" +in-switch reduction" if lv.in_network_reduction else "")
        )
        lt.add_row(
            lv.name,
            str(lv.chips),
            lv.scope,
            topo,
            f"{lv.bandwidth_bytes_per_s / 1e9:.0f}",
            f"{lv.latency_s * 1e6:.1f}",
            src.get(f"levels[{lv.name}].bandwidth_gb_per_s", ""),
        )
    console.print(lt)
    if c.die is not None and c.die.slices > 1:  # one slice: no on-die network to show
        d = c.die
        shape = f" {d.mesh_shape[0]} x {d.mesh_shape[1]}" if d.mesh_shape else ""
        dies = f" ({d.compute_dies} compute dies)" if d.compute_dies and d.compute_dies != d.slices else ""
        console.print(
            f"die (docs/chip.md): {d.slices} slices{dies}, {d.topology}{shape}, "
            f"{fmt_si(d.link_bandwidth_bytes_per_s, 'B/s')} per link, {d.hop_latency_s * 1e9:.0f} ns per hop, "
            f"placement {d.placement} ({src.get('die.link_bandwidth_tb_per_s', '')})"
        )
    if s.host:
        console.print(
            f"host CPUs: {s.host.location.replace('_', ' ')}, {s.host.bandwidth_bytes_per_s / 1e9:.0f} GB/s "
            f"per chip, {s.host.latency_s * 1e6:.1f} us ({src.get('host.bandwidth_gb_per_s', '')})"
        )
    from jalapeno.specs.kv_tiers import tier_status

    console.print(
        "KV-cache tiers below HBM (docs/agentic.md): " + "; ".join(f"{k}: {v}" for k, v in tier_status(s).items())
    )
    console.print(f"efficiency: {eff.source}" + _spec_set_note(eff.source, is_catalog_system(s)))


def _optional_rows(t: Table, c, src: dict) -> None:
    """The chip's optional keys (docs/catalog.md, [chip]) as rows of ``hardware show``'s table, each where given:
    a file's compute_units or fp4_block_formats was read and priced but not shown."""
    rows = [
        ("FP32 vector", c.fp32_vector_flop_per_s, lambda v: fmt_si(v, "FLOP/s"), "chip.fp32_vector_tflops"),
        ("compute units", c.compute_units, str, "chip.compute_units"),
        ("SRAM per unit", c.sram_per_unit_bytes, lambda v: f"{v / units.KiB:.0f} KiB", "chip.sram_per_unit_kib"),
        ("MMA tile M", c.mma_tile_m, str, "chip.mma_tile_m"),
        ("FP4 block formats", c.fp4_block_formats, lambda v: ", ".join(sorted(v)), "chip.fp4_block_formats"),
        ("CUDA capability", c.compute_capability, _capability_text, "chip.compute_capability"),
    ]
    for label, v, fmt, key in rows:
        if v:
            t.add_row(label, fmt(v), src.get(key, ""))


def _capability_text(sm: int) -> str:
    """A compute capability as its file writes it: 103 -> ``"10.3"``."""
    return f"{sm // 10}.{sm % 10}"


def _spec_set_note(source: str, catalog: bool) -> str:
    """What 'jalapeno defaults' means on ``hardware show``: read as the Jalapeño chip's defaults, and a copy of
    b200.toml gave no hint that it dropped B200's calibrated set."""
    if not source.startswith("jalapeno defaults"):
        return ""
    note = " — the spec set: the package's documented defaults, not fitted on this chip"
    if not catalog:
        note += (
            '; a system file of its own gets no calibrated set: write base = "NAME" and the keys you change '
            "to keep a catalog system's (docs/catalog.md, 'Variants')"
        )
    return note


@models_app.command("list")
def models_list(json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the shipped models."""
    rows = [load_model(n).summary() for n in list_models()]
    if json_out:
        print_json(rows)
        return
    t = Table(title="Models")
    for col in ("name", "type", "total", "active", "layers", "attention", "experts", "KV B/token", "precision"):
        t.add_column(col)
    windowed = False
    for r in rows:
        moe = r["moe"]
        kv, kv8 = r["kv_bytes_per_token"], r["kv_bytes_per_token_at_8k"]
        kv_text = f"{kv:,.0f} ({r['kv_dtype']})"
        if round(kv8) != round(kv):  # sliding-window layers: a sizing at 8K reads the second figure
            kv_text += f"; {kv8:,.0f} at 8K"
            windowed = True
        t.add_row(
            r["name"],
            r["model_type"],
            f"{r['total_params'] / 1e9:.1f}B",
            f"{r['active_params'] / 1e9:.1f}B",
            str(r["num_layers"]),
            r["attention_detail"],
            f"{moe['num_experts']} top-{moe['top_k']}" if moe else "-",
            kv_text,
            r["default_precision"],
        )
    if windowed:
        t.caption = (
            "KV B/token: the KV-cache bytes one token adds over all layers in the model's KV dtype; "
            "a sliding-window layer keeps only its window, so a model with such layers also gives the "
            "mean per token of an 8,192-token sequence ('at 8K', models show's kv_bytes_per_token_at_8k)"
        )
    console.print(t)


@models_app.command("show")
def models_show(
    name: str = typer.Argument(..., help="Model name or path to a config.json."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show one model's shapes and parameter counts."""
    r = load_model(name).summary()
    if json_out:
        print_json(r)
        return
    t = Table(title=r["name"], show_header=False)
    t.add_column("field")
    t.add_column("value")
    for k, v in r.items():
        t.add_row(k, _shown(k, v))
    console.print(t)


def _shown(key: str, v) -> str:
    """A ``models show`` value as a reader takes it: parameter counts in billions, whole numbers with
    separators, a table as its fields (the MoE row printed a Python dict, ``{'num_experts': 256, ...}``).

    >>> _shown("moe", {"num_experts": 256, "top_k": 8, "expert_params": 44040192})
    'num_experts 256, top_k 8, expert_params 44,040,192'
    >>> _shown("kv_bytes_per_token", 35136.0), _shown("total_params", 671026419200)
    ('35,136', '671.03B (671,026,419,200)')
    """
    if isinstance(v, dict):
        return ", ".join(f"{k} {_shown(k, x)}" for k, x in v.items())
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v / 1e9:.2f}B ({v:,})" if key.endswith("params") and key != "expert_params" else f"{v:,}"
    return str(v)
