"""Episode inputs kept by reference: what the harness generated for an episode and the agent left unchanged is
stored as a recipe, not as bytes, and rebuilt (and checked) when something reads it.

An agent task template names the inputs it can rebuild
(:meth:`~harness.contracts.AgentTaskTemplate.input_references`: e.g. each sample file of a generated pool, with
its sample id and noise seed).  The episode (:mod:`harness.episode`) calls :func:`record` once the inputs are
written, and :func:`release` at its very end (after scoring, metrics and the row; also when it failed):

- :data:`INPUTS_FILE` (``inputs.json.zst`` in the episode folder, outside ``workspace/`` and ``key/``: no
  agent sees it) records per file its reference, the sha256 of its bytes as written, the digest of its decoded
  values (:meth:`~harness.contracts.AgentTaskTemplate.input_values_digest`) and its ``state``:
  ``present`` (the file is in the folder), ``by_reference`` (released: rebuilt on demand), ``edited`` (the
  agent changed it or replaced it by something that is no regular file: kept as it is) or ``deleted`` (the
  agent removed it);
- :func:`release` deletes every recorded file whose bytes are unchanged (``by_reference``) and the folders
  it leaves empty; the run setting ``keep_inputs`` (``harness run --keep-inputs``) keeps every file, states
  still recorded.

Readers never open ``episodes/<key>/<rel>`` directly: :func:`resolve` gives the file in the folder when
present, else rebuilds it once into the inputs cache (``<cache root>/inputs/<values digest><suffix>``, the cache
root being ``$HARNESS_CACHE_DIR`` or ``~/.cache/harness``), checks it against the recorded values digest and
returns the cached copy; :func:`listing` lists a folder with its by-reference files; :func:`restored` puts the
by-reference files back into the folder for a while (``harness rescore`` runs a ``rule.py`` on them).  A
rebuilt input whose values differ from the record raises :class:`InputMismatch`, naming the run folder, the
episode, the file, the reference's source and both digests.  The cache is safe to delete and bounded: past
:data:`CACHE_MB_ENV` (``HARNESS_INPUTS_CACHE_MB``, default :data:`DEFAULT_CACHE_MB` MiB) the least recently
used files are deleted.

A folder written before inputs were kept by reference has no record: every file is read as it is, and
:func:`release_existing` converts it (``harness runs compact``), dropping only files that a fresh rebuild
reproduces.

Storage: ``inputs.json.zst`` is compact JSON compressed with zstd (one frame; ``zstdcat`` shows it),
``{"format": 1, "template": NAME, "episode": ID, "shared": {...}, "files": {rel: {"reference": {...},
"sha256": HEX, "values": HEX, "state": STATE}}}``; ``shared`` holds the reference entries common to every
file (the pool, the simulator, kappa), which each file's reference stands for: :func:`read` merges them back;
a released file's ``sha256`` is dropped (a rebuilt copy is checked by its values).  Why compressed: the
digests are most of it, and an episode with 745 generated sample files has a record of 176 KB as plain JSON,
40 KB compressed, where what the episode itself adds besides its answer and score is a few KB.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import secrets
import shutil
import stat
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from harness.errors import HarnessError

INPUTS_FILE = "inputs.json.zst"
FORMAT = 1
#: zstd level of ``inputs.json.zst`` (hex digests are most of it): level 19's size at a third of its time; a record
#: of 745 files (186 KB as JSON) is 41.9 KB in 32 ms (19: 42.0 KB in 88 ms; 3: 51.4 KB), one of 25 files 3.76 KB in
#: 2.4 ms (19: 3.74 KB in 4.9 ms).  zstd sizes its window to the record, so memory stays small.
LEVEL = 15
#: zstd level of the record written at an episode's start (its release rewrites it at :data:`LEVEL`: 2.4 ms vs 0.1)
RECORD_LEVEL = 3
#: the most bytes a record may decompress to (about 4,000 times the record of 745 files)
MAX_RECORD_BYTES = 1 << 30
PRESENT, BY_REFERENCE, EDITED, DELETED = "present", "by_reference", "edited", "deleted"
#: Environment variable: the inputs cache's bound in MiB (default :data:`DEFAULT_CACHE_MB`).
CACHE_MB_ENV = "HARNESS_INPUTS_CACHE_MB"
DEFAULT_CACHE_MB = 1024
_CHUNK = 1 << 20


class InputMismatch(HarnessError):
    """A rebuilt input's values differ from those recorded when its episode ran (the pool, the simulator or the
    template's code changed since); the message names the run folder, the episode, the file, the source and
    both digests."""


def file_sha256(path: Path) -> str:
    """sha256 (hex) of the bytes of file ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


# -- the record -----------------------------------------------------------------------------------------------

def read(root: Path | str) -> dict[str, Any] | None:
    """The episode folder's record (``inputs.json.zst``) with each reference complete (the ``shared`` entries merged in),
    or None when the folder has none (no references, or written before inputs were kept by reference).
    Raises :class:`HarnessError` naming the file when it is unreadable or of another format."""
    import zstandard

    path = Path(root) / INPUTS_FILE
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HarnessError(f"{path}: unreadable ({exc})") from None
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob)) as reader:
            text = reader.read(MAX_RECORD_BYTES + 1)
        if len(text) > MAX_RECORD_BYTES:
            raise ValueError(f"more than {MAX_RECORD_BYTES} bytes")
        data = json.loads(text)
    except (zstandard.ZstdError, ValueError) as exc:
        raise HarnessError(f"{path}: not zstd-compressed JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("files"), dict):
        raise HarnessError(f"{path}: field 'format': expected {FORMAT} with a 'files' object")
    shared = data.pop("shared", None) or {}
    for entry in data["files"].values():
        entry["reference"] = {**shared, **(entry.get("reference") or {})}
    return data


def _write(root: Path, data: dict[str, Any], level: int = LEVEL) -> None:
    """Write the record (``inputs.json.zst``) atomically (a temporary file, then ``os.replace``), the references' common
    entries factored into ``shared``, at zstd ``level``."""
    files = data["files"]
    refs = [entry["reference"] for entry in files.values()]
    shared = dict(refs[0]) if refs else {}
    for ref in refs[1:]:
        shared = {k: v for k, v in shared.items() if k in ref and ref[k] == v}
    out = {k: v for k, v in data.items() if k not in ("files", "shared")}
    out["shared"] = shared
    out["files"] = {rel: {**entry, "reference": {k: v for k, v in entry["reference"].items() if k not in shared}}
                    for rel, entry in sorted(files.items())}
    import zstandard

    path = Path(root) / INPUTS_FILE
    tmp = path.with_name(f".{INPUTS_FILE}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    text = json.dumps(out, separators=(",", ":")).encode("utf-8")
    tmp.write_bytes(zstandard.ZstdCompressor(level=level).compress(text))
    os.replace(tmp, path)


def _regular(root: Path, rel: str) -> Path | None:
    """``root/rel`` when it is a regular file reached through no symbolic link, else None (also for a ``rel``
    that is absolute or has ``..``).  One ``lstat`` per part: no link and no ``..`` keep it inside ``root``."""
    rel_path = Path(rel)
    parts = rel_path.parts
    if not parts or rel_path.is_absolute() or ".." in parts:
        return None
    current = Path(root)
    try:
        for part in parts[:-1]:
            current = current / part
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return None
        path = current / parts[-1]
        return path if stat.S_ISREG(os.lstat(path).st_mode) else None
    except (OSError, ValueError):
        return None


def _check_rel(rel: str) -> str:
    parts = Path(rel).parts
    if not rel or Path(rel).is_absolute() or ".." in parts or rel != Path(rel).as_posix() or rel == INPUTS_FILE:
        raise ValueError(f"input path {rel!r}: expected a relative posix path inside the episode folder")
    return rel


def record(template: Any, params: Any, episode: str, root: Path | str) -> dict[str, Any]:
    """Record the episode's inputs that ``template`` can rebuild (its ``input_references``) in
    ``root/inputs.json.zst``, each ``present`` with the sha256 of its bytes and the digest of its values; returns
    the record (``{"format", "template", "episode", "files"}``).  Nothing is written when the template names
    no input (a template without references keeps every file).  Raises ValueError naming a referenced path
    that is not a regular file of the folder."""
    root = Path(root)
    hook = getattr(template, "input_references", None)
    references = hook(params, episode, root) if hook is not None else {}
    data: dict[str, Any] = {"format": FORMAT, "template": getattr(template, "name", None), "episode": episode,
                            "files": {}}
    for rel, reference in sorted((references or {}).items()):
        path = _regular(root, _check_rel(rel))
        if path is None:
            raise ValueError(f"{root}: template {data['template']!r} names input {rel!r}, which is not a file there")
        data["files"][rel] = {"reference": dict(reference), "sha256": file_sha256(path),
                              "values": template.input_values_digest(path), "state": PRESENT}
    if data["files"]:
        _write(root, data, RECORD_LEVEL)
    return data


def _remove_empty_parents(root: Path, path: Path) -> None:
    """Remove the folders above ``path`` left empty, up to (not including) the top folders of ``root``
    (``workspace/``, ``key/`` stay)."""
    parent = path.parent
    while parent != root and parent.parent != root:
        try:
            parent.rmdir()
        except OSError:
            return
        parent = parent.parent


def release(root: Path | str, keep: bool = False) -> dict[str, int]:
    """At the end of an episode: compare every recorded input with its record and delete the unchanged ones
    (``keep``: delete nothing, only record the states); returns the count per state.  A folder without
    record is left as it is (``{}``).  The record is replaced atomically (before any file is deleted)."""
    root = Path(root)
    data = read(root)
    if data is None:
        return {}
    dropped: list[Path] = []
    for rel, entry in data["files"].items():
        path = root / rel
        regular = _regular(root, rel)
        if regular is not None:
            unchanged = entry.get("sha256") is not None and file_sha256(regular) == entry["sha256"]
            if unchanged and not keep:
                dropped.append(regular)
                entry["state"] = BY_REFERENCE
                entry.pop("sha256", None)  # its bytes matter no more: a rebuilt copy is checked by its values
            else:
                entry["state"] = PRESENT if unchanged else EDITED
        elif os.path.lexists(path):
            entry["state"] = EDITED  # a link or another kind of file in its place: kept as it is
        elif entry["state"] != BY_REFERENCE:
            entry["state"] = DELETED
    _write(root, data)  # the record first: a crash below leaves files the record says are rebuilt, never lost
    for path in dropped:
        path.unlink(missing_ok=True)
        _remove_empty_parents(root, path)
    counts: dict[str, int] = {}
    for entry in data["files"].values():
        counts[entry["state"]] = counts.get(entry["state"], 0) + 1
    return counts


# -- reading --------------------------------------------------------------------------------------------------

def episode_task(entry: dict[str, Any], template_name: str | None = None) -> tuple[Any, Any]:
    """(template, params) of a run's episode from its ``run.json`` entry (``{"key", "template", "params",
    "episode", ...}``; ``template_name`` when the entry names none, e.g. the row's).  Raises
    :class:`HarnessError` saying why when they cannot be had (no params listed, an unknown template, params
    that no longer validate)."""
    from harness import plugins as registry

    if not isinstance(entry.get("params"), dict):
        raise HarnessError("run.json does not list its params")
    name = entry.get("template") or template_name
    try:
        template = registry.get("task_template", str(name))
    except registry.UnknownPlugin as exc:
        raise HarnessError(str(exc)) from None
    try:
        params = template.params_model.model_validate(entry["params"])
    except ValueError as exc:
        flat = " ".join(str(exc).split())
        raise HarnessError(f"its params no longer validate: {flat[:300]}") from None
    return template, params


_tasks: dict[tuple[str, int, str], tuple[Any, Any, str]] = {}
_tasks_lock = threading.Lock()


def _task_of(root: Path) -> tuple[Any, Any, str]:
    """(template, params, episode id) of the episode in folder ``root`` (``<run>/episodes/<key>``) from its
    run's ``run.json`` (memoised per run.json version)."""
    run_json = root.parent.parent / "run.json"
    try:
        stamp = run_json.stat().st_mtime_ns
    except OSError:
        raise HarnessError(f"{root}: no run.json in {root.parent.parent}: cannot tell which task made its inputs") \
            from None
    cache = (str(run_json), stamp, root.name)
    with _tasks_lock:
        if cache in _tasks:
            return _tasks[cache]
    try:
        run = json.loads(run_json.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HarnessError(f"{run_json}: unreadable ({exc})") from None
    entries = [e for e in run.get("episodes") or [] if isinstance(e, dict) and e.get("key") == root.name]
    if not entries:
        raise HarnessError(f"{run_json}: lists no episode {root.name!r}")
    try:
        template, params = episode_task(entries[0])
    except HarnessError as exc:
        raise HarnessError(f"{run_json}: episode {root.name}: {exc}") from None
    found = (template, params, str(entries[0].get("episode", "0")))
    with _tasks_lock:
        _tasks[cache] = found
    return found


def cache_dir() -> Path:
    """The inputs cache: ``<cache root>/inputs`` (``$HARNESS_CACHE_DIR`` or ``~/.cache/harness``)."""
    from harness.image.cache import cache_root

    return cache_root() / "inputs"


def cache_limit_bytes() -> int:
    """The inputs cache's bound in bytes: ``$HARNESS_INPUTS_CACHE_MB`` MiB (default 1024).  Raises
    :class:`HarnessError` naming the variable when it is no positive number."""
    text = os.environ.get(CACHE_MB_ENV)
    if not text:
        return DEFAULT_CACHE_MB << 20
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise HarnessError(f"{CACHE_MB_ENV}={text!r}: expected a positive number of MiB")
    return int(value * (1 << 20))


_since_scan = [0, 0.0]  # bytes added since the last eviction scan, when it ran
_scan_lock = threading.Lock()


def _evict(folder: Path, added: int) -> None:
    """Delete the least recently used cache files while the cache holds more than its bound (a scan once the
    bytes added since the last one pass a twentieth of the bound, or after a minute)."""
    limit = cache_limit_bytes()
    with _scan_lock:
        _since_scan[0] += added
        if _since_scan[0] < limit // 20 and time.monotonic() - _since_scan[1] < 60:
            return
        _since_scan[0], _since_scan[1] = 0, time.monotonic()
    files = []
    for entry in os.scandir(folder):
        try:
            if entry.is_file(follow_symlinks=False) and not entry.name.startswith("."):
                st = entry.stat(follow_symlinks=False)
                files.append((st.st_atime, st.st_size, entry.path))
        except OSError:
            continue
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files):
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
            total -= size


def _touch(path: Path) -> None:
    """Mark a cache file used now (its access time; file systems mounted ``noatime`` do not)."""
    with contextlib.suppress(OSError):
        os.utime(path, ns=(time.time_ns(), path.stat().st_mtime_ns))


def _source(reference: dict[str, Any]) -> str:
    return str(reference.get("source") or json.dumps(reference, sort_keys=True)[:200])


def _rebuild(template: Any, params: Any, episode: str, root: Path, rel: str, entry: dict[str, Any],
             fresh: bool = False) -> Path:
    """Rebuild ``rel`` into the cache (verified) and return the cached file.  ``fresh``: rebuild it from its
    reference even when the cache holds a file of those values (the cache says that some input once had
    them, not that this reference gives them: what :func:`release_existing` must know before dropping a
    file whose values digest it took from the file itself)."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    want = str(entry["values"])
    cached = folder / f"{want}{Path(rel).suffix}"
    if not fresh and cached.is_file() and not cached.is_symlink():
        try:
            good = template.input_values_digest(cached) == want
        except Exception:  # noqa: BLE001 - a damaged cache file is rebuilt
            good = False
        if good:
            _touch(cached)
            return cached
        cached.unlink(missing_ok=True)
    tmp = folder / f".{secrets.token_hex(6)}.tmp{Path(rel).suffix}"
    try:
        try:
            template.rebuild_input(params, episode, dict(entry["reference"]), tmp)
            got = template.input_values_digest(tmp)
        except Exception as exc:  # noqa: BLE001 - said with the run, the episode and the source
            raise InputMismatch(
                f"{root.parent.parent}: episode {root.name}: input {rel} could not be rebuilt from "
                f"{_source(entry['reference'])}: {type(exc).__name__}: {exc}") from exc
        if got != want:
            raise InputMismatch(
                f"{root.parent.parent}: episode {root.name}: input {rel} rebuilt from {_source(entry['reference'])} "
                f"does not match the run's record: values digest {got}, recorded {want} (the pool, the simulator "
                f"or the template changed since the run)")
        os.replace(tmp, cached)
    finally:
        tmp.unlink(missing_ok=True)
    _evict(folder, cached.stat().st_size)
    return cached


def resolve(root: Path | str, rel: str, template: Any = None, params: Any = None,
            episode: str | None = None) -> Path | None:
    """The file ``rel`` (posix, relative to episode folder ``root``): ``root/rel`` when it is a regular file
    there (reached through no symbolic link); when the record says ``by_reference``, its copy in the inputs
    cache, rebuilt on first use and checked against the recorded values digest; None otherwise (neither
    present nor recorded, or recorded as deleted).  ``template``/``params``/``episode``: the episode's task
    (default: read from the run's ``run.json``, two folders up).  Raises :class:`InputMismatch` when the
    rebuilt values differ from the record, :class:`HarnessError` when the task cannot be read.  Read the
    returned file, never write it: a cached copy is shared."""
    root = Path(root)
    present = _regular(root, rel)
    if present is not None:
        return present
    data = read(root)
    entry = (data or {}).get("files", {}).get(rel)
    if entry is None or entry.get("state") != BY_REFERENCE:
        return None
    if template is None or params is None:
        template, params, recorded = _task_of(root)
        episode = episode if episode is not None else recorded
    return _rebuild(template, params, str(episode if episode is not None else data.get("episode", "0")), root, rel,
                    entry)


def listing(root: Path | str, rel_dir: str) -> list[str]:
    """The names of the files in folder ``rel_dir`` of episode folder ``root``, those kept by reference
    included, sorted (no folders; an agent's links are left out)."""
    root = Path(root)
    rel_dir = rel_dir.strip("/")
    names: set[str] = set()
    folder = root / rel_dir
    if folder.is_dir() and not any(p.is_symlink() for p in [folder, *folder.parents][: len(Path(rel_dir).parts)]):
        names.update(p.name for p in folder.iterdir() if p.is_file() and not p.is_symlink())
    try:
        data = read(root)
    except HarnessError:
        data = None
    for rel, entry in ((data or {}).get("files") or {}).items():
        if entry.get("state") == BY_REFERENCE and Path(rel).parent.as_posix() == rel_dir:
            names.add(Path(rel).name)
    return sorted(names)


@contextlib.contextmanager
def restored(root: Path | str, prefixes: tuple[str, ...] = ("",), template: Any = None, params: Any = None,
             episode: str | None = None) -> Iterator[list[str]]:
    """Put the by-reference inputs under ``prefixes`` (e.g. ``("key/",)``) back into episode folder ``root``
    (each rebuilt and checked as :func:`resolve` does) for the ``with`` block, yielding their paths; on leaving,
    the copies put back are deleted again (the record is not changed).  Raises :class:`InputMismatch` as
    :func:`resolve` does."""
    root = Path(root)
    data = read(root) or {"files": {}}
    wanted = [(rel, entry) for rel, entry in data["files"].items()
              if entry.get("state") == BY_REFERENCE and rel.startswith(prefixes) and not os.path.lexists(root / rel)]
    if wanted and (template is None or params is None):
        template, params, recorded = _task_of(root)
        episode = episode if episode is not None else recorded
    episode = str(episode if episode is not None else data.get("episode", "0"))
    put: list[str] = []
    try:
        for rel, entry in wanted:
            source = _rebuild(template, params, episode, root, rel, entry)
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, root / rel)
            put.append(rel)
        yield put
    finally:
        for rel in put:
            (root / rel).unlink(missing_ok=True)
            _remove_empty_parents(root, root / rel)


def release_existing(root: Path | str, template: Any, params: Any, episode: str, keep: bool = False) -> dict[str, int]:
    """Convert an episode folder written before inputs were kept by reference (no record): record the
    references ``template`` gives for its files now, drop each file only when a fresh rebuild gives the same
    values (the others are recorded ``edited`` and kept; a referenced file missing is ``deleted``), then
    :func:`release` (``keep``: record only).  A folder that has a record is only released.  Returns the
    count per state.  Rebuilt copies enter the inputs cache."""
    root = Path(root)
    if read(root) is not None:
        return release(root, keep)
    hook = getattr(template, "input_references", None)
    references = hook(params, episode, root) if hook is not None else {}
    data: dict[str, Any] = {"format": FORMAT, "template": getattr(template, "name", None), "episode": episode,
                            "files": {}}
    for rel, reference in sorted((references or {}).items()):
        _check_rel(rel)
        path = _regular(root, rel)
        if path is None:
            state = EDITED if os.path.lexists(root / rel) else DELETED
            data["files"][rel] = {"reference": dict(reference), "sha256": None, "values": None, "state": state}
            continue
        entry = {"reference": dict(reference), "sha256": file_sha256(path),
                 "values": template.input_values_digest(path), "state": PRESENT}
        try:
            _rebuild(template, params, episode, root, rel, entry, fresh=True)
        except InputMismatch:
            entry["sha256"] = None  # never equal: release keeps it
            entry["state"] = EDITED
        data["files"][rel] = entry
    if not data["files"]:
        return {}
    _write(root, data)
    return release(root, keep)
