"""The final agent audit (Appendix L.4): the agent sees a copy of the export, its plan is recorded beside the
export, and the export stays byte-identical whatever the agent does to its copy."""

from __future__ import annotations

import uuid

import pytest

from tests.support.paths import TESTS
from tsagent_plugins.tasks.drcik.generation import prompts
from tsagent_plugins.tasks.drcik.quality.agent_audit import PLAN, AuditTemplate, hashes
from tsagent_plugins.tasks.drcik.spec import AuditParams

from .conftest import doc, task, write_release

SCRIPT = TESTS / "fixtures" / "scripts" / "dr_generate" / "agent_audit_claude.yaml"


def export(tmp_path):
    root = write_release(tmp_path / "gen", [task("t1", {"E1": "x"}, [doc("d1", "Harbor Pumping Station.")])])
    (root / "documents").mkdir()
    (root / "documents" / "d1.md").write_text("Harbor Pumping Station.\n")
    (root / "benchmark_manifest.json").write_text("{}\n")
    return root


def test_materialize_and_score_on_the_host(tmp_path):
    root = export(tmp_path)
    before = hashes(root)
    template, params = AuditTemplate(), AuditParams(export=str(root))
    ws, key = tmp_path / "ws", tmp_path / "key"
    made = template.materialize(params, "0", ws, key)
    assert made.prompt.startswith(prompts.load("final_agent_audit").text.rstrip("\n"))
    assert "./audit_plan.md" in made.prompt and (ws / "env" / "tasks" / "t1.json").is_file()
    (ws / PLAN).write_text("# plan\nnothing to fix\n")
    (ws / "env" / "documents" / "d1.md").write_text("edited\n")
    (ws / "env" / "tasks" / "new.json").write_text("{}")
    score = template.score(params, "0", ws, key, None)
    assert score.metrics == {"plan_written": True, "env_files_changed": 2, "export_unchanged": True}
    assert hashes(root) == before
    assert (root / "generation" / "agent_audit" / "plan.md").read_text() == "# plan\nnothing to fix\n"
    assert template.submission_problem(params, "0", score) is None
    (ws / PLAN).unlink()
    assert template.submission_problem(params, "0", template.score(params, "0", ws, key, None)) == \
        "audit_plan.md was not written"


@pytest.mark.docker
@pytest.mark.parametrize("profile", ["claude-opus-4.6"])
def test_the_agent_audit_runs_in_the_sandbox_and_leaves_the_export_byte_identical(tmp_path, profile):
    from tests.support.terminal_e2e import AGENT_IMAGE, NO_IMAGE_REASON

    if AGENT_IMAGE is None:
        pytest.skip(NO_IMAGE_REASON)
    from harness.config import RunSettings
    from harness.experiment import Unit
    from harness.profiles import resolve_profile
    from harness.run import execute, load_task
    from harness.store import RunStore

    root = export(tmp_path)
    before = hashes(root)
    spec = tmp_path / "audit.yaml"
    spec.write_text(f"name: audit\ntemplate: drcik-audit\nparams:\n  export: {root}\n")
    settings = RunSettings(sandbox="docker", episode_timeout=240, infra_retries=0, rule_call_timeout=30)
    store = RunStore.create(tmp_path / f"run-{uuid.uuid4().hex[:10]}")
    rows = execute([Unit(load_task(spec), resolve_profile(profile), None)], store, settings,
                   model_backend="scripted", model_options={"script": str(SCRIPT)})
    [row] = rows
    assert row["status"] == "ok", row
    assert (row["plan_written"], row["env_files_changed"], row["export_unchanged"]) == (True, 1, True)
    assert hashes(root) == before
    assert "No issues found in t1" in (root / "generation" / "agent_audit" / "plan.md").read_text()
