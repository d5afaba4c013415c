"""Base image for machines with no image registry: debootstrap + ``docker import``.

A Debian trixie ``minbase`` root filesystem carries Python 3.13 and Node.js 20
from Debian itself, plus the runtime's system tools (tmux,
asciinema, procps) and ripgrep.  The rootfs tarball is cached under
``~/.cache/harness/bootstrap/<hash12>/`` and imported as
``harness-base:<hash12>``, where the hash covers everything that decides the
rootfs' content (suite, variant, architecture, packages), so an unchanged spec
is never bootstrapped twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from harness.errors import HarnessError
from harness.image.cache import cache_dir

#: Bumped when the way the rootfs is made changes (part of the hash).
BOOTSTRAP_FORMAT = 1
DEFAULT_MIRROR = "http://deb.debian.org/debian"
BASE_REPOSITORY = "harness-base"
#: Debian packages of the runtime base (the Python venv module comes with python3-venv).
BASE_PACKAGES = (
    "asciinema", "ca-certificates", "nodejs", "procps", "python3", "python3-venv", "ripgrep", "tmux",
)


class BootstrapError(HarnessError):
    """Building the base rootfs failed; the message says which step and how to fix it."""


def host_dpkg_arch() -> str:
    """Debian architecture name of this machine (amd64, arm64, ...)."""
    machine = os.uname().machine
    return {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "armhf", "ppc64le": "ppc64el",
            "s390x": "s390x", "riscv64": "riscv64"}.get(machine, machine)


@dataclass(frozen=True)
class BootstrapSpec:
    """What goes into the bootstrapped rootfs.  ``mirror`` does not change the content (not hashed)."""

    suite: str = "trixie"
    variant: str = "minbase"
    packages: tuple[str, ...] = BASE_PACKAGES
    arch: str = field(default_factory=host_dpkg_arch)
    mirror: str = field(default_factory=lambda: os.environ.get("HARNESS_DEBIAN_MIRROR", DEFAULT_MIRROR))

    def digest(self) -> str:
        """SHA-256 hex of the content-defining fields."""
        blob = json.dumps({"format": BOOTSTRAP_FORMAT, "suite": self.suite, "variant": self.variant,
                           "packages": sorted(set(self.packages)), "arch": self.arch}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    @property
    def tag(self) -> str:
        """``harness-base:<hash12>``."""
        return f"{BASE_REPOSITORY}:{self.digest()[:12]}"


#: ``docker import --change`` instructions applied to the imported rootfs.
IMPORT_CHANGES = (
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    "LABEL harness.image=base",
    'CMD ["/bin/bash"]',
)


def rootfs_tarball(spec: BootstrapSpec, log: Callable[[str], None] = print) -> Path:
    """The cached rootfs tarball for ``spec``, running debootstrap if it is not cached.

    Raises :class:`BootstrapError` when debootstrap is missing, not run as root, or fails
    (the message holds the tail of its log, kept at ``<cache>/debootstrap.log``).
    """
    out = cache_dir("bootstrap", spec.digest()[:12])
    tarball = out / "rootfs.tar"
    if tarball.exists():
        return tarball
    if shutil.which("debootstrap") is None:
        raise BootstrapError("debootstrap is not installed: apt-get install debootstrap "
                             "(scripts/docker-engine.sh installs it), or pass --base IMAGE")
    if os.geteuid() != 0:
        raise BootstrapError("debootstrap needs root: run `harness image build --bootstrap` as root, or pass --base IMAGE")
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)
    rootfs = work / "rootfs"
    rootfs.mkdir(parents=True)
    logfile = out / "debootstrap.log"
    cmd = ["debootstrap", f"--variant={spec.variant}", f"--arch={spec.arch}",
           f"--include={','.join(sorted(set(spec.packages)))}", spec.suite, str(rootfs), spec.mirror]
    log(f"bootstrapping Debian {spec.suite} ({spec.variant}, {spec.arch}) from {spec.mirror}")
    started = time.monotonic()
    with open(logfile, "w") as fh:
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        tail = "".join(logfile.read_text(errors="replace").splitlines(keepends=True)[-15:])
        shutil.rmtree(work, ignore_errors=True)
        raise BootstrapError(f"debootstrap exited with {proc.returncode} (log: {logfile}):\n{tail}")
    _trim(rootfs, spec)
    partial = out / "rootfs.tar.partial"
    _pack(rootfs, partial)
    partial.rename(tarball)
    shutil.rmtree(work, ignore_errors=True)
    log(f"rootfs ready in {time.monotonic() - started:.0f} s: {tarball} ({tarball.stat().st_size / 2**20:.0f} MiB)")
    return tarball


def _trim(rootfs: Path, spec: BootstrapSpec) -> None:
    """Drop package caches and lists; leave an apt source so the image stays inspectable."""
    for sub in ("var/cache/apt/archives", "var/lib/apt/lists"):
        d = rootfs / sub
        if d.is_dir():
            for entry in d.iterdir():
                if entry.is_file() and entry.name != "lock":
                    entry.unlink()
    for pattern in ("var/cache/apt/*.bin", "var/log/*.log", "var/log/apt/*"):
        for p in rootfs.glob(pattern):
            if p.is_file():
                p.unlink()
    (rootfs / "etc/apt/sources.list").write_text(f"deb {DEFAULT_MIRROR} {spec.suite} main\n")


def _pack(rootfs: Path, dest: Path) -> None:
    """Tar ``rootfs`` with numeric owners, leaving out the contents of /dev, /proc and /sys."""
    skip = {"dev", "proc", "sys"}

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        parts = Path(info.name).parts
        if len(parts) >= 3 and parts[0] == "." and parts[1] in skip:
            return None
        info.uname = info.gname = ""
        return info

    with tarfile.open(dest, "w") as tar:
        tar.add(str(rootfs), arcname=".", filter=keep)


def ensure_base_image(client, spec: BootstrapSpec | None = None, log: Callable[[str], None] = print) -> str:
    """The tag of the bootstrapped base image for ``spec``, importing (and bootstrapping) if needed.

    ``client``: a ``docker.DockerClient``.  Returns ``harness-base:<hash12>``.
    """
    import docker.errors

    spec = spec or BootstrapSpec()
    tag = spec.tag
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    tarball = rootfs_tarball(spec, log)
    repo, _, version = tag.partition(":")
    log(f"importing {tarball} as {tag}")
    client.api.import_image_from_file(str(tarball), repository=repo, tag=version, changes=list(IMPORT_CHANGES))
    client.images.get(tag)  # raises if the import did not produce it
    return tag
