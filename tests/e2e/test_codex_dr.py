"""``codex-dr`` end to end: the real pinned Codex CLI in the Docker sandbox on a Dr-CiK research
episode, offline (scripted model).  Skipped without a Docker engine or the agent image.

The script lists the corpus through Codex's shell tool, then cites two ids taken from that
listing (salted per run) plus one that does not exist, and writes both outputs; the harness
maps the ids back, drops the made-up one and exports the release row.
"""

from __future__ import annotations

import json
import uuid

from tests.support.terminal_e2e import SCRIPTS, e2e_marks

from harness.config import RunSettings
from harness.trajectory import load_trajectory, to_dict
from tsagent_plugins.tasks.drcik.research import outputs as out
from tsagent_plugins.tasks.drcik.research.episodes import KEY_FILE

pytestmark = e2e_marks


def test_codex_dr_research_episode(tmp_path):
    from harness.experiment import Unit
    from harness.profiles import resolve_profile
    from harness.run import execute, load_task
    from harness.store import RunStore

    spec = tmp_path / "research.yaml"
    spec.write_text(json.dumps({"name": "research", "template": "drcik",
                                "params": {"episode_kind": "research", "tasks": "sample", "episodes": ["task_42"]}}))
    store = RunStore.create(tmp_path / f"run-{uuid.uuid4().hex[:10]}")
    settings = RunSettings(sandbox="docker", episode_timeout=240, infra_retries=0)
    [row] = execute([Unit(load_task(spec), resolve_profile("codex-dr-gpt-5.5"), None)], store, settings,
                    model_backend="scripted", model_options={"script": str(SCRIPTS / "codex-dr-drcik.yaml")})
    root = store.episode(row["episode"]).root
    assert row["status"] == "ok", (row.get("error"), (root / "agent.stderr").read_text()[-2000:])
    assert json.loads(row["assertion_failures"]) == []
    assert row["evidence_items"] == 2 and row["cited_documents"] == 2 and row["hallucinated_ids"] == 1
    key = json.loads((root / "key" / KEY_FILE).read_text())
    exported = json.loads((root / "key" / out.DEEP_RESEARCH_FILE).read_text())
    assert out.validate_deep_research_row(exported, key["documents"]) == []
    evidence = json.loads((root / "workspace" / "evidence.json").read_text())
    assert exported["cited_document_ids"] == [key["ids"][evidence[0]["cited_document_ids"][0]],
                                              key["ids"][evidence[1]["cited_document_ids"][0]]]
    trajectory = to_dict(load_trajectory(root / "trajectory.json"))
    assert trajectory["agent"]["name"] == "codex-dr"
    assert trajectory["steps"][0]["message"].strip() == (root / "prompt.txt").read_text().strip()
    assert trajectory["extra"]["stop_reason"] == "complete"
    shell_calls = [c for s in trajectory["steps"] for c in s.get("tool_calls") or []]
    assert len(shell_calls) == 2
