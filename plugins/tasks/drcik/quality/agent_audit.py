"""The final agent audit of a generated Dr-CiK environment (Section 4.1 "Quality Control", Appendix L.4).

Template ``drcik-audit``: one sandboxed episode in which a terminal agent (the Claude Code profile
``claude-opus-4.6`` by default; any agent profile with ``--agent``) reads the exported environment and writes a
correction plan for a person to approve.  The harness never lets it change the export:

* :meth:`AuditTemplate.materialize` copies the export's ``benchmark_manifest.json``, ``tasks/`` and
  ``documents/`` into ``workspace/env/`` (the sandbox sees only the copy) and records the sha256 of every
  file of the export and of the copy in the key folder; the prompt is the L.4 prompt with its input appended
  (where the export is in the workspace, where to write the plan: ``audit_plan.md``);
* :meth:`AuditTemplate.score` copies the plan beside the export (``GEN_DIR/generation/agent_audit/plan.md``,
  with ``plan.json`` naming the run's hashes) and reports ``plan_written``, ``env_files_changed`` (files of the
  copy the agent changed, added or removed: the L.4 prompt says "do not modify files"; a change is counted,
  never copied back) and ``export_unchanged`` (the export's files are byte-identical to before the episode).

The paper's prompt names its own export path (``env_generation/exports/...``); the appended input says where
the export is in the workspace, and the prompt file stays the paper's text.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import AgentTaskTemplate, EpisodeScore, Materialized

if TYPE_CHECKING:
    from tsagent_plugins.tasks.drcik.spec import AuditParams

PLAN = "audit_plan.md"
ENV = "env"
DEFAULT_AGENT = "claude-opus-4.6"
PARTS = ("benchmark_manifest.json", "tasks", "documents")


def hashes(root: Path) -> dict[str, str]:
    """sha256 of every regular file under ``root`` among :data:`PARTS`, by relative path."""
    import hashlib  # with the first audit: registering the template needs none

    out = {}
    for part in PARTS:
        base = Path(root) / part
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file()) if base.is_dir() \
            else []
        for f in files:
            out[f.relative_to(root).as_posix()] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


def instructions() -> str:
    return (f"The exported benchmark to audit is in ./{ENV}/ (benchmark_manifest.json, tasks/*.json with the series "
            f"and the documents' roles, documents/*.md). Write your correction plan, as the Final Deliverable, to "
            f"./{PLAN}. Change no file under ./{ENV}/.")


class AuditTemplate(AgentTaskTemplate):
    name = "drcik-audit"
    #: the version of :meth:`score` (plan written, files changed, export unchanged)
    scorer_version = "1"
    result_columns = {"plan_written": ("bool", "the agent wrote audit_plan.md"),
                      "env_files_changed": ("int", "files of the workspace copy the agent changed, added or removed"),
                      "export_unchanged": ("bool", "the export's files are byte-identical after the episode")}
    summary_columns = {"plan_written": "plan", "env_files_changed": "changed"}

    @property
    def params_model(self) -> type[AuditParams]:  # type: ignore[override]  # pydantic: imported on first use
        from tsagent_plugins.tasks.drcik.spec import AuditParams

        return AuditParams

    def rewrite_paths(self, params: AuditParams, spec_file: Path) -> AuditParams:
        path = Path(params.export)
        return params if path.is_absolute() else params.model_copy(
            update={"export": str((Path(spec_file).parent / path).resolve())})

    def validate(self, params: AuditParams) -> None:
        if not (Path(params.export) / "tasks").is_dir():
            raise ValueError(f"params.export: {params.export} holds no tasks/ folder (a dr-generate output)")

    def default_agent(self, params: AuditParams) -> str | None:
        return DEFAULT_AGENT

    def materialize(self, params: AuditParams, episode: str, workspace: Path, key_dir: Path) -> Materialized:
        from tsagent_plugins.tasks.drcik.generation import prompts

        export = Path(params.export)
        env = Path(workspace) / ENV
        env.mkdir(parents=True, exist_ok=True)
        for part in PARTS:
            src = export / part
            if src.is_dir():
                shutil.copytree(src, env / part, symlinks=False)
            elif src.is_file():
                shutil.copy2(src, env / part)
        Path(key_dir).mkdir(parents=True, exist_ok=True)
        (Path(key_dir) / "hashes.json").write_text(json.dumps({"export": hashes(export), "copy": hashes(env)}))
        prompt = prompts.load("final_agent_audit")
        return Materialized(prompt.with_input(instructions()), {"prompt_sha256": prompt.sha256})

    def score(self, params: AuditParams, episode: str, workspace: Path, key_dir: Path,
              run_submission: Any) -> EpisodeScore:
        before = json.loads((Path(key_dir) / "hashes.json").read_text())
        export = Path(params.export)
        now_copy = hashes(Path(workspace) / ENV)
        changed = sorted(set(before["copy"]) ^ set(now_copy)
                         | {k for k in set(before["copy"]) & set(now_copy) if before["copy"][k] != now_copy[k]})
        unchanged = hashes(export) == before["export"]
        plan = Path(workspace) / PLAN
        written = plan.is_file() and not plan.is_symlink()
        out = export / "generation" / "agent_audit"
        out.mkdir(parents=True, exist_ok=True)
        if written:
            (out / "plan.md").write_text(plan.read_text(encoding="utf-8", errors="replace"), encoding="utf-8")
        (out / "plan.json").write_text(json.dumps({"plan_written": written, "env_files_changed": changed,
                                                   "export_unchanged": unchanged}, indent=1))
        warnings = [f"the agent changed {len(changed)} file(s) of its copy of the export (not copied back): "
                    + ", ".join(changed[:5])] if changed else []
        return EpisodeScore({"plan_written": written, "env_files_changed": len(changed),
                             "export_unchanged": unchanged}, warnings=warnings)

    def submission_problem(self, params: AuditParams, episode: str, score: EpisodeScore) -> str | None:
        """No valid submission without a written plan (``plan_written``)."""
        return None if score.metrics.get("plan_written") else f"{PLAN} was not written"
