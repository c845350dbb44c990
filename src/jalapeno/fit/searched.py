"""The runs a benchmark's search space made (issue 18): bound a "best configuration" row by them.

An InferenceX "best" row (``max_throughput_per_gpu``, or a throughput-only row) is the highest
throughput per GPU over the runs its search space made: per config key of the benchmark's
``nvidia-master.yaml`` / ``amd-master.yaml``, layouts (TP, EP, attention DP; disaggregated: prefill
and decode workers) each at a list of concurrencies. The model's own frontier peak searches every
layout at every concurrency, so it credits such a row with runs the benchmark never made (its
frontier peak sits at thousands of users where the benchmark stopped at 64-256).

``data/validation/inferencex_search.toml`` (written by scripts/inferencex_search_space.py from
the config files at pinned commits, one space per key, ISL/OSL and change date; an srt-slurm
recipe entry's concurrencies, TensorRT-LLM or SGLang, are those its recipe's benchmark ran, which the
runners of 2026-01-28 ... 2026-04-18 launched unchanged) holds those spaces.
The mapping rule, applied to every row alike (fit/ix_points.load_inferencex):

- spaces of the row's system, model, ISL/OSL and precision (a cell ending in ``?`` states none:
  every precision); of its framework (the cell's first word; ``mori-sglang`` is the configs'
  ``sglang-disagg``; a cell naming none, e.g. ``(best FP8)``: every framework); aggregated or
  disaggregated as the row's ``disagg`` cell says (blank: both); MTP entries only for MTP rows,
  none for rows without; a row silent on MTP takes the entries without MTP, and the MTP entries
  only where none without ran its concurrency (:func:`searched_mapping`, "MTP assumed");
- in force at the row's date: a dated row takes each key's latest space on or before that date;
  a row dated ``<=D`` (the best of any run up to D) the union of every space up to D;
- a row with a concurrency: the entries that ran it, at it (``searched_best@concurrency``); a row
  without: every entry at every concurrency it ran (``searched_best``). The prediction is the
  highest throughput per chip over those runs (:func:`best_searched`).

Only "best" rows are mapped so (``max_throughput_per_gpu``, or no interactivity); a row that gives a
deployment, or that one published ``[[identified]]`` entry (or several, ``best_entry@concurrency``)
describes, keeps that richer mapping; a row no space covers keeps the older ones. Decisions on the
shipped rows this rule reads differently from its cells: the blog's "plain sglang on MI355X" row
(precision ``FP4?``: the blog states none) takes the FP4 and the FP8 SGLang configs; the atom row
is read as the FP4 the row states (the blog compares it with mori-sglang's FP4); the third-party
GB200 row at concurrency 512 without MTP ("config_id 205", stored TP 20 + 20: no layout of the
GB200 configs) matches no run — only MTP entries ran 512 there — so it is not re-read against its
own ``spec`` cell; it is ``frontier_peak@concurrency`` (fit/validate.py: the predicted sweep's best at
a concurrency no higher than its 512), no longer the unbounded ``frontier_peak``.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from functools import cache
from importlib.resources import files

from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.checkpoints import checkpoint_for
from jalapeno.deploy.engines import launch_limits, launch_mtp, launch_recipe, with_launch_kv
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.ix_cells import DATE_CELL
from jalapeno.specs.formats import get_precision

#: The benchmark configs' name of the framework a results row names differently (the InferenceX
#: blog's "mori-sglang" is amd-master.yaml's ``sglang-disagg``: SGLang with the MoRI transfer
#: engine, image rocm/sgl-dev:...-mori-...).
FRAMEWORK_ALIASES = {"mori-sglang": "sglang-disagg"}


@dataclass(frozen=True)
class SearchEntry:
    """One entry of a search space: a deployment shape and the concurrencies it ran.

    ``decode`` is the aggregated pool when ``prefill`` is None; ``mtp``: run with speculative
    decoding; ``max_batch`` / ``mtp_draft``: the decode max_batch_size (per attention-DP rank) and
    draft length the entry's TensorRT-LLM recipe file name states (None: not stated).
    """

    decode: Pool
    prefill: Pool | None
    mtp: bool
    concurrencies: tuple[int, ...]
    max_batch: int | None = None
    mtp_draft: int | None = None


@dataclass(frozen=True)
class SearchSpace:
    """One config key's search space at one ISL/OSL, as of ``date`` (its ``source`` commit)."""

    key: str
    system: str
    model: str
    precision: str  # the config's: fp4, fp8
    framework: str
    disagg: bool
    isl: int
    osl: int
    date: str
    source: str
    entries: tuple[SearchEntry, ...]


def _pool(d, where: str, workers: bool) -> Pool:
    keys = {"tp", "dp", "ep"} | ({"workers"} if workers else set())
    if (
        not isinstance(d, dict)
        or set(d) != keys
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in d.values())
    ):
        raise SpecError(
            where,
            f"{d!r} is not a pool",
            "write { tp = N, dp = N, ep = N" + (", workers = N }" if workers else " }") + " with whole numbers >= 1",
        )
    return Pool(Layout(tp=d["tp"], dp=d["dp"], ep=d["ep"]), d.get("workers", 1))


def parse_spaces(text: str, where: str = "inferencex_search.toml") -> tuple[SearchSpace, ...]:
    """The search spaces of a TOML text in the inferencex_search.toml format.

    Raises:
        SpecError: a space lacks a field, or an entry is not a pool/concurrency list (named by its index).
    """
    try:
        raw = tomllib.loads(text).get("space", [])
    except tomllib.TOMLDecodeError as e:
        raise SpecError(where, f"not valid TOML ({e})", "rerun scripts/inferencex_search_space.py") from None
    out = []
    for i, s in enumerate(raw):
        w = f"{where} space[{i}]"
        need = ("key", "system", "model", "precision", "framework", "disagg", "isl", "osl", "date", "source", "entries")
        missing = [k for k in need if k not in s]
        if missing:
            raise SpecError(w, f"missing {missing}", "rerun scripts/inferencex_search_space.py")
        entries = []
        for j, e in enumerate(s["entries"]):
            we = f"{w}.entries[{j}]"
            conc = e.get("conc") if isinstance(e, dict) else None
            if not conc or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 1 for c in conc):
                raise SpecError(f"{we}.conc", f"{conc!r}", "give the concurrencies run, whole numbers >= 1")
            if ("agg" in e) == ("decode" in e) or ("decode" in e) != ("prefill" in e):
                raise SpecError(
                    we,
                    "needs either agg = {...} or prefill = {...} and decode = {...}",
                    "rerun scripts/inferencex_search_space.py",
                )
            dec = _pool(e.get("agg", e.get("decode")), f"{we}.{'agg' if 'agg' in e else 'decode'}", "decode" in e)
            pre = _pool(e["prefill"], f"{we}.prefill", True) if "prefill" in e else None
            named = [e.get(k) for k in ("max_batch", "mtp_draft")]
            if not all(v is None or isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in named):
                raise SpecError(we, f"max_batch/mtp_draft {named} are not whole numbers", "rerun the script")
            entries.append(SearchEntry(dec, pre, bool(e.get("mtp", False)), tuple(conc), *named))
        out.append(
            SearchSpace(
                s["key"],
                s["system"],
                s["model"],
                s["precision"],
                s["framework"],
                bool(s["disagg"]),
                int(s["isl"]),
                int(s["osl"]),
                str(s["date"]),
                s["source"],
                tuple(entries),
            )
        )
    return tuple(out)


@cache
def search_spaces() -> tuple[SearchSpace, ...]:
    """The shipped search spaces (data/validation/inferencex_search.toml)."""
    f = files("jalapeno") / "data" / "validation" / "inferencex_search.toml"
    return parse_spaces(f.read_text(encoding="utf-8"))


def ix_precision(model: str, cell: str, system: str) -> str:
    """The precision preset an InferenceX precision cell (``FP4``, ``FP8``, ``FP4 (MXFP4)``) names on ``system``.

    >>> ix_precision("deepseek-r1", "FP4", "mi355x"), ix_precision("gpt-oss-120b", "FP4 (MXFP4)", "b200")
    ('quark-mxfp4', 'mxfp4')
    """
    if model == "gpt-oss-120b":
        return "mxfp4"
    return checkpoint_for(model, "fp4" if "FP4" in cell.upper() else "fp8", system)  # MI355X: quark-mxfp4


def matching_spaces(
    system: str,
    model: str,
    precision_cell: str,
    framework_cell: str,
    isl: int,
    osl: int,
    disagg_cell: str,
    date_cell: str,
    spaces=None,
) -> list[SearchSpace]:
    """The spaces a row's cells select (module docstring: the mapping rule).

    >>> [s.key for s in matching_spaces("mi355x", "deepseek-r1", "FP4", "atom", 8192, 1024, "", "2026-03-13")]
    ['dsr1-fp4-mi355x-atom', 'dsr1-fp4-mi355x-atom-mtp']
    """
    m = DATE_CELL.match(date_cell or "")
    upto, date = (bool(m.group(1)), m.group(2)) if m else (True, "9999-12-31")
    fw = re.match(r"[\w.-]*", framework_cell.strip()).group(0).lower()
    fw = FRAMEWORK_ALIASES.get(fw, fw)
    any_prec = precision_cell.strip().endswith("?")
    prec = ix_precision(model, precision_cell, system)
    mode = {"1": True, "0": False}.get(disagg_cell.strip())
    cand = [
        s
        for s in (search_spaces() if spaces is None else spaces)
        if (s.system, s.model, s.isl, s.osl) == (system, model, isl, osl)
        and s.date <= date
        and (not fw or s.framework == fw)
        and (mode is None or s.disagg == mode)
        and (any_prec or ix_precision(model, s.precision, system) == prec)
    ]
    return cand if upto else latest_of_each_key(cand)


def latest_of_each_key(spaces) -> list:
    """The spaces of ``spaces`` (SearchSpace, in order) dated on their key's latest date among them."""
    latest: dict[str, str] = {}
    for s in spaces:
        latest[s.key] = max(latest.get(s.key, ""), s.date)
    return [s for s in spaces if s.date == latest[s.key]]


def searched_runs(
    system: str,
    model: str,
    isl: int,
    osl: int,
    spaces: list[SearchSpace],
    uses_mtp: bool | None,
    concurrency: float | None,
) -> tuple[tuple[Deployment, tuple[float, ...]], ...]:
    """The runs of ``spaces`` a row could be the best of: (deployment, concurrencies) pairs.

    Entries with MTP only when ``uses_mtp`` is not False, without only when it is not True; with
    ``concurrency`` only the entries that ran it, at it. MTP: one draft token at the Dynamo +
    TRT-LLM recipe's single-draft acceptance (fit/ix_points.VALIDATION_MTP); on Dynamo + TRT-LLM
    runs the draft length the entry's recipe file names, else the recipe's by load (recipe_mtp); on
    other engines the draft length their launch recipe runs (deploy/engines.launch_mtp), if one.
    Disaggregated Dynamo + TRT-LLM runs carry the recipe's prefill budget (recipe_budget) and the
    decode max_batch their file names (as ``max_running`` per attention-DP rank, like an
    ``[[identified]]`` entry); aggregated runs, and disaggregated runs of other engines (SGLang +
    MoRI on MI355X), their launch recipe's limits where one describes them
    (deploy/engines.launch_limits), and aggregated runs the MoE backend it forces (``moe_backend``:
    vLLM's Marlin MoE on H100, priced by cost/pool_backends.with_moe_backend) and the load-sized ``--max_num_tokens``
    of a TensorRT-LLM script that sizes it (:func:`with_launch_token_limit`).
    """
    from jalapeno.fit.validate import DYNAMO_TRT_RECIPE
    from jalapeno.fit.ix_points import VALIDATION_MTP, recipe_budget, recipe_mtp

    runs: dict[str, tuple[Deployment, list[float]]] = {}
    for s in spaces:
        prec = get_precision(ix_precision(model, s.precision, system))
        for e in s.entries:
            if uses_mtp is not None and e.mtp != uses_mtp:
                continue
            concs = [float(c) for c in e.concurrencies if concurrency is None or c == concurrency]
            for c in concs:
                mtp, trt = None, s.framework == "dynamo-trt"
                if e.mtp:
                    mtp = (
                        DYNAMO_TRT_RECIPE.mtp_for(e.mtp_draft)
                        if trt and e.mtp_draft
                        else recipe_mtp(e.decode, c, system, prec.name)
                        if trt
                        else launch_mtp(
                            system,
                            model,
                            s.framework,
                            prec.name,
                            e.decode,
                            c,
                            "agg" if e.prefill is None else "disagg",
                            isl,
                            osl,
                        )
                        or VALIDATION_MTP
                    )
                extra = recipe_budget(isl, osl, system, prec.name) if e.prefill is not None and trt else {}
                if e.max_batch and trt:
                    extra["max_running"] = e.max_batch  # per attention-DP rank, as the recipe's budgets
                decode = e.decode
                if e.prefill is None:
                    extra = launch_limits(
                        system, model, s.framework, prec.name, e.decode.layout.tp, isl, osl, c, mtp=e.mtp
                    )[0]
                    decode = with_launch_backend(system, model, s.framework, prec.name, decode, e.mtp)
                elif not trt:  # a disaggregated run of another engine: its launch recipe's limits, if one
                    extra = launch_limits(
                        system,
                        model,
                        s.framework,
                        prec.name,
                        e.decode.layout.tp,
                        isl,
                        osl,
                        c,
                        serving="disagg",
                        mtp=e.mtp,
                    )[0]
                dep = Deployment(with_launch_kv(prec, extra), decode, prefill=e.prefill, mtp=mtp, **extra)
                if e.prefill is None:
                    dep = with_launch_token_limit(dep, system, model, s.framework, prec.name, isl, c, e.mtp)
                runs.setdefault(repr(dep.as_dict()), (dep, []))[1].append(c)
    return tuple((d, tuple(sorted(set(c)))) for d, c in runs.values())


def with_launch_token_limit(
    dep: Deployment, system: str, model: str, framework: str, precision: str, isl: int, concurrency: float, mtp: bool
) -> Deployment:
    """``dep`` (an aggregated run) with its launch recipe's load-sized TensorRT-LLM ``--max_num_tokens`` where the
    recipe says its script sizes it (deploy/recipe.Recipe ``max_num_tokens_sized``; the rule and the refill dispatch of
    full slots: fit/aic_sweep_launch.sized_token_limit, per-rank max_batch by ``max_batch_dp_attention``, the
    aiconfigurator rows' Sweep rule) and the run is that script's (MTP as the recipe: a plain run that falls back on an
    MTP recipe ran another script); ``dep`` unchanged otherwise.
    """
    from jalapeno.fit.aic_sweep_launch import sized_token_limit
    from jalapeno.fit.aic_sweeps import Sweep

    rec = launch_recipe(system, model, framework, precision, tp=dep.decode.layout.tp, mtp=mtp)
    if rec is None or not rec.max_num_tokens_sized or bool(rec.draft_lengths) != bool(mtp):
        return dep
    dp = dep.decode.layout.dp
    rule = Sweep(
        system,
        model,
        "trtllm",
        rec.version,
        precision,
        "",
        rec.name,
        "",
        "",
        max_batch_dp_attention=rec.max_batch_dp_attention,
    )
    per_rank = rule.max_batch_per_rank(concurrency, dp) if dp > 1 else None
    return sized_token_limit(dep, isl, concurrency, per_rank, f"launch recipe {rec.name}")[0]


def with_launch_backend(
    system: str, model: str, framework: str, precision: str, pool: Pool, mtp: bool | None = None
) -> Pool:
    """``pool`` (an aggregated one) running the MoE kernel backend its launch recipe forces
    (deploy/engines ``moe_backend``: vLLM's Marlin MoE on H100, priced by cost/pool_backends.with_moe_backend;
    else, for an SGLang recipe on Hopper with FP8 experts, deploy/sglang_triton_moe.py's rule, behind its switch)
    and the attention backend it names (``attention_backend``: vLLM ROCm's ROCM_AITER_UNIFIED_ATTN on
    MI300X/MI325X, cost/pool_backends.with_attention_backend); ``pool`` itself when no recipe describes the
    run or it names neither."""
    r = launch_recipe(system, model, framework, precision, tp=pool.layout.tp, mtp=mtp)
    if r is None:
        return pool
    moe = r.moe_backend or pool.moe_backend
    if moe is None:  # SGLang's Triton fused MoE on Hopper (deploy/sglang_triton_moe.py; its switch, shipped off)
        from jalapeno.deploy.sglang_triton_moe import SGLANG_TRITON, sglang_triton_applies

        weights = get_precision(precision).modules["routed_experts"].weight.name
        moe = SGLANG_TRITON if sglang_triton_applies(r.engine, system, weights) else None
    return replace(
        pool,
        moe_backend=moe,
        attention_backend=r.attention_backend or pool.attention_backend,
    )


def best_searched(model, pricer, runs: tuple[tuple[Deployment, tuple[float, ...]], ...], wl, adapt=lambda d: d) -> dict:
    """The highest predicted throughput per chip over ``runs`` ((deployment, concurrencies) pairs;
    each deployment, through ``adapt`` (e.g. the engine profile's MTP acceptance), served at its
    concurrencies, serve/point.py).

    Returns a prediction dict (fit/validate.predict_points): ``throughput_per_chip``, ``feasible``,
    ``reason``, ``entry`` (the winning deployment's label and concurrency); infeasible when no run is.
    """
    from jalapeno.errors import JalapenoError
    from jalapeno.serve.point import serve_at_concurrency

    best = {"feasible": False, "reason": "no searched run is feasible"}
    for dep, concs in runs:
        try:
            r = serve_at_concurrency(model, pricer, adapt(dep), wl, list(concs))
        except JalapenoError:
            continue  # a layout the model cannot run on this system (e.g. too few chips for the weights)
        for i, c in enumerate(concs):
            tp = float(r.throughput_per_chip[i])
            if bool(r.feasible[i]) and tp > best.get("throughput_per_chip", 0.0):
                best = {"throughput_per_chip": tp, "feasible": True, "reason": "", "entry": f"{dep.label} @{c:g}"}
    return best


def searched_mapping(
    row: dict, system: str, model: str, isl: int, osl: int, concurrency: float | None
) -> tuple[str, tuple, str, bool] | None:
    """(mapping, runs, note, MTP assumed) for an InferenceX results row (its CSV cells ``row``) the
    search spaces bound, else None: ``searched_best@concurrency`` with a concurrency,
    ``searched_best`` without; MTP assumed: the row is silent on MTP and only MTP entries ran its
    concurrency, so its runs are those."""
    spaces = matching_spaces(
        system,
        model,
        row.get("precision", ""),
        row.get("framework", ""),
        isl,
        osl,
        row.get("disagg") or "",
        row.get("date") or "",
    )
    spec = (row.get("spec") or "").strip()
    runs = searched_runs(system, model, isl, osl, spaces, spec == "mtp", concurrency)
    with_mtp = ""
    if not runs and concurrency and spec not in ("mtp", "none"):  # unstated, and only MTP entries ran it
        runs = searched_runs(system, model, isl, osl, spaces, True, concurrency)
        with_mtp = " (MTP use unspecified: only entries with MTP ran it, predicted with MTP)"
    if not runs:
        return None
    keys = sorted({f"{s.key} ({s.date})" for s in spaces})
    n = sum(len(c) for _, c in runs)
    return (
        "searched_best@concurrency" if concurrency else "searched_best",
        runs,
        f"best of the {n} runs of the benchmark's search space"
        + (f" at concurrency {concurrency:g}" if concurrency else "")
        + f"{with_mtp}: {', '.join(keys)}",
        bool(with_mtp),
    )
