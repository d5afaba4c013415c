"""``harness view --bundle DIR``: every page of the viewer written as a static site (opens over ``file://``).

Without ``with_answers`` no template panel sees ``reveal``: no answer key, held-out
label or document role is written.  With it, answers are written only for rows
whose template's ``labels_public(row)`` is true.  ``key/`` folders and proxy logs
are never copied, and no page carries an absolute local path (run folders, paths in results columns...).
A writable folder page (:mod:`harness.view.folders`) is never written, nor anything it reads.
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError
from harness.view.data import Run
from harness.view.folders import Folder
from harness.view.site import Site


def export_bundle(runs: list[Run], out: Path | str, with_answers: bool = False,
                  folders: list[Folder] = ()) -> tuple[Path, int]:
    """Write the site under ``out`` (created; must be empty if it exists). Returns (folder, files written)."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise HarnessError(f"{out}: bundle folder exists and is not empty")
    site = Site(runs, reveal=with_answers, bundle=True, folders=list(folders))
    count = 0
    for path in site.paths():
        found = site.render(path)
        if found is None:
            continue
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(found[0])
        count += 1
    return out, count
