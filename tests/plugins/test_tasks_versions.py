"""Every built-in task template's scoring on fixed episode outputs is pinned to its ``scorer_version``: a change
of what a scorer computes without a version bump fails here (tests/support/versions.py says how to update the
golden file tests/golden/versions/scorers.json after a bump).

Fixed outputs per template:

- ``tracebench``: direct answers (valid, shortlists, wrong, invalid in several ways) and programmatic answers
  (a stand-in rule runner's values and errors, a missing ``rule.py``), scored from a hand-written key;
- ``drcik``: research outputs on the bundled sample tasks (citations resolved, hallucinated and
  cross-task ids, no report), and forecasts of every sample task (sample paths derived from the task's
  future, and a failed forecast) rescored from ``samples.npy``;
- ``drcik-audit``: an agent that changed, added and removed files of its copy and wrote its plan.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness import plugins as registry
from harness.contracts import CallResult
from harness.store import write_json
from tests.support import versions

LABELS = ["coefficient of restitution", "mass", "drag coefficient", "gravity acceleration", "no parameter change"]


def _outputs(score) -> dict:
    return {"metrics": score.metrics, "details": score.details, "warnings": score.warnings}


def tracebench_cases(template, tmp: Path) -> list:
    params = template.params_model(simulator="balldrop", noise="low", submission="direct")
    truth = {f"{i:012x}.parquet": LABELS[i % len(LABELS)] for i in range(8)}

    def key_dir(name: str, submission: str) -> Path:
        folder = tmp / name / "key"
        folder.mkdir(parents=True)

        def group(prefix: str, files: list[str]) -> dict:
            return {f: {"sample_id": f"{prefix}{i}", "label": truth[f], "class_label": truth[f], "noise_seed": 7}
                    for i, f in enumerate(files)}

        files = sorted(truth)
        key = {"submission": submission, "labels": LABELS, "test": group("t", files[:6]),
               "heldout": group("h", files[6:]) if submission == "programmatic" else {}, "support": {}}
        (folder / "key.json").write_text(json.dumps(key))
        return folder

    outputs = []
    files = sorted(truth)
    answers = [{f: [truth[f]] for f in files[:6]},  # all right
               {files[0]: [truth[files[0]]], files[1]: ["mass", truth[files[1]]], files[2]: " MASS ",
                f"test_samples/{files[3]}": [truth[files[3]], "mass"],
                files[4].removesuffix(".parquet"): [], files[5]: ["friction"], "zzz": ["mass"]},
               "not json"]
    for i, answer in enumerate(answers):
        ws = tmp / f"direct{i}" / "workspace"
        ws.mkdir(parents=True)
        (ws / "results.json").write_text(answer if isinstance(answer, str) else json.dumps(answer))
        outputs.append(_outputs(template.score(params, "0", ws, key_dir(f"direct{i}", "direct"), None)))

    def runner(module, function, inputs):
        values = [CallResult(value=["mass"]), CallResult(value="gravity acceleration"),
                  CallResult(error="TimeoutError: predict took longer than 60 s"), CallResult(value=["mass", "mass"]),
                  CallResult(value=[truth.get(Path(inputs[0]).name), "mass"])]
        return [values[i % len(values)] for i in range(len(inputs))]

    for i, rule in enumerate(("def predict(path):\n    return ['mass']\n", None)):
        ws = tmp / f"rule{i}" / "workspace"
        ws.mkdir(parents=True)
        if rule is not None:
            (ws / "rule.py").write_text(rule)
        outputs.append(_outputs(template.score(params, "0", ws, key_dir(f"rule{i}", "programmatic"), runner)))
    return outputs


def drcik_cases(template, tmp: Path) -> list:
    from tests.support.drcik_research_runs import GHOST
    from tsagent_plugins.tasks.drcik.research.episodes import KEY_FILE, materialize_research

    research = template.params_model(episode_kind="research")
    tasks = template.tasks(research)
    ids = sorted(tasks)
    outputs = []
    for n, benchmark_id in enumerate(ids):
        ws, key_dir = tmp / f"research{n}" / "workspace", tmp / f"research{n}" / "key"
        materialize_research(list(tasks.values()), benchmark_id, ws, key_dir, salt=f"golden-{benchmark_id}")
        key = json.loads((key_dir / KEY_FILE).read_text())
        visible = {rid: vid for vid, rid in key["ids"].items()}
        own = [d.document_id for d in tasks[benchmark_id].documents]
        other = [d.document_id for t in ids if t != benchmark_id for d in tasks[t].documents]
        evidence = [{"claim": f"claim {i} of {benchmark_id}", "cited_document_ids": [visible[r] for r in own[i:i + 2]]}
                    for i in range(min(3, len(own)))]
        evidence.append({"claim": "a claim from elsewhere", "cited_document_ids": [visible[other[0]], GHOST]})
        (ws / "evidence.json").write_text(json.dumps(evidence))
        if n != 1:  # the second task's agent wrote no report
            (ws / "report.md").write_text(f"# Report\nSee {visible[own[0]]} and {GHOST}.\n")
        outputs.append(_outputs(template.score(research, benchmark_id, ws, key_dir, None)))
    forecast = template.params_model(episode_kind="forecast", forecasters=["naive"])
    for n, benchmark_id in enumerate(ids):
        folder = tmp / f"forecast{n}"
        folder.mkdir()
        future = tasks[benchmark_id].future
        y = np.zeros(3) if future is None else future.to_numpy(dtype=float)
        np.save(folder / "samples.npy", np.stack([y * 1.1, y * 0.9, y + 1.0, y - 1.0]))
        write_json(folder / "score.json", {"metrics": {}, "details": [], "warnings": []})
        outputs.append(_outputs(template.rescore_in_harness(forecast, f"naive/no-context/{benchmark_id}", folder, {})))
    failed = tmp / "failed"
    failed.mkdir()
    write_json(failed / "score.json", {"metrics": {}, "details": [], "warnings": ["naive: ValueError: boom"]})
    outputs.append(_outputs(template.rescore_in_harness(forecast, f"naive/no-context/{ids[0]}", failed, {})))
    return outputs


def audit_cases(template, tmp: Path) -> list:
    export = tmp / "export"
    (export / "tasks").mkdir(parents=True)
    (export / "documents").mkdir()
    (export / "benchmark_manifest.json").write_text('{"tasks": 2}')
    for name in ("t1", "t2"):
        (export / "tasks" / f"{name}.json").write_text(json.dumps({"id": name}))
        (export / "documents" / f"{name}.md").write_text(f"# {name}\n")
    params = template.params_model(export=str(export))
    outputs = []
    for n, edit in enumerate((False, True)):
        ws, key_dir = tmp / f"audit{n}" / "workspace", tmp / f"audit{n}" / "key"
        template.materialize(params, "0", ws, key_dir)
        if edit:
            (ws / "env" / "documents" / "t1.md").write_text("changed\n")
            (ws / "env" / "tasks" / "t2.json").unlink()
            (ws / "env" / "documents" / "t3.md").write_text("added\n")
            (ws / "audit_plan.md").write_text("# Plan\n1. fix t1\n")
        outputs.append(_outputs(template.score(params, "0", ws, key_dir, None)))
    return outputs


#: template -> its fixed outputs, scored (a new built-in template needs its cases here)
CASES = {"tracebench": tracebench_cases, "drcik": drcik_cases, "drcik-audit": audit_cases}


def test_every_scorers_output_on_fixed_outputs_matches_its_version(tmp_path):
    found = {}
    for name, reg in registry.plugins().registry("task_template").items():
        template = reg.obj
        assert name in CASES, f"built-in template {name!r} has no fixed outputs in {__file__}"
        assert isinstance(template.scorer_version, str) and template.scorer_version != "0", \
            f"built-in template {name!r} declares no scorer_version"
        folder = tmp_path / name
        folder.mkdir()
        found[name] = (template.scorer_version, versions.digest(CASES[name](template, folder), folder))
    assert versions.check("scorers", found) == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_fixed_outputs_are_scored_by_each_branch(name, tmp_path):
    """The cases reach what the scorers distinguish (a digest of empty scores would pin nothing)."""
    outputs = CASES[name](registry.get("task_template", name), tmp_path)
    metrics = [o["metrics"] for o in outputs]
    if name == "tracebench":
        assert [m["accuracy"] for m in metrics[:3]] == [1.0, pytest.approx(2 / 6), 0.0]
        assert metrics[1]["n_invalid"] == 3 and metrics[2]["n_invalid"] == 6
        assert metrics[3]["heldout_n"] == 2 and metrics[4]["n_invalid"] == 6  # no rule.py: all invalid
    elif name == "drcik":
        assert [m["hallucinated_ids"] for m in metrics[:3]] == [1, 1, 1]
        assert all(m["cross_task_citations"] == 1 for m in metrics[:3]) and metrics[1]["report_ok"] is False
        statuses = {m["status"] for m in metrics[3:-1]}
        assert statuses <= {"ok", "labels_hidden"} and "ok" in statuses
        assert metrics[-1]["status"] == "failed" and metrics[-1]["reason"] == "naive: ValueError: boom"
    else:
        assert metrics == [{"plan_written": False, "env_files_changed": 0, "export_unchanged": True},
                           {"plan_written": True, "env_files_changed": 3, "export_unchanged": True}]
