"""What the quality-control passes share: the tasks of a release-layout folder, written back atomically."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from tsagent_plugins.tasks.drcik.generation.output import write_json


def task_files(root: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """``(path, raw task)`` for every ``tasks/*.json`` of a release-layout folder, in file-name order;
    FileNotFoundError naming the folder when it has none."""
    files = sorted((Path(root) / "tasks").glob("*.json"))
    if not files:
        raise FileNotFoundError(f"{Path(root) / 'tasks'}: no task file (*.json)")
    for path in files:
        yield path, json.loads(path.read_text(encoding="utf-8"))


def save_task(path: Path, raw: dict[str, Any]) -> None:
    write_json(path, raw)
