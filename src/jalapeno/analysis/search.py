"""The search loop of ``jalapeno explore``: Optuna proposes designs, the evaluator scores them,
locally or on Ray, and every trial lands in Optuna's RDB storage (SQLite by default).

- Sampler: TPE (``optuna.samplers.TPESampler``) for one objective, NSGA-II
  (``NSGAIISampler``) for several; both seeded with the space's ``seed``.
- Batches: ``batch`` trials are asked together, evaluated (serially, or in parallel on Ray with
  ``workers`` > 1 or a cluster ``address``) and told back in order. The sampler sees the same
  history whatever the number of workers, so a seed and a batch size give the same designs and
  results on one process and on Ray (a test checks it).
- Pruned designs (a violated constraint, a case that cannot reach the floor) are told as PRUNED
  with the reason in the trial's user attributes; they are kept, never reported as designs.
- Resume: ``resume=True`` reopens the study, marks trials a killed run left RUNNING as FAIL and
  runs until the study holds ``trials`` finished (COMPLETE or PRUNED) trials — no trial runs twice.

Optuna and Ray are imported here only (the ``[explore]`` extra), never by the core.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from jalapeno.analysis.explore import Evaluator, TrialResult
from jalapeno.errors import SpecError, require_extra
from jalapeno.specs.design_space import DesignSpace

#: trial user-attribute names
ATTR_RESULT = "result"


def _require(module: str):
    return require_extra(module, "explore", "explore")


def _sampler(space: DesignSpace, offset: int = 0):
    """The seeded sampler; ``offset`` (the trials a resumed study already holds) moves the seed so
    that a resumed run does not propose the first designs again."""
    optuna = _require("optuna")
    seed = (space.seed + 7919 * offset) % 2**32  # any odd multiplier works; a prime keeps resumes apart
    if len(space.objective.metrics) == 1:
        return optuna.samplers.TPESampler(seed=seed)
    return optuna.samplers.NSGAIISampler(seed=seed)


def space_digest(space: DesignSpace) -> str:
    """SHA-256 (16 hex) of what a study's trials depend on: parameters, derived keys, objective,
    cases, constraints and sweep settings (not the name, seed or trial count). ``[sweep] at_floor = "point"``, the
    rule of every study stored before round 42 (which had no such key), is left out, so such a study resumes under
    it; the default ``interpolated`` scores differently and is in the digest (a resume under it is refused).
    ``[sweep] precisions = "case"`` (the default, and the rule before round 45) is left out likewise."""
    import hashlib
    import json

    d = space.model_dump(exclude={"name", "seed", "trials"})
    if d.get("sweep", {}).get("at_floor") == "point":
        del d["sweep"]["at_floor"]
    if d.get("sweep", {}).get("precisions") == "case":  # the default, the only rule before round 45: left out,
        del d["sweep"]["precisions"]  # so a study stored before then resumes; "native" scores differently
    return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()[:16]


def suggest(trial, space: DesignSpace) -> dict[str, Any]:
    """The design a trial proposes: one value per parameter of the space."""
    out = {}
    for key, p in space.params.items():
        if p.choices is not None:
            out[key] = trial.suggest_categorical(key, list(p.choices))
        elif p.integer:
            out[key] = trial.suggest_int(key, int(p.low), int(p.high), step=int(p.step or 1), log=p.log)
        else:
            out[key] = trial.suggest_float(key, p.low, p.high, step=p.step, log=p.log)
    return out


def open_study(space: DesignSpace, storage: str, study_name: str, resume: bool):
    """Create (or with ``resume`` reopen) the study; stale RUNNING trials of a killed run become FAIL.

    Raises:
        SpecError: the study exists and ``resume`` is off, or ``resume`` is on and it does not.
    """
    optuna = _require("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        rdb = optuna.storages.RDBStorage(storage)
        names = {s.study_name for s in optuna.study.get_all_study_summaries(rdb)}
    except Exception as e:  # noqa: BLE001 — SQLAlchemy/driver errors of every kind: bad URL, driver, folder
        raise SpecError(
            "--storage",
            f"cannot open {storage!r} ({type(e).__name__}: {str(e).splitlines()[0][:120]})",
            "give a SQLAlchemy URL such as sqlite:///path/explore.db (its folder must exist), "
            "or drop --storage to use the store's SQLite file",
        ) from None
    if study_name in names and not resume:
        raise SpecError(
            "--study",
            f"a study named {study_name!r} is already in {storage}",
            "add --resume to continue it, or give another --study name",
        )
    if resume and study_name not in names:
        raise SpecError("--resume", f"no study named {study_name!r} in {storage}", "drop --resume to start it")
    digest = space_digest(space)
    offset = 0
    if resume:
        old = optuna.load_study(study_name=study_name, storage=rdb)
        if old.user_attrs.get("space_digest") != digest or list(old.directions) != [
            optuna.study.StudyDirection.MAXIMIZE if d == "maximize" else optuna.study.StudyDirection.MINIMIZE
            for d in space.directions
        ]:
            raise SpecError(
                "--resume",
                f"study {study_name!r} was created with a different design space",
                "resume with the space it was started with (a study stored before round 42 read the best "
                'point at or above the floor: add at_floor = "point" under [sweep]), or give another '
                "--study name",
            )
        offset = len(old.get_trials(deepcopy=False))
    study = optuna.create_study(
        study_name=study_name,
        storage=rdb,
        directions=space.directions,
        sampler=_sampler(space, offset),
        load_if_exists=resume,
    )
    if not resume:
        study.set_user_attr("space_digest", digest)
    stale = [t for t in study.get_trials(deepcopy=False) if t.state == optuna.trial.TrialState.RUNNING]
    for t in stale:
        study._storage.set_trial_state_values(t._trial_id, optuna.trial.TrialState.FAIL)
    return study


def finished(study) -> int:
    """Trials that ran to the end (COMPLETE or PRUNED)."""
    optuna = _require("optuna")
    done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
    return len(study.get_trials(deepcopy=False, states=done))


class _Pool:
    """Evaluates a batch of designs, serially or on Ray."""

    def __init__(self, evaluator: Evaluator, workers: int, address: str | None) -> None:
        self.evaluator = evaluator
        self.ray = None
        self.seen: dict[tuple, TrialResult] = {}
        if workers > 1 or address:
            ray = _require("ray")
            if address:
                _check_address(address)
            if not ray.is_initialized():
                try:
                    ray.init(
                        address=address or None,
                        num_cpus=None if address else workers,
                        include_dashboard=False,
                        log_to_driver=False,
                        configure_logging=False,
                    )
                except Exception as e:  # noqa: BLE001 — Ray's own errors: a missing client extra, a refused cluster
                    raise SpecError(
                        "--address" if address else "--workers",
                        f"Ray could not start ({type(e).__name__}: {str(e).splitlines()[0][:120]})",
                        "check the cluster address (host:port or ray://host:port, with ray[client]), "
                        "or run with --workers 1",
                    ) from None
            self.ray = ray
            self.ref = ray.put(evaluator)
            self.remote = ray.remote(_evaluate_remote)

    def __call__(self, designs: list[dict[str, Any]]) -> list[TrialResult]:
        """Results in order; a design already evaluated in this run (samplers re-propose points of
        a discrete space) is not evaluated again."""
        keys = [tuple(sorted((k, repr(v)) for k, v in d.items())) for d in designs]
        todo = {k: d for k, d in zip(keys, designs) if k not in self.seen}
        if self.ray is None:
            new = [self.evaluator.evaluate(d) for d in todo.values()]
        else:
            new = self.ray.get([self.remote.remote(self.ref, d) for d in todo.values()])
        self.seen.update(zip(todo, new))
        return [self.seen[k] for k in keys]


def _check_address(address: str, timeout_s: float = 5.0) -> None:
    """Refuse a cluster address that is malformed or does not answer within ``timeout_s`` (Ray
    itself retries for minutes).

    Raises:
        SpecError: not ``auto``, ``host:port`` or ``ray://host:port``, or nothing listens there.
    """
    import re
    import socket

    if address == "auto":
        return
    m = re.fullmatch(r"(?:ray://)?([^:/\s]+):(\d{1,5})", address)
    if not m:
        raise SpecError(
            "--address",
            f"{address!r} is not a Ray cluster address",
            "give host:port (the head's GCS port), ray://host:port (Ray Client) or auto",
        )
    try:
        socket.create_connection((m.group(1), int(m.group(2))), timeout=timeout_s).close()
    except OSError as e:
        raise SpecError(
            "--address",
            f"nothing answers at {m.group(1)}:{m.group(2)} ({e.strerror or e})",
            "start the cluster (ray start --head) or check the host and port",
        ) from None


def _evaluate_remote(evaluator: Evaluator, design: dict[str, Any]) -> TrialResult:
    return evaluator.evaluate(design)


def run_search(
    space: DesignSpace,
    evaluator: Evaluator,
    study,
    trials: int,
    batch: int = 8,
    workers: int = 1,
    address: str | None = None,
    on_trial: Callable[[int, TrialResult], None] | None = None,
):
    """Run the study until it holds ``trials`` finished trials (module docstring).

    Args:
        batch: trials asked together (the results depend on it, not on ``workers``).
        on_trial: called after each trial is told (number, result): the progress bar.

    Returns:
        the study.

    Raises:
        SpecError: batch or workers below 1, or a missing optional package.
    """
    optuna = _require("optuna")
    if batch < 1 or workers < 1:
        raise SpecError("--batch/--workers", "must be at least 1", "give --batch 8 --workers 2, say")
    pool = _Pool(evaluator, workers, address)
    metrics = space.objective.metrics
    while (done := finished(study)) < trials:
        asked = [study.ask() for _ in range(min(batch, trials - done))]
        designs = [suggest(t, space) for t in asked]
        for t, res in zip(asked, pool(designs)):
            t.set_user_attr(ATTR_RESULT, _plain(res))
            if res.feasible:
                study.tell(t, [res.scores[m] for m in metrics])
            else:
                study.tell(t, state=optuna.trial.TrialState.PRUNED)
            if on_trial:
                on_trial(t.number, res)
    return study


def _plain(res: TrialResult) -> dict:
    d = asdict(res)
    d["cases"] = [dict(c) for c in d["cases"]]
    return d


def importances(study, space: DesignSpace) -> dict[str, dict[str, float]]:
    """Parameter importance per objective metric: Optuna's PED-ANOVA evaluator (Watanabe et al.
    2023; deterministic, no scikit-learn needed, unlike fANOVA), which scores how much each
    parameter's distribution in the top 10% of designs departs from the whole; empty where fewer
    than two designs completed or no parameter varied."""
    optuna = _require("optuna")
    import warnings

    done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if len(done) < 2:
        return {}
    out = {}
    for i, m in enumerate(space.objective.metrics):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # PED-ANOVA's note on minimising the target
            vals = {round(t.values[i], 12) for t in done}
            if len(vals) < 2:  # every design scored the same: nothing to attribute
                out[m] = {}
                continue
            try:
                imp = optuna.importance.get_param_importances(
                    study,
                    evaluator=optuna.importance.PedAnovaImportanceEvaluator(),
                    target=lambda t, i=i: t.values[i] if space.directions[i] == "minimize" else -t.values[i],
                )
            except (RuntimeError, ValueError):
                imp = {}
        out[m] = {k: float(v) for k, v in imp.items()}
    return out
