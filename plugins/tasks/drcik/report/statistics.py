"""Dataset statistics of any Dr-CiK release (Section 4.3, Appendix A.1): Tables 5, 6, 7 and Figure 3.

``harness report FOLDER`` shows them for a release folder (the public sample, a ``harness dr-generate``
output, the released files laid out as the sample is, or its flat Hugging Face tables), read with
:func:`.loader.load_tasks`:

- **Table 5** (per domain): tasks, mean history and forecast lengths in time steps, frequencies.  The
  domain is a task's ``domain`` field; a release without one (the public sample, generated sets) is
  grouped by the showcase entity type instead, said in the table's note (our choice: the nearest thing
  to a domain the release carries).
- **Table 6** (per source): the same per ``source`` field, else per ``origin`` (synthetic / real / ...),
  with the domains each source covers.
- **Figure 3** (evidence depth and other key statistics), per origin: ground-truth evidence items per
  task (the "grounded evidence depth" of Section 4.3), supporting and distractor documents, reasoning
  hops, history and forecast lengths, the share of prospective evidence (Appendix K.2) where tasks mark
  roles; a figure of the evidence-depth distribution and a table of the numbers.
- **Table 7** (sources, licences, redistribution): from the release's metadata where it carries them,
  in ``benchmark_manifest.json``'s ``sources`` list or a task's ``source`` object (fields ``name``,
  ``license``/``licence``, ``redistribution``, ``attribution``/``url``); otherwise not made, said why.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from harness import ConfigError
from harness.reporting import DASH, Section, Table

LICENCE_KEYS = ("license", "licence")


def is_release(path: Path) -> bool:
    """A release folder: ``tasks/*.json`` or a ``benchmark_manifest.json`` (a dr-generate output included)."""
    path = Path(path)
    return (path / "benchmark_manifest.json").is_file() or any((path / "tasks").glob("*.json"))


def _domain(task) -> tuple[str, bool]:
    """(domain, whether the release gave it): ``domain`` field, else the showcase entity type."""
    domain = task.metadata.get("domain")
    if isinstance(domain, str) and domain.strip():
        return domain.strip(), True
    entity = ((task.metadata.get("showcase") or {}).get("entity") or {}).get("type")
    return (str(entity).strip() if entity else "unknown"), False


def _source(task) -> tuple[str, bool]:
    source = task.metadata.get("source")
    if isinstance(source, dict):
        source = source.get("name")
    if isinstance(source, str) and source.strip():
        return source.strip(), True
    return str(task.metadata.get("origin") or "unknown"), False


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


def task_facts(task) -> dict[str, Any]:
    """The per-task numbers the tables and Figure 3 aggregate."""
    domain, given_domain = _domain(task)
    source, given_source = _source(task)
    roles = [e.role for e in task.evidence]
    return {"benchmark_id": task.benchmark_id, "domain": domain, "domain_given": given_domain, "source": source,
            "source_given": given_source, "origin": str(task.metadata.get("origin") or "unknown"),
            "frequency": task.frequency, "history": len(task.history), "horizon": task.horizon,
            "evidence": len(task.evidence), "supporting": len(task.supporting_ids),
            "distractors": len(task.distractor_ids), "hops": task.metadata.get("reasoning_hops"),
            "prospective": sum(r == "prospective" for r in roles) if task.marks_roles else None}


def _group_table(key: str, title: str, facts: list[dict], by: str, extra: str | None) -> Table:
    header = [by.capitalize(), "Tasks", "Avg. history length", "Avg. forecast length", "Frequencies"]
    if extra:
        header.insert(1, extra.capitalize() + "s")
    table = Table(key, title, header)
    groups: dict[str, list[dict]] = {}
    for f in facts:
        groups.setdefault(f[by], []).append(f)
    for name in sorted(groups, key=lambda g: (-len(groups[g]), g)):
        rows = groups[name]
        freqs = Counter(r["frequency"] for r in rows)
        cells = [str(len(rows)), f"{_mean([r['history'] for r in rows]):.1f}",
                 f"{_mean([r['horizon'] for r in rows]):.1f}",
                 ", ".join(f"{k} ({v})" for k, v in sorted(freqs.items(), key=lambda kv: (-kv[1], kv[0])))]
        if extra:
            cells.insert(0, ", ".join(sorted({r[extra] for r in rows})))
        table.add(name, cells)
        table.data.append({by: name, "tasks": len(rows), "history_mean": _mean([r["history"] for r in rows]),
                           "horizon_mean": _mean([r["horizon"] for r in rows]), "frequencies": dict(freqs),
                           **({extra + "s": sorted({r[extra] for r in rows})} if extra else {})})
    table.add("All", [*([""] if extra else []), str(len(facts)), f"{_mean([r['history'] for r in facts]):.1f}",
                      f"{_mean([r['horizon'] for r in facts]):.1f}", str(len({r['frequency'] for r in facts}))
                      + " frequencies"])
    return table


def table5(facts: list[dict]) -> Table:
    """Dr-CiK Table 5: per-domain summary (tasks, mean history and forecast lengths in time steps)."""
    t = _group_table("drcik-table5", "Dr-CiK Table 5. Per-domain summary (average lengths in time steps)",
                     facts, "domain", None)
    if not all(f["domain_given"] for f in facts):
        t.notes.append("The release gives no domain field for some tasks: those are grouped by the showcase entity "
                       "type (showcase.entity.type).")
    return t


def table6(facts: list[dict]) -> Table:
    """Dr-CiK Table 6: per-source summary, with the domains each source covers."""
    t = _group_table("drcik-table6", "Dr-CiK Table 6. Per-source summary (average lengths in time steps)",
                     facts, "source", "domain")
    if not all(f["source_given"] for f in facts):
        t.notes.append("The release gives no source field for some tasks: those are grouped by their origin.")
    return t


FIGURE3_COLUMNS = (("evidence", "Evidence items / task"), ("supporting", "Supporting docs / task"),
                   ("distractors", "Distractor docs / task"), ("hops", "Reasoning hops"),
                   ("history", "History length"), ("horizon", "Forecast length"))


def figure3_table(facts: list[dict]) -> Table:
    """The numbers of Figure 3 per origin and overall: means of the per-task statistics."""
    t = Table("drcik-figure3", "Dr-CiK Figure 3. Evidence depth and other key statistics (means per task)",
              ["Origin", "Tasks", *[label for _, label in FIGURE3_COLUMNS], "Prospective evidence"])
    origins = sorted({f["origin"] for f in facts})
    for name, rows in [*((o, [f for f in facts if f["origin"] == o]) for o in origins), ("All", facts)]:
        means = {k: _mean([float(r[k]) for r in rows if r[k] is not None]) for k, _ in FIGURE3_COLUMNS}
        marked = [r for r in rows if r["prospective"] is not None]
        share = (sum(r["prospective"] for r in marked) / max(1, sum(r["evidence"] for r in marked))) if marked else None
        t.add(name, [str(len(rows)),
                     *(f"{means[k]:.1f}" if not np.isnan(means[k]) else
                       t.explain(DASH, f"no task in this row gives its {label.lower()}")
                       for k, label in FIGURE3_COLUMNS),
                     f"{100 * share:.1f}%" if share is not None else
                     t.explain(DASH, "no task in this row marks its evidence items' roles (Appendix K.2)")])
        t.data.append({"origin": name, "tasks": len(rows), **{f"{k}_mean": means[k] for k, _ in FIGURE3_COLUMNS},
                       "prospective_share": share})
    t.notes.append("Evidence items: annotations.gt_evidence per task (Section 4.3's grounded evidence depth). "
                   "Prospective evidence: share of items marked prospective, over tasks marking every item's role "
                   "(Appendix K.2).")
    return t


def figure3(facts: list[dict]):
    """Figure 3: evidence items per task by origin (left) and documents per task by role (right)."""
    from matplotlib.ticker import MaxNLocator

    from harness.reporting import new_figure, outside_legend

    fig = new_figure(figsize=(10, 4.0))
    left, right = fig.subplots(1, 2)
    fig.suptitle("Dr-CiK Figure 3. Evidence depth and documents per task", x=0.01, ha="left")
    origins = sorted({f["origin"] for f in facts})
    depths = sorted({f["evidence"] for f in facts})
    width = 0.8 / max(1, len(origins))
    for i, origin in enumerate(origins):
        counts = Counter(f["evidence"] for f in facts if f["origin"] == origin)
        left.bar(np.arange(len(depths)) - 0.4 + width * (i + 0.5), [counts.get(d, 0) for d in depths], width,
                 label=origin)
    left.set_xticks(np.arange(len(depths)), [str(d) for d in depths])
    left.set_xlabel("ground-truth evidence items per task")
    left.set_ylabel("tasks")
    left.yaxis.set_major_locator(MaxNLocator(integer=True))
    for i, origin in enumerate(origins):
        rows = [f for f in facts if f["origin"] == origin]
        right.bar(np.arange(2) - 0.4 + width * (i + 0.5), [_mean([r["supporting"] for r in rows]),
                                                          _mean([r["distractors"] for r in rows])], width,
                  label=origin)
    right.set_xticks(np.arange(2), ["supporting", "distractor"])
    right.set_ylabel("documents per task (mean)")
    outside_legend(fig, [left, right])
    return fig


def _licence(entry: Any) -> dict | None:
    if not isinstance(entry, dict):
        return None
    licence = next((entry[k] for k in LICENCE_KEYS if isinstance(entry.get(k), str) and entry[k].strip()), None)
    if licence is None:
        return None
    return {"source": str(entry.get("name") or entry.get("source") or "?"), "licence": licence.strip(),
            "redistribution": _term(entry.get("redistribution")),
            "attribution": _term(entry.get("attribution")) or _term(entry.get("url"))}


def _term(value: Any) -> str | None:
    """A metadata term as Table 7 shows it: ``yes``/``no`` for a boolean, None when not given (absent or blank)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return None if value is None else (str(value).strip() or None)


def licences(root: Path, tasks) -> list[dict]:
    """Table 7's rows: the manifest's ``sources`` entries and the tasks' ``source`` objects carrying a licence."""
    found: dict[str, dict] = {}
    manifest = Path(root) / "benchmark_manifest.json"
    try:
        data = json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else {}
    except (OSError, ValueError):
        data = {}
    entries = list(data.get("sources") or []) if isinstance(data, dict) else []
    entries += [t.metadata.get("source") for t in tasks]
    for entry in entries:
        row = _licence(entry)
        if row is not None:
            found.setdefault(row["source"], row)
    return [found[k] for k in sorted(found)]


def table7(rows: list[dict]) -> Table:
    """Dr-CiK Table 7: one row per source of :func:`licences` (its licence, redistribution terms, attribution or
    URL; a term the metadata does not give is a dash saying so)."""
    t = Table("drcik-table7", "Dr-CiK Table 7. Data sources, licences and redistribution (from the release "
              "metadata)", ["Source", "Licence", "Redistribution", "Attribution"])
    for r in rows:
        t.add(r["source"], [r["licence"],
                            r["redistribution"] or t.explain(DASH, "the release metadata gives no redistribution "
                                                                   "terms"),
                            r["attribution"] or t.explain(DASH, "the release metadata gives no attribution or URL")])
        t.data.append(r)
    return t


def build(root: Path | str, with_figures: bool = True) -> Section:
    """Tables 5, 6, Figure 3 (table and figure) and, where the metadata has licences, Table 7 of the release
    at ``root``; a release that does not load gives a message naming its file and field."""
    from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks

    root = Path(root)
    section = Section()
    try:
        tasks = load_tasks(root)
    except ConfigError as exc:
        section.messages.append(f"{root}: dataset statistics not made: {exc}")
        return section
    facts = [task_facts(t) for t in tasks]
    section.tables += [table5(facts), table6(facts), figure3_table(facts)]
    if with_figures:
        section.figures["drcik-figure3"] = figure3(facts)
    rows = licences(root, tasks)
    if rows:
        section.tables.append(table7(rows))
    else:
        section.messages.append(f"{root}: Table 7 not made: the release metadata carries no licences "
                                "(benchmark_manifest.json sources[].license or a task's source.license)")
    return section
