"""A point's bound and cap in words, and a band's two ends: the one wording every command, table and the report
page uses (compare's headline and why table, frontier's column and ``--json``, predict, audit, the chart's hover).

- :func:`bound_cell` / :func:`point_bound` (:data:`BOUND_TEXT_FIELD`): a point's bound, a disaggregated point's
  decode and prefill pools both (docs/metrics.md §4; ux53); :func:`bound_text`: the same in a point's short repr;
- :func:`cap_text` / :func:`with_cap` / :func:`point_bound_capped` (:data:`LIMIT_TEXT_FIELD`): what capped a
  point's decode batch (``PointRecord.limit``), ``...; capped by kv_capacity`` (cap53); a disaggregated point's
  with its pool, ``...; decode pool capped by kv_capacity`` (:func:`pool_cap_text`, ux54);
- :func:`band_span` (:data:`BAND_TO`): every command's band format, ``low to high`` (ux47);
- :func:`prefill_chip_share`: a point's prefill-pool share of its chips.

Split from analysis/records.py (round 53, line budget), which re-exports every name. Pure: strings of fields.
"""

from __future__ import annotations

#: The word between a band's two ends, in every command and the report page (compare's headline and ratio bands,
#: audit's band columns, the measured error bands): ``126.8 to 500.1``, ``-12.3% to +8.2%``. Three formats said
#: it before (audit's ``lo-hi``, compare's ``(lo - hi)``, ``+a%..+b%``), and a dash reads as a minus sign before
#: a negative end or inside an exponent (audit printed a band ``3.2e-07-4e-06``); ux47.
BAND_TO = " to "


def band_span(lo: str, hi: str) -> str:
    """A band's two ends as text, lower first as given, joined by :data:`BAND_TO`.

    >>> band_span("3.2e-07", "4e-06"), band_span("-12.3%", "+8.2%")
    ('3.2e-07 to 4e-06', '-12.3% to +8.2%')
    """
    return f"{lo}{BAND_TO}{hi}"


def bound_cell(bound: str, prefill_bound: str = "", prefill_chip_share: float = 0.0) -> str:
    """A point's bound for a table cell: ``bound`` alone when aggregated (no ``prefill_bound``); a
    disaggregated point's decode step's, then its prefill pool's with the pool's share of the chips
    (docs/metrics.md §4).

    >>> bound_cell("hbm_bandwidth"), bound_cell("hbm_bandwidth", "compute", 0.765)
    ('hbm_bandwidth', 'decode hbm_bandwidth; prefill compute (76% of chips)')
    """
    if not prefill_bound:
        return bound
    return f"decode {bound}; prefill {prefill_bound} ({prefill_chip_share:.0%} of chips)"


BOUND_TEXT_FIELD = "bound_text"  #: frontier --json's (per point) and predict --json's :func:`point_bound` words


def point_bound(p) -> str:
    """A point's bound in compare's words (:func:`bound_cell`), for every command that names it: compare's why table
    (win_ranges.iso_bounds: the same fields off the sweep), frontier's column and --json, predict, the chart (ux53).

    >>> from types import SimpleNamespace as P
    >>> point_bound(P(bound="hbm_bandwidth", prefill_bound="compute", prefill_chip_share=0.2))
    'decode hbm_bandwidth; prefill compute (20% of chips)'
    """
    return bound_cell(p.bound, p.prefill_bound, p.prefill_chip_share)


LIMIT_TEXT_FIELD = "limit_text"  #: frontier --json's (per point) and predict --json's :func:`cap_text` words (cap53)


def cap_text(limit: str) -> str:
    """What capped a point's decode batch (its admission cap, ``PointRecord.limit``) in one wording for every
    command that names it (cap53): predict, frontier (column, --json ``limit_text``), the chart's hover, compare's
    headline and why table, the report page. ``limit`` is the cap's name as the serving model sets it
    (serve/agg_batch_cap.aggregated_batch_cap, serve/disagg.decode_curve, serve/sessions): ``kv_capacity`` (the HBM
    left after the weights holds the KV of no more sequences, deploy/memory_fit), ``max_running`` (the engine's
    running-request limit or its default backstop), ``max_tokens_per_step`` (the engine's token budget),
    ``prefill_budget`` (the prefill chunk budget), with `` (queueing)`` when the excess requests wait for admission;
    ``""`` when no cap binds (the batch is the load's). Returns ``""`` for no cap.

    >>> cap_text("kv_capacity"), cap_text("max_running (queueing)"), cap_text("")
    ('capped by kv_capacity', 'capped by max_running (queueing)', '')
    """
    return f"capped by {limit}" if limit else ""


#: the cap of a disaggregated point that its prefill pool sets (serve/point.py: the pool at its utilisation ceiling);
#: every other cap (kv_capacity, max_running, ...) is the decode pool's (serve/disagg.decode_curve's batch caps)
PREFILL_POOL_CAP = "prefill_capacity"


def pool_cap_text(limit: str, disagg: bool) -> str:
    """:func:`cap_text`, for a disaggregated point (``disagg``) with the pool whose cap binds before it, in the words
    of :func:`bound_cell` (``decode``/``prefill``): ``decode pool capped by kv_capacity`` (the decode pool's KV
    capacity stops its batch), ``prefill pool capped by prefill_capacity (queueing)`` (:data:`PREFILL_POOL_CAP`);
    an aggregated point's as :func:`cap_text` (one pool; ux54).

    >>> pool_cap_text("kv_capacity", True), pool_cap_text("prefill_capacity (queueing)", True)
    ('decode pool capped by kv_capacity', 'prefill pool capped by prefill_capacity (queueing)')
    >>> pool_cap_text("kv_capacity", False), pool_cap_text("", True)
    ('capped by kv_capacity', '')
    """
    if not limit or not disagg:
        return cap_text(limit)
    return f"{'prefill' if limit.startswith(PREFILL_POOL_CAP) else 'decode'} pool {cap_text(limit)}"


def with_cap(bound: str, limit: str) -> str:
    """A bound cell (:func:`bound_cell`) and, where one binds, the cap on the decode batch after it (cap53): the
    bound says which spec's speed sets the step time, the cap which limit (HBM capacity, an engine limit) stops
    the batch from growing to the load's. A disaggregated point's cell (``decode X; prefill Y (S of chips)``) names
    the pool whose cap binds (:func:`pool_cap_text`; ux54), in the same words.

    >>> with_cap("hbm_bandwidth", "kv_capacity"), with_cap("compute", "")
    ('hbm_bandwidth; capped by kv_capacity', 'compute')
    >>> with_cap("decode hbm_bandwidth; prefill compute (33% of chips)", "kv_capacity")
    'decode hbm_bandwidth; prefill compute (33% of chips); decode pool capped by kv_capacity'
    """
    return f"{bound}; {pool_cap_text(limit, bound.startswith('decode '))}" if limit else bound


def point_bound_capped(p) -> str:
    """:func:`point_bound` then the point's cap (:func:`with_cap`), as frontier's column and the chart's hover
    print it (cap53).

    >>> from types import SimpleNamespace as P
    >>> point_bound_capped(P(bound="compute", prefill_bound="", prefill_chip_share=0.0, limit="kv_capacity"))
    'compute; capped by kv_capacity'
    """
    return with_cap(point_bound(p), p.limit)


def prefill_chip_share(prefill_chips: float, chips: float) -> float:
    """A point's prefill-pool chips over its chips, 0-1 (0 aggregated, or with no chips): one rule for
    :attr:`PointRecord.prefill_chip_share` and the headline's ``prefill_chip_share_at_*``.

    >>> prefill_chip_share(12.0, 20.0), prefill_chip_share(0.0, 8.0), prefill_chip_share(0.0, 0.0)
    (0.6, 0.0, 0.0)
    """
    return float(prefill_chips) / float(chips) if float(chips) > 0 else 0.0


def bound_text(p) -> str:
    """A point's bound in words (its short repr): ``compute-bound``; a disaggregated point's prefill
    pool first, with its share of the chips: ``prefill compute-bound on 77% of the chips, decode
    hbm_bandwidth-bound``."""
    if not p.prefill_bound:
        return f"{p.bound}-bound"
    return f"prefill {p.prefill_bound}-bound on {p.prefill_chip_share:.0%} of the chips, decode {p.bound}-bound"
