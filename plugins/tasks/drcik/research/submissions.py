"""The submissions of a Dr-CiK research stage: each agent profile's ``deep_research.jsonl`` and
``metadata.json`` as the release lays them out, validated, and the optional no-model judging of the run
(``dr_scores.jsonl``, Table 3's input).  Called by the ``drcik`` template's ``finish``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import UnknownPlugin, get_plugin
from tsagent_plugins.tasks.drcik.research import outputs as research_out
from tsagent_plugins.tasks.drcik.research.as_context import first_json_line
from tsagent_plugins.tasks.drcik.dataset.loader import DrcikTask


def finish_research(tasks: dict[str, DrcikTask], rows: list[dict[str, Any]], run_dir: Path, *,
                    metadata: dict[str, str], judge: str | None) -> dict[str, Any]:
    """Merge each agent profile's exported rows into ``submissions/deep_research__<profile>/`` and
    validate them against the release's rules (corpus = the loaded tasks' documents).  ``metadata`` and
    ``judge``: the spec's ``params.metadata`` (overriding the method and base model taken from the profile)
    and ``params.judge`` (the no-model judge to score the run with; None: none).

    A failed episode (the agent crashed, timed out or was refused: ``status`` not ``ok``) gives no
    submission row, not even the empty one its scoring wrote into its key folder: the release's file
    holds what an agent submitted, and an agent that crashed submitted nothing.  Its task is missing
    from the file, counted under ``failed`` and named in the messages (tables count it in their
    Failed column, :mod:`~tsagent_plugins.tasks.drcik.report.research_tables`)."""
    known = {d.document_id for t in tasks.values() for d in t.documents}
    by_profile: dict[str, list[dict]] = {}
    failed: dict[str, list[str]] = {}
    for row in rows:
        if not row.get("profile"):
            continue
        if row.get("status") not in (None, "ok"):
            failed.setdefault(str(row["profile"]), []).append(str(row.get("benchmark_id") or row.get("episode")))
            continue
        export = first_json_line(run_dir / "episodes" / str(row.get("episode")) / "key"
                                 / research_out.DEEP_RESEARCH_FILE)
        if export is not None:
            by_profile.setdefault(str(row["profile"]), []).append(export)
    out, messages = {}, []
    models = {str(r["profile"]): r.get("model") for r in rows if r.get("profile") and r.get("model")}
    agents = {str(r["profile"]): r.get("agent") for r in rows if r.get("profile") and r.get("agent")}
    for profile, exported in sorted(by_profile.items()):
        # the DR method and its base model from the agent profile, unless the spec's metadata says otherwise
        meta = research_out.make_metadata(**{
            "method": f"{profile} ({agents.get(profile) or 'DR agent'})",
            "base_model": str(models.get(profile) or "unknown"), **metadata})
        key = f"deep_research__{profile}"
        exported.sort(key=lambda r: str(r.get("benchmark_id")))
        research_out.write_export(run_dir / "submissions" / key, exported, meta)
        errors = [f"{r.get('benchmark_id')}: {p}" for r in exported
                  for p in research_out.validate_deep_research_row(r, known)]
        errors += research_out.validate_metadata(meta)
        out[key] = {"ok": not errors, "errors": errors, "rows": len(exported)}
        if profile in failed:
            out[key]["failed"] = sorted(failed[profile])
        messages.append(f"submission {key}: " + (f"valid ({len(exported)} task(s))" if not errors else
                                                 f"INVALID ({len(errors)} error(s)): {errors[0]}")
                        + (f"; {len(failed[profile])} failed episode(s) left out (no submission row): "
                           f"{', '.join(sorted(failed[profile]))}" if profile in failed else ""))
    for profile in sorted(set(failed) - set(by_profile)):
        messages.append(f"submission deep_research__{profile}: not written: every episode failed "
                        f"({', '.join(sorted(failed[profile]))})")
    summary = {"submissions": out, "messages": messages}
    if judge:
        summary["dr_scores"] = judge_research(judge, run_dir, messages)
    return summary

def judge_research(name: str, run_dir: Path, messages: list[str]) -> dict[str, Any]:
    """Judge every research episode of ``run_dir`` with the judge ``name`` (one that needs no model)
    and write ``dr_scores.jsonl`` (:mod:`tsagent_plugins.tasks.drcik.research.scoring`; Table 3's input)."""
    from tsagent_plugins.tasks.drcik.research.scoring import score_run, write_scores

    try:
        judge = get_plugin("judge", name)
    except UnknownPlugin as exc:
        messages.append(f"params.judge: {exc}")
        return {"ok": False, "error": str(exc)}
    if getattr(judge, "needs_model", False) or hasattr(judge, "bind_model"):
        messages.append(f"params.judge: judge {name!r} needs a model; run `harness dr-score {run_dir} "
                        f"--judge {name}`")
        return {"ok": False, "error": "needs a model"}
    problems: list[str] = []
    rows = score_run(run_dir, judge, problems)
    path = write_scores(run_dir, rows)
    messages.append(f"DR metrics: {len(rows)} episode(s) judged by {judge.label} -> {path}"
                    + (f"; {len(problems)} skipped: {problems[0]}" if problems else ""))
    return {"ok": not problems, "judge": judge.label, "rows": len(rows), "skipped": problems}

