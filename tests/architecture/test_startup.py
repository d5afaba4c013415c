"""``harness --version`` and ``--help`` import no heavy library and no plugin module; ``plugins list`` and
``tasks list`` load plugins without their run-time stacks (README.md, "Adding a plugin": a module imports a
heavy library where it is used)."""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import json
import os
import subprocess
import sys

import pytest

HEAVY = ("numpy", "pandas", "pydantic", "rich", "aiohttp", "pluggy", "scipy", "statsmodels")
#: what a plugin may import only when it runs (a forecast, a report, a simulation), never to register
RUN_TIME = ("pandas", "pyarrow", "scipy", "statsmodels", "torch", "transformers", "chronos", "aeon", "sklearn",
            "matplotlib", "bashlex", "aiohttp", "asyncio")
#: what a plugin module defers with ``harness.lazy_module`` (or imports inside the function that uses it):
#: registering its objects needs none of it
DEFERRED = ("numpy",)
#: modules ``plugins list`` needs none of, each loaded where it is used: pydantic and every model built on it
#: (specs and profiles, the templates' params, ATIF, the scripted model's script), rich (the table is drawn
#: without it), the proxy's wire formats and log readers (agents, metric extractors, model backends)
NOT_TO_LIST = ("pydantic", "yaml", "rich", "zstandard", "threadpoolctl", "harness.config", "harness.trajectory_models",
               "harness.proxy.wire", "harness.proxy_records", "tsagent_plugins.tasks.tracebench.params",
               "tsagent_plugins.tasks.drcik.spec", "tsagent_plugins.models.script_format",
               "tsagent_plugins.models.scripted_upstream")


def imported_modules(*args: str, columns: int | None = None) -> set[str]:
    """Top-level names of every module ``python -X importtime -m harness ARGS`` imported (``columns``: the
    console's width, ``$COLUMNS``; None: what the test runner's environment says)."""
    env = None if columns is None else {**os.environ, "COLUMNS": str(columns)}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "harness", *args],
                          capture_output=True, text=True, timeout=60, check=True, env=env)
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "harness" in names, proc.stderr[-500:]  # the parse itself works
    return names


def plugin_modules() -> set[str]:
    return {ep.value.split(":")[0] for group in ("harness", "harness.commands") for ep in md.entry_points(group=group)}


@pytest.mark.parametrize("args", [("--version",), ("--help",)])
def test_version_and_help_import_nothing_heavy(args):
    names = imported_modules(*args)
    heavy = sorted(n for n in names if n.split(".")[0] in HEAVY)
    assert not heavy, f"harness {' '.join(args)} imported {heavy}"
    loaded_plugins = sorted(names & plugin_modules())
    assert not loaded_plugins, f"harness {' '.join(args)} imported plugin modules {loaded_plugins}"
    assert plugin_modules(), "no plugin entry points installed: the check above would be vacuous"


def test_help_lists_plugin_commands_from_metadata():
    out = subprocess.run([sys.executable, "-m", "harness", "--help"], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    for ep in md.entry_points(group="harness.commands"):
        assert f"  {ep.name} " in out
    for builtin in ("run", "plugins", "tasks", "report", "image", "sandbox"):
        assert f"  {builtin} " in out


def test_plugin_command_loads_on_use():
    eps = list(md.entry_points(group="harness.commands"))
    assert eps
    out = subprocess.run([sys.executable, "-m", "harness", eps[0].name, "--help"], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert "Usage: harness " + eps[0].name in out


def test_plugins_list_loads_no_run_time_stack():
    names = imported_modules("plugins", "list")
    assert names & plugin_modules(), "plugins list imported no plugin: the check below would be vacuous"
    loaded = sorted({n.split(".")[0] for n in names} & {*RUN_TIME, *DEFERRED})
    assert not loaded, f"harness plugins list imported {loaded}: a plugin imports it at module level"


def test_plugins_list_loads_no_pydantic_model_nor_rich_nor_the_proxys_readers():
    """Listing the plugins reads each plugin's name and kind: the modules of :data:`NOT_TO_LIST` load when a
    spec is validated, a table folded (rich, for a console narrower than the table), a proxy log read, not
    before (each exists: the check is not vacuous)."""
    assert all(importlib.util.find_spec(name) is not None for name in NOT_TO_LIST)
    names = imported_modules("plugins", "list", columns=300)
    assert names & plugin_modules(), "plugins list imported no plugin: the check below would be vacuous"
    loaded = sorted(n for n in names if any(n == m or n.startswith(m + ".") for m in NOT_TO_LIST))
    assert not loaded, f"harness plugins list imported {loaded}"
    assert "rich.table" in imported_modules("plugins", "list", columns=60)  # folded: rich draws it


LOAD_AND_USE = """
import json, sys
from harness.plugins import plugins

loaded = plugins()
registered = sum(len(loaded.registry(kind)) for kind in loaded.registries)
imported = sorted({name.split(".")[0] for name in sys.modules} & set(sys.argv[1:]))
import numpy
simulator = loaded.get("simulator", "balldrop")
trajectory = simulator.simulate(simulator.sample_configurations(1, numpy.random.default_rng(0))[0])
print(json.dumps({"registered": registered, "imported": imported, "values": type(trajectory.values).__name__,
                  "channels": trajectory.values.shape[1]}))
"""


def test_loading_every_plugin_imports_no_deferred_library_and_the_plugins_still_work():
    """What a run does first (every plugin's register hooks, every object checked against its contract)
    imports none of :data:`DEFERRED`; a simulator then simulates with numpy arrays as before."""
    out = json.loads(subprocess.run([sys.executable, "-c", LOAD_AND_USE, *DEFERRED, *RUN_TIME],
                                    capture_output=True, text=True, timeout=120, check=True).stdout)
    assert out["registered"] > 20, "fewer plugins than the built-in ones registered: the check would be vacuous"
    assert out["imported"] == [], f"loading the plugins imported {out['imported']}"
    assert out["values"] == "ndarray" and out["channels"] >= 1


def test_tasks_list_loads_no_plugin_and_no_numeric_stack():
    names = imported_modules("tasks", "list")
    assert "harness.config" in names  # the specs were read
    loaded = sorted({n.split(".")[0] for n in names} & {*RUN_TIME, "numpy", "pluggy"})
    assert not loaded, f"harness tasks list imported {loaded}"
    assert not names & plugin_modules(), "harness tasks list imported plugin modules"
