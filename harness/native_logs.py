"""The agents' own logs under an episode's ``home/``, stored compressed once the episode's trajectory is built.

An agent CLI leaves its native session logs in the episode's home (JSON lines of its conversation, a session
JSON file, a research agent's step log): each holds the conversation once more, so a long episode's are
megabytes.  Once the trajectory and metrics are built (:func:`harness.episode.run_episode`),
:func:`compress_home` stores them compressed the way proxy logs are (:mod:`harness.compressed_files`: zstd
at :data:`harness.logfile.LEVEL`, the ``.zst`` suffix), and ``harness runs compact`` does the same to an older run's.

Which files (chosen once, here): every regular file under ``home/`` of at least :data:`MIN_BYTES` that
compression makes at least :data:`MIN_SAVING` smaller, whoever wrote it, text or binary.  Not a list each
agent declares: the rule needs no agent plugin (an old run's agent may no longer be installed), covers what
no converter lists (a CLI's subagent logs, its debug logs, its SQLite state, the documents it unpacks into
its home) and asks nothing of a new agent.  Binary files are included because a CLI's SQLite files are mostly
its session once more: measured on an agent CLI's offline episode, its SQLite write-ahead log took 1.37 MB,
16 kB compressed, three quarters of the episode folder once its logs and inputs were compact (another CLI's
session database log: 486 kB, 9.8 kB).  A reader that opens such a file by path (SQLite does) takes a plain
copy (:func:`copy`, exported as ``harness.atif.copy_native_file``).  Files compression hardly shrinks
(images, archives) stay plain, not worth a decompression on every read; smaller files too: below 16 KiB a
file fills at most four 4-KiB blocks, so compressing it saves next to nothing on disk, and small
configuration files stay readable as they are.

Reading.  A converter reads a home file through :func:`read_text` (exported as
:func:`harness.atif.read_native_text`), which reads ``foo.jsonl`` or, when only that is there,
``foo.jsonl.zst`` -- the compressed file first when both are (it appears only whole, by a rename), as for
proxy logs -- and lists them with :func:`find` (``harness.atif.find_native_files``), which names every file
by its plain name, so a trajectory's ``extra.native_logs`` is the same before and after.  Sizes:
:func:`size` (the decompressed bytes); a plain copy: :func:`copy`.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from harness import compressed_files, logfile, untrusted

#: Smallest home file stored compressed, in bytes (see the module docstring).
MIN_BYTES = 16 * 1024
#: Least part of a home file compression must save for it to be stored compressed (see the module docstring).
MIN_SAVING = 0.1
#: Suffixes of files :func:`compress_home` leaves alone: compressed ones, and a stopped compression's.
SKIPPED_SUFFIXES = (logfile.COMPRESSED_SUFFIX, logfile.COMPRESSED_SUFFIX + ".tmp")


def plain_name(name: str) -> str:
    """``name`` without the compressed suffix (``rollout.jsonl.zst`` -> ``rollout.jsonl``)."""
    return name[:-len(logfile.COMPRESSED_SUFFIX)] if name.endswith(logfile.COMPRESSED_SUFFIX) else name


def stored(path: Path | str) -> Path:
    """The file holding the text of ``path``: ``path.zst`` when that is a regular file, else ``path`` (which may
    not exist, or be a link: reading it then says so)."""
    return compressed_files.stored_file(path) or Path(path)


def read_text(path: Path | str, max_bytes: int, name: str | None = None) -> untrusted.Read:
    """The text of the home file ``path`` (plain, or compressed as ``path.zst``), invalid UTF-8 replaced by
    U+FFFD, at most ``max_bytes`` (decompressed); else a reason naming it (``name``, default the path): not
    found, a link or not a regular file, over the bound, corrupt compressed data.  As
    :func:`harness.untrusted.read_text` reads a plain file; never raises."""
    label = name or str(path)
    data, problem = compressed_files.read_bytes(stored(path), max_bytes, label)
    if data is None:
        return untrusted.Read(reason=problem)
    return untrusted.Read(data.decode("utf-8", "replace"))


def copy(path: Path | str, dest: Path | str) -> str | None:
    """Write the content of the home file ``path`` (plain, or stored compressed as ``path.zst``) to a new file
    ``dest`` -- for a reader that opens it by path, such as SQLite; None when done, else why not (``path`` not
    found, a link, corrupt compressed data; ``dest`` is not left behind)."""
    return compressed_files.copy_content(stored(path), dest)


def size(path: Path | str) -> int | None:
    """Bytes of the text of the home file ``path`` (decompressed when it is stored compressed); None when
    there is no such regular file."""
    found = compressed_files.stored_file(path)
    return None if found is None else compressed_files.content_size(found)


def find(folder: Path | str, pattern: str, bounds: untrusted.WalkBounds = untrusted.WalkBounds()) -> list[Path]:
    """The files under ``folder`` whose path relative to it matches the glob ``pattern``, each named by its plain
    name whether it is stored plain or compressed (``folder/<relative path>``, sorted, each once).

    ``pattern``: ``/``-separated parts matched with :mod:`fnmatch` one folder level each (``*`` does not cross
    a ``/``); a part ``**`` matches any number of folders, none included.  Listed with
    :func:`harness.untrusted.walk_files` (links not followed, bounded): entries that are not folders, links
    included, as :meth:`pathlib.Path.glob` lists them."""
    parts = [p for p in pattern.split("/") if p]
    found = {plain_name(name) for name in untrusted.walk_files(folder, bounds=bounds).files}
    return [Path(folder) / name for name in sorted(found) if _match(name.split("/"), parts)]


def _match(names: list[str], parts: list[str]) -> bool:
    if not parts:
        return not names
    if parts[0] == "**":
        return any(_match(names[i:], parts[1:]) for i in range(len(names) + 1))
    return bool(names) and fnmatch.fnmatchcase(names[0], parts[0]) and _match(names[1:], parts[1:])


@dataclass
class Compressed:
    """What :func:`compress_home` did: ``files`` ``(relative path, bytes before, bytes after)`` stored
    compressed, and ``problems`` (one line each, naming the file) for files left plain."""

    files: list[tuple[str, int, int]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def candidates(home: Path | str, min_bytes: int = MIN_BYTES) -> list[tuple[str, int]]:
    """``(relative path, bytes)`` of the files under ``home`` :func:`compress_home` tries: regular files of at
    least ``min_bytes``, not already compressed (what compression saves is seen only when it is tried)."""
    out = []
    for relative in untrusted.walk_files(home).files:
        if relative.endswith(SKIPPED_SUFFIXES):
            continue
        try:
            st = os.lstat(Path(home) / relative)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size >= min_bytes:
            out.append((relative, st.st_size))
    return out


def compress_home(home: Path | str, min_bytes: int = MIN_BYTES) -> Compressed:
    """Store every file of at least ``min_bytes`` under ``home`` that compression makes :data:`MIN_SAVING`
    smaller compressed (``name.zst``, byte for byte: :func:`harness.compressed_files.compress_file`, atomic per
    file).  A file that cannot be compressed (a read or write error, a full disk) is left plain and named in
    ``problems``; never raises for what the agent left."""
    done = Compressed()
    for relative, _ in candidates(home, min_bytes):
        try:
            result = compressed_files.compress_file(Path(home) / relative, MIN_SAVING)
        except (OSError, compressed_files.CompressError) as exc:
            done.problems.append(f"{untrusted.safe_str(relative)}: {untrusted.safe_str(exc)}")
            continue
        if result is not None:
            done.files.append((relative, *result))
    return done
