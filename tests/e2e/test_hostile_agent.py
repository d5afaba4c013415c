"""End to end: `harness run` with an agent that writes one hostile output per episode completes.

A throwaway agent plugin (registered through an installed-looking
distribution, as a third-party agent would be) writes, in episode k, the k-th
hostile case: to ``results.json`` in a direct run, as ``rule.py`` in a
programmatic run, plus a native log with invalid UTF-8 that its trajectory
reader must keep.  Every episode must end with a score or a reason, and
``results.parquet`` must hold one row per episode.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml
from harness.wire import proxy_log, read_log
from tests.support.paths import REPO

BASE = yaml.safe_load((REPO / "tasks/tracebench/balldrop-low-direct.yaml").read_text())

#: results.json cases: name -> Python that writes it (in the workspace, ``names`` = the test files).
DIRECT_CASES = {
    "deep_100k": "open('results.json', 'w').write('{\"%s\": ' % names[0] + '[' * 100000 + ']' * 100000 + '}')",
    "one_gb": "f = open('results.json', 'wb'); f.truncate(1 << 30); f.close()",
    "million_keys": "open('results.json', 'w').write('{' + ','.join(['\"k\":1'] * 1000000) + '}')",
    "nan_infinity": "open('results.json', 'w').write('{' + ','.join('\"%s\": NaN' % n for n in names) + '}')",
    "duplicate_keys": "open('results.json', 'w').write('{' + ','.join('\"%s\": [\"mass\"], \"%s\": [\"drag coefficient\"]'"
                      " % (n, n) for n in names) + '}')",
    "bom": "open('results.json', 'wb').write(b'\\xef\\xbb\\xbf' + json.dumps({n: ['mass'] for n in names}).encode())",
    "lone_surrogate": "open('results.json', 'w').write('{' + ','.join('\"%s\": [\"\\\\ud800\"]' % n for n in names) + '}')",
    "invalid_utf8": "open('results.json', 'wb').write(b'{\"' + names[0].encode() + b'\": [\"\\xff\"]}')",
    "fifo": "os.mkfifo('results.json')",
    "symlink": "os.symlink('/etc/passwd', 'results.json')",
    "print_100mb": "[sys.stdout.write('x' * (1 << 20)) for _ in range(100)]; "
                   "json.dump({n: ['mass'] for n in names}, open('results.json', 'w'))",
    # a folder 1,500 levels deep beside 100,000 files (os.makedirs recurses per level: mkdir + chdir)
    "deep_tree": "json.dump({n: ['mass'] for n in names}, open('results.json', 'w')); os.mkdir('many'); "
                 "[open('many/f%d' % i, 'w').close() for i in range(100000)]; "
                 "[(os.mkdir('d'), os.chdir('d')) for _ in range(1500)]; open('plot.png', 'w').close()",
    # one 64 MiB request to the model proxy: stored truncated in proxy.jsonl, answered all the same
    "large_body": "import urllib.request; body = json.dumps({'model': 'm', 'messages': [{'role': 'user', "
                  "'content': 'x' * (64 << 20)}]}).encode(); "
                  "urllib.request.urlopen(urllib.request.Request(os.environ['HOSTILE_MODEL_URL'] + "
                  "'/v1/chat/completions', body, {'content-type': 'application/json', "
                  "'authorization': 'Bearer dummy'}), timeout=120).read(); "
                  "json.dump({n: ['mass'] for n in names}, open('results.json', 'w'))",
}
#: rule.py cases: the body of predict(df).
RULE_CASES = {
    "generator": "return (x for x in ['mass'])",
    "bad_eq": "class E:\n        def __eq__(self, o): raise RuntimeError('eq')\n    return [E()]",
    "bad_str": "class X(Exception):\n        def __str__(self): raise RuntimeError('str')\n    raise X()",
    "sys_exit": "sys.exit(2)",
    "os_exit": "os._exit(3)",
    "print_100mb": "[print('x' * (1 << 20)) for _ in range(100)]\n    return ['mass']",
    "sleeps": "import time\n    time.sleep(1000)",
    "deep_return": "v = []\n    for _ in range(5000):\n        v = [v]\n    return v",
    # every call forks a child that answers at once: only the worker's own (later) answer may count
    "forking": "if os.fork() == 0:\n        return ['child']\n    import time\n    time.sleep(0.05)\n"
               "    return ['mass']",
}

AGENT = '''
import json, os, sys
from pathlib import Path

from harness.contracts import Agent, AgentInvocation
from harness.hookspecs import hookimpl

CASES = json.loads(os.environ["HOSTILE_CASES"])
WRITER = """
import json, os, sys
mode, case, code = sys.argv[1], sys.argv[2], sys.argv[3]
os.chdir('/workspace')
names = sorted(os.listdir('test_samples'))
home = os.environ['HOME']
os.makedirs(home + '/logs', exist_ok=True)
open(home + '/logs/native.jsonl', 'wb').write(b'{"step": 1, "text": "case \\\\xff\\\\xfe ' + case.encode() + b'"}\\\\n{"step": 2}\\\\n')
if mode == 'direct':
    exec(code)
else:
    open('rule.py', 'w').write('import os, sys\\\\ndef predict(df):\\\\n    ' + code + '\\\\n')
"""


class HostileAgent(Agent):
    name = "hostile-test"
    version = "1"
    needs_model = True  # the large-body case writes to the model proxy
    image_capable = False

    def __init__(self):
        self.episodes = 0

    def command(self, ctx):
        mode = ctx.task_info["submission"]
        names = sorted(CASES[mode])
        case = names[self.episodes % len(names)]
        self.episodes += 1
        return AgentInvocation(argv=[sys.executable, "-c", WRITER, mode, case, CASES[mode][case]],
                               env={"HOSTILE_MODEL_URL": ctx.model_base_url or ""})

    def native_logs(self, home):
        return sorted((Path(home) / "logs").glob("*.jsonl"))

    def trajectory(self, home, stdout, proxy_log):
        from tsagent_plugins.agents.terminal.base import json_lines, read_native_log

        steps = [{"step_id": i + 1, "source": "agent", "message": str(e.get("text", ""))}
                 for i, e in enumerate(json_lines(read_native_log(self.native_logs(home)[0])))]
        return {"schema_version": "ATIF-v1.4", "session_id": "hostile",
                "agent": {"name": self.name, "version": self.version}, "steps": steps}


@hookimpl
def register_agents(register):
    register(HostileAgent())
'''


@pytest.fixture(autouse=True)
def _remove_deep_trees(tmp_path):
    """pytest's own clean-up of old temporary folders recurses per level: remove the deep tree here."""
    yield
    from harness.untrusted import remove_tree

    remove_tree(tmp_path)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("harness-cache")


def run(tmp_path: Path, cache_dir: Path, submission: str, cases: dict) -> tuple[Path, subprocess.CompletedProcess]:
    site = tmp_path / "site"
    info = site / "hostile_agent-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hostile-agent\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[harness]\nhostile = hostile_agent\n")
    (site / "hostile_agent.py").write_text(textwrap.dedent(AGENT))
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "hostile-test.yaml").write_text("name: hostile-test\nagent: hostile-test\nimage_support: false\n")
    spec = {**BASE, "params": {**BASE["params"], "submission": submission, "n_test": 5, "pool_per_class": 25,
                               "heldout_per_class": 2}}
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(spec))
    script = tmp_path / "script.yaml"
    script.write_text("final: {text: done}\n")
    settings = tmp_path / "settings.yaml"
    settings.write_text(yaml.safe_dump({"rule_call_timeout": 5, "rule_budget": 12, "episode_timeout": 120}))
    out = tmp_path / "run"
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache_dir), "HARNESS_PROFILES": str(profiles),
           "PYTHONPATH": os.pathsep.join([str(site), str(REPO)]),
           "HOSTILE_CASES": json.dumps({submission: cases})}
    seeds = [a for i in range(len(cases)) for a in ("--seed", str(i))]
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--task", str(spec_file), "--agent", "hostile-test",
                           "--out", str(out), "--settings", str(settings), "--model-backend", "scripted",
                           "--script", str(script), *seeds],
                          capture_output=True, text=True, env=env, timeout=1200, cwd=tmp_path)
    return out, proc


def check(out: Path, proc: subprocess.CompletedProcess, cases: dict) -> pd.DataFrame:
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "/None" not in proc.stderr  # progress shows n/? before the total is known, never 0/None
    frame = pd.read_parquet(out / "results.parquet")
    assert len(frame) == len(cases)
    for _, row in frame.iterrows():
        score = json.loads((out / "episodes" / row["episode"] / "score.json").read_text())
        assert row.get("accuracy") is not None or row["error"], row.to_dict()
        for d in score["details"]:  # every sample: a scored prediction or a reason
            assert d["reason"] is not None or isinstance(d["predicted"], list), d
    return frame


@pytest.mark.slow
def test_direct_run_with_a_hostile_results_json_per_episode_completes(tmp_path, cache_dir):
    out, proc = run(tmp_path, cache_dir, "direct", DIRECT_CASES)
    frame = check(out, proc, DIRECT_CASES)
    assert set(frame["status"]) <= {"ok", "failed"}
    reasons = " ".join(json.dumps(json.loads((out / "episodes" / e / "score.json").read_text())["details"])
                       for e in frame["episode"])
    for fragment in ("nested deeper", "larger than the 10485760-byte bound", "more than 200000 JSON values",
                     "NaN is not allowed", "disagree", "lone surrogate", "not UTF-8 text",
                     "not a regular file", "symbolic link"):
        assert fragment in reasons, fragment
    trajectories = [json.loads((out / "episodes" / e / "trajectory.json").read_text()) for e in frame["episode"]]
    # the native log's two steps (its invalid UTF-8 kept), after the task prompt the harness puts first
    assert all(len(t["steps"]) == 3 and t["steps"][0]["source"] == "user" and "\ufffd" in t["steps"][1]["message"]
               for t in trajectories)
    cases = case_rows(out, frame)
    deep = cases["deep_tree"]  # scored; the plot count is the count before the walk's depth bound, flagged
    assert deep["status"] == "ok" and deep["accuracy"] is not None and deep["plots_generated"] is not None
    assert deep["plots_truncated"] is True
    large = cases["large_body"]
    assert large["status"] == "ok" and large["accuracy"] is not None and large["n_requests"] == 1
    request = next(r for r in read_log(proxy_log(out / "episodes" / large["episode"])) if r["type"] == "request")
    assert request["truncated"] is True and request["size"] > 64 << 20 and len(request["sha256"]) == 64


@pytest.mark.slow
def test_programmatic_run_with_a_hostile_rule_per_episode_completes(tmp_path, cache_dir):
    out, proc = run(tmp_path, cache_dir, "programmatic", RULE_CASES)
    frame = check(out, proc, RULE_CASES)
    reasons = " ".join(json.dumps(json.loads((out / "episodes" / e / "score.json").read_text())["details"])
                       for e in frame["episode"])
    for fragment in ("not JSON-serialisable", "SystemExit: 2", "worker exited with status 3",
                     "rule budget of 12s spent"):
        assert fragment in reasons, fragment
    assert json.loads((out / "run.json").read_text())["rule_budget_seconds"] == 12
    forking = json.loads((out / "episodes" / case_rows(out, frame)["forking"]["episode"] / "score.json")
                         .read_text())["details"]
    assert [d["predicted"] for d in forking] == [["mass"]] * len(forking)  # never a child's answer


def case_rows(out: Path, frame: pd.DataFrame) -> dict[str, dict]:
    """Each case's row, by the case name its native log records."""
    rows = {}
    for _, row in frame.iterrows():
        log = next((out / "episodes" / row["episode"] / "home" / "logs").glob("*.jsonl")).read_bytes()
        name = log.split(b"case ", 1)[1].split(b'"', 1)[0].decode("utf-8", "replace").split()[-1]
        rows[name] = json.loads((out / "episodes" / row["episode"] / "row.json").read_text())
    return rows
