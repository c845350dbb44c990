"""Engine release numbers and the behaviours that hold for a range of them (issue 18).

The same serving engine changes behaviour between releases (TensorRT-LLM's MoE exchange before
1.2.0rc3, docs/stacks.md). A software-stack profile (specs/stacks.py, ``version_rules`` in
data/stacks.toml) states such a behaviour as a :class:`VersionRule`; :func:`version_key` orders
the release numbers the rules and the recipes (data/engines.toml) name. Which fields a rule may
set, and what values they take, is the stack's business (specs/stacks.RULE_FIELDS): this module
parses the ranges and their sources only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from jalapeno.errors import SpecError

#: profiles whose engine release a deployment rule reads besides their own ``version_rules``, each with that rule:
#: ``--stack NAME@VERSION`` is taken for them (specs/stacks.get_stack) and the commands that build a deployment apply
#: it (deploy/vllm_fp8_moe.release_moe_backend)
DEPLOYMENT_RELEASE_RULES = {
    "vllm": "the MoE backend of FP8 routed experts on Hopper by release (deploy/vllm_fp8_moe.py: FlashInfer CUTLASS "
    "at every layout in 0.16.0, at EP > 1 from 0.17.0)",
}

#: each number at most 12 digits: a 5,000-digit one raised Python's int-digit limit, a traceback (break50)
_VERSION = re.compile(r"^v?(\d{1,12}(?:\.\d{1,12})*)(?:(a|b|rc)(\d{1,12}))?(?:\.post(\d{1,12}))?$")


def version_key(version: str, where: str = "version") -> tuple:
    """A sortable key of a release number (PEP 440 subset: ``1.2.0``, ``1.2.0rc6``, ``1.1.0rc2.post2``):
    pre-releases before the release, post-releases after.

    >>> version_key("1.2.0rc2") < version_key("1.2.0rc3") < version_key("1.2.0") < version_key("1.2.0.post1")
    True
    >>> version_key("1.1.0rc2.post2") < version_key("1.2.0rc3")
    True

    Raises:
        SpecError: not a release number (``where`` names the field).
    """
    m = _VERSION.match(str(version).strip())
    if not m:
        raise SpecError(
            where,
            f"{version!r} is not a release number",
            "give it as the engine prints it, e.g. 1.2.0rc6.post3 or 0.5.9",
        )
    rel = tuple(int(x) for x in m.group(1).split("."))
    rel = rel + (0,) * (4 - len(rel))
    pre = (0, "abrc".index(m.group(2)[0]), int(m.group(3))) if m.group(2) else (1, 0, 0)
    return (*rel, pre, int(m.group(4) or -1))


@dataclass(frozen=True)
class VersionRule:
    """An engine behaviour that holds for a range of the engine's versions (``version_rules`` of a
    profile in data/stacks.toml): ``field`` (one of specs/stacks.RULE_FIELDS) takes ``value`` for
    versions ``since`` <= v < ``before`` ("" = unbounded), as ``source`` (the engine's code or
    release notes at those versions) says. Outside the range the profile's own value holds (its
    newest behaviour). The bounds are parsed once, when the rule is built.

    Raises:
        SpecError: ``since`` or ``before`` is not a release number.
    """

    field: str
    value: object
    since: str
    before: str
    source: str
    _since_key: tuple | None = field(init=False, repr=False, compare=False, default=None)
    _before_key: tuple | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_since_key", version_key(self.since, "since") if self.since else None)
        object.__setattr__(self, "_before_key", version_key(self.before, "before") if self.before else None)

    def holds(self, key: tuple) -> bool:
        """Whether the rule applies at a version of :func:`version_key` ``key``."""
        return (self._since_key is None or self._since_key <= key) and (
            self._before_key is None or key < self._before_key
        )

    @property
    def span(self) -> str:
        """``>= A``, ``< B`` or ``>= A, < B``."""
        return ", ".join(x for x in (self.since and f">= {self.since}", self.before and f"< {self.before}") if x)


def parse_version_rules(
    raw, where: str, rule_fields: tuple[str, ...], check_value: Callable[[str, object, str], object]
) -> tuple[VersionRule, ...]:
    """The ``version_rules`` list of a profile (``where`` names it in errors) as rules.

    ``rule_fields``: the fields a rule may set; ``check_value(field, value, key)`` returns the
    value checked (``key``: the dotted path for its error).

    Raises:
        SpecError: a malformed rule (unknown key or field, bad value, no version bound, no
            source, a bound that is not a release number), naming the field and the fix.
    """
    out = []
    for i, r in enumerate(raw):
        w = f"{where}.version_rules[{i}]"
        if not isinstance(r, dict) or set(r) - {"field", "value", "since", "before", "source"}:
            raise SpecError(w, f"{r!r}", "give { field, value, since and/or before, source }")
        f = r.get("field")
        if f not in rule_fields:
            raise SpecError(f"{w}.field", f"{f!r}", f"use one of {', '.join(rule_fields)}")
        v = check_value(f, r.get("value"), f"{w}.value")
        since, before = str(r.get("since", "")), str(r.get("before", ""))
        if not (since or before) or not str(r.get("source", "")).strip():
            raise SpecError(
                w,
                "needs a version bound (since/before) and a source",
                'give since = "A" and/or before = "B" and where the behaviour is documented',
            )
        for b, name in ((since, "since"), (before, "before")):
            if b:
                version_key(b, f"{w}.{name}")
        out.append(VersionRule(f, v, since, before, str(r["source"])))
    return tuple(out)
