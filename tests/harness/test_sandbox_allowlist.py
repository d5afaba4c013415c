"""What a local sandbox can read: the harness core, never the plugins (simulators, pool generator)."""

import json
import sys
from pathlib import Path

import pytest

import tsagent_plugins as plugins
from harness.contracts import SandboxSpec
from harness.sandbox import choose_backend
from tsagent_plugins.agents.classical import EuclideanNN, runtime_files

PLUGINS = Path(plugins.__file__).resolve().parent
PROBE = """
import json, os, sys
paths = {p: os.path.exists(p) for p in sys.argv[1:]}
print(json.dumps(paths))
"""


@pytest.mark.parametrize("backend_name", ["bubblewrap", "unshare"])
def test_simulators_and_pool_code_are_not_readable(tmp_path, backend_name):
    backend = choose_backend(backend_name)
    balldrop = PLUGINS / "simulators" / "balldrop"
    pool = PLUGINS / "tasks" / "tracebench" / "pool.py"
    classical = PLUGINS / "agents" / "classical" / "nn.py"
    assert balldrop.exists() and pool.exists() and classical.exists()  # positive control on the host
    spec = SandboxSpec(workspace=tmp_path, ro_binds=runtime_files())
    with backend.create(spec) as box:
        result = box.exec([sys.executable, "-c", PROBE, str(balldrop), str(pool), str(classical)], timeout=60)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen == {str(balldrop): False, str(pool): False, str(classical): True}


def test_classical_agent_declares_only_its_own_files():
    from harness.contracts import AgentContext

    ctx = AgentContext(workspace="/workspace", home="/home/agent", prompt="", profile=None,
                       task_info={"submission": "direct", "labels": ["x"]})
    files = EuclideanNN().command(ctx).ro_binds
    assert files == runtime_files() and all(p.exists() for p in files)
    assert not any("simulators" in p.parts or "tasks" in p.parts for p in files)
