"""Which release prices each aiconfigurator and InferenceX row: its own label or its launch recipe, and the version rules
that apply at each (issue 18, round 32, relabel32).

For every matched point (fit/stack_fit.load_points), grouped by source, system and framework label: the release its
source states (a release image's or InferenceX's ``engine_version``, else an aiconfigurator label's:
fit/aic_release.label_release), the launch recipe's (deploy/engine_version.point_engine_version), the release round 31
priced it at (the stated ``engine_version``, else the recipe's; "" for an unstated aiconfigurator row), the one
validation prices it at now (fit/validate.point_release) and the version rules of its profile (data/stacks.toml
``version_rules``) that hold at the old and the new release. ``CROSSED``: they differ, so the row's behaviour changed.
Nothing is fitted or written. Needs the aiconfigurator-core package (pip install -e ".[calibrate]").
Run: python scripts/aic_label_release.py   (a few seconds)
"""

from __future__ import annotations

import collections

from jalapeno.deploy.engine_version import point_engine_version
from jalapeno.fit.aic_release import label_release
from jalapeno.fit.aic_sweeps import release_stated
from jalapeno.fit.searched import FRAMEWORK_ALIASES
from jalapeno.fit.stack_fit import load_points
from jalapeno.fit.validate import point_release
from jalapeno.specs.stacks import stack_for_framework


def recipe_release(p) -> str:
    """The release a point's launch recipe names ("" when none does), as point_release falls back to it."""
    fw = p.framework.strip().split(" ")[0].lower()
    return point_engine_version(p.system, p.model, FRAMEWORK_ALIASES.get(fw, fw), p.precision, p.mode, p.uses_mtp)


def table() -> list[tuple]:
    """(rows, source, system, framework, stated, recipe, before, now, profile, rules before, rules now, CROSSED) per
    group, sorted."""
    groups: collections.Counter = collections.Counter()
    for p in load_points():
        stated = p.engine_version or (label_release(p.framework) if p.source == "aiconfigurator" else "")
        recipe, now = recipe_release(p), point_release(p)
        silent = p.source == "aiconfigurator" and not p.engine_version and not release_stated(p.framework)
        before = "" if silent else p.engine_version or recipe
        st = stack_for_framework(p.framework, p.system)
        rules_before = ",".join(r.field for r in st.rules_at(before)) or "-"
        rules_now = ",".join(r.field for r in st.rules_at(now)) or "-"
        groups[
            (
                p.source,
                p.system,
                p.framework,
                stated or "-",
                recipe or "-",
                before or "-",
                now or "-",
                st.name,
                rules_before,
                rules_now,
                "CROSSED" if rules_before != rules_now else "",
            )
        ] += 1
    return [(n, *k) for k, n in sorted(groups.items())]


def main() -> None:
    head = (
        "rows",
        "source",
        "system",
        "framework",
        "stated",
        "recipe",
        "before",
        "now",
        "profile",
        "rules before",
        "rules now",
        "",
    )
    print(" | ".join(head))
    for row in table():
        print(" | ".join(str(x) for x in row))


if __name__ == "__main__":
    main()
