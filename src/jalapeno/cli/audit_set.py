"""``jalapeno audit --claims FILE``: every statement of a claims file audited, one table as the answer
(analysis/claim_set.py; docs/audit.md §7)."""

from __future__ import annotations

import math

from rich.table import Table

from jalapeno.analysis.win_ranges import EVEN_BAND
from jalapeno.cli.common import console, print_json
from jalapeno.report.compare_cells import WIDE_BAND

#: The audit options a claims file carries itself (refused beside --claims rather than ignored).
FILE_OPTIONS = (
    "system",
    "claim",
    "baseline",
    "model",
    "workload",
    "isl",
    "osl",
    "precision",
    "power",
    "serving",
    "efficiency",
    "sets",
    "instance_chips",
)


def run_claims(path: str, chip_model: str, placement: str | None) -> list[dict]:
    """Audit each claim of ``path``: one dict per claim, the audit's ``--json`` (analysis/audit.AuditResult) with
    ``name``, ``status`` and ``flip`` (analysis/claim_set) added.

    The claims are grouped by the frontiers they read (model, workload, precision, serving: :func:`_group_key`);
    each group runs with one sweep memo (analysis/claims.ClaimContext.full: a frontier several statements read, the
    same baseline or the same system's prediction, band and physical limit, is swept once), the groups in worker
    processes (analysis/workers.in_workers; ``JALAPENO_WORKERS``). The answer is the same bytes as one claim after
    the other with no memo (tests/unit/test_claim_set_perf.py; benchmarks/bench_claims.py times it).

    Raises:
        SpecError, UnknownNameError, InfeasibleDeployment: as ``audit`` on the claim that raises it (its field
            prefixed with the claim's name); of several, the first in the file, as a run of one claim after the
            other raises.
    """
    from jalapeno.analysis.claim_set import load_claims
    from jalapeno.analysis.workers import in_workers

    groups: dict = {}
    for i, c in enumerate(load_claims(path), 1):
        groups.setdefault(_group_key(c), []).append((i, c))
    done, failed = {}, []
    for thunk in in_workers(lambda g: _run_group(g, chip_model, placement), list(groups.values())):
        rows, bad = thunk()
        done.update(rows)
        failed += [bad] if bad is not None else []
    if failed:  # the first failing claim in the file raises its own error, here (a claim raises before any sweep
        i = min(failed)  # or when its model does not fit: cheap to run again)
        _run_group([(i, load_claims(path)[i - 1])], chip_model, placement, raise_error=True)
    return [done[i] for i in sorted(done)]


def _group_key(c: dict) -> tuple:
    """What the frontiers of claim ``c`` (a dict of analysis/claim_set.KEYS) depend on besides the pricers: claims
    with another key share no sweep (analysis/claims.ClaimContext.full keys its memo on these)."""
    return (c.get("model", "deepseek-r1"), c.get("workload"), c.get("precision"), c.get("serving", "both"))


def _run_group(group: list, chip_model: str, placement: str | None, raise_error: bool = False) -> tuple:
    """``(rows, failed)``: ``rows`` ``[(i, row)]`` of the claims ``group`` (``[(i, claim dict)]``) audited in order
    with one sweep memo, ``failed`` the number of the claim that raised a JalapenoError (None: none; the claims after
    it are not run). ``raise_error``: raise it instead."""
    from jalapeno.errors import JalapenoError

    sweeps: dict = {}  # (analysis/claims.ClaimContext.full) its key holds each pricer by identity:
    built: dict = {}  # each (system, efficiency set) is built once and kept for the group
    rows = []
    for i, c in group:
        try:
            rows.append((i, _audit_one(i, c, chip_model, placement, sweeps, built)))
        except JalapenoError:
            if raise_error:
                raise
            return rows, i
    return rows, None


def _audit_one(i: int, c: dict, chip_model: str, placement: str | None, sweeps: dict, built: dict) -> dict:
    """Claim ``c`` (number ``i`` of the file) audited: the audit's ``--json`` with ``name``, ``status``,
    ``power_w_per_chip`` and ``flip``; ``sweeps`` the sweep memo, ``built`` the pricers by (system, efficiency)."""
    from jalapeno.analysis.audit import audit_claim
    from jalapeno.analysis.claim_set import flip_condition, status
    from jalapeno.analysis.claims import parse_claim
    from jalapeno.analysis.power_cost import power_w_per_chip
    from jalapeno.cli.audit_cmds import _context
    from jalapeno.cli.system_opts import system_pricer
    from jalapeno.cost.sliced import chip_model_pricer, refuse_idle_placement
    from jalapeno.errors import SpecError, UnknownNameError

    def pricer(system: str, efficiency: str):
        if (system, efficiency) not in built:
            built[system, efficiency] = chip_model_pricer(system_pricer(system, efficiency), chip_model, placement)
        return built[system, efficiency]

    try:
        cl = parse_claim(c["claim"])
        ctx = _context(
            c.get("model", "deepseek-r1"),
            c.get("workload"),
            None,
            None,
            c.get("precision"),
            c.get("power"),
            c.get("serving", "both"),
        )
        ctx.sweeps = sweeps
        if c.get("power") is not None and "per_kw" not in cl.metric:
            raise SpecError("power", f"{cl.metric} reads no power convention", "drop power from this claim")
        pr = pricer(c["system"], c.get("efficiency", "calibrated"))
        base = pricer(c["baseline"], "calibrated") if c.get("baseline") else None
        refuse_idle_placement([pr] if base is None else [pr, base], placement)  # as chip_opts.chip_model_pricers
        res = audit_claim(ctx, pr, cl, base).as_dict()
    except (SpecError, UnknownNameError) as e:  # say which claim of the file it is
        raise type(e)(f"claim[{i}] ({c['name']}): {e.field}", e.problem, e.fix) from None
    res["name"] = c["name"]
    p = res["predicted"]
    res["status"] = status(p["value"], p["low"], p["high"], cl.value, cl.higher_is_better)
    # a per-kW figure is tok/s over the system's W per chip (one figure but under ``load``): the W that turns it
    watts = power_w_per_chip(pr.system, ctx.convention)[0] if ctx.convention != "load" else None
    res["power_w_per_chip"] = watts
    res["flip"] = flip_condition(res, watts, ctx.convention)
    res["even"] = is_even(res)
    if "per_kw" in cl.metric:  # the watts each side divides by (its basis: sustained vs a baseline's TDP)
        res["power_divisor"] = power_divisor(ctx.convention, [pr.system] + ([base.system] if base is not None else []))
    return res


def power_divisor(convention: str, systems: list) -> str:
    """The power each system's tok/s/kW divides by under ``convention``, in compare's words (report/tables.
    power_caption): ``power (sustained): jalapeno chip sustained, 550 W per chip; gb300-nvl72 chip TDP (no sustained
    figure published), 1,400 W per chip`` — a per-kW ratio at 'sustained' sets Jalapeño's 550 W against GB300's
    TDP, and the audit had said only 'power sustained' (analyst55). ``load``: the power drawn at each point.

    Args:
        convention: chip, sustained, all-in or load (analysis/power_cost.CONVENTIONS).
        systems: :class:`~jalapeno.specs.system.System` objects, the audited one first.
    """
    from jalapeno.analysis.power_cost import power_w_per_chip

    if convention == "load":
        return "power (load): the chip power drawn at each operating point (specs/power.py; no single W per chip)"
    parts = []
    for s in systems:
        w, label = power_w_per_chip(s, convention)
        parts.append(f"{s.name} {label}, {w:,.0f} W per chip")
    return f"power ({convention}): " + "; ".join(parts)


def _num(v) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    return f"{v:,.0f}" if abs(v) >= 1e3 else f"{v:.3g}"


def _point(op: dict | None) -> str:
    """A claims-table 'at (bound)' cell: the speed, the instance's chips and the bound.

    >>> _point({"interactivity": 51.2, "chips": 1310, "bound": "overhead"})
    '51 tok/s/user (1,310-chip instance), overhead'
    """
    if not op:
        return "does not reach it"
    return f"{op['interactivity']:.0f} tok/s/user{_instance(op)}, {op['bound']}"


def _instance(op: dict) -> str:
    """`` (N-chip instance)``: the size of the deployment a claim is read on (analyst55: DeepSeek-R1's tok/W @50 vs GB300
    is read on a 1,310-chip Jalapeño instance, over ten 128-chip racks (1,310 / 128 = 10.2), and a 598-chip GB300
    one; nothing said so)."""
    return f" ({op['chips']:,}-chip instance)" if op.get("chips") else ""


def print_claims(rows: list[dict], json_out: bool) -> None:
    """The answer: ``--json`` a list of the rows (:func:`run_claims`), else one table of them and a tally."""
    if json_out:
        print_json({"claims": rows, "tally": _tally(rows)})
        return
    t = Table(title="claims audited (docs/audit.md §7)")
    for col in (
        "claim",
        "statement",
        "predicted",
        "band",
        "status (verdict)",
        "system at (bound)",
        "baseline at (bound)",
        "flips",
    ):
        t.add_column(col, overflow="fold")  # a metric name or parameter key whole, not cut with '…'

    for r in rows:
        c, p, unit = r["claim"], r["predicted"], r["claim"]["unit"]
        u = "x" if unit == "x" else f" {unit}"
        vs = f" vs {c['baseline']}" if c["baseline"] else ""
        op = r.get("operating_point") or {}
        le = c["metric"].split("@")[0].removesuffix("_ratio") == "min_e2e_s"  # lower is better
        t.add_row(
            r["name"],
            f"{c['metric']} {'<=' if le else '>='} {c['value']:g}{u}{vs}{_basis(r)}",
            _num(p["value"]) + u,
            f"{_num(p['low'])} to {_num(p['high'])}{u}{_wide(p['low'], p['high'])}",
            f"{r['status']} ({r['verdict']}){EVEN_MARK if r.get('even') else ''}",
            _point(op.get("system")),
            _point(op.get("baseline")) if c["baseline"] else "-",
            r["flip"],
        )
    t.caption = (
        "status: held (the band's unfavourable end meets the claim), within band (the band straddles it), "
        "not held (not even its favourable end meets it); verdict: the audit's (holds, plausible, requires, "
        "impossible); at: the frontier point the metric is read at, its instance's chips (prefill + decode workers) and "
        "its step's bound; flips: the move of "
        "the system's figure that would turn the answer round, and the nearest single parameter"
    )
    if any(r.get("even") for r in rows):
        t.caption += "; " + EVEN_CAPTION
    if any(_wide(r["predicted"]["low"], r["predicted"]["high"]) for r in rows):
        t.caption += (
            f"; [wide band: Nx]: high / low of {WIDE_BAND:g}x or more — a status inside it rests on an assumption's "
            "spread, not a prediction to quote alone (as compare --bands and audit --claim)"
        )
    console.print(t)
    for line in dict.fromkeys(r["power_divisor"] for r in rows if r.get("power_divisor")):  # each basis once
        console.print(line, markup=False, soft_wrap=True)
    tally = _tally(rows)
    console.print("tally: " + ", ".join(f"{k} {v}" for k, v in tally.items()) + f" of {len(rows)}", markup=False)


#: the mark of a ratio claim whose prediction is within compare's even band of the claim, and what it means
EVEN_MARK = "; even"
EVEN_CAPTION = (
    f"even: the predicted ratio is within {EVEN_BAND:.0%} of the claim (1/{1 + EVEN_BAND:g} to {1 + EVEN_BAND:g}x "
    "of it), the model's median error on throughput and per-user speed: too close to call, whatever the status (at a "
    "1x claim, a tie, as compare's 'where it wins' reads it)"
)


def is_even(res: dict) -> bool:
    """Whether a ratio claim's prediction is within compare's even band of the claim (analysis/win_ranges.EVEN_BAND,
    5%: the model's held-out median error on throughput per chip and per-user speed). analyst55: DeepSeek-R1's max
    tok/s/user vs GB300, 1.02x, read 'within band (holds)' in the claims table where compare's 'where it wins' calls
    a 2% lead even; the table now says so.

    >>> c = {"metric": "max_interactivity_ratio", "value": 1.0, "baseline": "gb300-nvl72"}
    >>> [is_even({"claim": c, "predicted": {"value": v}}) for v in (1.02, 0.96, 1.06, 0.94, None)]
    [True, True, False, False, False]
    >>> is_even({"claim": {**c, "baseline": None}, "predicted": {"value": 1.0}})  # a plain claim: no ratio
    False
    """
    c, v = res["claim"], res["predicted"]["value"]
    if not c.get("baseline") or v is None or not math.isfinite(v) or v <= 0:
        return False
    return 1 / (1 + EVEN_BAND) <= v / c["value"] <= 1 + EVEN_BAND


def _basis(r: dict) -> str:
    """What a claims-table statement is read under: the precision, and the power convention for a per-kW metric
    (the table named neither: 'tok_s_per_kw_ratio@50 >= 1x' at fp4 and all-in power read the same as at fp8 and
    sustained, analyst55).

    >>> _basis({"claim": {"metric": "tok_s_per_kw_ratio@50"}, "context": {"precision": "fp4", "power": "all-in"}})
    ' (fp4, all-in power)'
    >>> _basis({"claim": {"metric": "max_interactivity_ratio"}, "context": {"precision": "int4", "power": "all-in"}})
    ' (int4)'
    """
    ctx = r.get("context") or {}
    parts = [ctx["precision"]] if ctx.get("precision") else []
    if "per_kw" in r["claim"]["metric"] and ctx.get("power"):
        parts.append(f"{ctx['power']} power")
    return f" ({', '.join(parts)})" if parts else ""


def _wide(low, high) -> str:
    """The wide-band flag compare --bands and audit --claim put on a band whose ends are WIDE_BAND apart or more
    (the claims table printed 0.828 to 4.68x unflagged where audit --claim flags the same band, analyst55).

    >>> _wide(0.828, 4.68), _wide(1.52, 3.09), _wide(None, 2.0)
    (' [wide band: 5.7x]', ' [wide band: 2.0x]', '')
    """
    ok = all(v is not None and math.isfinite(v) for v in (low, high))
    return f" [wide band: {high / low:.1f}x]" if ok and low > 0 and high / low >= WIDE_BAND else ""


def _tally(rows: list[dict]) -> dict:
    """``{status: count}`` in the order held, within band, not held.

    >>> _tally([{"status": "held"}, {"status": "not held"}, {"status": "held"}])
    {'held': 2, 'within band': 0, 'not held': 1}
    """
    return {k: sum(r["status"] == k for r in rows) for k in ("held", "within band", "not held")}


def point_lines(d: dict, system, convention: str, baseline=None) -> list[str]:
    """The single audit's lines under its table (``audit --claim``): where each side's metric is read and what
    bounds it there, and what would turn the answer round — the two columns the claims table carries.

    Args:
        d: the audit's ``--json`` dict (analysis/audit.AuditResult.as_dict).
        system: the audited :class:`~jalapeno.specs.system.System` (its W per chip for a per-kW claim's flip).
        convention: the power convention (``load``: no single W per chip).
        baseline: the baseline's System (None: a plain claim); with ``system``, the per-kW claim's power basis line.

    Returns:
        ``["read at: jalapeno 51 tok/s/user on <deployment>, bound decode compute; ...", "status held (...); turns:
        fails if ..."]``.
    """
    from jalapeno.analysis.claim_set import STATUS_MEANING, flip_condition, status
    from jalapeno.analysis.power_cost import power_w_per_chip

    out, op = [], d.get("operating_point") or {}
    names = [(d["claim"]["system"], op.get("system"))]
    if d["claim"]["baseline"]:
        names.append((d["claim"]["baseline"], op.get("baseline")))
    parts = [
        f"{n} {p['interactivity']:.0f} tok/s/user on {p['deployment']}{_instance(p)}, bound {p['bound']}"
        if p
        else f"{n}: no point reaches it"
        for n, p in names
    ]
    out.append("read at: " + "; ".join(parts) + " (the frontier point the metric is read at; docs/audit.md §7)")
    watts = power_w_per_chip(system, convention)[0] if convention != "load" else None
    p = d["predicted"]
    higher = d["claim"]["metric"].split("@")[0].removesuffix("_ratio") != "min_e2e_s"
    st = status(p["value"], p["low"], p["high"], d["claim"]["value"], higher)
    even = f" {EVEN_CAPTION};" if is_even(d) else ""
    out.append(f"status {st} ({STATUS_MEANING[st]});{even} turns: " + flip_condition(d, watts, convention))
    if "per_kw" in d["claim"]["metric"]:
        out.append(power_divisor(convention, [system] + ([baseline] if baseline is not None else [])))
    return out


def audit_claims_file(ctx, path: str, chip_model: str, placement: str | None, json_out: bool) -> None:
    """``audit --claims FILE``: run and print its claims; an option the file sets itself (``ctx``: the audit command's
    click context, which says where each option came from) is refused, not ignored.

    Raises:
        SpecError: field ``--claims``, naming the option given beside it.
    """
    from jalapeno.errors import SpecError

    # by the source's name: typer may carry its own click, whose ParameterSource is another enum
    given = [
        "--" + n.replace("_", "-").replace("sets", "set")
        for n in FILE_OPTIONS
        if getattr(ctx.get_parameter_source(n), "name", "") == "COMMANDLINE"
    ]
    if given:
        raise SpecError(
            "--claims",
            f"each claim of the file is audited as the file states it: {', '.join(given)} beside it would be ignored",
            "drop it: give it as a key of the file (docs/audit.md §7 lists "
            "them; a top-level key is every claim's default), or audit that claim alone with --claim",
        )
    print_claims(run_claims(path, chip_model, placement), json_out)
