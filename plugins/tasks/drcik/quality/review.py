"""The review page of Dr-CiK Appendix D.2: a person marks each calibration unit acceptable or not, with a note.

A ``harness view`` folder page (:class:`harness.FolderPage`, registered through ``register_view_pages``):
``harness view GEN_DIR`` (or its alias ``harness dr-review GEN_DIR``) shows, for a ``harness dr-generate`` output,
the units of the four calibrated stages (:data:`calibration.STAGES`): each unit's judged inputs (the values of its
last judged attempt) and its output, the records already given, and a form (reviewer, verdict, note, optional
entry).  A submitted form is appended to ``GEN_DIR/generation/calibration/reviews.jsonl``
(:func:`calibration.append_review`); nothing is ever rewritten or deleted.

The page is writable, so the viewer's rules for writes hold (:mod:`harness.view.folders`): loopback only, each
POST with the viewer's own Origin and the per-launch token of the page, never in a ``--bundle``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.pages import FolderPage, Markup, Panel
from harness.pages import html_escape as escape

from tsagent_plugins.tasks.drcik.quality import calibration as cal
from tsagent_plugins.tasks.drcik.quality.report import is_generation

ACTION = "review"


def units(gen_dir: Path) -> list[dict[str, Any]]:
    """``[{stage, unit, task, inputs, output}]`` of every judged unit of the calibrated stages."""
    out = []
    for stage, (folder, _) in cal.STAGES.items():
        root = Path(gen_dir) / "generation" / folder
        if not root.is_dir():
            continue
        for unit in sorted(p for p in root.iterdir() if p.is_dir()):
            values = cal.last_judge_values(gen_dir, stage, unit.name)
            if values is None:
                continue
            result = unit / "result.json"
            output = json.loads(result.read_text(encoding="utf-8")).get("output") if result.is_file() else None
            out.append({"stage": stage, "unit": unit.name, "task": unit.name.split("__")[0], "inputs": values,
                        "output": output})
    return out


def _unit_html(u: dict[str, Any], given: list[cal.ReviewRecord]) -> str:
    uid = f"{u['stage']}--{u['unit']}"
    parts = [f"<section class='unit' id='{escape(uid)}'><h3>{escape(u['stage'])}: {escape(u['unit'])}</h3>"]
    parts += [f"<details><summary>{escape(name)}</summary><pre class='text'>{escape(value)}</pre></details>"
              for name, value in u["inputs"].items()]
    parts.append(f"<details><summary>output</summary><pre class='text'>{escape(json.dumps(u['output'], indent=1))}"
                 "</pre></details><ul class='records'>")
    parts += [f"<li>{escape(r.reviewer)}: {escape(r.verdict)}{' [' + escape(r.entry) + ']' if r.entry else ''} "
              f"{escape(r.note)}</li>" for r in given]
    hidden = "".join(f"<input type='hidden' name='{k}' value='{escape(u[k])}'>" for k in ("task", "stage", "unit"))
    parts.append(f"</ul><form data-post='{ACTION}'>{hidden}"
                 "<input name='reviewer' placeholder='reviewer' required> "
                 "<input name='entry' placeholder='entry (optional)'> "
                 "<input name='note' placeholder='note'> "
                 "<button name='verdict' value='acceptable'>acceptable</button> "
                 "<button name='verdict' value='not_acceptable'>not acceptable</button> "
                 "<span class='post-status error'></span></form></section>")
    return "".join(parts)


def _repair_panel(gen_dir: Path) -> Panel:
    """The tasks held back for human repair (``generation/repair_queue.json``) with their failing checks."""
    from tsagent_plugins.tasks.drcik.generation.output import repair_queue

    queue = repair_queue(gen_dir)["tasks"]
    items = "".join(f"<li>{escape(t['task'])}: {escape('; '.join(t['problems']))}</li>" for t in queue)
    return Panel(f"Repair queue: {len(queue)} task(s) held back", Markup(
        f"<ul class='records'>{items}</ul>" if queue else "<p class='hint'>no task held back for repair</p>"))


def render(gen_dir: Path) -> list[Panel]:
    """The repair queue, then one panel per calibrated stage that has judged units."""
    return [_repair_panel(gen_dir), *_stage_panels(gen_dir)]


def _stage_panels(gen_dir: Path) -> list[Panel]:
    records = cal.read_reviews(Path(gen_dir) / cal.REVIEWS)
    by_stage: dict[str, list[str]] = {}
    for u in units(gen_dir):
        given = [r for r in records if r.stage == u["stage"] and r.unit == u["unit"]]
        by_stage.setdefault(u["stage"], []).append(_unit_html(u, given))
    if not by_stage:
        return [Panel("Calibration review", Markup("<p class='hint'>no judged unit in this generation</p>"))]
    return [Panel(f"{stage}: {len(items)} unit(s)", Markup("".join(items))) for stage, items in by_stage.items()]


def post_review(gen_dir: Path, body: dict[str, Any]) -> dict[str, Any]:
    """Append one review record (the form's fields; an empty entry is a stage-level record); ValueError when
    the record is invalid."""
    record = {k: body.get(k) for k in ("task", "stage", "unit", "reviewer", "verdict")}
    record.update(note=body.get("note") or "", entry=body.get("entry") or None)
    return cal.append_review(Path(gen_dir) / cal.REVIEWS, record).model_dump()


PAGE = FolderPage(kind="drcik-generation", title="Dr-CiK calibration review", recognise=is_generation,
                  render=render, posts={ACTION: post_review})
