"""Compressed JSON-lines logs (harness.logfile): flushed line by line, read back whole whatever the writer's end --
a cut last frame, appended frames, a killed process -- and never past the bound in decompressed bytes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc

import pytest
import zstandard

from harness import logfile
from harness.logfile import LogWriter, frames, line_at, log_file, read_lines
from tests.support.paths import REPO


def lines_of(n: int, width: int = 3000) -> list[bytes]:
    """``n`` JSON lines of growing size that share most of their text (as a conversation's requests do)."""
    return [json.dumps({"type": "request", "seq": i, "body": "conversation " * (width * i // 13)}).encode()
            for i in range(n)]


def written(path, lines: list[bytes], close: bool = True) -> list[int]:
    """Write ``lines`` to ``path``; the file's size after each line."""
    writer = LogWriter(path)
    sizes = []
    for line in lines:
        writer.write(line + b"\n")
        sizes.append(os.path.getsize(path))
    if close:
        writer.close()
    return sizes


def read(path, **kw) -> tuple[list[bytes], logfile.LogLines]:
    lines = read_lines(path, **kw)
    return [line for _, line, terminated in lines if terminated], lines


def test_a_compressed_log_reads_back_its_lines_and_their_offsets(tmp_path):
    lines = lines_of(30)
    written(tmp_path / "log.jsonl.zst", lines)
    written(tmp_path / "log.jsonl", lines)
    compressed, plain = read_lines(tmp_path / "log.jsonl.zst"), read_lines(tmp_path / "log.jsonl")
    assert list(compressed) == list(plain)  # the same offsets, lines and ends: the decompressed stream is the file
    assert compressed.compressed and not plain.compressed and compressed.problem is plain.problem is None
    assert (tmp_path / "log.jsonl.zst").read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    assert os.path.getsize(tmp_path / "log.jsonl.zst") * 20 < os.path.getsize(tmp_path / "log.jsonl")
    offsets = [at for at, _, _ in read_lines(tmp_path / "log.jsonl.zst")]
    assert offsets[0] == 0 and offsets[1] == len(lines[0]) + 1
    for k in (0, 13, 29):
        assert line_at(tmp_path / "log.jsonl.zst", offsets[k]) == line_at(tmp_path / "log.jsonl", offsets[k]) == lines[k]
    assert line_at(tmp_path / "log.jsonl.zst", offsets[3] + 1) is None  # not the start of a line
    assert zstandard.ZstdDecompressor().stream_reader(open(tmp_path / "log.jsonl.zst", "rb")).read() == \
        (tmp_path / "log.jsonl").read_bytes()  # plain zstd: `zstd -d` reads it too


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_lines_cross_any_chunk_boundary(tmp_path, monkeypatch, chunk):
    lines = [b"", b"a", b"", b"bc" * 50, b"\xff not utf-8", b"{}"]
    written(tmp_path / "log.zst", lines)
    written(tmp_path / "log.txt", lines)
    monkeypatch.setattr(logfile, "CHUNK", chunk)
    for name in ("log.zst", "log.txt"):
        assert read(tmp_path / name)[0] == lines
        offsets = [at for at, _, _ in read_lines(tmp_path / name)]
        assert [line_at(tmp_path / name, at) for at in offsets] == lines


def test_a_log_cut_anywhere_reads_to_its_last_complete_line(tmp_path):
    """A killed writer's file, cut at every byte of its last records: the complete lines, the partial one not
    (it comes flagged unterminated), and no error."""
    lines = lines_of(12)
    sizes = written(tmp_path / "log.zst", lines, close=False)
    data = (tmp_path / "log.zst").read_bytes()
    assert len(data) == sizes[-1]  # every line reached the file before write() returned
    cut = tmp_path / "cut.zst"
    for end in range(sizes[8] - 3, len(data) + 1):
        cut.write_bytes(data[:end])
        got, read_back = read(cut)
        complete = sum(size <= end for size in sizes)
        assert got == lines[:complete], end
        assert read_back.problem is None and read_back.cut
        tails = [line for _, line, terminated in read_lines(cut) if not terminated]
        assert len(tails) <= 1 and all(lines[complete].startswith(t) for t in tails)


def test_the_flushed_blocks_of_an_unfinished_frame_are_found_without_decompressing(tmp_path):
    sizes = written(tmp_path / "log.zst", lines_of(5), close=False)
    with open(tmp_path / "log.zst", "rb") as fh:
        assert frames(fh, sizes[-1]) == ([logfile.Frame(0, sizes[-1], False)], None)
        assert frames(fh, sizes[-1] - 1) == ([logfile.Frame(0, sizes[-2], False)], None)
    (tmp_path / "bad.zst").write_bytes((tmp_path / "log.zst").read_bytes()[:sizes[1]] + b"\x07" * 9)
    with open(tmp_path / "bad.zst", "rb") as fh:
        found, problem = frames(fh, sizes[1] + 9)
    assert found == [logfile.Frame(0, sizes[1], False)] and problem == f"a corrupt block header at byte {sizes[1]}"
    got, lines = read(tmp_path / "bad.zst")
    assert got == lines_of(2) and lines.problem == f"{tmp_path / 'bad.zst'}: {problem}; the rest was not read"


def test_a_resumed_writer_appends_a_frame(tmp_path):
    path = tmp_path / "log.zst"
    first, second = lines_of(4), [b'{"resumed": 1}', b'{"resumed": 2}']
    written(path, first)
    writer = LogWriter(path)
    assert writer.size == sum(len(line) + 1 for line in first)  # what the file already held, decompressed
    for line in second:
        writer.write(line + b"\n")
    writer.close()
    with open(path, "rb") as fh:
        found, problem = frames(fh, os.path.getsize(path))
    assert len(found) == 2 and all(f.complete for f in found) and problem is None
    assert read(path)[0] == first + second


def test_a_writer_resumed_after_a_kill_drops_the_partial_line_then_appends(tmp_path):
    path = tmp_path / "log.zst"
    first = lines_of(6)
    sizes = written(path, first, close=False)
    path.write_bytes(path.read_bytes()[:sizes[4] + 5])  # killed while writing line 6
    writer = LogWriter(path)
    writer.write(b'{"after": 1}\n')
    writer.close()
    assert read(path)[0] == first[:5] + [b'{"after": 1}']
    assert not list(tmp_path.glob("*.rewrite"))
    plain = tmp_path / "log.jsonl"
    plain.write_bytes(b'{"a": 1}\n{"b": ')
    written(plain, [b'{"c": 3}'])
    assert [(line, done) for _, line, done in read_lines(plain)] == [(b'{"a": 1}', True), (b'{"b": ', True),
                                                                     (b'{"c": 3}', True)]


def test_a_killed_process_loses_no_written_line(tmp_path):
    """A writer killed (SIGKILL, no close, no frame end) after writing N lines: N lines read back."""
    path = tmp_path / "log.zst"
    code = ("import os, signal, sys\nfrom harness.logfile import LogWriter\nw = LogWriter(sys.argv[1])\n"
            "for i in range(500):\n    w.write(b'{\"seq\": %d, \"text\": \"%s\"}\\n' % (i, b'abc' * i))\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run([sys.executable, "-c", code, str(path)], cwd=REPO, capture_output=True)
    assert done.returncode == -9, done.stderr
    got, lines = read(path)
    assert [json.loads(line)["seq"] for line in got] == list(range(500)) and lines.problem is None


def test_a_zstd_bomb_stops_at_the_bound_in_decompressed_bytes_without_holding_it(tmp_path):
    path = tmp_path / "bomb.jsonl.zst"
    line = b'{"a": "' + b"x" * 990 + b'"}\n'  # 1,000 bytes
    cobj = zstandard.ZstdCompressor(level=1).compressobj()
    with open(path, "wb") as out:
        for _ in range(256):  # 256 MB of lines
            out.write(cobj.compress(line * 1000))
        out.write(cobj.flush())
    assert os.path.getsize(path) < 100_000
    tracemalloc.start()
    try:
        kept = sum(1 for _ in read_lines(path, max_bytes=40 << 20))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    lines = read_lines(path, max_bytes=40 << 20)
    assert sum(1 for _ in lines) == kept == (40 << 20) // 1000  # the whole lines before the bound, no more
    assert lines.problem == f"{path} is larger than the {40 << 20}-byte bound when decompressed; the rest was not read"
    assert peak < 8 << 20  # a few chunks, not the 40 MiB read nor the 256 MB it would expand to


def test_an_old_plain_log_reads_as_before_and_is_found_under_its_name(tmp_path):
    (tmp_path / "proxy.jsonl").write_bytes(b'{"seq": 1}\n\n{"seq": 2}')
    assert [(at, line, done) for at, line, done in read_lines(tmp_path / "proxy.jsonl")] == [
        (0, b'{"seq": 1}', True), (11, b"", True), (12, b'{"seq": 2}', False)]
    assert log_file(tmp_path, "proxy.jsonl") == tmp_path / "proxy.jsonl"
    written(tmp_path / "proxy.jsonl.zst", [b"{}"])
    assert log_file(tmp_path, "proxy.jsonl") == tmp_path / "proxy.jsonl.zst"  # the compressed one first
    assert log_file(tmp_path / "none", "proxy.jsonl") is None
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "proxy.jsonl.zst").symlink_to(tmp_path / "proxy.jsonl.zst")
    assert log_file(tmp_path / "linked", "proxy.jsonl") is None  # links are not followed
    missing = read_lines(tmp_path / "nothing.zst")
    assert list(missing) == [] and missing.problem == f"{tmp_path / 'nothing.zst'} not found"


def test_the_last_lines_come_first_from_either_form(tmp_path):
    lines = [b"a1", b"b2", b"a3", b"b4", b"a5"]
    written(tmp_path / "log.zst", lines)
    written(tmp_path / "log.txt", lines)
    for name in ("log.zst", "log.txt"):
        last = logfile.lines_from_end(tmp_path / name, keep=lambda line: line.startswith(b"a"))
        assert list(last) == [b"a5", b"a3", b"a1"] and not last.dropped
    held = logfile.lines_from_end(tmp_path / "log.zst", keep=lambda line: line.startswith(b"a"), hold=4)
    assert list(held) == [b"a5", b"a3"] and held.dropped  # a compressed log keeps only its last lines
    assert list(logfile.lines_from_end(tmp_path / "missing.zst")) == []


def test_a_frame_appended_after_a_cut_one_by_another_writer_is_reported_not_misread(tmp_path):
    sizes = written(tmp_path / "log.zst", lines_of(4), close=False)
    tail = zstandard.ZstdCompressor().compress(b'{"other": 1}\n')
    (tmp_path / "bad.zst").write_bytes((tmp_path / "log.zst").read_bytes()[:sizes[2]] + tail)  # not LogWriter's way
    got, lines = read(tmp_path / "bad.zst")
    assert got == lines_of(3) and lines.problem.startswith(f"{tmp_path / 'bad.zst'}: a corrupt block header at byte")
