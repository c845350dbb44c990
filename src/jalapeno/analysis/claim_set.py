"""A whole vendor claim as a set of checkable statements: ``jalapeno audit --claims FILE`` (docs/audit.md §7).

A press-release claim ("beats GB200 and GB300 on tokens per watt and per-user speed on three models") is many
audits (analysis/audit.py): one per model, baseline and metric. A claims file lists them; each is audited and
read back as one row of the answer:

- ``status``: ``held`` (the band's unfavourable end still meets the claim), ``within band`` (the band straddles
  it: the prediction alone does not settle it) or ``not held`` (not even the band's favourable end meets it);
  the audit's own verdict (holds / plausible / requires / impossible) beside it;
- the operating point and the bound of each side's step there (analysis/claims.operating_point);
- ``flip``: what would turn the status round — the relative move of the system's figure that puts the
  prediction on the claim, and for a claim the prediction misses the nearest single parameter the audit found.

The file (TOML): top-level keys are defaults for every ``[[claim]]`` table; each table needs ``claim``
(``METRIC[@X]=VALUE`` as ``--claim`` reads it), ``system`` and, for a ``_ratio``, ``baseline``::

    system = "jalapeno"
    workload = "8k1k"
    [[claim]]
    name = "DeepSeek-R1 per watt vs GB200 at 50 tok/s/user"
    model = "deepseek-r1"
    baseline = "gb200-nvl72"
    claim = "tok_s_per_kw_ratio@50=1.0"
"""

from __future__ import annotations

import difflib
import math
import tomllib
from pathlib import Path

from jalapeno.analysis.audit import meets_claim
from jalapeno.errors import SpecError

#: The keys a claim (or the file's defaults) may set, each as the audit option of the same name.
KEYS = ("name", "claim", "system", "baseline", "model", "workload", "precision", "power", "serving", "efficiency")
#: Each status in words (the caption of the claims table, the single audit's status line).
STATUS_MEANING = {
    "held": "the band's unfavourable end meets the claim",
    "within band": "the band straddles the claim: the prediction alone does not settle it",
    "not held": "not even the band's favourable end meets the claim",
}


def load_claims(path: str | Path) -> list[dict]:
    """The claims of a claims file, each a dict of :data:`KEYS` (defaults merged in; ``name`` defaults to the
    claim text).

    Raises:
        SpecError: field ``--claims``: the file is missing, not TOML, has no ``[[claim]]`` table, or a key
            outside :data:`KEYS`; field ``claim[i]``: a table without ``claim`` or ``system``; field
            ``claim[i].<key>``: a key that is not a non-empty string, or a name another claim has; field the path: a
            file specs/files.read_user_text refuses (a directory, unreadable, too large, not UTF-8).
    """
    p = Path(path)
    if not p.exists() and not p.is_symlink():  # a directory, a pipe, a dangling link: read_user_text names each
        raise SpecError("--claims", f"no file {str(p)!r}", "give a TOML file of [[claim]] tables (docs/audit.md §7)")
    from jalapeno.specs.files import read_user_text  # every user file read once (size, encoding, byte-order mark)

    text = read_user_text(p, "a claims TOML file", "give a TOML file of [[claim]] tables (docs/audit.md §7)")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError("--claims", f"{p} is not TOML: {e}", "fix the file (docs/audit.md §7 has an example)") from None
    rows = data.pop("claim", None)
    if isinstance(rows, dict):  # [claim]: one table, read as the key claim's sub-keys (break55)
        raise SpecError(
            "--claims",
            f"{p} has a [claim] table (one bracket: a single table), not [[claim]] tables",
            "write each claim's header as [[claim]] (two brackets: one table per statement, docs/audit.md §7)",
        )
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        raise SpecError("--claims", f"{p} has no [[claim]] tables", "add one [[claim]] table per statement")
    out = []
    for i, row in enumerate([data, *rows]):
        bad = sorted(set(row) - set(KEYS))
        if bad:
            where = "the file's defaults" if i == 0 else f"claim {i}"
            near = [f"{b} (did you mean {m[0]}?)" if (m := difflib.get_close_matches(b, KEYS, n=1)) else b for b in bad]
            raise SpecError("--claims", f"{where}: unknown key(s) {', '.join(near)}", f"use only {', '.join(KEYS)}")
        _check_strings(row, i)
    for i, row in enumerate(rows, 1):
        c = {**data, **row}
        for k in ("claim", "system"):
            if not isinstance(c.get(k), str) or not c[k]:
                raise SpecError(f"claim[{i}]", f"no {k}", f'give {k} = "..." in the table or at the top of the file')
        c.setdefault("name", c["claim"])
        out.append(c)
    _check_names_unique(out, ["name" in data or "name" in r for r in rows])
    return out


def _check_strings(row: dict, i: int) -> None:
    """Refuse a key of one claim table (or of the file's defaults, ``row``) that is not a non-empty string: every
    key is an audit option's text (``name = 5`` failed in the table's rendering with a traceback, ``precision =
    ["fp8"]`` in the grouping of the claims; ``system = 5`` was told "no system"). ``i``: the table's number, 0 for
    the file's top-level defaults.

    >>> _check_strings({"name": "a", "system": "jalapeno"}, 1)

    Raises:
        SpecError: field ``claim[i].<key>`` (``<key> (the file's top-level default)``), naming the value and its
            TOML type.
    """
    for k, v in row.items():
        if isinstance(v, str) and v.strip():
            continue
        where = f"claim[{i}].{k}" if i else f"{k} (the file's top-level default)"
        shown = str(v).lower() if isinstance(v, bool) else repr(v)  # TOML's true, not Python's True
        got = "an empty string" if isinstance(v, str) else f"{_toml_type(v)} {shown}"
        fix = "drop it for a plain claim (a _ratio claim names its baseline)" if k == "baseline" else "drop it"
        raise SpecError(where, f"must be a non-empty string, got {got}", f'write {k} = "..." (in quotes), or {fix}')


def _toml_type(v: object) -> str:
    """The TOML word for a value's type, as a claims file spells it.

    >>> _toml_type(5), _toml_type(True), _toml_type(["fp8"]), _toml_type({"a": 1})
    ('an integer', 'a boolean', 'an array', 'a table')
    """
    words = {bool: "a boolean", int: "an integer", float: "a float", list: "an array", dict: "a table"}
    return words.get(type(v), f"a {type(v).__name__}")


def _check_names_unique(claims: list[dict], named: list[bool]) -> None:
    """Refuse two claims of one name: the answer's table and ``--json`` tell the claims apart by name alone (a
    claim with no ``name`` is named by its ``claim`` text, so two models' ``max_interactivity_ratio=1.0`` collide).
    ``named``: for each claim, whether the file gave its name.

    Raises:
        SpecError: field ``claim[j].name``, naming the earlier claim of that name.
    """
    seen: dict[str, int] = {}
    for j, (c, given) in enumerate(zip(claims, named, strict=True), 1):
        i = seen.setdefault(c["name"], j)
        if i != j:
            how = "" if given else " (a claim without a name is named by its claim text)"
            raise SpecError(
                f"claim[{j}].name",
                f"{c['name']!r} is also claim[{i}]'s name{how}: the answer tells the claims apart by name",
                'give each [[claim]] table its own name = "..."',
            )


def status(predicted: float, low: float, high: float, claim: float, higher: bool = True) -> str:
    """``held`` (the band's unfavourable end meets ``claim``), ``not held`` (its favourable end does not) or
    ``within band`` (one end meets it); an undefined end (NaN: that set never reaches @X) does not meet it. With
    no band (both ends NaN) the prediction decides: ``held`` or ``not held``.

    >>> status(1.40, 0.99, 2.19, 1.0), status(1.40, 1.05, 2.19, 1.0), status(0.80, 0.57, 0.98, 1.0)
    ('within band', 'held', 'not held')
    >>> status(6.9, 6.0, 7.5, 7.0, higher=False)
    'within band'
    """
    ends = [v for v in (low, high) if v is not None and math.isfinite(v)]
    if not ends:
        return "held" if meets_claim(predicted, claim, higher) else "not held"
    bad_end = (low if higher else high) if len(ends) == 2 else math.nan
    good_end = max(ends) if higher else min(ends)
    if meets_claim(bad_end, claim, higher):
        return "held"
    return "within band" if meets_claim(good_end, claim, higher) else "not held"


def _move(frac: float) -> str:
    """A relative move in words: a percentage, to one decimal from 99.5% up (a fall of 99.7% is not 100%), as a
    factor from 10x up.

    >>> _move(0.2), _move(0.997), _move(273.09)
    ('20%', '99.7%', '274x')
    """
    if frac >= 9:
        return f"{frac + 1:,.0f}x"
    return f"{frac:.1%}" if 0.995 <= frac < 1 else f"{frac:.0%}"


def flip_condition(res: dict, power_w: float | None = None, convention: str | None = None) -> str:
    """What would turn an audit's answer round, in words, from its ``--json`` dict (analysis/audit.AuditResult).

    A prediction that meets the claim: the fall of the system's figure (or, for a ratio, the same rise of the
    baseline's) that would put it on the claim. One that misses: the rise it needs, and the nearest single
    uncertain parameter that gets there (smallest move, in band first), or the physical limit's word.

    ``power_w``: the system's W per chip under a fixed power convention (chip, sustained, all-in), for a per-kW
    claim: its figure is tok/s over that power, so the claim turns at power_w x predicted / claim W (None: no
    power line; the ``load`` convention's power follows each point and is not one figure). ``convention``: its name
    (chip, sustained, all-in), said beside the watts with the W the figure is read at now (analyst55: "its power
    above 2,204 W per chip" named neither the convention nor Jalapeño's 1,150 W it starts from).

    >>> r = {"claim": {"value": 1.0, "system": "jalapeno", "baseline": "gb200-nvl72", "metric": "tok_s_per_kw_ratio@50"},
    ...      "predicted": {"value": 1.25}, "verdict": "holds", "changes": []}
    >>> flip_condition(r)
    'fails if jalapeno falls 20% (or gb200-nvl72 rises 25%)'
    >>> flip_condition(r, power_w=1150.0)  # 1,150 W x 1.25 / 1.0
    'fails if jalapeno falls 20% (or gb200-nvl72 rises 25%); its power above 1,438 W per chip'
    >>> flip_condition(r, power_w=1150.0, convention="all-in")
    'fails if jalapeno falls 20% (or gb200-nvl72 rises 25%); its all-in power above 1,438 W per chip (now 1,150 W)'
    >>> r.update(predicted={"value": 0.8}, verdict="requires", changes=[{"parameter": "efficiency.hbm_fraction",
    ...          "required": 0.95, "factor": 1.3, "within_band": False}])
    >>> flip_condition(r)
    'holds if jalapeno rises 25%; nearest: efficiency.hbm_fraction 0.95 (1.3x, outside its band)'
    """
    c, pred = res["claim"], res["predicted"]["value"]
    higher = c["metric"].split("@")[0].removesuffix("_ratio") != "min_e2e_s"
    if pred is None or not math.isfinite(pred) or pred <= 0:
        return f"{c['system']} does not reach the claim's speed: no figure to move"
    r = c["value"] / pred
    watts = f"{power_w / r:,.0f} W per chip" if power_w and "per_kw" in c["metric"] else ""
    power = f"its {convention} power" if convention else "its power"
    now = f" (now {power_w:,.0f} W)" if watts and convention else ""
    if res["verdict"] == "holds":
        fall = (1 - r) if higher else (r - 1)
        text = f"fails if {c['system']} {'falls' if higher else 'rises'} {_move(fall)}"
        if c.get("baseline"):
            text += f" (or {c['baseline']} {'rises' if higher else 'falls'} {_move((1 / r - 1) if higher else (1 - 1 / r))})"
        return text + (f"; {power} above {watts}{now}" if watts else "")
    need = (r - 1) if higher else (1 - r)
    text = f"holds if {c['system']} {'rises' if higher else 'falls'} {_move(need)}"
    text += f"; {power} at most {watts}{now}" if watts else ""
    found = [ch for ch in res.get("changes", []) if ch.get("required") is not None and ch.get("factor")]
    if found:
        ch = min(found, key=lambda ch: (not ch["within_band"], abs(math.log(ch["factor"]))))
        text += (
            f"; nearest: {ch['parameter']} {ch['required']:.3g} ({ch['factor']:.2g}x, "
            f"{'inside' if ch['within_band'] else 'outside'} its band)"
        )
    elif res["verdict"] == "impossible":
        text += "; not even the physical limit gets there under the stated specs"
    return text
