"""A whole file stored compressed after the fact (harness.compressed_files.compress_file): byte for byte what the
plain file held (its lines, offsets and bytes read back alike), crash-safe at every step, never through a
link; and the whole-file readers (read_bytes, content_size, stored_file) on plain and compressed files."""

from __future__ import annotations

import errno
import os

import pytest
import zstandard

from harness import compressed_files, logfile
from harness.compressed_files import (CompressError, compress_file, compressed_size, content_size, copy_content,
                                      read_bytes, stored_file)
from harness.logfile import read_lines

#: Lines that share most of their text, the last one without its newline (a writer stopped mid-line).
TEXT = b"".join(b'{"seq": %d, "body": "%s"}\n' % (i, b"conversation " * (40 * i)) for i in range(60)) + b'{"seq": 60'


def plain(tmp_path, data: bytes = TEXT, name: str = "proxy.jsonl"):
    path = tmp_path / name
    path.write_bytes(data)
    os.chmod(path, 0o640)
    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_001_000_000_000))
    return path


def test_a_compressed_file_reads_back_as_the_plain_one_did(tmp_path):
    path = plain(tmp_path)
    lines_before = list(read_lines(path))
    assert lines_before[-1] == (len(TEXT) - len(b'{"seq": 60'), b'{"seq": 60', False)
    before, after = compress_file(path)
    target = tmp_path / "proxy.jsonl.zst"
    assert (before, after) == (len(TEXT), target.stat().st_size) and after < before / 10
    assert not path.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["proxy.jsonl.zst"]
    assert read_bytes(target) == (TEXT, None)
    assert list(read_lines(target)) == lines_before  # offsets and the unterminated last line included
    assert logfile.line_at(target, lines_before[30][0]) == lines_before[30][1]
    assert content_size(target) == len(TEXT)
    st = target.stat()
    assert (oct(st.st_mode & 0o777), st.st_mtime_ns) == ("0o640", 1_700_000_001_000_000_000)
    # one frame that declares its size and ends with its checksum
    data = target.read_bytes()
    assert zstandard.frame_content_size(data) == len(TEXT)
    assert zstandard.get_frame_parameters(data).has_checksum
    assert stored_file(path) == target


def test_a_file_compression_hardly_shrinks_is_left_alone_when_a_saving_is_asked(tmp_path):
    noise = os.urandom(190_000) + bytes(10_000)  # as an image or an archive: mostly compressed already
    path = plain(tmp_path, noise, "figure.png")
    assert len(noise) * 0.9 < compressed_size(path) < len(noise)
    assert compress_file(path, min_saving=0.1) is None
    assert path.read_bytes() == noise and sorted(p.name for p in tmp_path.iterdir()) == ["figure.png"]
    assert compress_file(path) is not None  # without a saving asked it is compressed: it does not grow
    assert read_bytes(tmp_path / "figure.png.zst")[0] == noise
    grows = plain(tmp_path, os.urandom(50_000), "random.bin")
    assert compress_file(grows) is None and grows.is_file()  # never stored larger
    database = plain(tmp_path, b"SQLite format 3\0" + b"\0" * 100_000 + TEXT, "state.db")  # binary, compressible
    before, after = compress_file(database, min_saving=0.1)
    assert after < before / 10 and read_bytes(tmp_path / "state.db.zst")[0] == b"SQLite format 3\0" + b"\0" * 100_000 + TEXT


def test_a_dry_run_size_is_what_is_stored_and_a_copy_is_the_content(tmp_path):
    path = plain(tmp_path)
    estimate = compressed_size(path)
    assert compress_file(path)[1] == estimate
    assert copy_content(tmp_path / "proxy.jsonl.zst", tmp_path / "copy") is None
    assert (tmp_path / "copy").read_bytes() == TEXT
    assert copy_content(tmp_path / "missing", tmp_path / "copy2") == f"{tmp_path / 'missing'} not found"
    assert not (tmp_path / "copy2").exists() and compressed_size(tmp_path / "missing") is None


def test_zstd_data_already_is_left_as_it_is(tmp_path):
    path = plain(tmp_path, zstandard.ZstdCompressor().compress(TEXT))
    assert compress_file(path) is None and path.is_file() and not (tmp_path / "proxy.jsonl.zst").exists()


def test_both_files_left_by_a_stopped_compression_are_settled(tmp_path):
    path = plain(tmp_path)
    compress_file(path)
    plain(tmp_path)  # the plain file back beside its compressed copy: stopped after the rename
    assert stored_file(path) == tmp_path / "proxy.jsonl.zst"  # readers take the compressed one
    before, after = compress_file(path)
    assert (before, after) == (len(TEXT), (tmp_path / "proxy.jsonl.zst").stat().st_size) and not path.exists()
    plain(tmp_path, TEXT + b"more")  # other bytes beside the compressed file: neither is touched
    with pytest.raises(CompressError, match=r"proxy\.jsonl: proxy\.jsonl\.zst is there too and holds other bytes"):
        compress_file(path)
    assert path.read_bytes() == TEXT + b"more" and read_bytes(tmp_path / "proxy.jsonl.zst")[0] == TEXT


def test_a_failed_rename_leaves_the_plain_file_and_no_temporary_one(tmp_path, monkeypatch):
    path = plain(tmp_path)

    def fail(src, dst):
        raise OSError(errno.EIO, "simulated")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="simulated"):
        compress_file(path)
    assert path.read_bytes() == TEXT and sorted(p.name for p in tmp_path.iterdir()) == ["proxy.jsonl"]


def test_a_copy_that_does_not_read_back_the_same_is_not_kept(tmp_path, monkeypatch):
    path = plain(tmp_path)
    monkeypatch.setattr(compressed_files, "content_digest", lambda p: ("0" * 64, len(TEXT)))
    with pytest.raises(CompressError, match="does not read back the same"):
        compress_file(path)
    assert path.read_bytes() == TEXT and sorted(p.name for p in tmp_path.iterdir()) == ["proxy.jsonl"]


def test_a_link_is_never_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"keep me")
    (tmp_path / "log").mkdir()
    path = plain(tmp_path / "log")
    (tmp_path / "log" / "proxy.jsonl.zst.tmp").symlink_to(victim)  # left where the temporary file goes
    compress_file(path)
    assert victim.read_bytes() == b"keep me" and read_bytes(tmp_path / "log" / "proxy.jsonl.zst")[0] == TEXT
    linked = tmp_path / "log" / "linked.jsonl"
    linked.symlink_to(victim)
    with pytest.raises(CompressError, match="linked.jsonl is a symbolic link"):
        compress_file(linked)
    with pytest.raises(CompressError, match="missing.jsonl not found"):
        compress_file(tmp_path / "missing.jsonl")


def test_whole_file_readers_bound_decompressed_bytes_and_name_the_file(tmp_path):
    path = plain(tmp_path)
    compress_file(path)
    target = tmp_path / "proxy.jsonl.zst"
    assert read_bytes(target, max_bytes=1000, name="the log") == (
        None, "the log is larger than the 1000-byte bound when decompressed")
    assert read_bytes(plain(tmp_path, TEXT, "plain.jsonl"), max_bytes=1000)[1].endswith(
        "is larger than the 1000-byte bound")
    assert read_bytes(tmp_path / "nothing", name="x") == (None, "x not found")
    target.write_bytes(target.read_bytes()[:-40] + b"\xff" * 40)  # its last block corrupt
    data, problem = read_bytes(target)
    assert data is None and "corrupt" in problem
    assert content_size(tmp_path / "nothing") is None
    assert stored_file(tmp_path / "nothing") is None
    assert stored_file(tmp_path / "plain.jsonl") == tmp_path / "plain.jsonl"


def test_the_size_of_a_file_of_several_frames_without_sizes_is_counted(tmp_path):
    path = tmp_path / "log.jsonl.zst"
    writer = logfile.LogWriter(path)  # a frame per writer, no declared size
    writer.write(b"a" * 5000 + b"\n")
    writer.close()
    writer = logfile.LogWriter(path)
    writer.write(b"b\n")
    writer.close()
    assert content_size(path) == 5003
