"""Convert a run folder written by an older harness, in place, to today's storage (``harness runs compact RUN``).

What is converted, each file on its own (kinds, as the command reports them):

- ``proxy logs``: every plain ``proxy.jsonl`` of the run -- an agent episode's, each model call's
  ``proxy/<call>/`` of an in-harness episode (e.g. an LLM forecaster's), any other the harness wrote in
  the folder -- becomes ``proxy.jsonl.zst`` (:mod:`harness.logfile`'s format); the folders an agent wrote
  (``episodes/*/workspace``, ``home``, ``key``) are not searched, nor a run folder nested in this one (a
  stage of an experiment: compact it on its own);
- ``home logs``: an agent episode's ``home/``, stored as the harness stores it after an episode today
  (:func:`harness.native_logs.compress_home`);
- ``inputs``: inputs the harness generated and the agent left unchanged, kept by reference
  (:func:`harness.inputs.release_existing`: recorded, checked against a fresh rebuild, then dropped).

Every file goes through :func:`harness.compressed_files.compress_file`: written beside it, synced, read back
and compared, renamed into place (a compressed file appears only whole) and only then the old file removed.
A compaction stopped anywhere leaves a run every command reads as before -- a file is plain, or compressed,
or briefly both with the same bytes (readers take the compressed one:
:func:`harness.compressed_files.stored_file`) -- and running it again finishes the work.  A run folder already compact has nothing to do (the command says
so).  The whole conversion holds the run folder's lock (:mod:`harness.runlock`): it refuses to start while a
run, a rescore or another compaction writes the folder.  Values are not touched: rows, scores, trajectories,
reports, pages and exports read the same before and after.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import compressed_files, native_logs, runlock
from harness.errors import HarnessError
from harness.proxy_records import PLAIN_LOG_NAME
from harness.store import finished_episodes, run_dirs

#: The kinds of files converted, in the order they are done and reported.
KINDS = ("proxy logs", "home logs", "inputs")
#: Folders of an episode that its agent (or the answer key) wrote: never searched for proxy logs.
AGENT_FOLDERS = frozenset({"workspace", "home", "key"})

Event = Callable[[str, dict], None]


class CompactError(HarnessError):
    """A file of the run could not be converted; the message names it.  What was converted before stays
    converted and the run reads as before: running the command again goes on from there."""


@dataclass
class Step:
    """One conversion: its ``kind`` (:data:`KINDS`), the file (for inputs: the episode folder), its bytes
    ``before`` and ``after`` -- in a dry run the bytes it would take (an estimate; None for inputs, known only
    once each file is checked)."""

    kind: str
    path: Path
    before: int
    after: int | None = None


@dataclass
class Outcome:
    """What :func:`compact` did (or, ``dry_run``, would do) to the run folder ``root``: the ``steps``, and the
    folder's bytes ``total_before`` and ``total_after`` (apparent sizes, each file once however many links
    it has, the lock file left out; ``total_after`` None in a dry run).  ``notes``: files left as they were,
    with the reason."""

    root: Path
    dry_run: bool
    steps: list[Step] = field(default_factory=list)
    total_before: int = 0
    total_after: int | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def nothing_to_do(self) -> bool:
        """Whether the run folder was already compact (no step)."""
        return not self.steps

    def by_kind(self) -> dict[str, tuple[int, int, int | None]]:
        """``kind -> (files, bytes before, bytes after or None)`` for the kinds with steps, in :data:`KINDS` order."""
        out: dict[str, tuple[int, int, int | None]] = {}
        for kind in KINDS:
            steps = [s for s in self.steps if s.kind == kind]
            if steps:
                after = None if any(s.after is None for s in steps) else sum(s.after or 0 for s in steps)
                out[kind] = (len(steps), sum(s.before for s in steps), after)
        return out


def run_folders(path: Path | str) -> list[Path]:
    """The run folders :func:`compact` converts for ``path``: ``path`` itself when it holds a ``run.json``, and
    every run folder below it (an experiment's stages); :class:`HarnessError` when there is none."""
    found = run_dirs(Path(path))
    if not found:
        raise HarnessError(f"{path}: not a run folder (no run.json in it or below it)")
    return found


def compact(run_dir: Path | str, *, dry_run: bool = False, wait: bool = False,
            on_event: Event = lambda event, data: None) -> Outcome:
    """Convert the run folder ``run_dir`` in place (module docstring), holding its lock.

    ``dry_run``: find what would be converted and change nothing.  ``wait``: wait for the lock instead of
    failing.  Events: ``step`` ``{kind, path, before, after}`` after each conversion (``after`` None in a dry
    run), ``lock_wait`` ``{holder}``.  Raises :class:`HarnessError` for a folder without ``run.json``,
    :class:`harness.runlock.RunLocked` (naming the holder) while another process writes it, and
    :class:`CompactError` naming the file that could not be converted."""
    root = Path(run_dir)
    if not (root / "run.json").is_file():
        raise HarnessError(f"{root}: not a run folder (no run.json)")
    try:
        lock = runlock.acquire(root, wait, lambda holder: on_event("lock_wait", {"holder": holder}))
    except runlock.RunLocked:
        raise runlock.RunLocked(f"{root}: cannot compact it while another process writes it "
                                f"({runlock.describe(runlock.holder(root))}): wait for it to finish, or pass "
                                "--wait to compact it when it is done") from None
    try:
        outcome = Outcome(root, dry_run, total_before=tree_bytes(root, (runlock.LOCK_NAME,)))
        _proxy_logs(root, outcome, on_event)
        _home_logs(root, outcome, on_event)
        _inputs(root, outcome, on_event)
        if not dry_run:
            outcome.total_after = tree_bytes(root, (runlock.LOCK_NAME,))
        return outcome
    finally:
        lock.release()


def _convert(outcome: Outcome, kind: str, path: Path, min_saving: float, on_event: Event) -> None:
    """Compress ``path`` (one step of ``kind``; left plain when compression saves less than ``min_saving``),
    or, in a dry run, list it with the size it would take (``after``: an estimate, nothing is written)."""
    try:
        before = os.lstat(path).st_size
    except OSError as exc:
        raise CompactError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if outcome.dry_run:
        estimate = compressed_files.compressed_size(path)
        if estimate is None:
            raise CompactError(f"{path}: cannot be read")
        if estimate <= before * (1 - min_saving):
            outcome.steps.append(Step(kind, path, before, estimate))
            on_event("step", {"kind": kind, "path": path, "before": before, "after": estimate})
        return
    try:
        done = compressed_files.compress_file(path, min_saving)
    except (OSError, compressed_files.CompressError) as exc:
        reason = exc if isinstance(exc, compressed_files.CompressError) else f"{path}: {exc.strerror or exc}"
        converted = sum(1 for s in outcome.steps if s.after is not None)
        raise CompactError(f"{reason}; the {converted} file(s) converted before it stay converted and the run "
                           f"reads as before: run `harness runs compact {outcome.root}` again to finish") from None
    if done is None:  # compressed little (a home file), or zstd data already
        if kind == "proxy logs":
            outcome.notes.append(f"{path}: zstd data already; left as it is")
        return
    outcome.steps.append(Step(kind, path, *done))
    on_event("step", {"kind": kind, "path": path, "before": done[0], "after": done[1]})


def _proxy_logs(root: Path, outcome: Outcome, on_event: Event) -> None:
    for path in proxy_logs(root):
        _convert(outcome, "proxy logs", path, 0.0, on_event)


def proxy_logs(root: Path | str) -> list[Path]:
    """The plain proxy logs (``proxy.jsonl``, regular files) of the run folder ``root``, sorted: anywhere in it
    but in the folders agents wrote (:data:`AGENT_FOLDERS` of each episode) and in run folders nested in it.
    Links are not followed."""
    root = Path(root)
    found = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        if here.parent == root / "episodes":  # an episode folder
            dirs[:] = [d for d in dirs if d not in AGENT_FOLDERS]
        dirs[:] = [d for d in dirs if not (here / d / "run.json").exists()]
        dirs.sort()
        if PLAIN_LOG_NAME in files and stat.S_ISREG(os.lstat(here / PLAIN_LOG_NAME).st_mode):
            found.append(here / PLAIN_LOG_NAME)
    return sorted(found)


def _home_logs(root: Path, outcome: Outcome, on_event: Event) -> None:
    for folder, _ in finished_or_not(root):
        home = folder / "home"
        if not home.is_dir() or home.is_symlink():
            continue
        for relative, _size in native_logs.candidates(home):
            _convert(outcome, "home logs", home / relative, native_logs.MIN_SAVING, on_event)


def finished_or_not(root: Path) -> list[tuple[Path, dict[str, Any] | None]]:
    """``(episode folder, its row or None)`` of every episode folder of the run, sorted (an episode that
    never finished has home logs too)."""
    rows = {folder.name: row for folder, row in finished_episodes(root, skip_invalid=True)}
    episodes = root / "episodes"
    if not episodes.is_dir() or episodes.is_symlink():
        return []
    return [(episodes / name, rows.get(name)) for name in sorted(os.listdir(episodes))
            if (episodes / name).is_dir() and not (episodes / name).is_symlink()]


def _inputs(root: Path, outcome: Outcome, on_event: Event) -> None:
    """Inputs kept by reference, episode by episode (:func:`_release_inputs`): every finished episode folder
    without an inputs record (an older harness's; a folder with one was released by its run, or kept whole
    by ``--keep-inputs``, and is left as it is).  In a dry run each is listed with its inputs' bytes now
    (what a fresh rebuild reproduces, and so is dropped, is known only once each file is checked)."""
    from harness import inputs

    entries: dict[str, dict[str, Any]] | None = None
    for folder, row in finished_or_not(root):
        if row is None or inputs.read(folder) is not None:
            continue
        if entries is None:
            entries = _run_entries(root)
        before = _inputs_bytes(folder)
        if outcome.dry_run:
            outcome.steps.append(Step("inputs", folder, before))
            on_event("step", {"kind": "inputs", "path": folder, "before": before, "after": None})
            continue
        try:
            template, params = inputs.episode_task(entries.get(folder.name) or {}, row.get("template"))
        except HarnessError as exc:
            outcome.notes.append(f"{folder}: inputs left as they are: {exc}")
            continue
        _release_inputs(folder, template, params, str((entries.get(folder.name) or {}).get("episode", "0")))
        after = _inputs_bytes(folder)
        if inputs.read(folder) is not None:
            outcome.steps.append(Step("inputs", folder, before, after))
            on_event("step", {"kind": "inputs", "path": folder, "before": before, "after": after})


def _run_entries(root: Path) -> dict[str, dict[str, Any]]:
    """The run's ``run.json`` episode entries by key."""
    import json

    try:
        run = json.loads((root / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CompactError(f"{root / 'run.json'}: cannot be read: {exc}") from None
    episodes = run.get("episodes") if isinstance(run, dict) else None
    return {e["key"]: e for e in episodes or [] if isinstance(e, dict) and isinstance(e.get("key"), str)}


def _inputs_bytes(folder: Path) -> int:
    """Bytes of an episode's inputs as the command counts them: its ``workspace/`` and ``key/`` (the agent's
    output included, which stays) and the record of what is kept by reference."""
    from harness.inputs import INPUTS_FILE

    return sum(tree_bytes(folder / name) for name in ("workspace", "key", INPUTS_FILE))


def _release_inputs(folder: Path, template: Any, params: Any, episode: str) -> None:
    """Keep the episode's generated, unchanged inputs by reference: the one call of
    :func:`harness.inputs.release_existing`, which records references for the files there, drops each only
    when a fresh rebuild gives the same values (an input the agent changed or one that no longer rebuilds
    the same is kept as it is) and writes the record before deleting anything (so a compaction stopped in
    it leaves a readable folder)."""
    from harness import inputs

    try:
        inputs.release_existing(folder, template, params, episode)
    except (HarnessError, OSError) as exc:
        raise CompactError(f"{folder}: its inputs could not be released: {exc}") from None


def tree_bytes(path: Path | str, leave_out: tuple[str, ...] = ()) -> int:
    """Apparent bytes of the regular files at or under ``path``, each once however many hard links it has
    (inside the tree or out, e.g. into a shared cache), but the files ``leave_out`` names (relative to
    ``path``); links are not followed; 0 when there is nothing."""
    seen: set[tuple[int, int]] = {(st.st_dev, st.st_ino) for name in leave_out
                                  if (st := _lstat(os.path.join(path, name))) is not None}
    total = 0
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    if stat.S_ISREG(st.st_mode):
        return st.st_size
    if not stat.S_ISDIR(st.st_mode):
        return 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None
