"""A measured row a loader skipped (fit/ix_points.load_inferencex, fit/aic_rows.load_aiconfigurator,
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


def _kind(why: str) -> str:
    """The reason ``why`` with what names one row masked: its text up to the first `` (`` (details: times,
    counts), each word holding a digit, ``/``, ``_``, ``:`` or a quote (an id, a system, a model) as ``…``."""
    cut = why.find(" (")
    words = (why if cut < 0 else why[:cut]).split()
    return " ".join("…" if any(c.isdigit() or c in "/_:'\"" for c in w) else w for w in words)


def skip_kinds(skipped: list) -> list[tuple[int, str, str]]:
    """``skipped`` (``(id, reason)`` pairs) grouped by the kind of reason (:func:`_kind`: the reason with the row's
    own ids, names and figures masked): ``(count, first id, its reason)`` per kind, the most frequent first, ties
    in file order. validate listed the first five skips one by one, and on the shipped data those were five
    aiconfigurator rows of one model the catalog lacks, which read as five broken rows among 3,031 skips of four
    expected kinds (rows naming a system or model not in the catalog, disaggregated rows without worker counts,
    repeats of a run, multi-node runs exported as aggregated; fit/aic_rows.py).

    >>> skip_kinds([("a:1", "b300_sxm/Qwen/Q3 not in the catalog"), ("a:2", "disaggregated row without worker counts"),
    ...             ("a:3", "h20_sxm/Llama/L4 not in the catalog"), ("a:4", "repeat of a:9 (same run: within 0.4 ms)")])
    [(2, 'a:1', 'b300_sxm/Qwen/Q3 not in the catalog'), (1, 'a:2', 'disaggregated row without worker counts'), \
(1, 'a:4', 'repeat of a:9 (same run: within 0.4 ms)')]
    """
    kinds: dict[str, list] = {}
    for rid, why in skipped:
        k = kinds.setdefault(_kind(why), [0, rid, why])
        k[0] += 1
    return sorted((tuple(v) for v in kinds.values()), key=lambda v: -v[0])
