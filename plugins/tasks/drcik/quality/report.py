"""``harness report GEN_DIR`` for a ``harness dr-generate`` output (recognised by its ``generation/`` folder beside
``tasks/``): Dr-CiK Table 8 (cloze audit, one row per round), the documents to repair, Table 9 (distractor
distinguishability per subtype), the Figure 11 agreement table (judges vs the human majority) and the difficulty
labels per dimension and level.  Each table is read from the files the passes wrote (``generation/qc_cloze/``,
``generation/qc/``, ``generation/calibration/``, ``tasks/*.json``); a pass that has not run is named in a
message."""

from __future__ import annotations

import json
from pathlib import Path

from harness.reporting import DASH, Section, Table
from tsagent_plugins.tasks.drcik.dataset.difficulty import DIMENSIONS, LEVELS
from tsagent_plugins.tasks.drcik.quality import calibration as cal, cloze as cz, distractor_audit as da


def is_generation(path: Path) -> bool:
    return (Path(path) / "generation").is_dir() and (Path(path) / "tasks").is_dir()


def _table8(root: Path, section: Section) -> None:
    rounds = cz.rounds(root)
    if not rounds:
        section.messages.append(f"{root}: no cloze audit (harness dr-audit {root} --cloze)")
        return
    t = Table("drcik-table8", "Dr-CiK Table 8. Supporting-document cloze audit",
              ["Round", "Blanks", "Tasks", "Correct", "Partial", "Wrong", "Mean score"])
    for r in rounds:
        row = r["table"]
        label = "initial" if r["round"] == 1 else f"after repair {r['round'] - 1} ({r['asked']} re-asked)"
        t.add(label, [str(row[k]) for k in ("blanks", "tasks", "correct", "partial", "wrong")]
              + [f"{row['mean_score']:.4f}" if row["mean_score"] is not None else
                 t.explain(DASH, "no blank scored in this round: no mean score")])
        t.data.append({"round": r["round"], **row})
    t.notes.append("Blanks score 1 (correct), 0 (wrong) or in between (partial): numbers by 1 - relative error, "
                   "names by token F1 (tsagent_plugins.tasks.drcik.quality.cloze).")
    section.tables.append(t)
    repair = cz.documents_to_repair(rounds[-1]["blanks"])
    if repair:
        d = Table("drcik-table8-repair", "Documents to repair (latest cloze round)", ["Task", "Document", "Blanks"])
        for item in repair:
            d.add(item["task"], [str(item["document_id"]), ", ".join(item["blanks"])])
            d.data.append(item)
        section.tables.append(d)


def _table9(root: Path, section: Section) -> None:
    path = root / "generation" / "qc" / "distractors.json"
    if not path.is_file():
        section.messages.append(f"{root}: no distractor audit (harness dr-audit {root} --distractors)")
        return
    rows = json.loads(path.read_text(encoding="utf-8"))["table"]
    t = Table("drcik-table9", "Dr-CiK Table 9. Distractor distinguishability audit",
              ["Subtype", "Distractors", "By rule", "By LLM", "Explicitly rejectable", "Ambiguous", "Failing",
               "Defective"])
    for row in rows:
        t.add(row["subtype"], [str(row.get(c, 0)) for c in da.COLUMNS[1:]])
        t.data.append(row)
    section.tables.append(t)


def _figure11(root: Path, section: Section) -> None:
    path = root / "generation" / "calibration" / "agreement.json"
    if not path.is_file():
        section.messages.append(f"{root}: no judge calibration (harness dr-calibrate {root})")
        return
    data = json.loads(path.read_text(encoding="utf-8"))
    t = Table("drcik-figure11", "Dr-CiK Figure 11. Judges vs the human majority on the calibration units",
              ["Stage", "Units", "Comparable", "Agree", "Judge stricter", "Judge more permissive",
               "At least as strict"])
    for row in data["rows"]:
        t.add(row["stage"], [str(row[c]) for c in cal.COLUMNS[1:-1]] + ["yes" if row["at_least_as_strict"] else "no"])
        t.data.append(row)
    t.notes.append(f"{data['records']} review records ({data['stage_level']} stage-level, {data['per_entry']} "
                   f"per-entry) over {len(data['tasks'])} task(s); a tie among reviewers is not comparable.")
    section.tables.append(t)
    section.figures["drcik-figure11"] = figure11(data["rows"])


#: Figure 11's segments: (column, label, colour)
FIGURE11_PARTS = (("agree", "agrees with the majority", "#2ca02c"),
                  ("judge_stricter", "judge stricter", "#1f77b4"),
                  ("judge_more_permissive", "judge more permissive", "#d62728"))


def figure11(rows: list[dict]):
    """Dr-CiK Figure 11 drawn as the paper does: per calibrated stage, one horizontal bar of its comparable
    units split into agree / judge stricter / judge more permissive than the human majority."""
    from harness.reporting import new_figure, no_data, outside_legend

    fig = new_figure(figsize=(7.5, 1.2 + 0.55 * max(len(rows), 1)))
    ax = fig.add_subplot()
    if not rows:
        no_data(ax, "no reviewed unit")
        return fig
    stages = [r["stage"] for r in rows][::-1]
    left = [0] * len(stages)
    for key, label, colour in FIGURE11_PARTS:
        values = [r[key] for r in rows][::-1]
        bars = ax.barh(stages, values, left=left, color=colour, label=label)
        ax.bar_label(bars, labels=[str(v) if v else "" for v in values], label_type="center", color="white",
                     fontsize=8)
        left = [a + b for a, b in zip(left, values)]
    ax.set_xlabel("comparable calibration units")
    ax.xaxis.get_major_locator().set_params(integer=True)
    fig.suptitle("Dr-CiK Figure 11. Judges vs the human majority", fontsize=11)
    outside_legend(fig, [ax])
    return fig


def _difficulty(root: Path, section: Section) -> None:
    counts = {d: {lv: 0 for lv in LEVELS[d]} for d in DIMENSIONS}
    labelled = 0
    for path in sorted((root / "tasks").glob("*.json")):
        levels = (json.loads(path.read_text(encoding="utf-8")).get("annotations") or {}).get("difficulty") or {}
        labelled += bool(levels)
        for d, lv in levels.items():
            if d in counts and lv in counts[d]:
                counts[d][lv] += 1
    if not labelled:
        section.messages.append(f"{root}: no difficulty labels (harness dr-audit {root} --difficulty)")
        return
    t = Table("drcik-difficulty", "Difficulty labels (Appendix L.3): tasks per level (task level = hardest step)",
              ["Dimension", "Level", "Tasks"])
    for d in DIMENSIONS:
        for lv, n in counts[d].items():
            t.add(d, [lv, str(n)])
            t.data.append({"dimension": d, "level": lv, "tasks": n})
    section.tables.append(t)


def build(root: Path) -> Section:
    root = Path(root)
    section = Section()
    for part in (_table8, _table9, _figure11, _difficulty):
        part(root, section)
    return section
