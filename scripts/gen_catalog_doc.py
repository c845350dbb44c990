#!/usr/bin/env python3
"""Generate docs/catalog.md from the shipped system TOMLs.

Everything is read through the package API (``jalapeno.specs.catalog.load_system``), so the
document shows exactly what the model uses (SI values converted back to the file's units).
The schema section is built from the pydantic file models, and the script fails if a key in
the schema has no description here, so the document cannot fall behind the schema.

Usage:
    python scripts/gen_catalog_doc.py [--out docs/catalog.md] [--check]
"""

from __future__ import annotations

from pathlib import Path

from _docgen import write_or_check

from jalapeno import units
from jalapeno.specs import system_file as hw
from jalapeno.specs.catalog import list_systems, load_system
from jalapeno.specs.die import DieFile

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "docs" / "catalog.md"

# key -> (unit, meaning). One entry per field of the pydantic file models in specs/system_file.py.
SYSTEM_KEYS = {
    "schema_version": ("-", "file format version; must be 1"),
    "name": (
        "-",
        "system name; the catalog name is the file name without `.toml`; a user file's name (or, for a "
        "variant without one, its file name) holds no colon (`--set NAME:KEY=VALUE` splits at "
        "the first ':')",
    ),
    "description": ("-", "one-line description"),
    "vendor_verified": (
        "bool",
        "false where the vendor has not published a spec sheet (numbers are reported or inferred); default true",
    ),
    "chip": ("table", "the accelerator chip, see `[chip]`"),
    "levels": (
        "array of tables",
        "the link hierarchy from innermost to outermost, see `[[levels]]`; chip counts must grow, every `scale_up` level comes before the first `scale_out` one (a load/store fabric is reached before any NIC), and a `scale_up` level holds whole copies of the one inside it (a 128-chip rack of 8-chip trays, not 100)",
    ),
    "power": ("table", "see `[power]`"),
    "cost": ("table", "see `[cost]`"),
    "host": ("table", "optional host-CPU-to-chip path, see `[host]`"),
    "kv_tiers": ("table", "optional KV-cache tiers below HBM (host memory, local drives, remote), specs/kv_tiers.py"),
    "die": (
        "table",
        "optional slices and on-die network of the chip (the sliced pricer, docs/chip.md), see `[die]`; absent = one slice",
    ),
    "efficiency": (
        "table of numbers/strings",
        "optional per-system overrides of the software efficiency factors (docs/model.md); plain numbers, not sourced tables; GEMM and routed-expert kernel parameters go in per-format sub-tables, e.g. `[efficiency.gemm.fp8]` `peak_fraction = 0.6`, `[efficiency.moe.fp4]` `hbm_fraction = 0.7` (formats bf16, fp8, fp4; bf16 also serves formats without their own)",
    ),
}
CHIP_KEYS = {
    "name": ("-", "chip name"),
    "peak_dense_tflops": (
        "TFLOP/s",
        "dense peak (no 2:4 sparsity) per compute format: `peak_dense_tflops.bf16` (required), `.fp8`, `.fp4`, `.int8`; leave a format out where the chip has no hardware for it",
    ),
    "fp32_vector_tflops": (
        "TFLOPS",
        "FP32 peak of the vector (non-tensor, FMA) units, for FP32 GEMMs: MiniMax-M2's gate, which vLLM and SGLang run in FP32 (cost/ops.py); optional, absent = the gate priced in BF16",
    ),
    "hbm_capacity_gb": (
        "GB (1e9 B)",
        "nominal HBM capacity; give exactly one of `hbm_capacity_gb` / `hbm_capacity_gib`",
    ),
    "hbm_capacity_gib": ("GiB (2^30 B)", "nominal HBM capacity, for vendors who quote binary units"),
    "hbm_usable_gb": (
        "GB",
        "HBM the inference engine can use (after runtime reservations); optional, default = nominal; at most one of `_gb` / `_gib`; must be <= nominal",
    ),
    "hbm_usable_gib": ("GiB", "as `hbm_usable_gb`, binary units"),
    "hbm_bandwidth_tb_per_s": ("TB/s (1e12 B/s)", "total peak HBM bandwidth"),
    "hbm_stacks": ("count", "HBM stacks (or compute slices wired to a local stack)"),
    "sram_mib": ("MiB", "on-chip SRAM (L2 / last-level cache); optional, left out where unpublished"),
    "compute_units": (
        "count",
        "SMs / CUs, for the tile model (`--chip-model tiled`, `step --tiles`, docs/chip.md §5); optional",
    ),
    "sram_per_unit_kib": ("KiB", "shared memory (LDS) per SM/CU, for the tile model; optional"),
    "mma_tile_m": (
        "rows",
        "smallest M of the tensor-core (MMA) instruction tile: 64 wgmma, 128 tcgen05, 16 MFMA; optional",
    ),
    "fp4_block_formats": (
        "list",
        '`{ formats = ["mxfp4", "nvfp4"], source }`: the FP4 block-scaled formats the FP4 tensor cores consume (Blackwell both, CDNA 4 MXFP4 only); needs `peak_dense_tflops.fp4`; absent = every FP4 format accepted. A precision whose FP4 weights are in another format is refused (`-p nvfp4` on MI355X)',
    ),
    "compute_capability": (
        "string",
        '`{ value = "9.0", source }`: NVIDIA\'s CUDA compute capability "major.minor" (developer.nvidia.com/cuda-gpus: 9.0 Hopper, 10.0 B200/GB200, 10.3 B300/GB300), which decides the fused all-reduce + RMSNorm kernels (cost/allreduce_rms.py); absent on non-CUDA chips. A file without it falls back to the chip name\'s prefix (`CAPABILITY_BY_PREFIX`: H100/H200/H800, B200/GB200, B300/GB300), so a GH200 or H20 file must state it',
    ),
    "tdp_w": ("W", "rated chip/board power (TGP/TBP)"),
    "sustained_w": ("W", "sustained power under load where measured; optional"),
    "dense_clock_ratio": (
        "ratio",
        "sustained clock under dense matrix load over the clock its architecture's compute "
        "calibration prices (a board its power limit holds lower: MI300X 1,230 / 1,464 MHz); ops at "
        ">= 25% of peak run at this fraction of the calibrated speed (cost/roofline.POWER_CLOCK, shipped off: "
        "docs/model.md §4); "
        "optional, default 1",
    ),
}
LEVEL_KEYS = {
    "name": ("-", "level name (tray, node, rack, cluster, global)"),
    "chips": ("count", "chips reachable within this level (the domain size)"),
    "scope": ("-", "`scale_up` (load/store fabric: NVLink, Infinity Fabric, ICI) or `scale_out` (NICs)"),
    "topology": ("-", "`switched`, `full_mesh`, `torus3d` or `fat_tree`"),
    "bandwidth_gb_per_s": (
        "GB/s (1e9 B/s)",
        "per chip, per direction, at this level (NVIDIA's '1.8 TB/s' NVLink 5 = 900); for a full mesh the sum over all links of a chip",
    ),
    "latency_us": ("us", "one-way latency of a small message at this level (per hop on a torus)"),
    "in_network_reduction": ("bool", "the switches reduce in the network (NVLink SHARP / NVLS); default false"),
    "links_per_chip": (
        "count",
        "links per chip (full mesh: chips - 1; 3-D torus: 6); optional; read on `full_mesh` "
        "and `torus3d` levels only (another topology ignores it, said in a note); more than "
        "chips - 1 on a full mesh or 6 on a 3-D torus is refused (one link a peer, two a torus "
        "dimension: more would slow the level)",
    ),
    "torus_dims": (
        "[x, y, z]",
        "torus shape, required for `torus3d`; x * y * z must equal `chips`; another topology "
        "ignores it (said in a note)",
    ),
    "shares_ports_with_inner": (
        "bool",
        "the level is reached through the same per-chip ports as the level inside it (traffic to both shares one bandwidth; its ports are not counted again in the link power, so a rate above the inner level's costs no watts: the CLI notes it, set the inner level's rate too); default false; refused on the innermost level, which has no level inside it",
    ),
    "note": ("-", "free text"),
}
POWER_KEYS = {
    "allin_kw_per_chip": (
        "kW",
        "all-in provisioned power per chip: chip, host, network, cooling and facility overhead (PUE)",
    ),
}
COST_KEYS = {
    "usd_per_chip_hour": ("$/chip-hour", "total cost of ownership per chip-hour (capex over economic life plus opex)"),
}
HOST_KEYS = {
    "location": (
        "-",
        "`same_module` (Grace on the GB200 module), `same_node` (HGX host) or `separate_tray` (Jalapeño's CPU trays behind switches)",
    ),
    "bandwidth_gb_per_s": ("GB/s", "host-to-chip bandwidth per chip, per direction"),
    "latency_us": ("us", "one-way latency of the host path"),
    "note": ("-", "free text"),
}
DIE_KEYS = {
    "slices": (
        "count",
        "units owning local HBM stacks and 1/slices of the compute (dies, I/O dies, or regions of one die); chip.hbm_stacks must be a multiple; optional: absent = one slice per HBM stack",
    ),
    "compute_dies": ("count", "compute dies on the slices where they differ (MI300X: 8 XCDs on 4 I/O dies); optional"),
    "topology": (
        "-",
        "`pair`, `ring`, `mesh2d` or `full_mesh` (docs/chip.md §1 for port and bisection arithmetic); default pair",
    ),
    "mesh_shape": (
        "[rows, columns]",
        "for `mesh2d`: rows x columns must equal slices; optional: absent = the most nearly square shape",
    ),
    "link_bandwidth_tb_per_s": (
        "TB/s",
        "one on-die link, per direction; sourced, with optional `low`/`high` band; required for more than one slice",
    ),
    "hop_latency_ns": (
        "ns",
        "latency of one on-die hop; sourced, with optional `low`/`high` band; required for more than one slice",
    ),
    "placement": (
        "-",
        "`striped` (a GPU's uniform interleaved address space, default) or `local_first` (explicit local placement)",
    ),
    "note": ("-", "free text"),
}
SOURCED_KEYS = {
    "value": ("number > 0", "the value, in the unit of the key it belongs to"),
    "source": ("text", "where it comes from (document, table, quote); required, at least 3 characters"),
    "alternatives": ("text", "what other sources say, where they disagree; optional"),
    "estimate": ("bool", "true where the value is derived or assumed rather than published; optional, default false"),
}

SECTIONS = [
    ("Top level", hw.SystemFile, SYSTEM_KEYS),
    ("`[chip]`", hw.ChipFile, CHIP_KEYS),
    ("`[[levels]]` (one per level, innermost first)", hw.LevelFile, LEVEL_KEYS),
    ("`[power]`", hw.PowerFile, POWER_KEYS),
    ("`[cost]`", hw.CostFile, COST_KEYS),
    ("`[host]` (optional)", hw.HostFile, HOST_KEYS),
    ("`[die]` (optional)", DieFile, DIE_KEYS),
    ("A sourced number `{ value, source, alternatives, estimate }`", hw.Sourced, SOURCED_KEYS),
]


def _sourced_fields(model) -> set[str]:
    """Fields of a pydantic model whose type is (or contains) a Sourced number."""
    out = set()
    for k, f in model.model_fields.items():
        if "Sourced" in str(f.annotation):
            out.add(k)
    return out


def _check_schema_covered() -> None:
    for title, model, keys in SECTIONS:
        missing = set(model.model_fields) - set(keys)
        extra = set(keys) - set(model.model_fields)
        if missing or extra:
            raise SystemExit(
                f"gen_catalog_doc: schema section {title} out of date: "
                f"undocumented {sorted(missing)}, stale {sorted(extra)}"
            )


def _schema_md() -> list[str]:
    out = [
        "## Schema",
        "",
        "A system is one TOML file: the chip, the link hierarchy, power and cost. Shipped systems live in",
        "`src/jalapeno/data/systems/`; a user system is any `.toml` path passed where a system name is",
        'accepted (`load_system("path/to/my.toml")`). The file is validated strictly: unknown keys,',
        "missing keys, non-positive numbers and inconsistent fields raise `SpecError` naming the key and",
        "the fix (a file with no keys at all, empty or comments only, is named as such). Keys carry their",
        "unit; the package converts to SI once, on load.",
        "",
        "Every number (the keys marked *sourced* below) is an inline table",
        '`{ value = ..., source = "...", alternatives = "...", estimate = true }`: `value` and `source`',
        "are required, `alternatives` records what other sources say where they disagree, and",
        "`estimate = true` marks a derived or assumed number. Example:",
        "",
        "```toml",
        'hbm_usable_gb = { value = 279, source = "Verda GB300 NVL72 blog: 279 GB usable", alternatives = "288 GB (nominal)" }',
        'latency_us = { value = 1.0, estimate = true, source = "assumption: one NVSwitch hop ~1 us" }',
        "```",
        "",
        "### Variants: `base = ...` and `--set`",
        "",
        "A file may start from another system and override fields by their dotted keys",
        "(`src/jalapeno/specs/variants.py`):",
        "",
        "```toml",
        'base = "jalapeno"                 # a catalog name or a TOML path (relative to this file)',
        'name = "jalapeno-8stack"          # default: the file name without .toml',
        'chip.hbm_stacks = { value = 8, source = "one report says eight HBM sites" }',
        "chip.hbm_bandwidth_tb_per_s = 20.5  # a bare number keeps the base's source, marked as overridden",
        "levels.rack.bandwidth_gb_per_s = 900  # a link level by its name (or index)",
        "efficiency.kernel_launch_s = 0.25e-6  # efficiency parameters under efficiency.*",
        "```",
        "",
        "A variant is priced with its base's efficiency set — the base's calibration (`calibrated` and",
        "the `low`/`high` band) and the base's `[efficiency]` table, its own on top — unless it says",
        '`calibration = "<catalog system>"` (that system\'s calibration) or `calibration = "spec"` (the',
        "documented defaults). A file with neither `base`, `calibration` nor `[efficiency]` is priced",
        "with the documented defaults, and the command line says so once. `--set KEY=VALUE`",
        "(repeatable, on every command that takes a system) applies the same dotted overrides:",
        "`jalapeno compare --set jalapeno:chip.hbm_stacks=8` (on `compare`, `NAME:` picks one system: a",
        "`--systems` entry as typed, or the `name` a user file gives its system).",
        "An inline table merges its keys as a variant file does (`--set 'chip={hbm_stacks=8,",
        'hbm_bandwidth_tb_per_s=20.5}\'` is the two dotted keys; a `{value = ..., source = "..."}` table',
        "replaces that one entry; `{}` is refused: it sets nothing). A capacity in the other unit",
        "(`chip.hbm_capacity_gib` where the base gives `hbm_capacity_gb`; likewise `hbm_usable_*`)",
        "replaces the base's. Every override passes through the same validation as a catalog file.",
        "A `[[levels]]` list is one value: it replaces the base's whole link hierarchy, and the command line",
        "names the levels (and in-switch reductions) of the root system it left out; `levels.<name>.<key> = ...`",
        "changes one field of one level.",
        "`--set chip.hbm_stacks=N` alone changes the stack count (the chip's power follows it, its cost",
        "the capacity): the bandwidth and capacity priced stay the base's, and the command line says so",
        "once (a variant file's `chip.hbm_stacks` alone too, naming the file); set `chip.hbm_bandwidth_tb_per_s`,",
        "`chip.hbm_capacity_gib` and `chip.hbm_usable_gib` for what the stacks",
        "add: a capacity alone leaves the usable HBM (what weights and KV cache are fitted in) at the figure the base's file",
        "states, Jalapeño's 216 GiB, and the command line says so once (a base that states none follows the capacity). A",
        "power or cost that follows an estimate stays marked an estimate. `hardware show` of a file of",
        "its own (no `base`) says it is priced with the `spec` set, not a catalog system's calibration.",
        "",
        "### Whose measured data a file gets",
        "",
        "Data measured on a catalog system — its kernel tables (`--pricer table`, and the choice `--pricer auto`",
        "makes), its engine recipe (`deployed`), its measured error band (`compare --bands`, `audit`) — follows a",
        "file's provenance, never a bare name match (`specs/catalog.measured_system`; break49: a new chip's file",
        "named \"h200\" with twice H200's bandwidth was priced with H200's kernel tables, silently):",
        "",
        "- the catalog file itself, by name or by its path (`-s .../data/systems/h200.toml` is `-s h200`,",
        "  its calibration included; break50): all of it;",
        '- a variant (`base = "h200"` along its chain, or `--set` on `h200`), whatever its own name: H200\'s',
        "  kernel tables, applied as corrections (measured / roofline per kernel shape) over the variant's own",
        "  roofline, so a changed spec moves the figures through the roofline only; the command line says so",
        "  once (`note: --pricer table: ... the kernels were measured on h200`). No band, no recipe: those",
        "  were measured on the catalog hardware;",
        "- a file without `base` that reuses a catalog name: an unedited copy (nothing physical changed: only",
        "  names, descriptions, sources and notes differ) keeps the kernel tables; one whose specs differ gets",
        "  none — `--pricer table` is refused naming the keys that differ and the fix (`--pricer roofline`,",
        '  or `base = "h200"` with only the keys that differ), and `--pricer auto` prices it with the',
        "  roofline. Neither gets the band or the recipe; the command line says so once.",
        "",
    ]
    for title, model, keys in SECTIONS:
        sourced = _sourced_fields(model)
        out += [f"### {title}", "", "| key | unit | sourced | meaning |", "|---|---|---|---|"]
        for k in model.model_fields:
            unit, meaning = keys[k]
            out.append(f"| `{k}` | {unit} | {'yes' if k in sourced else ''} | {meaning} |")
        out.append("")
    return out


def _fmt(x: float | None, nd: int = 0) -> str:
    if x is None:
        return "-"
    s = f"{x:,.{nd}f}"
    if nd and "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def _is_est(sys_, key: str) -> bool:
    return "(estimate)" in sys_.sources.get(key, "")


def _mark(sys_, key: str, text: str) -> str:
    """Prefix estimates with '~'."""
    return f"~{text}" if text != "-" and _is_est(sys_, key) else text


def _cap_key(sys_, stem: str) -> str:
    for k in (f"chip.{stem}_gb", f"chip.{stem}_gib"):
        if k in sys_.sources:
            return k
    return ""


def _gib(nbytes: float, key: str) -> str:
    """GiB (as ``jalapeno hardware list|show`` print HBM), with the file's GB figure alongside
    where the file quotes GB (the datasheet's number stays visible: H200 '131.3 (141 GB)')."""
    text = _fmt(nbytes / units.GiB, 1)
    if key.endswith("_gb"):
        text += f" ({_fmt(nbytes / units.GB, 1)} GB)"
    return text


def _summary_md(systems) -> list[str]:
    out = [
        "## Per-chip summary",
        "",
        "Dense peak in PFLOP/s (no sparsity); HBM in GiB (2^30 B, as `jalapeno hardware list` prints it; the",
        "file's figure in brackets where it quotes GB, 1e9 B); power in W",
        "per chip; all-in kW and $/chip-hour per chip. `~` marks an estimate (`estimate = true`);",
        "`-` a value the chip does not have or the source does not give (usable HBM then = nominal).",
        "",
        "| system | chip | BF16 PF | FP8 PF | FP4 PF | HBM GiB | usable GiB | HBM TB/s | stacks | TDP W | sustained W | all-in kW | $/chip-hour |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in systems:
        c = s.chip
        pf = []
        for fmt in ("bf16", "fp8", "fp4"):
            v = c.peak_flop_per_s.get(fmt)
            pf.append(_mark(s, f"chip.peak_dense_tflops.{fmt}", _fmt(v / units.PFLOPS, 3) if v else "-"))
        ukey = _cap_key(s, "hbm_usable")
        usable = _mark(s, ukey, _gib(c.hbm_usable_bytes, ukey)) if ukey else "-"
        ckey = _cap_key(s, "hbm_capacity")
        row = [
            f"`{s.name}`",
            c.name,
            *pf,
            _mark(s, ckey, _gib(c.hbm_capacity_bytes, ckey)),
            usable,
            _mark(s, "chip.hbm_bandwidth_tb_per_s", _fmt(c.hbm_bandwidth_bytes_per_s / units.TB, 2)),
            _mark(s, "chip.hbm_stacks", str(c.hbm_stacks)),
            _mark(s, "chip.tdp_w", _fmt(c.tdp_w)),
            _mark(s, "chip.sustained_w", _fmt(c.sustained_w)),
            _mark(s, "power.allin_kw_per_chip", _fmt(s.allin_power_w_per_chip / units.KW, 3)),
            _mark(s, "cost.usd_per_chip_hour", _fmt(s.usd_per_chip_hour, 3)),
        ]
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    return out


def _levels_md(s) -> list[str]:
    out = [
        "| level | chips | scope | topology | GB/s per chip per direction | latency us | in-network reduction | links/chip | torus |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for lv in s.levels:
        bw = _mark(s, f"levels[{lv.name}].bandwidth_gb_per_s", _fmt(lv.bandwidth_bytes_per_s / units.GB, 1))
        lat = _mark(s, f"levels[{lv.name}].latency_us", _fmt(lv.latency_s / units.US, 2))
        torus = "x".join(str(d) for d in lv.torus_dims) if lv.torus_dims else "-"
        out.append(
            f"| {lv.name} | {lv.chips:,} | {lv.scope} | {lv.topology} | {bw} | {lat} | "
            f"{'yes' if lv.in_network_reduction else 'no'} | {lv.links_per_chip or '-'} | {torus} |"
        )
    return out


def _system_md(s) -> list[str]:
    verified = "" if s.vendor_verified else " Not vendor-verified: numbers are reported or inferred."
    out = [f"### `{s.name}`", "", f"{s.description}.{verified}", "", "Link hierarchy:", ""]
    out += _levels_md(s)
    out += ["", "Sources of every value:", ""]
    for key, text in s.sources.items():
        out.append(f"- `{key}`: {text}")
    out.append("")
    return out


def _ranges_md() -> list[str]:
    from jalapeno.specs.plausibility import RANGES

    lines = [
        "## Plausible ranges",
        "",
        "Every system built from data (catalog, user file, `base =` variant, `--set`) is checked against",
        "one range per key (`specs/plausibility.py`): a value outside it is a `SpecError` naming the key, the",
        "range and the likely unit slip. The ranges are the catalog's span widened about 10x each way (more",
        "where real outliers exist), so any real or hypothetical chip passes and a slip of 10^3 does not.",
        "Also checked: FP4 peak >= FP8 peak >= BF16 peak, sustained <= TDP, all-in power >= the chip's own.",
        "A die's `low`/`high` band ends (`die.link_bandwidth_tb_per_s`, `die.hop_latency_ns`) take their key's range",
        "too, and a table that states value and band together needs low <= value <= high (a `--set` of the value",
        "alone is a what-if: it may leave the file's band).",
        "",
        "| key | unit | plausible range | catalog span |",
        "|---|---|---|---|",
    ]
    for r in RANGES.values():
        lines.append(f"| `{r.key}` | {r.unit} | {r.lo:g} to {r.hi:g} | {r.catalog} |")
    return [*lines, ""]


def render() -> str:
    _check_schema_covered()
    names = list_systems()
    order = (["jalapeno"] if "jalapeno" in names else []) + [n for n in names if n != "jalapeno"]
    systems = [load_system(n) for n in order]
    lines = [
        "# Hardware catalog",
        "",
        "<!-- Generated by scripts/gen_catalog_doc.py from src/jalapeno/data/systems/*.toml; do not edit by hand. -->",
        "",
        f"{len(systems)} shipped systems: " + ", ".join(f"`{s.name}`" for s in systems) + ".",
        "Every value below names its public source (vendor datasheet or blog, benchmark results, the",
        "InferenceX dashboard, third-party analyses, each with its address and date) or is a named",
        "assumption with its reasoning; this page shows what the model loads.",
        "",
    ]
    lines += _schema_md()
    lines += _ranges_md()
    lines += _summary_md(systems)
    lines += ["## Systems", ""]
    for s in systems:
        lines += _system_md(s)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    return write_or_check(render, DEFAULT_OUT, __doc__, "gen_catalog_doc.py", argv)


if __name__ == "__main__":
    raise SystemExit(main())
