"""Print the distributions installed in this environment that the declared requirements do not pull in.

Usage: ``python .ci/undeclared_dists.py REQUIREMENT...`` (the roots, as given to pip: ``torch==2.13.0``, and
``.[test,dr]`` for this project with extras; their requirements are followed through the installed metadata,
extras and environment markers included).  One name per line; nothing when the environment holds only what the
roots need (plus pip, setuptools and wheel).  ``.ci/venv.sh`` makes its virtual environment again when this
prints anything, so a package installed by hand cannot make the tests pass.
"""

from __future__ import annotations

import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

try:
    from packaging.requirements import Requirement
except ImportError:  # packaging comes with pytest; pip vendors a copy
    from pip._vendor.packaging.requirements import Requirement

TOOLS = {"pip", "setuptools", "wheel"}


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def needed(roots: list[str]) -> set[str]:
    """Normalized names of the installed distributions ``roots`` need, transitively."""
    seen: dict[str, set[str]] = {}
    stack = [Requirement(r) for r in roots]
    while stack:
        req = stack.pop()
        name, extras = normalize(req.name), set(req.extras)
        if name in seen and extras <= seen[name]:
            continue
        seen[name] = seen.get(name, set()) | extras
        try:
            requires = md.distribution(req.name).requires or []
        except md.PackageNotFoundError:
            continue  # pip would have failed to install it; not this script's business
        for line in requires:
            sub = Requirement(line)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in seen[name] | {""}):
                stack.append(sub)
    return set(seen)


def no_deps() -> set[str]:
    """Normalized names of pyproject.toml's ``[tool.tsagent-harness.no-deps]`` lists: distributions installed
    with ``pip install --no-deps`` beside the declared ones (scripts/install-forecasters.sh, the odr line)."""
    tool = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text()).get("tool", {})
    lists = tool.get("tsagent-harness", {}).get("no-deps", {})
    return {normalize(Requirement(req).name) for reqs in lists.values() for req in reqs}


def root(requirement: str) -> str:
    """``requirement``, with a leading "." (this project) replaced by the project's name."""
    if not requirement.startswith("."):
        return requirement
    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"]["name"]
    return project + requirement.lstrip(".").lstrip("/")


def main(roots: list[str]) -> int:
    roots = [root(r) for r in roots]
    installed = {normalize(d.metadata["Name"]) for d in md.distributions() if d.metadata["Name"]}
    for name in sorted(installed - needed(roots) - TOOLS - no_deps()):
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
