"""ATIF trajectory models, validation errors, load/save, and tool-call/result pairing."""

from __future__ import annotations

import json

import pytest

from harness.trajectory import (
    SCHEMA_VERSION,
    TrajectoryError,
    content_images,
    content_text,
    exchanges,
    load_trajectory,
    save_trajectory,
    validate_trajectory,
)
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "trajectories"


def minimal(**root):
    data = {"schema_version": SCHEMA_VERSION, "session_id": "s1", "agent": {"name": "codex", "version": "0.124.0"},
            "steps": [{"step_id": 1, "source": "user", "message": "hi"}]}
    data.update(root)
    return data


def test_fixture_validates_and_round_trips(tmp_path):
    trajectory = load_trajectory(FIXTURES / "claude_mixed.json")
    assert trajectory.schema_version == "ATIF-v1.6"
    assert len(trajectory.steps) == 17
    assert trajectory.steps[13].observation.results[0].content[0].source.path == "fig_b.png"
    out = save_trajectory(trajectory, tmp_path / "t.json")
    again = load_trajectory(out)
    assert again == trajectory
    assert "observation" not in json.loads(out.read_text())["steps"][0]  # unset fields omitted


def test_error_names_file_and_field(tmp_path):
    bad = minimal(steps=[{"step_id": 1, "source": "robot", "message": "x"}])
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(TrajectoryError) as info:
        load_trajectory(path)
    assert str(path) in str(info.value)
    assert "steps.0.source" in str(info.value)


@pytest.mark.parametrize("change,field", [
    ({"schema_version": "ATIF-v9"}, "schema_version"),
    ({"agent": {"name": "x"}}, "agent.version"),
    ({"steps": [{"step_id": 2, "source": "user", "message": "x"}]}, "step ids must be 1, 2, 3"),
    ({"steps": [{"step_id": 1, "source": "user", "message": "x", "tool_calls": []}]}, "only allowed on agent steps"),
    ({"steps": [{"step_id": 1, "source": "agent", "message": "x", "timestamp": "yesterday"}]}, "ISO 8601"),
    ({"steps": [{"step_id": 1, "source": "agent", "message": [{"type": "image", "text": "x"}]}]}, "image part"),
    ({"steps": [{"step_id": 1, "source": "agent", "message": "", "bogus": 1}]}, "steps.0.bogus"),
    ({"steps": [{"step_id": 1, "source": "agent", "message": "", "metrics": {"prompt_tokens": -1}}]},
     "steps.0.metrics.prompt_tokens"),
])
def test_invalid_documents(change, field):
    with pytest.raises(TrajectoryError, match=field.replace(".", r"\.").replace("(", r"\(")):
        validate_trajectory(minimal(**change), "t.json")


def test_duplicate_tool_call_ids_rejected():
    step = {"step_id": 1, "source": "agent", "message": "",
            "tool_calls": [{"tool_call_id": "a", "function_name": "Bash", "arguments": {}}] * 2}
    with pytest.raises(TrajectoryError, match="duplicate tool_call_id 'a'"):
        validate_trajectory(minimal(steps=[step]))


def test_not_json(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("{")
    with pytest.raises(TrajectoryError, match="not valid JSON"):
        load_trajectory(path)
    with pytest.raises(TrajectoryError, match="expected a JSON object"):
        validate_trajectory([], path)


def test_versions_accepted():
    for minor in (0, 4, 5, 6, 7):
        assert validate_trajectory(minimal(schema_version=f"ATIF-v1.{minor}")).schema_version == f"ATIF-v1.{minor}"


def test_content_accessors():
    parts = [{"type": "text", "text": "a"}, {"type": "image", "source": {"media_type": "image/png", "path": "p.png"}},
             {"type": "text", "text": "b"}]
    assert content_text(parts) == "a\nb"
    assert content_images(parts) == ["p.png"]
    assert content_text("plain") == "plain" and content_text(None) == ""


def test_exchanges_pair_calls_with_results():
    trajectory = {"steps": [
        {"step_id": 1, "source": "agent", "message": "",
         "tool_calls": [{"tool_call_id": "a", "function_name": "Bash", "arguments": {"command": "ls"}},
                        {"tool_call_id": "b", "function_name": "Read", "arguments": {"file_path": "x"}}],
         "observation": {"results": [{"source_call_id": "b", "content": "B"}, {"source_call_id": "a", "content": "A"}]}},
        {"step_id": 2, "source": "agent", "message": "",
         "tool_calls": [{"tool_call_id": "c", "function_name": "Bash", "arguments": "{\"command\": \"pwd\"}"}],
         "observation": {"results": [{"content": "C"}, {"content": "orphan"}]}},
        {"step_id": 3, "source": "agent", "message": "",
         "tool_calls": [{"tool_call_id": "d", "function_name": "Bash", "arguments": "{oops"}]},
        {"step_id": 4, "source": "system", "message": "", "observation": {"results": [{"source_call_id": "d",
                                                                                        "content": "late D"}]}},
    ]}
    got = [(e.function_name, e.call_id, e.arguments, e.output) for e in exchanges(trajectory)]
    assert got == [("Bash", "a", {"command": "ls"}, "A"), ("Read", "b", {"file_path": "x"}, "B"),
                   ("Bash", "c", {"command": "pwd"}, "C"), ("", None, {}, "orphan"),
                   ("Bash", "d", None, "late D")]


def test_reading_a_trajectory_leniently_loads_no_pydantic_and_validating_loads_the_models():
    """The readers (and the names of :mod:`harness.atif`, validation included) import without pydantic: the
    ATIF models (:mod:`harness.trajectory_models`) load with the first validation."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from harness.atif import ATIF_SCHEMA_VERSION, content_text, exchanges, steps\n"
            "from harness.atif import to_dict, validate_trajectory\n"
            "loaded = lambda: sorted(m for m in sys.modules if m == 'pydantic' or m == 'harness.trajectory_models')\n"
            "before = loaded()\n"
            "doc = {'schema_version': ATIF_SCHEMA_VERSION, 'session_id': 's', 'agent': {'name': 'a', 'version': '1'},\n"
            "       'steps': [{'step_id': 1, 'source': 'user', 'message': 'hi'}]}\n"
            "read = [content_text(s.get('message')) for s in steps(doc)] + list(exchanges(doc))\n"
            "print(before, loaded(), read, to_dict(validate_trajectory(doc))['steps'][0]['message'], loaded())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "[]", "['hi']", "hi", "['harness.trajectory_models',", "'pydantic']"]
