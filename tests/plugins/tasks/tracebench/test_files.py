"""Sample files: the Parquet layout and the values digest an episode's inputs are recorded with."""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tsagent_plugins.tasks.tracebench import files


def _decoded_digest(path) -> str:
    """The values digest computed from scratch: the file decoded by pyarrow, nothing remembered."""
    table = pq.read_table(path)
    digest = hashlib.sha256()
    for name in table.column_names:
        column = np.ascontiguousarray(table.column(name).to_numpy(), dtype="<f8")
        digest.update(f"{name}\0{column.size}\0".encode())
        digest.update(column.tobytes())
    return digest.hexdigest()


def test_the_digest_write_sample_returns_is_that_of_the_values_in_the_file(tmp_path):
    time = np.arange(1, 401) / 400.0
    values = np.stack([np.sin(time), np.full_like(time, -0.0), np.full_like(time, 5e-324)], axis=1)
    values[7, 0] = 1.7976931348623157e308
    digest = files.write_sample(tmp_path / "a.parquet", time, values)
    assert digest == _decoded_digest(tmp_path / "a.parquet") == files.values_digest(tmp_path / "a.parquet")
    table = pq.read_table(tmp_path / "a.parquet")
    assert table.column_names == ["col1", "col2", "col3", "col4"]
    assert table.schema.metadata is None
    got = np.stack([table.column(n).to_numpy() for n in table.column_names], axis=1)
    assert got.tobytes() == np.column_stack([values, time]).tobytes()  # bit for bit, -0.0 and subnormals too
    # plain encoding: no dictionary page in any column chunk
    meta = pq.ParquetFile(tmp_path / "a.parquet").metadata.row_group(0)
    assert all(meta.column(i).dictionary_page_offset is None for i in range(meta.num_columns))


def test_a_changed_file_is_digested_from_its_bytes_never_from_what_was_written(tmp_path):
    time = np.arange(1, 101) / 400.0
    path = tmp_path / "b.parquet"
    written = files.write_sample(path, time, np.ones((100, 2)))
    # the same path, the same size, written again at once with other values (same inode, maybe same mtime)
    table = pa.Table.from_arrays([pa.array(np.full(100, 2.0)), pa.array(np.ones(100)), pa.array(time)],
                                 names=["col1", "col2", "col3"])
    pq.write_table(table, path, store_schema=False, use_dictionary=False)
    changed = files.values_digest(path)
    assert changed != written
    assert changed == _decoded_digest(path)


def test_a_file_that_is_no_parquet_raises(tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(pa.ArrowInvalid):
        files.values_digest(bad)
    with pytest.raises(OSError):
        files.values_digest(tmp_path / "missing.parquet")


def test_the_remembered_digests_are_bounded(monkeypatch):
    known = files._KnownDigests()
    monkeypatch.setattr(files._KnownDigests, "LIMIT", 3)
    for i in range(5):
        known.remember(bytes([i]), f"d{i}")
    assert [known.get(bytes([i])) for i in range(5)] == [None, None, "d2", "d3", "d4"]
