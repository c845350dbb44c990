"""The once-per-run stderr notes on a system as priced (cli/system_opts.system_pricer says them): the efficiency set
of a user file without a base, a name that clashes with a catalog system, a ``--set`` or file key that changes less
than it reads as (power only, stack count only, nominal capacity only, a faster level on shared ports, a level key its
topology does not read, a switched-off rule), and ``--efficiency low|high`` on a system with one set. Each says what
is priced and the key that would change it. Split from cli/system_opts.py (round 54, module budget).

:data:`_NOTED` holds the notes said in this run, so that a note a command would say once per system or sweep point
is said once; cli/app's root callback empties it at the start of every invocation (:func:`forget_notes`), so an
in-process caller running several commands (tests' ``main``, a notebook) hears each note in every run that earns it.
"""

from __future__ import annotations

from rich.console import Console

#: The notes said in this run, in order, as printed less their ``note: ``: ``jalapeno report`` puts them on its page
#: too, where an analyst reads the page alone (report54: a --set chip.tdp_w=550 page showed the all-in tok/s/kW
#: unchanged, its reason said on stderr only).
SAID: list[str] = []


class _NoteConsole(Console):
    """stderr, recording each note it prints in :data:`SAID`."""

    def print(self, *objects, **kwargs) -> None:  # noqa: D102 (rich.Console.print)
        SAID.extend(str(o).removeprefix("note: ") for o in objects if isinstance(o, str))
        super().print(*objects, **kwargs)


_err = _NoteConsole(stderr=True)
_NOTED: set[str] = set()


def forget_notes() -> None:
    """Empty :data:`_NOTED` and :data:`SAID`: called at the start of each CLI invocation (cli/app._root)."""
    _NOTED.clear()
    SAID.clear()


def note_levels_replaced(system, overrides) -> None:
    """Say once the root levels a full ``[[levels]]`` list left out (specs/variants.levels_replaced_note, break52)."""
    from jalapeno.specs.variants import levels_replaced_note

    note = levels_replaced_note(system, overrides)
    if note and note not in _NOTED:
        _NOTED.add(note)
        _err.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)


def note_efficiency(system) -> None:
    """Say once per run which efficiency set a user file without a base or set is priced with."""
    from jalapeno.specs.variants import efficiency_note

    note = efficiency_note(system)
    key = system.path or system.name
    if note and key not in _NOTED:
        _NOTED.add(key)
        _err.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)


def note_name_clash(system) -> None:
    """Say once per file that a user file carries a catalog system's name (``name = "gb300-nvl72"``, or a
    file named gb300-nvl72.toml without a name): its figures print under that name, but the catalog
    system's measured band and engine recipe are not its own and are not applied (measured_bands.band_of,
    cli/as_deployed.deployed_recipes); a B200 variant so named got GB300's band, silently. Its kernel tables
    follow specs/catalog.measured_system: read for an unedited copy, refused by ``--pricer table`` for a file whose
    specs differ (a new chip's file named "h200" was priced with H200's tables, break49); the note says which."""
    from jalapeno.specs.catalog import hardware_changes, is_catalog_system, list_systems, measured_system

    key = f"clash:{system.path}"
    if system.name in list_systems() and not is_catalog_system(system) and key not in _NOTED:
        _NOTED.add(key)
        n, diff, src = system.name, hardware_changes(system, system.name), measured_system(system)
        what = (
            f"measured band, engine recipe or kernel tables (its {', '.join(diff[:3])} differ{'s' * (len(diff) == 1)}"
            ": --pricer table refuses it)"
            if src is None
            else "measured band or engine recipe "
            f"(it changes nothing physical, so --pricer table reads {n}'s kernel tables)"
            if src == n
            # `-s h200 --set name=gb200-nvl72` was said to change nothing physical and read GB200's tables: it
            # is an H200 and reads H200's (break50)
            else f"measured band, engine recipe or kernel tables (it is a variant of {src}: --pricer table reads "
            f"{src}'s kernel tables)"
        )
        by_set = any(k == "name" for k, _ in (system.origin.overrides if system.origin else ()))
        who, fix = (
            (f"--set name={n} names {system.path}", "give --set name= another name")
            if by_set
            else (f"{system.path} names itself", 'give the file its own name = "..."')
        )
        _err.print(
            f"note: {who} {n!r}, a catalog system's name: its figures print under that name "
            f"but are this file's, without {n}'s {what}; {fix} to keep the two "
            "apart",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def note_table_variant(pr) -> None:
    """Say once per system that ``--pricer table`` prices a variant (``base = ...`` or ``--set``) that changes its
    catalog system's hardware with that system's measured kernel tables as corrections (measured / roofline per
    kernel shape) over the variant's own roofline (specs/catalog.measured_system): the changed specs move the
    figures through the roofline only; the kernels were measured on the catalog chip (break49)."""
    from jalapeno.specs.catalog import hardware_changes, is_catalog_system, measured_system

    if type(pr).__name__ != "TablePricer" or is_catalog_system(pr.system):
        return
    src = measured_system(pr.system)
    diff = [k for k in hardware_changes(pr.system, src) if not k.startswith(("power.", "cost."))] if src else []
    key = f"table-variant:{pr.system.name}"
    if diff and key not in _NOTED:
        _NOTED.add(key)
        _err.print(
            f"note: --pricer table: {pr.system.name} changes {src}'s {', '.join(diff[:3])}"
            f"{' and more' if len(diff) > 3 else ''}: priced with {src}'s measured kernel tables as corrections "
            f"(measured / roofline per kernel shape) over its own roofline; the kernels were measured on "
            f"{src} (docs/catalog.md)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


#: Keys a power-cap what-if sets that change the power figures only: no DVFS model slows the chip.
POWER_ONLY_KEYS = ("chip.tdp_w", "chip.sustained_w")


def note_power_only(overrides, system=None, who: str = "--set ") -> None:
    """Say once per run that ``--set chip.tdp_w`` / ``chip.sustained_w`` (a power cap) move only the
    power the ``chip`` and ``sustained`` conventions divide by: a stated TDP keeps the all-in power and
    $/chip-hour (specs/power.follow_variant follows components, not a stated TDP), and the model has
    no power-capping (DVFS) model, so every step time stays the rated chip's. A lower cap read as a
    free gain in tok/s/kW with no word. ``system`` (a loaded System): the same keys stated by a variant
    file (its ``origin.overrides`` less the keys ``--set`` gives) get the note too, naming the file — a variant
    TOML with ``chip.tdp_w = 500`` kept Jalapeño's 1,150 W all-in ("chip 700 W + ...") with no word (newuser52).
    ``who``: how the keys were given, as the note opens (``explore`` passes its space file's params)."""
    keys = [k for k, _ in overrides if k in POWER_ONLY_KEYS]
    if not keys and system is not None and system.origin is not None:
        given = {k.split(":", 1)[-1] for k, _ in overrides}  # keys only: a value may be a {value, source} table
        keys = [k for k, _ in system.origin.overrides if k in POWER_ONLY_KEYS and k not in given]
        who = f"{system.origin.where or system.name}: "
    if keys and "power-only" not in _NOTED:
        _NOTED.add("power-only")
        _err.print(
            f"note: {who}{', '.join(keys)} changes only the power the chip and sustained conventions divide by "
            "(their tok/s/kW and J/token); all-in power, $/chip-hour, compute peaks and step times stay the "
            "rated chip's: there is no power-capping (DVFS) model. A chip capped below its rating runs slower: "
            "lower chip.peak_dense_tflops.* with it, and power.allin_kw_per_chip for the all-in figure "
            "(docs/metrics.md §3)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


#: Keys that carry what more HBM stacks would bring: ``chip.hbm_stacks`` alone changes none of them.
STACK_FOLLOW_KEYS = (
    "chip.hbm_bandwidth_tb_per_s",
    "chip.hbm_capacity_gib",
    "chip.hbm_capacity_gb",
    "chip.hbm_usable_gib",
    "chip.hbm_usable_gb",
)


def note_stacks_only(overrides, system, base_stacks: int | None = None, base: str = "") -> None:
    """Say once per run that ``--set chip.hbm_stacks=N`` without a bandwidth or capacity key changes the
    stack count only (its power follows, specs/power.follow_variant; the cost follows the capacity); the HBM bandwidth and capacity
    the model prices stay the file's (docs/catalog.md, 'Variants'). ``compare --set chip.hbm_stacks=8``
    read as "eight stacks' HBM" and printed the six-stack figures with no word. ``base_stacks``: the base
    system's own stack count, where known (``base``: its name as given); N equal to it changes nothing, and the
    note says that instead (``--set chip.hbm_stacks=6`` on six-stack Jalapeño printed "changes the stack count
    only", break45)."""
    keys = {k.split(":", 1)[-1] for k, _ in overrides}
    if "chip.hbm_stacks" in keys and not keys & set(STACK_FOLLOW_KEYS) and "stacks-only" not in _NOTED:
        _NOTED.add("stacks-only")
        c = system.chip
        if base_stacks is not None and c.hbm_stacks == base_stacks:
            _err.print(
                f"note: --set chip.hbm_stacks={c.hbm_stacks} is {base or system.name}'s own stack count: it changes "
                "nothing",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
            return
        _err.print(_stacks_only_text("--set chip.hbm_stacks", c), markup=False, highlight=False, soft_wrap=True)


def _stacks_only_text(who: str, c) -> str:
    """The stacks-only note, opening with ``who`` (``--set chip.hbm_stacks`` or a file's key); ``c``: the chip."""
    return (
        f"note: {who} changes the stack count only (the chip's power follows it; its cost follows the capacity); "
        f"the HBM bandwidth and capacity priced stay {c.hbm_bandwidth_bytes_per_s / 1e12:,.4g} TB/s and "
        f"{c.hbm_capacity_bytes / 2**30:,.4g} GiB: set chip.hbm_bandwidth_tb_per_s and chip.hbm_capacity_gib "
        "(with chip.hbm_usable_gib) for what the stacks add (docs/catalog.md, 'Variants')"
    )


def note_file_stacks_only(system, overrides) -> None:
    """:func:`note_stacks_only` for a variant file: its own ``chip.hbm_stacks`` (not ``--set``'s) with no bandwidth or
    capacity key beside it, in the file or on the command line, and a count other than its root catalog system's. A
    Jalapeño variant with ``chip.hbm_stacks = 8`` alone was priced with six stacks' 15.4 TB/s and 216 GiB (and two
    stacks' background watts more) with no word, where the same ``--set`` got the note (newuser52). ``system``: a
    loaded System; ``overrides``: the ``--set`` pairs applied on top of its file."""
    o = system.origin
    if o is None or o.root is None:
        return
    on_line = {k.split(":", 1)[-1] for k, _ in overrides}  # keys only: a value may be a {value, source} table
    keys = {k for k, _ in o.overrides} - on_line
    key = f"stacks-only:{o.where or system.name}"
    if "chip.hbm_stacks" not in keys or (keys | on_line) & set(STACK_FOLLOW_KEYS) or key in _NOTED:
        return
    from jalapeno.specs.catalog import load_system

    _NOTED.add(key)
    if load_system(o.root).chip.hbm_stacks == system.chip.hbm_stacks:
        return  # the root's own count: nothing changed
    who = f"{o.where or system.name}: chip.hbm_stacks = {system.chip.hbm_stacks}"
    _err.print(_stacks_only_text(who, system.chip), markup=False, highlight=False, soft_wrap=True)


#: The keys of a chip's nominal and of its usable HBM capacity (either unit).
CAPACITY_KEYS = ("chip.hbm_capacity_gib", "chip.hbm_capacity_gb")


USABLE_KEYS = ("chip.hbm_usable_gib", "chip.hbm_usable_gb")


def note_capacity_only(system) -> None:
    """Say once per system that a capacity override (``chip.hbm_capacity_*``, from a variant file or ``--set``)
    without a usable one left the usable HBM — what weights, KV cache and activations are fitted in — at the base's
    stated ``chip.hbm_usable_*``, below the new capacity. A Jalapeño variant with ``hbm_capacity_gib = 288`` (the
    docs' "set chip.hbm_capacity_gib for what the stacks add") was priced with the base's 216 GiB, exactly as
    without it, with no word (newuser51); only ``hardware show``'s "HBM usable" row said so. Lowering the capacity
    alone is refused (usable above nominal, specs/system_load.py); a base that states no usable HBM follows the
    capacity, and no note is due. ``system``: a loaded System (its ``origin`` as specs/variants.py builds it)."""
    o = system.origin
    keys = {k.split(":", 1)[-1] for k, _ in (o.overrides if o is not None else ())}
    c = system.chip
    cap = next((k for k in CAPACITY_KEYS if k in keys), None)
    key = f"capacity-only:{system.path or system.name}"
    if cap is None or keys & set(USABLE_KEYS) or c.hbm_usable_bytes >= c.hbm_capacity_bytes * 0.9999 or key in _NOTED:
        return
    _NOTED.add(key)
    gib = cap.endswith("gib")  # the figures in the unit of the key given
    usable, unit, scale = (USABLE_KEYS[0], "GiB", 2**30) if gib else (USABLE_KEYS[1], "GB", 1e9)
    _err.print(
        f"note: {system.name}: {cap} sets the nominal HBM to {c.hbm_capacity_bytes / scale:,.4g} {unit}, but "
        f"the usable HBM the weights and KV cache are fitted in stays {c.hbm_usable_bytes / scale:,.4g} {unit}, "
        f"as the base's file states it: set {usable} too for what the extra capacity adds (docs/catalog.md, "
        "'Variants')",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _base_stacks(system: str, overrides) -> int | None:
    """The HBM stack count of ``system`` without ``overrides``, where a ``chip.hbm_stacks`` override is among
    them (else None: the base is not loaded for nothing)."""
    if not any(k.split(":", 1)[-1] == "chip.hbm_stacks" for k, _ in overrides):
        return None
    from jalapeno.specs.catalog import load_system

    return load_system(system).chip.hbm_stacks


def note_shared_ports(system) -> None:
    """Say once per system that a level reached through its inner level's ports (``shares_ports_with_inner``) is
    given a faster rate than those ports: the link power counts each chip's own ports once, at the inner level's
    rate (specs/power.scale_up_bytes_per_s), so the faster level costs no watts. ``--set
    levels.rack.bandwidth_gb_per_s=1200`` on Jalapeño (its rack reached through the tray's ~600 GB/s ports) priced
    a 1,200 GB/s rack at the 700 W TDP, where the tray at 1,200 costs 748 W (newuser52). ``system``: a loaded
    System."""
    levels = system.levels
    for inner, lv in zip(levels, levels[1:]):
        key = f"shared-ports:{system.path or system.name}:{lv.name}"
        if not lv.shares_ports_with_inner or lv.bandwidth_bytes_per_s <= inner.bandwidth_bytes_per_s * 1.0001:
            continue
        if key in _NOTED:
            continue
        _NOTED.add(key)
        fast, own = lv.bandwidth_bytes_per_s / 1e9, inner.bandwidth_bytes_per_s / 1e9
        _err.print(
            f"note: {system.name}: levels.{lv.name}.bandwidth_gb_per_s {fast:,.0f} is above levels.{inner.name}'s "
            f"{own:,.0f}, yet the {lv.name} is reached through the {inner.name}'s ports (shares_ports_with_inner): "
            f"the link power counts those ports at {own:,.0f} GB/s (specs/power.py), so the faster {lv.name} costs "
            f"no watts; set levels.{inner.name}.bandwidth_gb_per_s={fast:g} too for ports that fast "
            "(docs/catalog.md, [[levels]])",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def note_ignored_level_keys(system) -> None:
    """Say once per run per system which of a level's ``torus_dims`` / ``links_per_chip`` its topology
    ignores (cost/collectives.py reads them on ``torus3d`` and ``full_mesh`` only): a file's
    ``torus_dims`` on a switched level, or ``--set levels.global.topology=switched`` on Jalapeño, priced
    the switch with no word that the torus shape was dropped. Not refused: that what-if is meant to work. Which
    topology reads which key: cost/collectives.LEVEL_KEY_TOPOLOGIES (the one table; the note's words follow it)."""
    from jalapeno.cost.collectives import LEVEL_KEY_TOPOLOGIES

    keys = [
        f"levels.{lv.name}.{k} ({lv.topology})"
        for lv in system.levels
        for k in LEVEL_KEY_TOPOLOGIES
        if getattr(lv, k) is not None and lv.topology not in LEVEL_KEY_TOPOLOGIES[k]
    ]
    key = f"level-keys:{system.path or system.name}"
    if keys and key not in _NOTED:
        _NOTED.add(key)
        reads = ", ".join(
            f"{k} {'applies ' if i == 0 else ''}to a {' or '.join(t)} {'level' if i == 0 else 'one'}"
            for i, (k, t) in enumerate(LEVEL_KEY_TOPOLOGIES.items())
        )
        _err.print(
            f"note: {system.name}: {', '.join(keys)} are not read: {reads}; the level is priced as its topology says "
            "(docs/catalog.md, [[levels]])",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def note_unread_efficiency(sets, model, precision, pricer, reuses_prefixes: bool = False) -> None:
    """Say once per run which ``--set efficiency.*`` keys no op of ``model`` at ``precision`` reads under the
    priced set of ``pricer`` (analysis/unread_keys.py: judged from the op table's lookups, fallbacks counted):
    ``moe.bf16.*`` on DeepSeek-R1 FP8 (shadowed by ``moe[fp8]``), ``moe.w4a16.*`` on a model without INT4 experts,
    ``all_to_all_fraction`` on a dense model changed nothing, with no word (robust42, break42). A note, as for the
    level keys: a --set may be meant for another model of the same system. ``reuses_prefixes``: the run reuses
    prompt prefixes (an agentic workload, a trace), so ``kv_tiers.*`` keys are read (:func:`unread_tiers_note`)."""
    from jalapeno.analysis.unread_keys import unread_note
    from jalapeno.specs.system_overrides import parse_sets

    keys = [k.split(":", 1)[-1] for k, _ in parse_sets(sets or ())]
    tiers = None if reuses_prefixes else unread_tiers_note(keys)
    for note in (unread_note(keys, model, precision, pricer.system, pricer.efficiency), switched_off_note(keys), tiers):
        if note and note not in _NOTED:
            _NOTED.add(note)
            _err.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)


def unread_tiers_note(keys) -> str | None:
    """The note for ``--set kv_tiers.*`` keys on a fixed-length run, or None: the KV tiers below HBM hold reused
    prefixes (serve/sessions.py, the simulator's PrefixCache), and a fixed-length workload's requests share none, so
    ``predict --set kv_tiers.host.bandwidth_gb_per_s=225`` priced exactly as without it, with no word (break47).

    >>> unread_tiers_note(["kv_tiers.host.link", "chip.tdp_w"])[:52]
    '--set kv_tiers.host.link is not read by a fixed-leng'
    >>> unread_tiers_note(["chip.tdp_w"]) is None
    True
    """
    named = [k for k in dict.fromkeys(keys) if k.startswith("kv_tiers.") or k == "kv_tiers"]
    if not named:
        return None
    return (
        f"--set {', '.join(named)} is not read by a fixed-length workload: the KV tiers below HBM hold reused "
        "prefixes, and its requests share none; an agentic workload (-w agentic:coding-agent) or a trace with "
        "session_id reads them (docs/agentic.md §1)"
    )


def switched_off_note(keys, where: str = "--set") -> str | None:
    """The note for dotted keys ``efficiency.FIELD`` whose cost a shipped-off switch gates
    (cli/common.SWITCHED_RULE_FIELDS, read at call time), or None; ``where`` names what set them (``--set``, or a
    system file: :func:`note_switched_off_file`). ``--set efficiency.prompt_step_s_per_token=1e-3`` was accepted and
    priced exactly as without it (cost/step.PROMPT_TOKEN_STEP_ON off, round 43), with no word (break44), where
    ``--stack trtllm@1.1.0rc2`` marks the same field NOT CHARGED."""
    from jalapeno.cli.common import SWITCHED_RULE_FIELDS, switched_off_fields

    off = switched_off_fields()
    named = [k for k in dict.fromkeys(keys) if k.startswith("efficiency.") and k.split(".", 1)[1] in off]
    if not named:
        return None
    gates = ", ".join(
        sorted(
            {
                f"{module.removeprefix('jalapeno.').replace('.', '/')}.{switch}"
                for module, switch in (SWITCHED_RULE_FIELDS[k.split(".", 1)[1]] for k in named)
            }
        )
    )
    return (
        f"{where} {', '.join(named)} is not charged: its switch {gates} is off (shipped off), so the what-if "
        "changes nothing"
    )


def note_switched_off_file(system) -> None:
    """Say once per file which ``[efficiency]`` fields of a system file (its base chain's included; ``--set`` keys
    are :func:`note_unread_efficiency`'s) a shipped-off switch keeps from being charged: a variant TOML setting
    ``[efficiency] prompt_step_s_per_token`` was priced exactly as without it, with no word, where the same
    ``--set`` got the note (break44, mend44). ``system``: a loaded System (its ``origin`` as specs/variants.py
    builds it)."""
    o = system.origin
    from_set = {k for k, _ in o.overrides if k.startswith("efficiency.")}
    keys = [f"efficiency.{k}" for k, _ in o.efficiency if f"efficiency.{k}" not in from_set]
    note = switched_off_note(keys, f"{o.where or system.name}:") if keys else None
    if note and note not in _NOTED:
        _NOTED.add(note)
        _err.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)


def note_no_band(pr, efficiency: str, mid) -> None:
    """Say once per system that ``--efficiency low|high`` priced it with the very set ``calibrated`` does: a system
    fitted on its own kernels has one set (data/calibration kind ``measured``: no ``[low]``/``[high]``, docs/model.md
    §11.2), as has a user file without a base; ``predict -s h200 --efficiency low`` printed the calibrated figures
    with no word (break44). ``pr``, ``mid``: the pricers of ``efficiency`` and of ``calibrated``, compared on every
    efficiency parameter but the source label."""
    import dataclasses

    key = f"band:{pr.system.name}:{efficiency}"
    if key in _NOTED or dataclasses.replace(pr.efficiency, source="") != dataclasses.replace(mid.efficiency, source=""):
        return
    _NOTED.add(key)
    _err.print(
        f"note: --efficiency {efficiency}: {pr.system.name} has no {efficiency} set (one set, fitted on its own "
        "kernels, or a file without one), so it is priced exactly as calibrated; its uncertainty is its "
        "measured error band (`jalapeno compare --bands`, `jalapeno audit`; docs/audit.md §3.1)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
