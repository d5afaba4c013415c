"""Hostile spec files: names that climb out of ``runs/``, alias bombs, huge values, non-UTF-8 bytes and
boolean strings are refused with one short ``error: FILE: ...`` line (exit 2), in bounded time and memory,
writing nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import cli
from harness.config import ConfigError, load_experiment, load_task_spec
from harness.errors import HarnessError
from harness.run import load_task
from harness.store import RunStore, inside
from tests.support.paths import REPO

SPEC = REPO / "tasks" / "tracebench" / "balldrop-low-direct.yaml"


def alias_bomb(levels: int, width: int = 9) -> str:
    """``levels`` unknown keys, each a list of ``width`` aliases of the one before (width**levels values)."""
    lines = ["name: bomb", "template: tracebench", "l0: &l0 [lol]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


#: Runs ``python -m harness ARGS`` from a small process and prints ``exit code, peak RSS (KiB)``: Linux keeps a
#: forked child's resident size at exec in its peak, so forking the harness from the (large) test process
#: would count the test process's memory.
LAUNCHER = """
import os, signal, sys, threading
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, "-m", "harness", *sys.argv[1:]])
threading.Timer(60, lambda: os.kill(pid, signal.SIGKILL)).start()
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, flush=True)
os._exit(0)
"""


def run_peak(args: list[str], cwd: Path) -> tuple[int, str, float]:
    """``python -m harness ARGS`` in ``cwd``: (exit code, stderr, its peak resident memory in MB from
    ``wait4``); killed after 60 s (a refusal takes well under a second)."""
    done = subprocess.run([sys.executable, "-c", LAUNCHER, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "400"}, timeout=120)
    code, peak_kib = (int(x) for x in done.stdout.split())
    return code, done.stderr, peak_kib / 1024


def error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr[:2000]
    return lines[0]


# -- 2: names that are path components only --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["..", ".", "..."])
def test_an_experiment_named_dots_is_refused_and_writes_nothing(tmp_path, monkeypatch, name):
    spec = tmp_path / "specs" / "x.yaml"
    spec.parent.mkdir()
    spec.write_text(f"name: '{name}'\ntasks: [{SPEC}]\nagents: [euclidean-1nn]\n")
    work = tmp_path / "repo"
    work.mkdir()
    monkeypatch.chdir(work)
    done = CliRunner().invoke(cli, ["run", "--experiment", str(spec)], env={"COLUMNS": "400"})
    assert isinstance(done.exception, ConfigError), done.output
    assert str(done.exception).startswith(f"{spec}: name: must name a folder")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["repo", "specs", "x.yaml"]


def test_a_stage_named_dotdot_is_refused(tmp_path):
    spec = tmp_path / "x.yaml"
    spec.write_text(f"name: ok\nstages:\n  - name: '..'\n    tasks: [{SPEC}]\n")
    with pytest.raises(ConfigError, match=r"stages\.0\.name: must name a folder"):
        load_experiment(spec)


def test_output_folders_stay_under_their_root(tmp_path):
    root = tmp_path / "runs"
    root.mkdir()
    (root / "out").symlink_to(tmp_path)
    assert inside(root, "ok.1") == root / "ok.1"
    for name in ("..", ".", "", "a/../..", "out/x", "out"):
        with pytest.raises(HarnessError, match="not a folder name inside"):
            inside(root, name)
    store = RunStore(root)
    with pytest.raises(HarnessError):
        store.episode("..")
    assert store.episode("task-0123").root == root / "episodes" / "task-0123"


# -- 3: bounded reading, short messages ------------------------------------------------------------------------

def test_an_alias_bomb_is_refused_at_once(tmp_path):
    """9 levels x 9 aliases (9**8 values): refused by the expansion bound, exit 2, one short line."""
    spec = tmp_path / "bomb.yaml"
    spec.write_text(alias_bomb(9))
    code, err, peak_mb = run_peak(["run", "--task", str(spec)], tmp_path)
    line = error_line(err)
    assert code == 2
    assert line == f"error: {spec}: more than 200,000 values once its aliases are expanded (an alias bomb?)"
    assert len(line) <= 200 and peak_mb < 200


def test_a_small_alias_bomb_gives_a_short_message(tmp_path):
    """4 levels (6,561 values: under the bound) in unknown keys: each quoted as a short prefix."""
    spec = tmp_path / "bomb.yaml"
    spec.write_text(alias_bomb(5))
    with pytest.raises(ConfigError) as err:
        load_task_spec(spec)
    text = str(err.value)
    assert err.value.problems[:2] == ["l0: Extra inputs are not permitted (got: ['lol'])",
                                      "l1: Extra inputs are not permitted (got: [['lol'], ['lol'], ['lol'], ...])"]
    assert len(err.value.problems) == 5 and all(len(p) <= 100 for p in err.value.problems)


def test_a_huge_seed_is_refused_by_size(tmp_path):
    spec = tmp_path / "seed.yaml"
    spec.write_bytes(b"name: s\ntemplate: tracebench\nparams:\n  seed: '" + b"9" * (30 * 1024 * 1024) + b"'\n")
    code, err, peak_mb = run_peak(["run", "--task", str(spec)], tmp_path)
    line = error_line(err)
    assert code == 2
    assert line == f"error: {spec}: larger than 8 MiB; a spec is a short text file"
    assert peak_mb < 200


def test_a_long_invalid_value_is_quoted_as_a_prefix(tmp_path):
    """A 1 MB seed string (under the size bound): the message quotes 40 characters of it."""
    spec = tmp_path / "seed.yaml"
    spec.write_text(SPEC.read_text().replace("  seed: 0", "  seed: '" + "9x" * 500_000 + "'", 1))
    code, err, _ = run_peak(["run", "--task", "seed.yaml"], tmp_path)
    line = error_line(err)
    assert code == 2 and len(line) <= 200, line[:300]
    assert line == ("error: seed.yaml: params.seed: Input should be a valid integer, unable to parse string as an "
                    "integer (got: '9x9x9x9x9x9x9x9x9...9x9x9x9x9x9x9x9x9x')")


def test_deep_nesting_is_refused(tmp_path):
    spec = tmp_path / "deep.yaml"
    spec.write_text("name: d\ntemplate: tracebench\nparams: {x: " + "[" * 5000 + "]" * 5000 + "}\n")
    with pytest.raises(ConfigError, match="nested deeper than 64 levels"):
        load_task_spec(spec)


def test_markup_in_a_value_is_printed_as_given(tmp_path):
    spec = tmp_path / "m.yaml"
    spec.write_text("name: m\ntemplate: tracebench\ncolour: '[bold]x[/bold]'\n")
    code, err, _ = run_peak(["run", "--task", str(spec)], tmp_path)
    assert code == 2
    assert error_line(err) == f"error: {spec}: colour: Extra inputs are not permitted (got: '[bold]x[/bold]')"


# -- 4: not UTF-8 ----------------------------------------------------------------------------------------------

def test_a_spec_that_is_not_utf8_is_a_spec_error(tmp_path):
    spec = tmp_path / "nonutf.yaml"
    spec.write_bytes(b"template: tracebench\nname: nonutf\xff\n")
    code, err, _ = run_peak(["run", "--task", str(spec)], tmp_path)
    assert code == 2
    assert error_line(err) == (f"error: {spec}: not UTF-8 (byte 0xff at line 2, offset 33); "
                               "save the file as UTF-8")


# -- 10: boolean fields take booleans ----------------------------------------------------------------------------

@pytest.mark.parametrize("value, shown", [('"yes"', "'yes'"), ("'false'", "'false'"), ("'0'", "'0'")])
def test_a_boolean_field_refuses_strings(tmp_path, value, shown):
    spec = tmp_path / "b.yaml"
    spec.write_text(SPEC.read_text().replace("context: true", f"context: {value}"))
    with pytest.raises(ConfigError) as err:
        load_task(spec)
    assert err.value.problems == [f"params.context: expected true or false, not a string (got: {shown})"]


def test_a_boolean_field_takes_true_and_false(tmp_path):
    spec = tmp_path / "b.yaml"
    spec.write_text(SPEC.read_text().replace("context: true", "context: false"))
    assert load_task(spec).params.context is False
