"""InferenceX's published points read into measured points: each CSV row mapped to the deployment it ran.

fit/validate.py prices measured points against their predictions; this module reads the InferenceX source
(the shipped ``data/validation/inferencex_points.csv`` or a user CSV of its columns, fit/ix_cells.points_rows)
into :class:`~jalapeno.fit.measured_point.MeasuredPoint` s and the rows it skips, with the reason. A row is
``matched`` with the deployment its topology states (fit/ix_topology.parse_topology), a published recipe entry
its concurrency identifies (deploy/engines.identified_config) or a run identified from its throughput
(fit/run_identity.py); else it is mapped to a search space, a best entry, or the predicted frontier (fit/validate.py's
docstring lists the mappings). Dynamo + TRT-LLM disaggregated rows carry the recipe's prefill budget per rank
(:func:`recipe_budget`) and MTP draft rule (:func:`recipe_mtp`); other MTP rows take their launch recipe's, else
:data:`VALIDATION_MTP`.
"""

from __future__ import annotations

import re
from pathlib import Path

from jalapeno.deploy.deployment import MTP, Deployment, Pool
from jalapeno.deploy.engines import (
    identified_config,
    launch_budget,
    launch_limits,
    launch_mtp,
    launch_recipe,
    with_launch_kv,
)
from jalapeno.deploy.layout import Layout  # noqa: F401 (the doctests of recipe_mtp)
from jalapeno.fit.skipped import with_systems
from jalapeno.fit.entries import entry_candidates
from jalapeno.fit.ix_cells import HARDWARE, IX_MODELS  # noqa: F401 (re-exported: they were defined here until ux55)
from jalapeno.fit.ix_cells import bad_cell as _bad_cell
from jalapeno.fit.ix_cells import context_overrun
from jalapeno.fit.ix_cells import points_rows
from jalapeno.fit.ix_cells import positive_num as _num
from jalapeno.fit.ix_cells import stated_release
from jalapeno.fit.ix_topology import DYNAMO_TRT_RECIPE, parse_topology
from jalapeno.fit.measured_point import MeasuredPoint
from jalapeno.fit.run_identity import identify_run
from jalapeno.fit.searched import ix_precision, searched_mapping, with_launch_backend
from jalapeno.specs.formats import get_precision
from jalapeno.specs.workload import PRESETS


#: Assumed MTP for rows measured with MTP: one draft token, accepted at the recipe's single-draft
#: acceptance (0.85: DeepSeek-V3 technical report §5.4.3, lower end). Labelled per row.
VALIDATION_MTP = MTP(1, DYNAMO_TRT_RECIPE.mtp_acceptance_single)
#: Per-token acceptance assumed for chains of 2-3 draft tokens (the recipe's chain acceptance, 0.75).
#: A point's engine profile replaces either where it gives its own (data/stacks.toml, :func:`with_stack_mtp`).
CHAIN_ACCEPTANCE = DYNAMO_TRT_RECIPE.mtp_acceptance_chain
MTP_DRAFT_BY_SEQS_PER_RANK = DYNAMO_TRT_RECIPE.mtp_draft_by_seqs_per_rank


def recipe_budget(isl: int, osl: int, system: str | None = None, precision: str = "fp4") -> dict:
    """Deployment keywords for the Dynamo + TRT-LLM recipe's prefill token budget at ISL/OSL: the
    recipe of ``system`` at ``precision`` (DeepSeek-R1; else the FP4 one), its per-workload ``token_budget``
    (GB200 FP4: 16384 at 1k/1k, 16640 at 8k/1k; B200 FP4 10240 / 16896; H200 FP8 8192 / 16640)
    counted per attention-DP rank (``budget_per = "rank"``, TensorRT-LLM ``max_num_tokens``).

    >>> recipe_budget(8192, 1024), recipe_budget(1024, 1024, "b200")["token_budget"]
    ({'token_budget': 16640, 'budget_per': 'rank'}, 10240)
    >>> recipe_budget(1024, 1024, "h200", "fp8")["token_budget"]  # the H200 FP8 recipe files' 8192
    8192
    """
    name = next((k for k, w in PRESETS.items() if (w.isl, w.osl) == (isl, osl)), None)
    rec = (
        system and launch_recipe(system, "deepseek-r1", "dynamo-trt", precision, serving="disagg") or DYNAMO_TRT_RECIPE
    )
    kw = rec.for_workload(name, system).deployment_kwargs()
    return {k: kw[k] for k in ("token_budget", "budget_per") if k in kw}


def recipe_mtp(decode: Pool, concurrency: float, system: str | None = None, precision: str = "fp4") -> MTP:
    """The MTP a Dynamo + TRT-LLM recipe runs at this decode layout and load: the draft rule
    (deploy/recipe.DraftRule) of the launch recipe for ``system`` and ``precision`` (the H100/H200 FP8
    recipe's own), else of :data:`DYNAMO_TRT_RECIPE` (:data:`MTP_DRAFT_BY_SEQS_PER_RANK`).

    >>> recipe_mtp(Pool(Layout(tp=8, ep=8), 5), 45).draft_tokens  # 9 sequences per worker
    3
    >>> recipe_mtp(Pool(Layout(tp=1, dp=8, ep=8), 4), 4968).draft_tokens  # 155 per rank
    1
    """
    rec = (
        system and launch_recipe(system, "deepseek-r1", "dynamo-trt", precision, serving="disagg") or DYNAMO_TRT_RECIPE
    )
    return rec.mtp_at(concurrency / (decode.workers * decode.layout.dp), decode.layout.dp)


def load_inferencex(path: str | Path, option: str = "--points") -> tuple[list[MeasuredPoint], list[tuple[str, str]]]:
    """Measured points of an InferenceX CSV and the skipped rows (id, reason); ``option`` is the
    command-line option that named the file, for the messages.

    Raises:
        SpecError: as fit/ix_cells.points_rows (missing file, not CSV, no rows, a missing column, a repeated row).
    """
    p = Path(path)
    rows = points_rows(p, option)
    points, skipped, system_of = [], [], {}
    last_config: dict[str, str] = {}
    for k, r in enumerate(rows, start=2):
        rid = f"{p.stem}:{k}"
        system = HARDWARE.get(r["hardware"].strip())
        system_of[rid] = system  # each skip with its system (fit/skipped.py: validate --systems lists only its own)
        model = IX_MODELS.get(r["model"].strip())
        if not system or not model:
            skipped.append(
                (
                    rid,
                    f"hardware/model {r['hardware']!r}/{r['model']!r} not in the catalog (InferenceX "
                    f"names read: hardware {', '.join(HARDWARE)}; model {', '.join(IX_MODELS)})",
                )
            )
            continue
        isl_f, osl_f = _num(r["isl"]), _num(r["osl"])
        if isl_f is None or osl_f is None or osl_f < 2 or isl_f % 1 or osl_f % 1:  # 1024.5 was read as 1024
            skipped.append(
                (rid, f"isl/osl {r['isl']!r}/{r['osl']!r} missing or invalid (whole tokens, isl >= 1, osl >= 2)")
            )
            continue
        isl, osl = int(isl_f), int(osl_f)
        bad = _bad_cell(r) or context_overrun(model, isl, osl)
        if bad:
            skipped.append((rid, bad))
            continue
        meas = {
            "throughput_per_chip": _num(r["tput_per_gpu"]),
            "interactivity": _num(r["tok_s_user"]),
            "tpot_s": (_num(r.get("tpot_ms")) or 0) / 1e3 or None,
            "ttft_s": (_num(r.get("ttft_ms")) or 0) / 1e3 or None,
        }
        if meas["interactivity"] is None and meas["tpot_s"]:
            meas["interactivity"] = 1 / meas["tpot_s"]
        if not any(v is not None for v in meas.values()):
            skipped.append((rid, "no measured metric"))
            continue
        topo = r["topology"].strip()
        cid = re.match(r"config_id (\d+)", topo)
        if cid and "(same)" in topo:
            topo = last_config.get(cid.group(1), topo)
        elif cid:
            last_config[cid.group(1)] = topo
        notes = []
        spec = r.get("spec", "").strip()
        mtp = VALIDATION_MTP if spec == "mtp" else None
        if spec.startswith("unspecified"):
            notes.append("MTP use unspecified: predicted without MTP")
        prec = ix_precision(model, r["precision"], system)
        conc = _num(r["conc"])
        dep = None
        mapping = ""
        ident = identified_config(
            system, model, r.get("framework", "").strip(), prec, isl, osl, conc, {"mtp": True, "none": False}.get(spec)
        )
        if topo and ident is not None:  # the entry must agree with the stated topology's GPU count
            pre, dec, _ = parse_topology(topo, moe=True, concurrency=conc)
            given = sum(p.chips for p in (pre, dec) if p is not None)
            if dec is None or given != ident.deployment().chips:
                notes.append(f"recipe entry {ident.name} not used: its GPU count differs from the topology's")
                ident = None
        if topo and ident is None:
            dynamo_trt = r.get("framework", "").strip() == "dynamo-trt"
            pre, dec, note = parse_topology(
                topo,
                moe=True,
                concurrency=conc,  # both seed models are MoE
                prefill_dp_attention=dynamo_trt,
            )
            notes += [note] if note else []
            if mtp and dec is not None and conc:  # the draft length and acceptance the launch recipe runs
                mtp = (
                    recipe_mtp(dec, conc, system, prec)
                    if dynamo_trt
                    else launch_mtp(
                        system, model, r["framework"], prec, dec, conc, "agg" if pre is None else "disagg", isl, osl
                    )
                    or mtp
                )
            if dec is not None and conc:
                budget = (
                    (
                        recipe_budget(isl, osl, system, prec)
                        if dynamo_trt
                        else launch_budget(system, model, r.get("framework", ""), prec, dec, isl, osl, conc, bool(mtp))
                    )
                    if pre is not None
                    else {}
                )
                launch, why = (
                    launch_limits(
                        system, model, r.get("framework", ""), prec, dec.layout.tp, isl, osl, conc, mtp=mtp is not None
                    )
                    if pre is None
                    else ({}, "")
                )
                notes += [why] if why else []
                dec = dec if pre else with_launch_backend(system, model, r.get("framework", ""), prec, dec, bool(mtp))
                dep = Deployment(
                    with_launch_kv(get_precision(prec), launch), dec, prefill=pre, mtp=mtp, **budget, **launch
                )
                mapping = "matched"
                if budget:
                    per = "per attention-DP rank" if budget.get("budget_per") == "rank" else "per instance"
                    notes.append(
                        f"prefill budget {budget['token_budget']} tokens {per} "
                        f"({'recipe max_num_tokens' if dynamo_trt else 'launch recipe token_budget'})"
                    )
        if ident is not None:  # a published recipe entry the concurrency identifies
            dep = ident.deployment()
            mtp = dep.mtp
            mapping = "matched"
            notes = [n for n in notes if not n.startswith("MTP use unspecified")]
            notes.append(
                f"deployment identified by its concurrency: {ident.name} ({dep.label}; prefill budget "
                f"{dep.token_budget} per rank; decode max_batch {ident.decode_max_batch}); "
                f"source: {ident.source}"
            )
        if (
            dep is not None
            and (flag := (r.get("disagg") or "").strip()) in ("0", "1")
            and (flag == "1") != (dep.prefill is not None)
        ):  # was priced as the topology says, the column unread
            skipped.append((rid, f"disagg {flag} contradicts topology {topo!r} ({dep.kind}: {dep.label})"))
            continue
        identified_from = ""
        if (
            dep is None
            and meas["throughput_per_chip"]
            and (r.get("point_type", "") == "max_throughput_per_gpu" or not meas["interactivity"])
            and (found := identify_run(r, system, model, prec, isl, osl, conc, meas))
        ):  # fit/run_identity.py
            dep, found_notes, identified_from = found
            mtp, mapping = dep.mtp, "matched"
            notes = [n for n in notes if not n.startswith("MTP use unspecified")] + found_notes
        if mtp:
            notes.append(f"MTP assumed k={mtp.draft_tokens}, acceptance {mtp.acceptance}")
        cands, why = (
            ((), "")
            if dep is not None or r.get("point_type", "") != "max_throughput_per_gpu"
            else entry_candidates(system, model, r.get("framework", "").strip(), prec, isl, osl, conc, spec)
        )
        if cands and meas["throughput_per_chip"]:
            mapping = "best_entry@concurrency"
            notes.append(why)
        elif (
            dep is None
            and (best_at_c := r.get("point_type", "") == "max_throughput_per_gpu" or not meas["interactivity"])
            and (sm := meas["throughput_per_chip"] and searched_mapping(r, system, model, isl, osl, conc))
        ):
            mapping, cands, notes = (
                sm[0],
                sm[1],
                [n for n in notes if not (sm[3] and n.startswith("MTP use"))] + [sm[2]],
            )
        elif dep is None:
            if meas["throughput_per_chip"] and conc and r.get("disagg", "").strip() == "0" and best_at_c:
                mapping = "best@concurrency"
            elif meas["throughput_per_chip"] and meas["interactivity"]:
                mapping = "frontier@interactivity"
            elif meas["throughput_per_chip"]:
                mapping = "frontier_peak@concurrency" if conc else "frontier_peak"
            else:
                skipped.append((rid, "no deployment and no throughput to map to a frontier"))
                continue
        points.append(
            MeasuredPoint(
                "inferencex",
                rid,
                system,
                model,
                prec,
                r.get("framework", ""),
                isl,
                osl,
                conc,
                dep,
                meas,
                mapping,
                False,
                notes,
                (r.get("disagg") or "").strip() == "1",
                "mtp"
                if spec == "mtp"
                else "none"
                if spec == "none"
                else "unspecified"
                if spec.startswith("unspecified")
                else "",
                (r.get("ttft_stat") or "").strip().startswith("median"),
                cands,
                engine_version=stated_release(r.get("framework", ""), r.get("notes", "")),
                identified_from=identified_from,
            )
        )
    return points, with_systems(skipped, system_of)
