"""Run folders in the storage of an older harness, and what every reader makes of a run folder.

:func:`to_old_format` writes back plain every file today's harness stores compressed (proxy logs, the agents'
logs under ``home/``) and drops the record of inputs kept by reference: what a run made before looks like.  :func:`readings` collects
what the commands read from a run -- ``harness report`` tables, every page of ``harness view --bundle``, the
live viewer's model-call pages, the Inspect export, each episode's trajectory converted again from its home
and the metric values ``harness rescore`` computes again -- with the run folder's own path written as
``<RUN>``, so that two copies of a run compare equal exactly when every reader reads them the same.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from harness import compressed_files, logfile


def to_old_format(run: Path) -> list[Path]:
    """``run`` (made with ``--keep-inputs``: every input file still there) as an older harness left it: every
    ``*.zst`` file written back plain (same bytes, same modification time; the compressed one removed), no
    inputs record (``inputs.json.zst``), and, as direct TraceBench episodes had them, byte copies of the
    unchanged test samples in ``key/test_samples/``.  Returns the plain files written, sorted."""
    from harness import inputs

    for folder in sorted(Path(run).glob("episodes/*")):
        record = inputs.read(folder)
        if record is None:
            continue
        direct = json.loads((folder / "row.json").read_text()).get("submission") == "direct"
        for rel, entry in record["files"].items():
            if direct and rel.startswith("workspace/test_samples/") and entry["state"] == inputs.PRESENT:
                (folder / "key" / "test_samples").mkdir(exist_ok=True)
                shutil.copyfile(folder / rel, folder / "key" / "test_samples" / Path(rel).name)
        (folder / inputs.INPUTS_FILE).unlink()
    written = []
    for path in sorted(Path(run).rglob("*" + logfile.COMPRESSED_SUFFIX)):
        data, problem = compressed_files.read_bytes(path, 1 << 40)
        assert problem is None, problem
        plain = path.with_name(path.name[:-len(logfile.COMPRESSED_SUFFIX)])
        plain.write_bytes(data)
        st = path.stat()
        os.utime(plain, ns=(st.st_atime_ns, st.st_mtime_ns))
        path.unlink()
        written.append(plain)
    return written


def copy_run(run: Path, parent: Path) -> Path:
    """A copy of ``run`` as ``parent/<its name>`` (links kept as links)."""
    target = Path(parent) / Path(run).name
    shutil.copytree(run, target, symlinks=True)
    return target


def _files(folder: Path, run: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by relative path, ``run``'s absolute path in it written ``<RUN>``."""
    out = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        for form in {str(run), str(run.resolve())}:
            data = data.replace(form.encode(), b"<RUN>")
        out[path.relative_to(folder).as_posix()] = data
    return out


def _invoke(*args: Any) -> str:
    from harness.cli import cli

    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result.output


def report_files(run: Path, out: Path) -> dict[str, bytes]:
    """The files ``harness report RUN --no-figures`` writes (tables as CSV and LaTeX, the documents)."""
    _invoke("report", run, "--out", out, "--no-figures", "--format", "json")
    return _files(out, run)


def bundle_files(run: Path, out: Path) -> dict[str, bytes]:
    """Every page and file ``harness view --bundle`` writes."""
    _invoke("view", run, "--bundle", out)
    return _files(out, run)


def call_pages(run: Path) -> dict[str, str]:
    """The live viewer's raw model-call pages of every episode (``calls.html``, ``call-N.html``), read from the
    proxy logs."""
    from harness.view.data import load_runs
    from harness.view.site import Site

    site = Site(load_runs([run]), live=False)
    out = {}
    for view in site.runs.values():
        for slug in view.episode_slugs:
            listing = site.render(f"runs/{view.id}/{slug}/calls.html")
            out[f"{slug}/calls.html"] = None if listing is None else listing[0].decode()
            n = 1
            while (page := site.render(f"runs/{view.id}/{slug}/call-{n}.html")) is not None:
                out[f"{slug}/call-{n}.html"] = page[0].decode()
                n += 1
    return {k: v.replace(str(run), "<RUN>") if v else v for k, v in out.items()}


def export_files(run: Path, out: Path) -> dict[str, Any]:
    """The Inspect AI eval logs ``harness export --format inspect`` writes, as JSON by member (an ``.eval`` log
    is a zip archive), the random ids Inspect gives each export numbered in order of appearance."""
    import io
    import zipfile

    _invoke("export", run, "--format", "inspect", "--out", out)
    files: dict[str, Any] = {}
    for name, data in _files(out, run).items():
        members = {"": data}
        if name.endswith(".eval"):
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                members = {member: archive.read(member) for member in sorted(archive.namelist())}
        for member, raw in members.items():
            for form in {str(run), str(run.resolve())}:
                raw = raw.replace(form.encode(), b"<RUN>")
            try:
                value: Any = _numbered_ids(json.loads(raw), {})
            except ValueError:
                value = raw
            files[f"{name}/{member}" if member else name] = value
    return files


def _numbered_ids(value: Any, seen: dict[str, str]) -> Any:
    """``value`` with every random id (a value of ``id``, ``eval_id``, ``run_id``, ``uuid`` that is 22 letters
    and digits, Inspect's short UUIDs) replaced by ``<id N>``, numbered in order of first appearance, and
    without ``working_start`` (the exporting process's clock)."""
    import re

    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "working_start":  # the exporting process's clock, not a value of the run
                continue
            if key in ("id", "eval_id", "run_id", "uuid") and isinstance(item, str) \
                    and re.fullmatch(r"[A-Za-z0-9]{22}", item):
                item = seen.setdefault(item, f"<id {len(seen)}>")
            out[key] = _numbered_ids(item, seen)
        return out
    if isinstance(value, list):
        return [_numbered_ids(item, seen) for item in value]
    return value


def trajectories(run: Path, agents: dict[str, Any]) -> dict[str, dict | None]:
    """Each agent episode's trajectory converted again from its home, stdout and proxy log by ``agents[name]``
    (the row's ``agent``); episodes of other agents are left out."""
    from harness.store import finished_episodes
    from harness.wire import proxy_log

    out = {}
    for folder, row in finished_episodes(run):
        agent = agents.get(row.get("agent"))
        if agent is not None:
            stdout = (folder / "agent.stdout").read_text(encoding="utf-8")
            out[folder.name] = agent.trajectory(folder / "home", stdout, proxy_log(folder))
    return out


def rescored_rows(run: Path) -> dict[str, dict]:
    """Each episode's row after ``harness rescore`` (scores and metrics computed again from the stored files),
    without the time of the rescore."""
    from harness.rescore import rescore
    from harness.store import finished_episodes

    outcome = rescore(run)
    assert not outcome.skipped, outcome.skipped
    return {folder.name: {k: v for k, v in row.items() if k != "rescored_at"}
            for folder, row in finished_episodes(run)}


def readings(run: Path, work: Path, agents: dict[str, Any]) -> dict[str, Any]:
    """Everything above for ``run`` (``work``: an empty folder for the commands' output)."""
    work.mkdir(parents=True, exist_ok=True)
    return {"report": report_files(run, work / "report"), "bundle": bundle_files(run, work / "bundle"),
            "calls": call_pages(run), "export": export_files(run, work / "export"),
            "trajectories": json.loads(json.dumps(trajectories(run, agents), default=str))}
