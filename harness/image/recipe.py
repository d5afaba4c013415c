"""The agent runtime image recipe: the pinned environment every containerised agent runs in.

The runtime is Python 3.13 with the pinned scientific packages of
:data:`RUNTIME_PACKAGES` at exactly those versions, uv 0.8.15, the system utilities
tmux, asciinema and procps, Node.js >= 20, ripgrep (agent CLIs search with
``rg`` on PATH), plus
whatever the registered agents add through :meth:`harness.contracts.Agent.install`
and any extra recipe files (``npm``/``pip``/``files``, the fields of
:class:`harness.contracts.ImageRecipe`).

Every requirement is pinned to one version, so a recipe's content hash names
exactly one image (``harness-agent:<hash12>``).
"""

from __future__ import annotations

import dataclasses

import hashlib
import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pydantic import Field, field_validator

from harness.config import Strict, parse, read_yaml
from harness.contracts.agent import ImageRecipe
from harness.errors import HarnessError

#: Python packages installed in the agent runtime (name -> version), pinned exactly so that results
#: are comparable across runs and machines.
RUNTIME_PACKAGES: dict[str, str] = {
    "contourpy": "1.3.3",
    "cycler": "0.12.1",
    "fonttools": "4.61.1",
    "iniconfig": "2.3.0",
    "joblib": "1.5.3",
    "kiwisolver": "1.4.9",
    "llvmlite": "0.46.0",
    "matplotlib": "3.10.8",
    "numba": "0.63.1",
    "numpy": "2.3.5",
    "packaging": "26.0",
    "pandas": "3.0.0",
    "pillow": "12.1.0",
    "pluggy": "1.6.0",
    "pyarrow": "23.0.0",
    "Pygments": "2.19.2",
    "pyparsing": "3.3.2",
    "pytest": "8.4.1",
    "python-dateutil": "2.9.0.post0",
    "ruptures": "1.1.10",
    "scikit-learn": "1.8.0",
    "scipy": "1.17.0",
    "six": "1.17.0",
    "threadpoolctl": "3.6.0",
    "tslearn": "0.7.0",
}

#: The uv release installed in the runtime.
UV_VERSION = "0.8.15"
#: Python minor version of the runtime (a python-3.13 image).
PYTHON_VERSION = "3.13"
#: Lowest Node.js major version the CLIs run on.
MIN_NODE_MAJOR = 20
#: Base image used when a registry is reachable.
DEFAULT_BASE = "python:3.13-slim"
#: Debian packages the runtime needs (command checked -> package providing it).
SYSTEM_TOOLS: dict[str, str] = {
    "tmux": "tmux",
    "ps": "procps",
    "asciinema": "asciinema",
    "rg": "ripgrep",
    "node": "nodejs",
    "update-ca-certificates": "ca-certificates",
}

_NPM_SPEC = re.compile(r"^(?P<name>(@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*)@(?P<version>\d+\.\d+\.\d+[\w.+-]*)$")
_PIP_SPEC = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!_-]+)$")
_DEFAULT_RECIPE = "default_recipe.yaml"


def _canonical_pip_name(name: str) -> str:
    """PEP 503 normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_npm(spec: str) -> tuple[str, str]:
    """Split a pinned npm spec ``name@X.Y.Z`` (scoped names allowed) into (name, version).

    Raises ValueError when the spec is not pinned to one exact version.
    """
    m = _NPM_SPEC.match(spec.strip())
    if not m:
        raise ValueError(f"npm package {spec!r} must be pinned as name@X.Y.Z (e.g. my-agent-cli@1.2.3)")
    return m["name"], m["version"]


def parse_pip(spec: str) -> tuple[str, str]:
    """Split a pinned pip requirement ``name==version`` into (canonical name, version).

    Raises ValueError when it is not pinned with ``==``.
    """
    m = _PIP_SPEC.match(spec.strip())
    if not m:
        raise ValueError(f"pip requirement {spec!r} must be pinned as name==version (e.g. numpy==2.3.5)")
    return _canonical_pip_name(m["name"]), m["version"]


class RecipeFile(Strict):
    """An extra recipe file: the fields of :class:`ImageRecipe`, every entry pinned."""

    npm: list[str] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)
    pip: list[str] = Field(default_factory=list)
    files: dict[str, str] = Field(default_factory=dict)

    @field_validator("npm")
    @classmethod
    def _npm_pinned(cls, value: list[str]) -> list[str]:
        for spec in value:
            parse_npm(spec)
        return value

    @field_validator("pip")
    @classmethod
    def _pip_pinned(cls, value: list[str]) -> list[str]:
        for spec in value:
            parse_pip(spec)
        return value

    @field_validator("files")
    @classmethod
    def _absolute_paths(cls, value: dict[str, str]) -> dict[str, str]:
        for path in value:
            _check_file_path(path)
        return value


def _check_file_path(path: str) -> None:
    p = Path(path)
    if not p.is_absolute() or ".." in p.parts or p == Path("/"):
        raise ValueError(f"file path {path!r} must be an absolute path inside the image without '..'")


def load_recipe_file(path: Path | str) -> ImageRecipe:
    """Read an extra recipe YAML (``npm``, ``pip``, ``files``).

    Raises :class:`harness.config.ConfigError` naming the file and field when it
    is malformed or an entry is not pinned.
    """
    model = parse(RecipeFile, read_yaml(path), path)
    return ImageRecipe(npm=list(model.npm), pip=list(model.pip), files=dict(model.files),
                       commands=list(model.commands))


def default_recipe_path() -> Path:
    """Path of the packaged default recipe (the pinned agent CLIs)."""
    return Path(str(resources.files("harness.image").joinpath(_DEFAULT_RECIPE)))


def agent_recipe() -> tuple[ImageRecipe, list[str]]:
    """What the registered agent plugins add (:meth:`Agent.install`), and problems met.

    An agent whose ``install`` raises is left out; its problem is returned
    (one sentence naming the agent) instead of stopping the build.
    """
    from harness import plugins

    recipe = ImageRecipe()
    problems: list[str] = []
    for name, reg in sorted(plugins.plugins().registry("agent").items()):
        part = ImageRecipe()
        try:
            reg.obj.install(part)
            for spec in part.npm:
                parse_npm(spec)
            for spec in part.pip:
                parse_pip(spec)
            for path in part.files:
                _check_file_path(path)
        except Exception as exc:  # noqa: BLE001 - one bad agent must not stop the image
            problems.append(f"agent {name!r} (plugin {reg.plugin!r}) left out of the image: {exc}")
            continue
        recipe.npm.extend(part.npm)
        recipe.pip.extend(part.pip)
        recipe.files.update(part.files)
        recipe.commands.extend(part.commands)
    return recipe, problems


@dataclass(frozen=True)
class RuntimeRecipe:
    """Everything that goes into the agent runtime image.

    ``pip``: pinned requirements (:data:`RUNTIME_PACKAGES`, uv, extras), sorted by name.
    ``npm``: pinned npm packages, sorted by name.  ``files``: image path -> text.
    ``system``: command -> Debian package for the system tools.
    ``base``: the Dockerfile's base image.
    """

    base: str = DEFAULT_BASE
    python: str = PYTHON_VERSION
    pip: tuple[str, ...] = ()
    npm: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    system: tuple[tuple[str, str], ...] = tuple(sorted(SYSTEM_TOOLS.items()))
    min_node_major: int = MIN_NODE_MAJOR
    sources: tuple[str, ...] = field(default=(), compare=False)
    commands: tuple[str, ...] = ()

    @property
    def npm_bins(self) -> list[str]:
        """Names of the npm packages (without versions)."""
        return [parse_npm(s)[0] for s in self.npm]

    def to_dict(self) -> dict:
        """A JSON-able view (what ``harness image show`` prints and the hash covers)."""
        return {
            "base": self.base,
            "python": self.python,
            "pip": list(self.pip),
            "npm": list(self.npm),
            "files": {p: c for p, c in self.files},
            "system": dict(self.system),
            "min_node_major": self.min_node_major,
            **({"commands": list(self.commands)} if self.commands else {}),
        }

    def digest(self, extra: str = "") -> str:
        """SHA-256 (hex) of the canonical JSON of the recipe plus ``extra`` (e.g. the Dockerfile)."""
        blob = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":")) + "\0" + extra
        return hashlib.sha256(blob.encode()).hexdigest()

    def with_base(self, base: str) -> RuntimeRecipe:
        """The same recipe on another base image."""
        return dataclasses.replace(self, base=base or self.base)


class RecipeConflict(HarnessError, ValueError):
    """Two parts of the recipe pin the same package (or file) differently."""


def compose(*parts: tuple[str, ImageRecipe], base: str = DEFAULT_BASE) -> RuntimeRecipe:
    """Merge :data:`RUNTIME_PACKAGES`, uv and the given ``(source name, ImageRecipe)`` parts into one recipe.

    The same package at the same version from two parts is kept once; two
    different versions of one package (or two contents for one file) raise
    :class:`RecipeConflict` naming both sources.
    """
    pip: dict[str, tuple[str, str, str]] = {}   # canonical -> (spec, version, source)
    npm: dict[str, tuple[str, str, str]] = {}
    files: dict[str, tuple[str, str]] = {}

    def add_pip(spec: str, source: str) -> None:
        name, version = parse_pip(spec)
        old = pip.get(name)
        if old and old[1] != version:
            raise RecipeConflict(f"pip package {name!r}: {old[0]} (from {old[2]}) conflicts with {spec} (from {source})")
        pip.setdefault(name, (spec.strip(), version, source))

    def add_npm(spec: str, source: str) -> None:
        name, version = parse_npm(spec)
        old = npm.get(name)
        if old and old[1] != version:
            raise RecipeConflict(f"npm package {name!r}: {old[0]} (from {old[2]}) conflicts with {spec} (from {source})")
        npm.setdefault(name, (spec.strip(), version, source))

    for name, version in RUNTIME_PACKAGES.items():
        add_pip(f"{name}=={version}", "runtime package pins")
    add_pip(f"uv=={UV_VERSION}", "runtime package pins")
    sources = []
    commands: set[str] = set()
    for source, part in parts:
        sources.append(source)
        commands.update(part.commands)
        for spec in part.pip:
            add_pip(spec, source)
        for spec in part.npm:
            add_npm(spec, source)
        for path, content in part.files.items():
            _check_file_path(path)
            old = files.get(path)
            if old and old[0] != content:
                raise RecipeConflict(f"file {path!r} is given different contents by {old[1]} and {source}")
            files.setdefault(path, (content, source))
    return RuntimeRecipe(
        base=base,
        pip=tuple(v[0] for _, v in sorted(pip.items())),
        npm=tuple(v[0] for _, v in sorted(npm.items())),
        files=tuple((p, c) for p, (c, _) in sorted(files.items())),
        sources=tuple(sources),
        commands=tuple(sorted(commands)),
    )


def runtime_recipe(
    extra_files: list[Path | str] = (),
    *,
    base: str = DEFAULT_BASE,
    include_default: bool = True,
    include_agents: bool = True,
) -> tuple[RuntimeRecipe, list[str]]:
    """The runtime recipe: :data:`RUNTIME_PACKAGES` + uv + default recipe file + agents + ``extra_files``.

    Returns the recipe and warnings (agents left out).  Raises ConfigError for a
    malformed recipe file and :class:`RecipeConflict` for contradictory pins.
    """
    parts: list[tuple[str, ImageRecipe]] = []
    if include_default:
        parts.append((f"default recipe {default_recipe_path().name}", load_recipe_file(default_recipe_path())))
    warnings: list[str] = []
    if include_agents:
        agents, warnings = agent_recipe()
        parts.append(("registered agents", agents))
    for path in extra_files:
        parts.append((f"recipe file {path}", load_recipe_file(path)))
    return compose(*parts, base=base), warnings
