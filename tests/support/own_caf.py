"""Shared by the generation and quality tests (their conftests import the fixtures): a CAF folder nobody here wrote the scripts for: two tasks of a made-up district load and paper mill, whose
objectives name real-looking entities (Northfield, Calder Bay, Harlow Creek), and a generation spec for them
(small: 2 hops, 2 distractors per subtype, 2 rounds)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

SPEC = """command: dr-generate
name: own-caf
input: caf
hops: 2
distractors_per_subtype: 2
rounds: 2
seed: 0
window_shift_weeks: 104
split: open
"""


def series(start: str, step: timedelta, history: int, future: int, level: float, period: int) -> dict:
    first = datetime.strptime(start, "%Y-%m-%d %H:%M:%S")
    stamps = [(first + k * step).strftime("%Y-%m-%d %H:%M:%S") for k in range(history + future)]
    values = [round(level + 10 * ((k % period) / period), 3) for k in range(history + future)]
    return {"history_timestamps": stamps[:history], "history_values": values[:history],
            "future_timestamps": stamps[history:], "future_values": values[history:]}


def district() -> dict:
    return {"task_id": "caf_district_load", "origin": "real", "frequency": "1 hour", "prediction_length": 24,
            "seasonal_period": 24,
            "target_description": "Hourly electricity load (MW) of the Northfield district substation, run by the "
                                  "Calder Bay grid company.",
            "series": series("2024-02-04 00:00:00", timedelta(hours=1), 48, 24, 40.0, 24),
            "context": {"background": "The Northfield district substation feeds homes and a hospital for the Calder "
                                      "Bay grid company. Its load peaks in the early evening.",
                        "scenario": "On 2024-02-06 09:00:00 a cold front reached the district. Heating was "
                                    "expected to add about 15 percent to the load until 2024-02-06 21:00:00.",
                        "constraints": "The load cannot be negative."}}


def mill() -> dict:
    return {"task_id": "caf_mill_output", "origin": "synthetic", "frequency": "1 day", "prediction_length": 7,
            "seasonal_period": 7,
            "target_description": "Daily paper output (tonnes) of the Harlow Creek paper mill.",
            "series": series("2025-03-03 00:00:00", timedelta(days=1), 28, 7, 300.0, 7),
            "context": {"background": "The Harlow Creek paper mill runs two machines. Output dips on Sundays.",
                        "scenario": "A machine was stopped on 2025-04-02 for a felt change.", "constraints": ""}}


def write_caf(folder: Path, tasks: list[dict]) -> Path:
    (folder / "caf").mkdir(parents=True, exist_ok=True)
    for k, t in enumerate(tasks, 1):   # file names by position: a task id may be no file name
        (folder / "caf" / f"task{k}.json").write_text(json.dumps(t, indent=1))
    spec = folder / "own.yaml"
    spec.write_text(SPEC)
    return spec


@pytest.fixture
def own_spec(tmp_path) -> Path:
    return write_caf(tmp_path / "own", [district(), mill()])


@pytest.fixture(scope="module")
def own_scripts(tmp_path_factory):
    """``(spec, scripts folder)``: the documented ``harness dr-offline-scripts`` run once for the module."""
    from click.testing import CliRunner

    from harness.cli import cli

    root = tmp_path_factory.mktemp("own")
    spec = write_caf(root, [district(), mill()])
    result = CliRunner().invoke(cli, ["dr-offline-scripts", str(spec), "--out", str(root / "scripts")])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return spec, root / "scripts"
