"""``harness dr-generate`` on hostile input (issue 37): each of the five inputs that ended in a traceback is one
``error:`` line and exit 2; those refusable before the first model call leave no output folder, the others keep
what was paid for and ``--resume`` continues them; a context over the documented bound is refused with the
estimate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from tsagent_plugins.tasks.drcik.generation.caf import MAX_CONTEXT_CHARS

from .conftest import district, mill, write_caf


def generate(spec: Path, out: Path, capsys, *extra: str) -> tuple[int, str]:
    """``harness dr-generate`` as the console script runs it: ``(exit status, stderr)``."""
    try:
        main(["dr-generate", str(spec), "--out", str(out), "--model-backend", "scripted", *map(str, extra)])
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("change, field", [
    (lambda t: t.__setitem__("task_id", "t" * 300), "task_id: String should have at most 100 characters"),
    (lambda t: t["context"].__setitem__("scenario", "A cold front on 2023-02-30 raised the load."),
     "context.scenario: '2023-02-30' is not a calendar date"),
    (lambda t: t["context"].__setitem__("scenario", "Works planned for 9999-12-01 09:00."),
     "context.scenario: '9999-12-01 09:00' moved by the window shift of 104 weeks leaves the calendar"),
    (lambda t: t["context"].__setitem__("background", "x" * (MAX_CONTEXT_CHARS + 1)),
     f"context.background: the task's context has"),
])
def test_bad_input_is_one_error_line_exit_2_before_any_model_call_and_no_output_folder(tmp_path, capsys, change,
                                                                                          field):
    task = district()
    change(task)
    spec = write_caf(tmp_path, [task, mill()])
    code, err = generate(spec, tmp_path / "gen", capsys, "--script", tmp_path / "never-read.yaml")
    assert code == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"error: {tmp_path / 'caf' / 'task1.json'}: ") and field in err, err
    assert not (tmp_path / "gen").exists()


@pytest.mark.parametrize("command", ["dr-generate", "dr-offline-scripts"])
def test_every_bad_caf_file_is_one_error_line_exit_2_and_no_output(tmp_path, capsys, command):
    """Two bad files (and a good one between them): both named, each on its own line, in file order; the
    context bound (dr-generate's check with the estimate) is reported with the others."""
    first, third = district(), district()
    first["context"]["scenario"] = "A cold front on 2023-02-30 raised the load."
    third["task_id"] = "caf_district_copy"
    third["context"]["background"] = "x" * (MAX_CONTEXT_CHARS + 1)
    spec = write_caf(tmp_path, [first, mill(), third])
    out = tmp_path / "out"
    try:
        main([command, str(spec), "--out", str(out)] + (["--model-backend", "scripted"] if command == "dr-generate"
                                                         else []))
        code = 0
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and not out.exists()
    assert err[0].startswith(f"error: {tmp_path / 'caf' / 'task1.json'}: context.scenario: '2023-02-30' is not a "
                             "calendar date (YYYY-MM-DD [HH:MM[:SS]])")
    if command == "dr-generate":
        assert len(err) == 2 and err[1].startswith(f"error: {tmp_path / 'caf' / 'task3.json'}: context.background: "
                                                   "the task's context has 20,") and "(estimated $" in err[1]
    else:   # the bound is dr-generate's (it needs the spec's models' prices): the others are read errors
        assert len(err) == 1


def test_a_context_over_the_bound_is_refused_with_the_dry_run_estimate(tmp_path, capsys):
    task = district()
    task["context"]["background"] = "The substation feeds homes. " * 40_000   # about 1.1 MB
    spec = write_caf(tmp_path, [task])
    code, err = generate(spec, tmp_path / "gen", capsys)
    assert code == 2 and "more than the bound of 20,000" in err and "for this task alone at first pass" in err
    estimate = float(err.split("(estimated $")[1].split(" ")[0].replace(",", ""))
    assert estimate > 1  # the dry run's figure for one such task ($5.20), said before anything is spent


def test_a_null_from_the_generator_fails_later_keeps_its_attempts_and_resume_finishes(own_scripts, tmp_path, capsys):
    spec, scripts = own_scripts
    null = tmp_path / "null.yaml"
    null.write_text(yaml.safe_dump({"match": [], "final": {"text": "null"}}))
    out = tmp_path / "gen"
    code, err = generate(spec, out, capsys, "--script", null)
    assert code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(f"error: {out}: no task written")
    pool = out / "generation" / "step1_entity_extraction" / "pool"
    attempts = [json.loads(x) for x in (pool / "attempts.jsonl").read_text().splitlines()]
    assert [a["status"] for a in attempts] == ["malformed", "malformed"]  # both rounds, paid for and kept
    assert attempts[0]["reason"] == "EntityExtraction: the answer is JSON null"
    shutil.rmtree(pool)   # the repair: drop the flagged unit, then resume
    code, err = generate(spec, out, capsys, "--script", scripts / "generate.yaml", "--resume")
    assert code == 0, err
    assert sorted(p.stem for p in (out / "tasks").glob("*.json")) == ["caf_district_load", "caf_mill_output"]


def test_a_null_from_the_judges_flags_units_not_a_crash_and_resume_finishes(own_scripts, tmp_path, capsys):
    spec, scripts = own_scripts
    data = yaml.safe_load((scripts / "generate.yaml").read_text())
    phrases = ("Slice For This Task", "Extraction Result", "Expanded Output To Validate", "Documents To Validate")
    data["match"] = [r for r in data["match"] if not any(p in r["when"]["contains"] for p in phrases)]
    data["final"] = {"text": "null"}
    script = tmp_path / "null-judge.yaml"
    script.write_text(yaml.safe_dump(data, sort_keys=False))
    out = tmp_path / "gen"
    code, err = generate(spec, out, capsys, "--script", script)
    assert code == 2 and "Traceback" not in err and "no task written: 2 held back for repair" in err
    flagged = [p.parent for p in (out / "generation").glob("step*/*/result.json")
               if json.loads(p.read_text())["flagged"]]
    verdicts = {json.loads(x)["judge"][0]["verdict"] for p in flagged for x in (p / "attempts.jsonl").read_text()
                .splitlines() if json.loads(x)["judge"]}
    assert flagged and verdicts == {"malformed"}
    for unit in flagged:
        shutil.rmtree(unit)
    code, err = generate(spec, out, capsys, "--script", scripts / "generate.yaml", "--resume")
    assert code == 0, err
    assert len(list((out / "tasks").glob("*.json"))) == 2
