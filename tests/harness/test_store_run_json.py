"""``run.json`` of a folder that several runs wrote, one after another: each keeps what the earlier recorded."""

from __future__ import annotations

import json
import os

from harness.store import RunStore, keep_earlier


def test_earlier_profiles_agents_sandboxes_and_tasks_are_kept():
    earlier = {"profiles": {"a": {"model": "m1"}}, "agents": {"x": "1"}, "sandbox_details": {"bubblewrap": {}},
               "tasks": ["one.yaml"], "settings": {"jobs": 1}}
    mine = {"profiles": {"b": {"model": "m2"}, "a": {"model": "m1b"}}, "agents": {"y": "2"},
            "sandbox_details": {"docker": {}}, "tasks": ["two.yaml"], "settings": {"jobs": 4}}
    merged = keep_earlier(earlier, mine)
    assert merged["profiles"] == {"a": {"model": "m1b"}, "b": {"model": "m2"}}  # a run's own entry wins per name
    assert merged["agents"] == {"x": "1", "y": "2"}
    assert merged["sandbox_details"] == {"bubblewrap": {}, "docker": {}}
    assert merged["tasks"] == ["one.yaml", "two.yaml"] and merged["settings"] == {"jobs": 4}
    assert keep_earlier(None, mine) == {**mine, "tasks": ["two.yaml"]}


def test_run_json_is_replaced_whole_and_leaves_no_temporary_file(tmp_path):
    store = RunStore.create(tmp_path / "run")
    store.write_run_json({"a": 1})
    store.write_run_json({"a": 2})
    assert json.loads((store.root / "run.json").read_text()) == {"a": 2}
    assert sorted(os.listdir(store.root)) == ["run.json"]
