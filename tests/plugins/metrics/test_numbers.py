"""Numeric values printed: what counts and what is excluded (TraceBench Appendix G.2)."""

from __future__ import annotations

import pytest

from tsagent_plugins.metrics.numbers import count_numbers, find_numbers


@pytest.mark.parametrize("text,expected", [
    ("42", ["42"]),
    ("accuracy 0.75, loss -1.5e-3, ratio 7/10", ["0.75", "-1.5e-3", "7", "10"]),
    ("values: nan inf -inf NaN Infinity", ["nan", "inf", "-inf", "NaN", "Infinity"]),
    ("[[1. 0.]\n [0. 1.]]", ["1.", "0.", "0.", "1."]),
    ("shape (3999, 4) dtype: float64", ["3999", "4"]),
    ("   col1  col2\n0   1.5   2.5\n1   3.5   4.5", ["0", "1.5", "2.5", "1", "3.5", "4.5"]),
    ("elapsed 3s, 12ms", []),  # units glued to digits are not bare literals
    ("info inference Nancy", []),
])
def test_numeric_literals(text, expected):
    assert find_numbers(text) == expected


def test_printed_matrix_counts_entry_by_entry():
    matrix = "[[ 0.1  0.2  0.3]\n [ 1.0  2.0  3.0]\n [-1.0 -2.0 -3.5e+02]]"
    assert count_numbers(matrix) == 9


def test_traceback_numbers_are_excluded():
    text = ("step 1 done 0.5\nTraceback (most recent call last):\n  File \"/workspace/run.py\", line 12, in <module>\n"
            "    x = data[42]\nIndexError: index 42 is out of bounds for axis 0 with size 10\nafter 7")
    assert find_numbers(text) == ["1", "0.5", "7"]


def test_chained_traceback_and_syntax_error_excluded():
    chained = ("Traceback (most recent call last):\n  File \"a.py\", line 3, in f\nKeyError: 3\n\n"
               "During handling of the above exception, another exception occurred:\n\n"
               "Traceback (most recent call last):\n  File \"a.py\", line 5, in <module>\nValueError: 5\n")
    assert count_numbers(chained) == 0
    syntax = "  File \"<string>\", line 1\n    x = (1 +\n        ^\nSyntaxError: '(' was never closed"
    assert count_numbers(syntax) == 0


def test_warnings_excluded():
    text = ("/usr/lib/python3/site-packages/pandas/core.py:123: FutureWarning: value 5 deprecated\n"
            "  warnings.warn(msg, FutureWarning, stacklevel=2)\nWARNING: 3 retries\nresult 0.25")
    assert find_numbers(text) == ["0.25"]


def test_wrapper_metadata_and_pids_excluded():
    codex = "Chunk ID: 4f2a\nWall time: 0.3120 seconds\nProcess exited with code 0\nOriginal token count: 12\nOutput:\n1.5 2.5"
    assert find_numbers(codex) == ["1.5", "2.5"]
    gemini = ("Command: python -c 'print(3 * 4)'\nDirectory: (root)\nOutput: 12\nError: (none)\nExit Code: 0\n"
              "Signal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4242")
    assert find_numbers(gemini) == ["12"]
    assert find_numbers("[1] 12345\nstarted server pid 999 on port 8000") == ["8000"]
    assert find_numbers("Exit code: 1\nbash: line 3: foo: command not found\n2.0") == ["2.0"]


def test_identifiers_paths_and_payloads_excluded():
    text = ("a3f9c2d1e4b5.parquet 0x7f3a2b1c at /workspace/test_samples/9b8c7d6e5f4a.parquet "
            "id 1b4e28ba-2fa1-11d2-883f-0016d3cca427 run_2024 file plot_3.png " + "iVBORw0KGgo" * 10 + " 8.5")
    assert find_numbers(text) == ["8.5"]
    assert find_numbers("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAE= 4") == ["4"]


def test_reader_line_numbers_excluded_only_for_readers():
    claude = "     1→t,x\n     2→0.1,2.5\n     3→0.2,nan"
    assert find_numbers(claude, reader=True) == ["0.1", "2.5", "0.2", "nan"]
    assert find_numbers("12\t3.5", reader=True) == ["3.5"]
    assert find_numbers("00012| 7", reader=True) == ["7"]
    assert find_numbers("12\t3.5") == ["12", "3.5"]  # a tab-separated table from a program keeps its first column
