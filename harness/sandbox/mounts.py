"""The filesystem a local sandbox sees: an allowlist of host paths, never the host root.

A local sandbox (bubblewrap, unshare) starts from an empty tmpfs root and gets
only what a command needs to run:

* read-only: ``/usr`` and the ``/bin``, ``/sbin``, ``/lib*`` entries (merged-usr
  symlinks are recreated as symlinks), a small ``/etc`` subset (no resolver
  configuration: the sandbox has no DNS), the Python installation
  (``sys.base_prefix``, ``sys.prefix``, the site-packages directories), the
  source directory of the installed ``harness`` core package (never ``plugins``)
  (never the repository root: its ``runs/`` folder holds answer keys), and the
  spec's ``ro_binds``;
* read-write: the episode workspace at ``/workspace`` and, when given, the
  agent's home at ``/home/agent``;
* fresh: ``/proc`` (with ``/proc/sys`` read-only), a minimal ``/dev``, a tmpfs ``/tmp``.

:func:`base_mounts` computes the read-only part; backends add the rest.
"""

from __future__ import annotations

import importlib.util
import os
import site
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.sandbox.errors import SandboxError

#: Top-level system entries bound read-only (or recreated as symlinks on merged-usr systems).
SYSTEM_ENTRIES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

#: ``/etc`` entries a command may need.  No resolv.conf, no hosts: there is no network.
ETC_ENTRIES = (
    "passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
    "localtime", "timezone", "alternatives", "ssl", "ca-certificates", "mime.types",
    "os-release", "debian_version", "protocols", "services", "locale.alias",
)

#: Where the model proxy's Unix socket appears inside a sandbox.
PROXY_SOCKET_PATH = "/run/harness/proxy.sock"


@dataclass(frozen=True)
class Mount:
    """One entry of a sandbox's filesystem.

    ``kind``: ``"ro"`` / ``"rw"`` (bind ``src`` at ``dest``), ``"symlink"``
    (``dest`` -> ``src``), ``"tmpfs"``, ``"proc"``, ``"dev"``.  ``mode`` sets the
    permissions of a tmpfs (e.g. ``0o1777``), ``size`` its size in bytes
    (None: the kernel default, half the host's memory).
    """

    kind: str
    dest: str
    src: str | None = None
    mode: int | None = None
    size: int | None = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "dest": self.dest, "src": self.src, "mode": self.mode, "size": self.size}


def package_dir(name: str) -> Path | None:
    """Source directory of the installed top-level package ``name`` (without importing it)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def repository_root() -> Path:
    """The directory that holds the ``harness`` package (a checkout's root for an editable install)."""
    harness_dir = package_dir("harness")
    assert harness_dir is not None  # we are running from it
    return harness_dir.parent


def python_paths() -> list[Path]:
    """Directories of the running Python installation a sandboxed ``python`` needs."""
    candidates = [sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix]
    candidates += site.getsitepackages()
    user_site = site.getusersitepackages()
    if isinstance(user_site, str) and os.path.isdir(user_site):
        candidates.append(user_site)
    candidates.append(os.path.dirname(os.path.realpath(sys.executable)))
    return [Path(p).resolve() for p in candidates if p and os.path.isdir(p)]


def _is_under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def minimal_tree(paths: list[Path]) -> list[Path]:
    """``paths`` without duplicates and without entries inside another entry, shortest first."""
    kept: list[Path] = []
    for p in sorted(set(paths), key=lambda q: (len(q.parts), str(q))):
        if not any(_is_under(p, k) for k in kept):
            kept.append(p)
    return kept


def base_mounts(extra_ro: list[Path] | None = None) -> list[Mount]:
    """Read-only allowlist: system dirs, /etc subset, Python, the ``harness`` core sources, ``extra_ro``.

    Raises :class:`SandboxError` when a Python path would expose the repository
    root (e.g. an interpreter installed in a parent of the checkout).
    """
    mounts: list[Mount] = []
    for entry in SYSTEM_ENTRIES:
        if os.path.islink(entry):
            mounts.append(Mount("symlink", entry, src=os.readlink(entry)))
        elif os.path.isdir(entry):
            mounts.append(Mount("ro", entry, src=entry))
    for name in ETC_ENTRIES:
        path = f"/etc/{name}"
        if os.path.islink(path):
            mounts.append(Mount("symlink", path, src=os.readlink(path)))
        elif os.path.exists(path):
            mounts.append(Mount("ro", path, src=path))

    repo = repository_root()
    system = [Path(e) for e in SYSTEM_ENTRIES if os.path.isdir(e) and not os.path.islink(e)]
    code: list[Path] = []
    for p in python_paths():
        if repo != Path("/") and _is_under(repo, p):
            raise SandboxError(
                f"the Python installation path {p} contains the repository root {repo}; "
                "binding it would expose run folders (answer keys) to the sandbox"
            )
        code.append(p)
    # The core only: plugins (simulators, pool generators) stay out of reach, or an
    # agent could regenerate the sample pool and read off its labels.  Agents that
    # run plugin code inside declare it through AgentInvocation.ro_binds.
    harness_dir = package_dir("harness")
    if harness_dir is not None:
        code.append(harness_dir)
    code += [Path(os.path.abspath(p)) for p in (extra_ro or [])]
    for p in minimal_tree(code):
        if any(_is_under(p, s) for s in system):
            continue
        mounts.append(Mount("ro", str(p), src=str(p)))
    return mounts
