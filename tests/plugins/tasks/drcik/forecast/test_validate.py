"""``harness dr-validate``: the harness's own submissions pass, hand-broken ones fail with the file and field
named (exit 2), and no exported file carries an absolute local path (issue 38)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import cli
from tests.plugins.tasks.drcik.test_template import harness_run, research_run, spec_file, write_evidence
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks
from tsagent_plugins.tasks.drcik.forecast.validate import absolute_paths, validate_folder

TASK_IDS = ("task_42", "task_201", "task_163")


def validate(*args) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["dr-validate", *map(str, args)])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("validate")
    spec = spec_file(folder, forecasters=["naive"], contexts=["no-context", "background"], samples=4)
    result = harness_run("--task", spec, "--out", folder / "run")
    assert result.exit_code == 0, result.output
    assert "submission naive__no-context: valid" in result.output
    assert "metadata contact and organization empty in 2 submission(s): the leaderboard shows them; set " \
           "params.submission.contact and .organization in the spec" in " ".join(result.output.split())
    return folder / "run"


def test_the_harness_own_submissions_are_valid(run):
    for name in ("naive__no-context", "naive__background"):
        code, output = validate(run / "submissions" / name)
        assert code == 0, output
        assert "valid against the release template (3 task(s))" in output
        assert "metadata.json: organization and contact empty" in output


def broken(run: Path, tmp_path: Path, change) -> Path:
    folder = tmp_path / "broken"
    shutil.copytree(run / "submissions" / "naive__no-context", folder)
    change(folder)
    return folder


def _edit_json(path: Path, **fields) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), **fields}))


def _rename_first_task(folder: Path) -> None:
    lines = (folder / "forecasts.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    lines[0] = json.dumps({**first, "benchmark_id": "task_999"})
    (folder / "forecasts.jsonl").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("change,errors", [
    (lambda f: (f / "forecasts.jsonl").unlink(),
     ["broken: files: neither forecasts.jsonl nor deep_research.jsonl"]),
    (lambda f: (f / "metadata.json").unlink(), ["metadata.json: files: missing"]),
    (_rename_first_task, ["forecasts.jsonl:1: benchmark_id: unknown or unexpected task 'task_999'",
                          "forecasts.jsonl: no forecast for 1 task(s): task_42"]),
    (lambda f: _edit_json(f / "metadata.json", type="bogus", method="", notes="made in /home/me/runs/r1"),
     ["metadata.json: type: 'bogus' is not one of", "metadata.json: method: missing or empty",
      "metadata.json: notes: carries an absolute local path (/home/me/runs/r1)"]),
])
def test_hand_broken_submissions_are_refused_naming_file_and_field(run, tmp_path, change, errors):
    folder = broken(run, tmp_path, change)
    code, output = validate(folder)
    assert code == 2, output
    lines = [line for line in output.splitlines() if line.startswith("error: ")]
    for expected in errors:
        assert any(expected in line for line in lines), (expected, lines)
    assert len(lines) == len(errors), lines
    assert output.splitlines()[-1].endswith(f"INVALID ({len(errors)} error(s))")


def test_a_research_only_submission_is_checked_against_the_corpus(tmp_path):
    tasks = load_tasks()
    folder = tmp_path / "dr"
    folder.mkdir()
    (folder / "metadata.json").write_text(json.dumps({
        "method": "m", "organization": "Lab", "type": "agentic", "base_model": "b",
        "reproduction": "https://github.com/you/your-repo", "contact": "a@b.c", "notes": ""}))
    rows = [{"benchmark_id": t.benchmark_id, "cited_document_ids": [t.supporting_ids[0]], "evidence": ["e"]}
            for t in tasks]
    (folder / "deep_research.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert validate_folder(folder, tasks).errors == []
    rows[1]["cited_document_ids"] = ["doc_nope"]
    rows[2]["benchmark_id"] = rows[0]["benchmark_id"]
    (folder / "deep_research.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, output = validate(folder)
    assert code == 2
    errors = [line for line in output.splitlines() if line.startswith("error: ")]
    assert any("deep_research.jsonl:2: cited_document_ids: not in the corpus: ['doc_nope']" in e for e in errors)
    assert any(f"deep_research.jsonl:3: benchmark_id: {rows[0]['benchmark_id']} appears twice" in e for e in errors)
    assert any(f"deep_research.jsonl: no row for 1 task(s): {tasks[2].benchmark_id}" in e for e in errors)


def test_the_release_template_itself_names_its_placeholder_ids(tmp_path):
    """The release's template folder answers task_1 / doc_1 with two-step paths: refused, each id named."""
    folder = tmp_path / "template"
    folder.mkdir()
    (folder / "metadata.json").write_text(json.dumps({
        "method": "Example Method", "organization": "Example Lab", "type": "agentic", "base_model": "your-base-model",
        "reproduction": "https://github.com/you/your-repo", "contact": "you@example.com", "notes": "Replace this"}))
    (folder / "forecasts.jsonl").write_text('{"benchmark_id": "task_1", "samples": [[0.0, 0.0], [0.0, 0.0]]}\n')
    (folder / "deep_research.jsonl").write_text(
        '{"benchmark_id": "task_1", "cited_document_ids": ["doc_1"], "evidence": ["example extracted evidence"]}\n')
    report = validate_folder(folder, load_tasks())
    assert "forecasts.jsonl:1: benchmark_id: unknown or unexpected task 'task_1'" in "\n".join(report.errors)
    assert "deep_research.jsonl:1: benchmark_id: unknown or unexpected task 'task_1'" in "\n".join(report.errors)
    assert not [w for w in report.warnings if "organization" in w]


def test_absolute_paths_are_found_and_urls_and_model_ids_are_not():
    assert absolute_paths("run at /tmp/x/y and C:\\Users\\me, ~/runs") == ["/tmp/x/y", "C:\\Users\\me", "~/runs"]
    assert absolute_paths("https://github.com/you/your-repo Qwen/Qwen3.5-4B S=25, seed 0 (research run r1)") == []


def test_no_exported_file_contains_an_absolute_path(tmp_path):
    """A forecast run whose DR evidence comes from a research run (the case that wrote its absolute path)."""
    write_evidence(tmp_path / "ev")
    research = research_run(tmp_path / "research", {"dr-a": tmp_path / "ev"})
    spec = spec_file(tmp_path, "dr", forecasters=["naive"], contexts=["no-context", "dr-evidence"], samples=4)
    harness_run("--task", spec, "--set", f"evidence.run={research}", "--set", "evidence.agent=dr-a",
                "--out", tmp_path / "run")
    exported = [p for p in (tmp_path / "run" / "submissions").rglob("*") if p.is_file()]
    assert {p.parent.name for p in exported} == {"naive__no-context", "naive__dr-evidence__dr-a"}
    for path in exported:
        text = path.read_text()
        assert str(tmp_path) not in text and absolute_paths(text) == [], path
    notes = json.loads((tmp_path / "run" / "submissions" / "naive__dr-evidence__dr-a" / "metadata.json").read_text())
    assert notes["notes"].endswith("(research run research)")


def test_many_valid_submissions_are_said_in_one_line_and_empty_metadata_once():
    from tsagent_plugins.tasks.drcik.forecast.validate import LISTED_SUBMISSIONS, submission_messages

    out = {f"f{i}__no-context": {"ok": True, "errors": [], "empty_metadata": ["contact", "organization"]}
           for i in range(LISTED_SUBMISSIONS + 1)}
    out["bad__no-context"] = {"ok": False, "errors": ["tasks/x.json: missing"], "empty_metadata": []}
    lines = submission_messages(out, kept=["bad__no-context"])
    assert lines == [f"{LISTED_SUBMISSIONS + 1} submissions valid under submissions/ (e.g. f0__no-context)",
                     "submission bad__no-context: INVALID (1 error(s)): tasks/x.json: missing; the earlier valid "
                     "export is kept",
                     f"metadata contact and organization empty in {LISTED_SUBMISSIONS + 1} submission(s): the "
                     "leaderboard shows them; set params.submission.contact and .organization in the spec to fill "
                     "them"]
    few = {"a__x": {"ok": True, "errors": [], "empty_metadata": []}}
    assert submission_messages(few, []) == ["submission a__x: valid"]
