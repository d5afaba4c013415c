"""Following the README and the documentation leaves a clean clone: every file or folder their commands write is
git-ignored."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.support import docs
from tests.support.paths import REPO

#: a command's output: the value of an output option or the target of a shell redirect
OUTPUT = re.compile(r"(?:--out|--bundle|--released)[ =](\S+)|(?<=\s)>\s*([^\s&`]+)")


def readme_outputs(text: str) -> list[str]:
    """The output paths of the README's commands (``bash`` blocks and inline ``harness ...`` code), comments
    and placeholders (``DIR``, ``<run_id>``) left out."""
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S) + re.findall(r"`(harness [^`\n]+)`", text)
    lines = [re.sub(r"(^|\s)#.*", "", line) for block in blocks for line in block.splitlines()]
    found = [a or b for line in lines for a, b in OUTPUT.findall(line)]
    return [p for p in found if not re.fullmatch(r"[A-Z_]+\]?", p) and "<" not in p]


def test_the_outputs_are_found():
    text = ("```bash\nharness x runs/<id> --out runs/a/   # default: <first run>/report\nharness y [--out DIR]\n"
            "harness z --example > s.yaml 2>&1\n```\nthen `harness settings > t.yaml` writes\n")
    assert readme_outputs(text) == ["runs/a/", "s.yaml", "t.yaml"]


def test_every_readme_output_is_ignored():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    outputs = readme_outputs(docs.text())
    proc = subprocess.run(["git", "check-ignore", "--no-index", "--verbose", "--non-matching", *outputs],
                          cwd=REPO, capture_output=True, text=True)
    not_ignored = [line.split("\t")[1] for line in proc.stdout.splitlines() if line.startswith("::")]
    assert not_ignored == []
    assert {"runs/pools/", "runs/sample.png", "runs/reports/today", "settings.yaml"} <= set(outputs)
