"""Bytes that are not UTF-8 never drop a trajectory: every native-log reader replaces them and keeps the steps.

Parametrised over every registered agent plugin that reads a native log
(overrides ``native_logs``), so an agent added later is covered (it needs a
captured ``tests/fixtures/native_logs/<agent>/direct`` episode).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from harness import plugins as registry
from harness.contracts import Agent
from tsagent_plugins.agents.terminal.base import TerminalAgent

FIXTURES = Path(__file__).parent / "fixtures" / "native_logs"
#: Inserted into the native log after every "test_samples" (always inside a JSON string there).
BAD = b"\xff\xfe\xc3(\xed\xa0\x80"


def native_log_agents() -> list[str]:
    out = []
    for name, entry in registry.plugins().registry("agent").items():
        native_logs = getattr(type(entry.obj), "native_logs", None)
        if native_logs is not None and native_logs not in (TerminalAgent.native_logs, Agent.native_logs):
            out.append(name)
    return sorted(out)


def corrupt(path: Path) -> int:
    """Insert invalid UTF-8 into ``path`` (a text log, or the text columns of an SQLite database)."""
    if path.suffix == ".db":
        con = sqlite3.connect(path)
        n = 0
        try:
            for table in ("part", "message"):
                for rowid, data in con.execute(f"SELECT rowid, data FROM {table}").fetchall():  # noqa: S608
                    raw = data.encode() if isinstance(data, str) else data
                    if b"test_samples" in raw:
                        con.execute(f"UPDATE {table} SET data = CAST(? AS TEXT) WHERE rowid = ?",  # noqa: S608
                                    (raw.replace(b"test_samples", b"test_samples" + BAD), rowid))
                        n += 1
            con.commit()
        finally:
            con.close()
        return n
    raw = path.read_bytes()
    path.write_bytes(raw.replace(b"test_samples", b"test_samples" + BAD))
    return raw.count(b"test_samples")


def steps(trajectory: dict) -> list[tuple[str, int]]:
    return [(s.get("source"), len(s.get("tool_calls") or [])) for s in trajectory["steps"]]


def test_every_native_log_reader_is_covered():
    assert {"claude-code", "codex", "gemini-cli", "opencode"} <= set(native_log_agents())


@pytest.mark.parametrize("agent_name", native_log_agents())
def test_invalid_utf8_in_the_native_log_keeps_every_step(tmp_path, agent_name):
    source = FIXTURES / agent_name / "direct"
    assert source.is_dir(), f"add a captured episode at {source} for the agent {agent_name}"
    agent = registry.get("agent", agent_name)
    clean = agent.trajectory(source / "home", (source / "agent.stdout").read_text(), source / "proxy.jsonl")
    work = tmp_path / "episode"
    shutil.copytree(source, work)
    home = work / "home"
    inserted = 0
    for log in agent.native_logs(home):
        if log.name.endswith((".db-wal", ".db-shm")):
            continue
        inserted += corrupt(log)
    assert inserted > 0, "the fixture's native log never mentions test_samples"
    dirty = agent.trajectory(home, (work / "agent.stdout").read_text(), work / "proxy.jsonl")
    assert dirty is not None
    assert steps(dirty) == steps(clean)
    notes = " ".join(str(n) for n in (dirty.get("extra") or {}).get("notes", []))
    assert "native log not converted" not in notes
    assert "\ufffd" in str(dirty["steps"])
