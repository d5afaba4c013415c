"""The agents' logs under an episode's home (harness.native_logs): which files are stored compressed, and the
readers every converter uses, which read and list a compressed file as the plain one it was."""

from __future__ import annotations

import os
from pathlib import Path

from harness import compressed_files, native_logs
from harness.native_logs import MIN_BYTES, compress_home, find, read_text, size


def home(tmp_path) -> Path:
    """A home as a CLI leaves it: session logs, a small config, a database, an image, a stopped compression's
    leftover."""
    root = tmp_path / "home"
    files = {
        ".tool/sessions/2026/12/06/rollout-1.jsonl": b'{"type": "message", "text": "caf\xc3\xa9 \xff"}\n' * 2000,
        ".tool/sessions/rollout-0.jsonl": b"x" * MIN_BYTES,  # exactly the threshold
        ".tool/config.toml": b'model = "m"\n',
        ".tool/state.sqlite": b"SQLite format 3\0" + bytes(100_000),
        ".tool/plot.png": b"\x89PNG\r\n\x1a\n" + os.urandom(50_000),  # compressed already
        "notes.txt.zst.tmp": b"z" * 100_000,
    }
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (root / "link.jsonl").symlink_to(root / ".tool/config.toml")
    return root


def test_files_from_the_threshold_up_that_compress_are_stored_compressed_and_nothing_else(tmp_path):
    folder = home(tmp_path)
    texts = {p: read_text(folder / p, 1 << 30).value for p in (".tool/sessions/2026/12/06/rollout-1.jsonl",
                                                                 ".tool/sessions/rollout-0.jsonl")}
    database = (folder / ".tool/state.sqlite").read_bytes()
    assert native_logs.candidates(folder) == [(".tool/plot.png", 50_008),
                                              (".tool/sessions/2026/12/06/rollout-1.jsonl", 78000),
                                              (".tool/sessions/rollout-0.jsonl", MIN_BYTES),
                                              (".tool/state.sqlite", 100_016)]
    done = compress_home(folder)
    assert done.problems == [] and [(f, b) for f, b, _ in done.files] == [
        (".tool/sessions/2026/12/06/rollout-1.jsonl", 78000), (".tool/sessions/rollout-0.jsonl", MIN_BYTES),
        (".tool/state.sqlite", 100_016)]
    names = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if not p.is_dir())
    assert names == [".tool/config.toml", ".tool/plot.png", ".tool/sessions/2026/12/06/rollout-1.jsonl.zst",
                     ".tool/sessions/rollout-0.jsonl.zst", ".tool/state.sqlite.zst", "link.jsonl",
                     "notes.txt.zst.tmp"]
    assert native_logs.copy(folder / ".tool/state.sqlite", tmp_path / "db") is None  # for a reader by path
    assert (tmp_path / "db").read_bytes() == database
    assert native_logs.copy(folder / ".tool/config.toml", tmp_path / "config") is None
    assert (tmp_path / "config").read_bytes() == b'model = "m"\n'
    assert native_logs.copy(folder / "link.jsonl", tmp_path / "x") == f"{folder / 'link.jsonl'} is a symbolic link; it was not read"
    assert "\ufffd" in texts[".tool/sessions/2026/12/06/rollout-1.jsonl"]
    for relative, text in texts.items():  # read as before, invalid UTF-8 replaced the same way
        assert read_text(folder / relative, 1 << 30).value == text
    assert size(folder / ".tool/sessions/2026/12/06/rollout-1.jsonl") == 78000
    assert size(folder / ".tool/sessions/rollout-0.jsonl") == MIN_BYTES
    assert size(folder / ".tool/config.toml") == 12 and size(folder / "missing") is None
    assert compress_home(folder).files == []  # nothing left to do


def test_find_names_files_by_their_plain_names_whichever_way_they_are_stored(tmp_path):
    folder = home(tmp_path)
    before = find(folder / ".tool", "**/rollout-*.jsonl")
    compress_home(folder)
    assert find(folder / ".tool", "**/rollout-*.jsonl") == before == [
        folder / ".tool/sessions/2026/12/06/rollout-1.jsonl", folder / ".tool/sessions/rollout-0.jsonl"]
    assert find(folder / ".tool", "sessions/*.jsonl") == [folder / ".tool/sessions/rollout-0.jsonl"]  # * stays
    assert find(folder / ".tool", "*/*/*/*/rollout-*.jsonl") == [folder / ".tool/sessions/2026/12/06/rollout-1.jsonl"]
    assert find(folder, "*.jsonl") == [folder / "link.jsonl"]  # a link is listed (reading it says what it is)
    assert find(folder / "nowhere", "**/*") == []


def test_reading_names_the_file_and_never_follows_a_link(tmp_path):
    folder = home(tmp_path)
    assert read_text(folder / "link.jsonl", 100, "link.jsonl").reason == (
        "link.jsonl is a symbolic link; it was not read")
    assert read_text(folder / "missing.jsonl", 100, "missing.jsonl").reason == "missing.jsonl not found"
    compress_home(folder)
    assert read_text(folder / ".tool/sessions/rollout-0.jsonl", 100, "the log").reason == (
        "the log is larger than the 100-byte bound when decompressed")


def test_a_file_that_cannot_be_compressed_stays_plain_and_is_named(tmp_path, monkeypatch):
    folder = home(tmp_path)

    def full(path, min_saving=0.0):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(compressed_files, "compress_file", full)
    done = compress_home(folder)
    assert done.files == [] and done.problems == [
        ".tool/plot.png: [Errno 28] No space left on device",
        ".tool/sessions/2026/12/06/rollout-1.jsonl: [Errno 28] No space left on device",
        ".tool/sessions/rollout-0.jsonl: [Errno 28] No space left on device",
        ".tool/state.sqlite: [Errno 28] No space left on device"]
    assert os.path.getsize(folder / ".tool/sessions/rollout-0.jsonl") == MIN_BYTES
