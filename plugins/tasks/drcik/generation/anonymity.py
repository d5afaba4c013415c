"""Anonymisation of Dr-CiK tasks (Section 4.1 Phase 1, Entity Disambiguation; Section 1 and the limitations:
"entity anonymization, time-shifting" against forecasting-stage memorisation shortcuts).

Step 3 rewrites a task's context with its synthetic profile.  The forecasting objective
(``task_metadata.target_description``) is part of what every agent sees, so it is rewritten with the same
profile and the same Appendix L prompt (``profile_assignment``, the objective in place of the context); the
paper's released sample names the synthetic profile there too.

*Real names of a task* (this module's rule; the paper's entity extraction names type-level entities such as
"pumping station", not the real mentions it replaces): every capitalised word of the original context
(``Riverside``, ``Eastvale``) that the accepted step-3 rewrite of the context no longer contains, and every one
of the original objective that its rewrite no longer contains, leaving out words that are capitalised anyway
(:data:`COMMON`: articles, pronouns, months, weekdays).  The rewrite's prompt asks it to replace the entity
identity wording and to change nothing else, so a word it removed is identity wording.  A name the context's
rewrite removed but the objective's kept (the objective copied unchanged, as before issue 37) is a leak.  No real name may survive in an exported task: not in the rewritten objective
(a code check of step 3), nor in any string of ``tasks/<id>.json``, any ``documents/*.md``, the manifest or a
file name (:func:`leaks`, run by the export, which holds a leaking task back, and by ``harness dr-audit``).
The real names and the original texts are kept under ``generation/anonymisation/<task>.json``, which agents
never see; the exported task file no longer carries the original context.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

FOLDER = Path("generation") / "anonymisation"
CAPITALISED = re.compile(r"\b[A-Z][a-z][\w'-]*\b")
COMMON = frozenset("""
a an the this that these those it its itself he she his her they their them we our you your i my me one
on in at by for from to of with without during after before until since over under into onto upon about
when while where which who whose what whenever as if but and or nor so then than there here each every some
any all no not both either neither most many much more less few several another other such same
is are was were be been has have had do does did will would can could may might must should shall
monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
september october november december
""".split())


def capitalised_words(text: str) -> set[str]:
    """The capitalised words of ``text`` outside :data:`COMMON` (case kept)."""
    return {w for w in CAPITALISED.findall(text or "") if w.lower() not in COMMON}


def _names(text: str, words: set[str]) -> list[str]:
    return sorted(w for w in words if re.search(rf"\b{re.escape(w)}\b", text or ""))


def real_names(pairs: list[tuple[str, str]]) -> list[str]:
    """The real names of a task (module docstring): for each ``(original, rewritten)`` text, the capitalised
    words of the original that its rewrite no longer contains."""
    out: set[str] = set()
    for original, rewritten in pairs:
        out |= {w for w in capitalised_words(original) if not re.search(rf"\b{re.escape(w)}\b", rewritten)}
    return sorted(out)


def named(text: str, names: list[str]) -> list[str]:
    """The ``names`` that ``text`` contains as whole words (case-sensitive)."""
    return _names(text, set(names))


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")


def record_leaks(record: dict, names: list[str], file_names: list[str] = ()) -> list[str]:
    """``field: name`` for every real name in a task record (every string, at any depth) or in ``file_names``."""
    out = []
    for where, text in _strings(record, ""):
        out += [f"{where}: {n!r}" for n in named(text, names)]
    for f in file_names:
        out += [f"file name {f}: {n!r}" for n in named(re.sub(r"[_.-]", " ", f), names)]
    return out


def leaks(gen_dir: Path) -> list[dict[str, str]]:
    """Every real name (of ``generation/anonymisation/``) found in the exported release of ``gen_dir``:
    ``[{task, where, name}]``; ``where`` is ``tasks/<id>.json: <field>``, ``documents/<doc>.md``,
    ``benchmark_manifest.json: <field>`` or a file name."""
    gen_dir = Path(gen_dir)
    found = []
    names_of = {p.stem: json.loads(p.read_text(encoding="utf-8")).get("real_names", [])
                for p in sorted((gen_dir / FOLDER).glob("*.json"))}
    every = sorted({n for names in names_of.values() for n in names})
    manifest = gen_dir / "benchmark_manifest.json"
    if manifest.is_file():
        for leak in record_leaks(json.loads(manifest.read_text(encoding="utf-8")), every):
            where, name = leak.rsplit(": ", 1)
            found.append({"task": "*", "where": f"benchmark_manifest.json: {where}", "name": name.strip("'")})
    for path in sorted((gen_dir / "tasks").glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        tid = raw.get("benchmark_id", path.stem)
        names = names_of.get(tid, every)
        files = [path.name] + [Path(d.get("path") or "").name for d in raw.get("documents") or []]
        for leak in record_leaks({k: v for k, v in raw.items()}, names, files):
            where, name = leak.rsplit(": ", 1)
            found.append({"task": tid, "where": f"tasks/{path.name}: {where}", "name": name.strip("'")})
        for d in raw.get("documents") or []:
            doc = gen_dir / (d.get("path") or "")
            if d.get("path") and doc.is_file():
                found += [{"task": tid, "where": d["path"], "name": n}
                          for n in named(doc.read_text(encoding="utf-8"), names)]
    return found
