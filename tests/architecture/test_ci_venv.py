"""``.ci/run``'s venv step leaves the user's ``.venv`` alone: the tests get their own environment (``.venv-ci``
or ``$HARNESS_CI_VENV``), which ``.ci/venv.sh`` may clear and make again (issue 42: it used to rewrite ``.venv``,
downgrading packages and removing a distribution the user had installed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO


def venv_step() -> str:
    """The lines of ``.ci/run`` that pick the environment and make it (the step, run as written)."""
    text = (REPO / ".ci" / "run").read_text()
    choose = re.search(r'^VENV=.*$', text, re.M)
    assert choose is not None, ".ci/run no longer sets VENV"
    return choose.group(0)


def test_the_ci_venv_step_leaves_a_users_venv_with_an_extra_distribution_untouched(tmp_path):
    # the user's .venv: a fake tiny environment holding a distribution no requirement declares
    user = tmp_path / ".venv"
    dist = user / "lib" / "python3" / "site-packages" / "mine-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mine\nVersion: 1.0\n")
    (user / "pyvenv.cfg").write_text(f"home = {Path(sys.base_prefix) / 'bin'}\n"
                                     "include-system-site-packages = false\n")
    before = sorted((p.relative_to(user), p.read_bytes() if p.is_file() else b"") for p in user.rglob("*"))
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_CI_VENV"}
    script = f'{venv_step()}\nbash {REPO / ".ci" / "venv.sh"} "$VENV" {sys.executable} >/dev/null\necho "$VENV"'
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    made = proc.stdout.split()[-1]
    assert made == ".venv-ci" and (tmp_path / made / "bin" / "python").exists()
    after = sorted((p.relative_to(user), p.read_bytes() if p.is_file() else b"") for p in user.rglob("*"))
    assert after == before


def test_harness_ci_venv_names_another_environment():
    proc = subprocess.run(["bash", "-c", f'{venv_step()}\necho "$VENV"'], capture_output=True, text=True,
                          env={**os.environ, "HARNESS_CI_VENV": "/tmp/elsewhere"})
    assert proc.stdout.strip() == "/tmp/elsewhere"
