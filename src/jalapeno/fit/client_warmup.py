"""Which measured points were timed by a client without a warm-up ("cold"), for the steady-state fits.

InferenceX's serving benchmark had no warm-up until InferenceX PR #480 (commit d053ae24e, 2026-01-21,
"upstream kimbochen/bench_serving, adding warmup", which added ``--num-warmups "$((2 * max_concurrency))"`` to
benchmarks/benchmark_lib.sh); before it the scripts ran kimbochen/bench_serving without one, so a run's counted
requests included the engine's first requests and whatever it did once at first use (docs/gap_aic_ttft.md, round 25:
trtttft25 part 2, cold25, sglcold25 — DeepSeek-R1 aggregated rows of that period 49.5% / −49.5% TTFT, a first-wave
cost the model does not price). The client front end and the burst shares (fit/stack_fit.py steps 2 and 4) describe
steady-state serving; asked (``fit_all(warm_clients_only=True)``, ``scripts/fit_stacks.py --warm-clients-only``), the
stack fit leaves a cold row out of those two fits only: it stays in the step-cost and MTP fits, in every fit report's
errors and in every ``jalapeno validate`` figure. The rule reads the row's source, never its error. The shipped fit
does not ask: fitted so, the aiconfigurator TTFT median worsens 19.5% -> 21.1% (docs/gap_aic_ttft.md, round 25
coldfit25: the cold Llama-3.3-70B rows are over-predicted, not slow, and one front end per client then follows the
warm DeepSeek-R1 rows).

Which rows are cold: the aiconfigurator rows exported from InferenceX's results (client ``inferencex-db``:
fit/aic_rows.aic_client; InferenceX's own serving benchmark) whose ``measured=`` date (fit/aic_sweeps.measured_date,
UTC) is before :data:`WARMUP_FROM`. Not cold: NVIDIA's gap-analysis rows (client ``aiconfigurator``: genai-perf with
2·C warm-up requests, fit/stack_front_ends.CLIENT_SOURCES), and an export row without a ``measured=`` date (none of
aiconfigurator-core 0.12.0's predicted export rows lacks one; assumption: undated means not known to be cold).
InferenceX's own points (data/validation/inferencex_points.csv) are not read here: the seven dated before
2026-01-21 run at C >= 64, above the front end's C <= 4 (fit/stack_fit.FRONTEND_MAX_CONCURRENCY), and InferenceX's
own client has no fitted burst share, so none enters either fit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from jalapeno.fit.aic_sweeps import measured_date

#: UTC date from which InferenceX's client ran 2·C warm-up requests before the counted ones (InferenceX PR #480,
#: d053ae24e, merged 2026-01-21). A row measured on that date is taken as warm (the merge's hour is not compared).
WARMUP_FROM = "2026-01-21"
#: The benchmark client that ran without a warm-up before :data:`WARMUP_FROM` (fit/aic_rows.aic_client's name for
#: the rows exported from InferenceX's results).
COLD_BEFORE_WARMUP_CLIENTS = ("inferencex-db",)


def is_cold(client: str, date: str) -> bool:
    """Whether a row timed by ``client`` and measured on ``date`` (``YYYY-MM-DD``, "" = not stated) ran without
    the client's warm-up.

    >>> is_cold("inferencex-db", "2025-11-02"), is_cold("inferencex-db", "2026-01-21"), is_cold("inferencex-db", "")
    (True, False, False)
    >>> is_cold("aiconfigurator", "2025-11-02")
    False
    """
    return client in COLD_BEFORE_WARMUP_CLIENTS and bool(date) and date < WARMUP_FROM


def aic_row_dates(frame: pd.DataFrame | None = None) -> dict[str, str]:
    """Point id (``aic:<row id>``, as fit/aic_rows.load_aiconfigurator names it) → the row's ``measured=`` date ("" when
    absent), from ``frame`` (aiconfigurator's ``silicon_sample.csv`` format) or the installed package's sample; {} when
    the package is not installed and no frame is given (then no aiconfigurator point was loaded either)."""
    if frame is None:
        try:
            from importlib.resources import files

            frame = pd.read_csv(files("aiconfigurator_core") / "systems" / "silicon_sample.csv")
        except ModuleNotFoundError:
            return {}
    src = frame["silicon_data_source"] if "silicon_data_source" in frame else pd.Series([""] * len(frame))
    return {f"aic:{i}": measured_date(str(s)) for i, s in zip(frame["id"], src)}


def cold_client_ids(points: Sequence, dates: Mapping[str, str] | None = None) -> frozenset[str]:
    """Ids of the aiconfigurator ``points`` (fit/validate.MeasuredPoint) timed without a client warm-up (:func:`is_cold`),
    their dates from ``dates`` (default :func:`aic_row_dates` of the installed sample).

    >>> from types import SimpleNamespace as P
    >>> pts = [P(id="aic:a", source="aiconfigurator", client="inferencex-db"),
    ...        P(id="aic:b", source="aiconfigurator", client="inferencex-db"),
    ...        P(id="aic:c", source="aiconfigurator", client="aiconfigurator"), P(id="x:1", source="inferencex", client="")]
    >>> sorted(cold_client_ids(pts, {"aic:a": "2025-12-15", "aic:b": "2026-02-05", "aic:c": "2025-10-01"}))
    ['aic:a']
    """
    aic = [p for p in points if p.source == "aiconfigurator"]
    if not aic:
        return frozenset()
    dates = aic_row_dates() if dates is None else dates
    return frozenset(p.id for p in aic if is_cold(p.client, dates.get(p.id, "")))
