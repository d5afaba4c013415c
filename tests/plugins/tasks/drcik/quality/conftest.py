"""A tiny release-layout folder and a scripted-model engine for the quality-control tests."""

from __future__ import annotations

import json

import pytest
import yaml

from harness import AgentProfile, ModelClient
from tsagent_plugins.tasks.drcik.generation.engine import Engine
from tests.support.own_caf import own_scripts, own_spec  # noqa: F401 - fixtures of the offline-scripts tests

PROFILE = AgentProfile(name="qc", agent="dr-generate", provider="custom", model="scripted-model",
                       prices={"input": 1.0, "cached": 0.0, "output": 2.0})


def task(tid, evidence, documents, hist=("2025-01-01 00:00:00", "2025-01-02 00:00:00"),
         fut=("2025-01-03 00:00:00", "2025-01-04 00:00:00")):
    return {"benchmark_id": tid, "split": "test", "origin": "caf", "reasoning_hops": 2,
            "showcase": {"entity": {"name": "Harbor Pumping Station", "type": "pumping station"},
                         "time_series_variable": {"name": "water flow"}},
            "task_metadata": {"frequency": "D", "prediction_length": 2, "seasonal_period": 1,
                              "target_description": "Daily water flow at Harbor Pumping Station"},
            "series": {"history_timestamps": list(hist), "history_values": [1.0, 2.0],
                       "future_timestamps": list(fut), "future_values": [3.0, 4.0]},
            "documents": documents,
            "annotations": {"gt_evidence": [{"id": k, "evidence": v} for k, v in evidence.items()]},
            "labels_public": True}


def doc(did, content, role="supporting", subtype=None):
    return {"document_id": did, "content": content, "role": role, "subtype": subtype}


def write_release(root, tasks):
    (root / "tasks").mkdir(parents=True, exist_ok=True)
    for t in tasks:
        (root / "tasks" / f"{t['benchmark_id']}.json").write_text(json.dumps(t))
    return root


@pytest.fixture
def engine(tmp_path):
    clients = []

    def make(script, out, rounds=2):
        path = tmp_path / f"script{len(clients)}.yaml"
        path.write_text(yaml.safe_dump(script))
        client = ModelClient.open(PROFILE, tmp_path / f"proxy{len(clients)}", "scripted", {"script": str(path)})
        clients.append(client)
        return Engine(out, {"generator": client}, rounds=rounds), client

    yield make
    for c in clients:
        c.stop()


def requests(client_log_dir):
    """The prompts the scripted model received (from the proxy logs)."""
    out = []
    for f in sorted(client_log_dir.rglob("*.jsonl")):
        for line in f.read_text().splitlines():
            out.append(line)
    return out
