"""``jalapeno audit --claims FILE``: every statement of a claims file audited, one table as the answer
(analysis/claim_set.py; docs/audit.md §7)."""

from __future__ import annotations

import math

from rich.table import Table

from jalapeno.cli.common import console, print_json

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

    Raises:
        SpecError, UnknownNameError, InfeasibleDeployment: as ``audit`` on the claim that raises it (its field
            prefixed with the claim's name).
    """
    from jalapeno.analysis.audit import audit_claim
    from jalapeno.analysis.claim_set import flip_condition, load_claims, status
    from jalapeno.analysis.claims import parse_claim
    from jalapeno.analysis.power_cost import power_w_per_chip
    from jalapeno.cli.audit_cmds import _context
    from jalapeno.cli.chip_opts import chip_model_pricers
    from jalapeno.cli.system_opts import system_pricer
    from jalapeno.errors import SpecError, UnknownNameError

    out = []
    for i, c in enumerate(load_claims(path), 1):
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
            if c.get("power") is not None and "per_kw" not in cl.metric:
                raise SpecError("power", f"{cl.metric} reads no power convention", "drop power from this claim")
            pricers = [system_pricer(c["system"], c.get("efficiency", "calibrated"))]
            if c.get("baseline"):
                pricers.append(system_pricer(c["baseline"], "calibrated"))
            pr, *base = chip_model_pricers(pricers, chip_model, placement)
            res = audit_claim(ctx, pr, cl, base[0] if base else None).as_dict()
        except (SpecError, UnknownNameError) as e:  # say which claim of the file it is
            raise type(e)(f"claim[{i}] ({c['name']}): {e.field}", e.problem, e.fix) from None
        res["name"] = c["name"]
        p = res["predicted"]
        res["status"] = status(p["value"], p["low"], p["high"], cl.value, cl.higher_is_better)
        # a per-kW figure is tok/s over the system's W per chip (one figure but under ``load``): the W that turns it
        watts = power_w_per_chip(pr.system, ctx.convention)[0] if ctx.convention != "load" else None
        res["power_w_per_chip"] = watts
        res["flip"] = flip_condition(res, watts)
        out.append(res)
    return out


def _num(v) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    return f"{v:,.0f}" if abs(v) >= 1e3 else f"{v:.3g}"


def _point(op: dict | None) -> str:
    if not op:
        return "does not reach it"
    return f"{op['interactivity']:.0f} tok/s/user, {op['bound']}"


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
            f"{c['metric']} {'<=' if le else '>='} {c['value']:g}{u}{vs}",
            _num(p["value"]) + u,
            f"{_num(p['low'])} to {_num(p['high'])}{u}",
            f"{r['status']} ({r['verdict']})",
            _point(op.get("system")),
            _point(op.get("baseline")) if c["baseline"] else "-",
            r["flip"],
        )
    t.caption = (
        "status: held (the band's unfavourable end meets the claim), within band (the band straddles it), "
        "not held (not even its favourable end meets it); verdict: the audit's (holds, plausible, requires, "
        "impossible); at: the frontier point the metric is read at and its step's bound; flips: the move of "
        "the system's figure that would turn the answer round, and the nearest single parameter"
    )
    console.print(t)
    tally = _tally(rows)
    console.print("tally: " + ", ".join(f"{k} {v}" for k, v in tally.items()) + f" of {len(rows)}", markup=False)


def _tally(rows: list[dict]) -> dict:
    """``{status: count}`` in the order held, within band, not held.

    >>> _tally([{"status": "held"}, {"status": "not held"}, {"status": "held"}])
    {'held': 2, 'within band': 0, 'not held': 1}
    """
    return {k: sum(r["status"] == k for r in rows) for k in ("held", "within band", "not held")}


def point_lines(d: dict, system, convention: str) -> list[str]:
    """The single audit's lines under its table (``audit --claim``): where each side's metric is read and what
    bounds it there, and what would turn the answer round — the two columns the claims table carries.

    Args:
        d: the audit's ``--json`` dict (analysis/audit.AuditResult.as_dict).
        system: the audited :class:`~jalapeno.specs.system.System` (its W per chip for a per-kW claim's flip).
        convention: the power convention (``load``: no single W per chip).

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
        f"{n} {p['interactivity']:.0f} tok/s/user on {p['deployment']}, bound {p['bound']}"
        if p
        else f"{n}: no point reaches it"
        for n, p in names
    ]
    out.append("read at: " + "; ".join(parts) + " (the frontier point the metric is read at; docs/audit.md §7)")
    watts = power_w_per_chip(system, convention)[0] if convention != "load" else None
    p = d["predicted"]
    higher = d["claim"]["metric"].split("@")[0].removesuffix("_ratio") != "min_e2e_s"
    st = status(p["value"], p["low"], p["high"], d["claim"]["value"], higher)
    out.append(f"status {st} ({STATUS_MEANING[st]}); turns: " + flip_condition(d, watts))
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
