"""Exports of a staged Dr-CiK run: a later unit never replaces a valid submission with a worse one; DR
submissions name their method, base model and evidence agent."""

from __future__ import annotations

import json

import pytest

from tsagent_plugins.tasks.drcik.forecast.experiment import Validation
from tsagent_plugins.tasks.drcik.forecast.exports import export as _export


def _writer(lines):
    def write(folder):
        (folder / "forecasts.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return write


def _validate(folder):
    n = len((folder / "forecasts.jsonl").read_text().splitlines())
    return Validation(errors=[] if n == 3 else [f"{folder / 'forecasts.jsonl'}: no forecast for {3 - n} task(s)"])


def test_an_export_never_replaces_a_valid_file_with_a_worse_one(tmp_path):
    target = tmp_path / "submissions" / "llm-dp__no-context"
    check, replaced = _export(target, _writer([{"t": i} for i in range(3)]), _validate)
    assert check.ok and replaced and len((target / "forecasts.jsonl").read_text().splitlines()) == 3
    check, replaced = _export(target, _writer([]), _validate)           # a later stage with no forecast
    assert not check.ok and not replaced
    assert len((target / "forecasts.jsonl").read_text().splitlines()) == 3
    assert check.errors == [f"{target / 'forecasts.jsonl'}: no forecast for 3 task(s)"]   # named by its place
    assert sorted(p.name for p in target.parent.iterdir()) == ["llm-dp__no-context"]   # no leftover folder


def test_an_invalid_export_replaces_an_invalid_one_and_a_valid_one_anything(tmp_path):
    target = tmp_path / "cell"
    _export(target, _writer([{"t": 0}]), _validate)
    check, replaced = _export(target, _writer([{"t": 0}, {"t": 1}]), _validate)
    assert not check.ok and replaced and len((target / "forecasts.jsonl").read_text().splitlines()) == 2
    check, replaced = _export(target, _writer([{"t": i} for i in range(3)]), _validate)
    assert check.ok and replaced


def test_dr_submission_metadata_names_the_method_and_base_model_of_the_profile(tmp_path):
    from tsagent_plugins.tasks.drcik.spec import DrcikParams
    from tsagent_plugins.tasks.drcik.forecast.exports import research_problems as _research_problems
    from tsagent_plugins.tasks.drcik.template import DrcikTemplate
    from tsagent_plugins.tasks.drcik.research.outputs import validate_metadata

    template = DrcikTemplate()
    params = DrcikParams(episode_kind="research", judge=None)
    tasks = list(template.tasks(params).values())
    rows = []
    for i, task in enumerate(tasks):
        key = tmp_path / "episodes" / f"e{i}" / "key"
        key.mkdir(parents=True)
        doc = task.supporting_ids[0]
        (key / "deep_research.jsonl").write_text(json.dumps({"benchmark_id": task.benchmark_id,
                                                             "cited_document_ids": [doc], "evidence": ["x"]}) + "\n")
        rows.append({"episode": f"e{i}", "profile": "drbench-gemini-3-flash", "agent": "drbench",
                     "model": "google/gemini-3-flash-preview", "status": "ok"})
    summary = template.finish(params, rows, tmp_path)
    folder = tmp_path / "submissions" / "deep_research__drbench-gemini-3-flash"
    meta = json.loads((folder / "metadata.json").read_text())
    assert (meta["method"], meta["base_model"]) == ("drbench-gemini-3-flash (drbench)", "google/gemini-3-flash-preview")
    assert validate_metadata(meta) == [] and summary["submissions"]["deep_research__drbench-gemini-3-flash"]["ok"]
    exported = [json.loads(x) for x in (folder / "deep_research.jsonl").read_text().splitlines()]
    assert _research_problems(folder, exported, tasks) == []
    assert _research_problems(folder, exported[:2], tasks) == [
        f"{folder / 'deep_research.jsonl'}: no row for 1 task(s): {exported[2]['benchmark_id']}"]


def test_the_shipped_research_spec_leaves_base_model_to_the_agent_profile():
    """Issue 37: its metadata said base_model "see the agent profile", which overrode the profile's model."""
    import yaml

    from tests.support.paths import REPO

    metadata = yaml.safe_load((REPO / "tasks" / "drcik" / "research-sample.yaml").read_text())["params"]["metadata"]
    assert "base_model" not in metadata and metadata["method"]
