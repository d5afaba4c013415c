"""An episode's home logs are stored compressed once its trajectory and metrics are built: the converter read them
plain, and they stay readable through harness.atif afterwards; small files and files that hardly compress are
left as they are."""

from __future__ import annotations

import json

from pydantic import BaseModel

from harness.atif import find_native_files, read_native_text
from harness.config import AgentProfile, RunSettings
from harness.contracts import Agent, AgentInvocation, EpisodeScore, Materialized
from harness.episode import EpisodePlan, run_episode
from harness.native_logs import MIN_BYTES
from harness.sandbox.none import NoneBackend
from harness.store import RunStore

SESSION = '{"type": "message", "text": "step"}\n'
#: the agent's home as it leaves it: a session log over the threshold, a small config, a binary database, an
#: image (compressed already)
SCRIPT = f"""
mkdir -p "$HOME/.cli/sessions"
i=0; while [ $i -lt {MIN_BYTES // len(SESSION) + 10} ]; do printf '%s\\n' '{SESSION.strip()}'; i=$((i+1)); done \
  > "$HOME/.cli/sessions/s1.jsonl"
printf 'model = "m"\\n' > "$HOME/.cli/config.toml"
head -c 40000 /dev/zero > "$HOME/.cli/state.db"
head -c 40000 /dev/urandom > "$HOME/.cli/figure.png"
echo done
"""


class Params(BaseModel):
    seed: int = 0


class Task:
    name = "toy"

    def materialize(self, params, episode, workspace, key_dir):
        return Materialized(prompt="write the session", task_info={})

    def score(self, params, episode, workspace, key_dir, runner):
        return EpisodeScore(metrics={"accuracy": 1.0})


class SessionAgent(Agent):
    """Writes a session log into its home; its trajectory says what it found there when converted."""

    name = "session"
    version = "1"
    needs_model = False
    image_capable = False

    def command(self, ctx):
        return AgentInvocation(argv=["sh", "-c", SCRIPT])

    def native_logs(self, home):
        return find_native_files(home, ".cli/sessions/*.jsonl")

    def trajectory(self, home, stdout, proxy_log):
        files = sorted(p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file())
        text = read_native_text(self.native_logs(home)[0], 1 << 20)
        return {"schema_version": "ATIF-v1.6", "session_id": "s1", "agent": {"name": self.name, "version": "1"},
                "steps": [{"step_id": 1, "source": "user", "message": "write the session"}],
                "extra": {"files_at_conversion": files, "lines": text.value.count("\n")}}


def test_the_home_logs_are_compressed_after_the_trajectory_is_built(tmp_path):
    store = RunStore.create(tmp_path / "run")
    plan = EpisodePlan("ep-0", "toy", Task(), Params(), "0", AgentProfile(name="session", agent="session"),
                       SessionAgent(), NoneBackend(), RunSettings(sandbox="none"), store.run_id)
    paths = store.episode("ep-0")
    row = run_episode(plan, paths, lambda: None)
    assert row["status"] == "ok", row
    trajectory = json.loads((paths.root / "trajectory.json").read_text())
    lines = MIN_BYTES // len(SESSION) + 10
    assert trajectory["extra"] == {"files_at_conversion": [".cli/config.toml", ".cli/figure.png",
                                                           ".cli/sessions/s1.jsonl", ".cli/state.db"],
                                   "lines": lines}  # all plain then
    stored = sorted(p.relative_to(paths.home).as_posix() for p in paths.home.rglob("*") if p.is_file())
    assert ".cli/sessions/s1.jsonl.zst" in stored and ".cli/sessions/s1.jsonl" not in stored
    assert ".cli/state.db.zst" in stored  # binary, but mostly zeros
    assert ".cli/config.toml" in stored and ".cli/figure.png" in stored  # small; compressed already: left
    session = paths.home / ".cli/sessions/s1.jsonl"
    assert (paths.home / ".cli/sessions/s1.jsonl.zst").stat().st_size < len(SESSION) * lines / 20
    assert SessionAgent().native_logs(paths.home) == [session]
    assert read_native_text(session, 1 << 20).value == SESSION * lines
