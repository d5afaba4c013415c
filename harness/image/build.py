"""Build the agent runtime image (with no network inside the build on a bootstrapped base).

On the host: download the wheels for CPython 3.13 on this architecture
(``pip download --only-binary=:all:``) and install the npm CLIs into a
global prefix (``npm install --global --prefix``, which fetches each CLI's
platform-specific binary for this machine).  Both are cached under
``~/.cache/harness/`` by a hash of what they hold.  Then ``docker build``
from the rendered Dockerfile.  The image is tagged
``harness-agent:<hash12>`` by the recipe's content and reused while the
recipe is unchanged.  With ``--bootstrap`` (or ``offline=True``) the build
runs with ``--network none``.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from harness.errors import HarnessError
from harness.image import dockerfile
from harness.image.bootstrap import BootstrapSpec, ensure_base_image
from harness.image.cache import cache_dir
from harness.image.recipe import DEFAULT_BASE, RuntimeRecipe, runtime_recipe

#: Newest glibc the wheels may need: Debian bookworm (2.36) and trixie (2.41) both run them.
MANYLINUX_GLIBC = (2, 36)


class ImageBuildError(HarnessError):
    """The image could not be built; the message names the failing step and its output tail."""


@dataclass(frozen=True)
class BuildResult:
    """Outcome of :func:`build_image`: the tag, whether an existing image was reused, seconds spent."""

    tag: str
    reused: bool
    seconds: float
    recipe: RuntimeRecipe


def wheel_platforms() -> list[str]:
    """``pip download --platform`` values for this machine's architecture."""
    machine = platform.machine()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    major, newest = MANYLINUX_GLIBC
    tags = [f"manylinux_{major}_{minor}_{arch}" for minor in range(newest, 16, -1)]
    return tags + [f"manylinux2014_{arch}"]


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _run(cmd: list[str], step: str, log: Callable[[str], None], env: dict | None = None, cwd: Path | None = None):
    log(f"{step}: {' '.join(cmd[:6])}{' ...' if len(cmd) > 6 else ''}")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-20:])
        raise ImageBuildError(f"{step} failed (exit {proc.returncode}):\n{tail}")
    return proc


def download_wheels(recipe: RuntimeRecipe, log: Callable[[str], None] = print) -> Path:
    """A cached folder with every wheel ``recipe.pip`` needs for CPython ``recipe.python``.

    Raises :class:`ImageBuildError` (with pip's output tail) when a wheel cannot be found.
    """
    py = recipe.python.replace(".", "")
    platforms = wheel_platforms()
    requirements = dockerfile.requirements_txt(recipe)
    folder = cache_dir("wheels") / _key(requirements, py, platforms)
    done = folder / ".complete"
    if done.exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    req = folder / "requirements.txt"
    req.write_text(requirements)
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--only-binary=:all:",
           "--python-version", recipe.python, "--implementation", "cp", "--abi", f"cp{py}", "--abi", "abi3",
           "--abi", "none", "-d", str(folder), "-r", str(req)]
    for plat in platforms:
        cmd += ["--platform", plat]
    started = time.monotonic()
    _run(cmd, "downloading wheels", log)
    done.write_text(requirements)
    count = len(list(folder.glob("*.whl")))
    log(f"{count} wheels in {time.monotonic() - started:.0f} s: {folder}")
    return folder


def install_npm(recipe: RuntimeRecipe, log: Callable[[str], None] = print) -> Path:
    """A cached npm global prefix (``lib/node_modules``, ``bin``) holding ``recipe.npm``.

    Installed with this machine's npm, so each CLI's optional platform package
    for this OS and CPU (e.g. linux-x64 binaries of a CLI) is
    included.  Raises :class:`ImageBuildError` when npm is missing or fails.
    """
    folder = cache_dir("npm") / _key(list(recipe.npm), platform.system(), platform.machine())
    done = folder / ".complete"
    if done.exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    if recipe.npm:
        npm = shutil.which("npm")
        if npm is None:
            raise ImageBuildError("npm is not installed on this machine: install Node.js and npm to fetch the agent CLIs")
        env = {**os.environ, "npm_config_cache": str(cache_dir("npm-cache")), "npm_config_update_notifier": "false"}
        started = time.monotonic()
        _run([npm, "install", "--global", "--prefix", str(folder), "--no-audit", "--no-fund", "--loglevel=error",
              *recipe.npm], "installing npm packages", log, env=env)
        log(f"npm packages in {time.monotonic() - started:.0f} s: {folder}")
    (folder / "bin").mkdir(exist_ok=True)
    (folder / "lib" / "node_modules").mkdir(parents=True, exist_ok=True)
    done.write_text("\n".join(recipe.npm))
    return folder


def make_context(recipe: RuntimeRecipe, dest: Path, log: Callable[[str], None] = print) -> Path:
    """Fill ``dest`` with the Dockerfile and build context for ``recipe``; returns ``dest``."""
    wheels = download_wheels(recipe, log)
    npm = install_npm(recipe, log)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "Dockerfile").write_text(dockerfile.render(recipe))
    (dest / "requirements.txt").write_text(dockerfile.requirements_txt(recipe))
    _link_tree(wheels, dest / "wheels", skip={".complete", "requirements.txt"})
    _link_tree(npm, dest / "npm", skip={".complete"})
    files = dest / "files"
    files.mkdir(exist_ok=True)
    for path, content in recipe.files:
        target = files / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    return dest


def _link_tree(src: Path, dst: Path, skip: set[str]) -> None:
    """Copy ``src`` to ``dst`` with hard links where possible (symlinks kept as symlinks)."""
    def copy(s, d):
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)

    dst.mkdir(parents=True, exist_ok=True)
    for entry in src.iterdir():
        if entry.name in skip:
            continue
        target = dst / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry), target)
        elif entry.is_dir():
            shutil.copytree(entry, target, symlinks=True, copy_function=copy)
        else:
            copy(entry, target)


def find_agent_image(client, recipe: RuntimeRecipe | None = None) -> tuple[str | None, str]:
    """(tag of a built runtime image for the current recipe or None, the tag expected).

    Looks for the image built on the default base and on the bootstrapped base.
    """
    if recipe is None:
        recipe, _ = runtime_recipe()
    candidates = [dockerfile.tag_for(recipe.with_base(DEFAULT_BASE)),
                  dockerfile.tag_for(recipe.with_base(BootstrapSpec().tag))]
    if recipe.base not in (DEFAULT_BASE, BootstrapSpec().tag):
        candidates.insert(0, dockerfile.tag_for(recipe))
    import docker.errors

    for tag in candidates:
        try:
            client.images.get(tag)
            return tag, tag
        except docker.errors.ImageNotFound:
            continue
    return None, candidates[0]


def build_image(
    recipe_files: list[Path | str] = (),
    *,
    bootstrap: bool = False,
    base: str | None = None,
    client,
    log: Callable[[str], None] = print,
    force: bool = False,
    include_default: bool = True,
    include_agents: bool = True,
    nocache: bool = False,
    offline: bool | None = None,
) -> BuildResult:
    """Build (or reuse) the agent runtime image.

    ``bootstrap``: make the base with debootstrap + ``docker import`` (no
    registry needed).  ``base``: the ``FROM`` image otherwise (default
    ``python:3.13-slim``).  ``force``: rebuild even when the tag exists.
    ``offline``: build with ``--network none`` (default: with ``bootstrap``; a
    registry base such as ``python:3.13-slim`` lacks Node.js, tmux, ripgrep and
    asciinema, which the build then installs from the Debian mirror).
    Raises :class:`ImageBuildError`, :class:`harness.image.bootstrap.BootstrapError`
    or :class:`harness.config.ConfigError` (bad recipe file).
    """
    import docker.errors


    started = time.monotonic()
    if bootstrap and base:
        raise ImageBuildError("give either --bootstrap or --base IMAGE, not both")
    recipe, warnings = runtime_recipe(recipe_files, include_default=include_default, include_agents=include_agents)
    for w in warnings:
        log(f"warning: {w}")
    if bootstrap:
        base = ensure_base_image(client, log=log)
    recipe = recipe.with_base(base or DEFAULT_BASE)
    tag = dockerfile.tag_for(recipe)
    if not force:
        try:
            client.images.get(tag)
            log(f"{tag} is up to date (recipe unchanged)")
            return BuildResult(tag, True, time.monotonic() - started, recipe)
        except docker.errors.ImageNotFound:
            pass
    with tempfile.TemporaryDirectory(prefix="harness-image-", dir=cache_dir("tmp")) as tmp:
        context = make_context(recipe, Path(tmp) / "context", log)
        offline = bootstrap if offline is None else offline
        log(f"building {tag} from {recipe.base}{' (docker build --network none)' if offline else ''}")
        _docker_build(client, context, tag, log, nocache=nocache, network="none" if offline else None)
    log(f"built {tag} in {time.monotonic() - started:.0f} s")
    return BuildResult(tag, False, time.monotonic() - started, recipe)


def _docker_build(client, context: Path, tag: str, log: Callable[[str], None], nocache: bool = False,
                  network: str | None = "none") -> None:
    """``docker build [--network NETWORK]`` of ``context`` as ``tag``; ImageBuildError with the log tail."""
    lines: list[str] = []
    try:
        stream = client.api.build(path=str(context), tag=tag, network_mode=network, rm=True, forcerm=True,
                                  pull=False, decode=True, nocache=nocache,
                                  labels={"harness.image": "agent"})
        for chunk in stream:
            if "stream" in chunk:
                for line in chunk["stream"].splitlines():
                    if line.strip():
                        lines.append(line)
                        if line.startswith("Step ") or "installing from" in line:
                            log(line)
            if "error" in chunk:
                lines.append(chunk["error"])
                raise ImageBuildError("docker build failed:\n" + "\n".join(lines[-25:]))
    except ImageBuildError:
        raise
    except Exception as exc:  # noqa: BLE001 - engine/API errors
        raise ImageBuildError(f"docker build failed: {exc}\n" + "\n".join(lines[-25:])) from None


def agent_image_tag() -> str:
    """The tag of the agent runtime image for the current recipe: the built one when the Docker engine has it
    (default or bootstrapped base), else the tag ``harness image build`` would give it on the default base.
    Needs no running engine (then it cannot tell which base was built and names the default one)."""
    recipe, _ = runtime_recipe()
    try:
        import docker

        client = docker.from_env(timeout=10)
        client.ping()
    except Exception:  # noqa: BLE001 - no engine: the expected tag
        return dockerfile.tag_for(recipe.with_base(DEFAULT_BASE))
    try:
        return find_agent_image(client, recipe)[1]
    finally:
        client.close()
