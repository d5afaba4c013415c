"""Bytes that are not UTF-8 never drop a trajectory: every native-log reader replaces them and keeps the steps.

Parametrised over every registered agent plugin that reads a native log
(overrides ``native_logs``), so an agent added later is covered: it needs a
captured ``tests/fixtures/native_logs/<agent>/direct`` episode (``home/``,
``agent.stdout``, optionally ``proxy.jsonl``) and, in that folder,
``corrupt-after.txt``: a string that the native log has inside free text (a
prompt, a message, a tool result), never in a field the reader matches on.
Invalid UTF-8 is inserted after every occurrence of it.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from harness import plugins as registry
from harness.contracts import Agent
from tsagent_plugins.agents.terminal.base import TerminalAgent
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "native_logs"
#: Inserted into the native log after every occurrence of the fixture's marker (``corrupt-after.txt``).
BAD = b"\xff\xfe\xc3(\xed\xa0\x80"
MARKER_FILE = "corrupt-after.txt"


def native_log_agents() -> list[str]:
    out = []
    for name, entry in registry.plugins().registry("agent").items():
        native_logs = getattr(type(entry.obj), "native_logs", None)
        if native_logs is not None and native_logs not in (TerminalAgent.native_logs, Agent.native_logs):
            out.append(name)
    return sorted(out)


def corrupt(path: Path, marker: bytes) -> int:
    """Insert invalid UTF-8 after each ``marker`` in ``path`` (a text log, or the text columns of an
    SQLite database); the number of insertions."""
    if path.suffix == ".db":
        con = sqlite3.connect(path)
        n = 0
        try:
            for table in ("part", "message"):
                for rowid, data in con.execute(f"SELECT rowid, data FROM {table}").fetchall():  # noqa: S608
                    raw = data.encode() if isinstance(data, str) else data
                    if marker in raw:
                        con.execute(f"UPDATE {table} SET data = CAST(? AS TEXT) WHERE rowid = ?",  # noqa: S608
                                    (raw.replace(marker, marker + BAD), rowid))
                        n += raw.count(marker)
            con.commit()
        finally:
            con.close()
        return n
    raw = path.read_bytes()
    path.write_bytes(raw.replace(marker, marker + BAD))
    return raw.count(marker)


def steps(trajectory: dict) -> list[tuple[str, int]]:
    return [(s.get("source"), len(s.get("tool_calls") or [])) for s in trajectory["steps"]]


def test_every_native_log_reader_is_covered():
    assert {"claude-code", "codex", "gemini-cli", "opencode",
            "retrieval", "drbench", "opendr", "bench2future", "codex-dr"} <= set(native_log_agents())


@pytest.mark.parametrize("agent_name", native_log_agents())
def test_invalid_utf8_in_the_native_log_keeps_every_step(tmp_path, agent_name):
    source = FIXTURES / agent_name / "direct"
    assert source.is_dir(), f"add a captured episode at {source} for the agent {agent_name}"
    assert (source / MARKER_FILE).is_file(), f"add {source / MARKER_FILE}: a string of the native log's free text"
    marker = (source / MARKER_FILE).read_text().strip().encode()
    assert marker
    agent = registry.get("agent", agent_name)
    clean = agent.trajectory(source / "home", (source / "agent.stdout").read_text(), source / "proxy.jsonl")
    work = tmp_path / "episode"
    shutil.copytree(source, work)
    home = work / "home"
    inserted = 0
    for log in agent.native_logs(home):
        if log.name.endswith((".db-wal", ".db-shm")):
            continue
        inserted += corrupt(log, marker)
    assert inserted > 0, f"the fixture's native log never contains {marker!r}"
    dirty = agent.trajectory(home, (work / "agent.stdout").read_text(), work / "proxy.jsonl")
    assert dirty is not None
    assert steps(dirty) == steps(clean)
    notes = " ".join([str(dirty.get("notes") or "")]
                     + [str(n) for n in (dirty.get("extra") or {}).get("notes", [])])
    assert "native log not converted" not in notes and "step log not read" not in notes
    assert "\ufffd" in str(dirty["steps"])
