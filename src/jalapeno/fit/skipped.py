"""A measured row a loader skipped (fit/validate.load_inferencex, fit/aic_rows.load_aiconfigurator,
fit/mlperf.load_mlperf): the pair (id, reason) every caller reads, with the catalog system the row names, so
``validate --systems X`` lists only X's skips (it listed B300's when asked for GB200, break46/newuser46)."""

from __future__ import annotations


class Skipped(tuple):
    """``(id, reason)`` — a 2-tuple, unpacked, compared and written to JSON as one — with ``system``: the catalog
    system the row names, None where its hardware maps to none.

    >>> s = Skipped("aic:x", "not in the catalog", "b300")
    >>> s == ("aic:x", "not in the catalog"), s.system, tuple(s)
    (True, 'b300', ('aic:x', 'not in the catalog'))
    """

    system: str | None

    def __new__(cls, rid: str, why: str, system: str | None = None):
        t = super().__new__(cls, (rid, why))
        t.system = system
        return t

    def __getnewargs__(self):  # pickled with its system (workers)
        return (*self, self.system)


def with_systems(skipped: list, system_of: dict) -> list:
    """Each ``(id, reason)`` of ``skipped`` as a :class:`Skipped` with the system ``system_of`` gives its id."""
    return [Skipped(rid, why, system_of.get(rid)) for rid, why in skipped]


def of_systems(skipped: list, systems) -> list:
    """The rows of ``skipped`` whose system is one of ``systems`` (None: all), and those naming none (a row whose
    hardware maps to no catalog system cannot be told apart, so it stays)."""
    if systems is None:
        return list(skipped)
    return [s for s in skipped if getattr(s, "system", None) is None or s.system in systems]
