"""numba's compilation cache for the aeon baselines, built once on the host and mounted read-only.

aeon's distance and MiniRocket kernels are numba functions compiled on first
call (``cache=True``).  :func:`ensure_cache` builds the cache once per
(Python, numba, aeon) version by running both baselines on a tiny synthetic
support batch in a subprocess with ``NUMBA_CACHE_DIR`` set, under a file lock,
and returns its directory; each sandbox gets it read-only
(``HARNESS_NUMBA_CACHE``; :func:`tsagent_plugins.agents.classical.solve.use_numba_cache`).
The directory is ``$HARNESS_CACHE_DIR/numba/<versions>`` or
``~/.cache/harness/numba/<versions>``, where ``<versions>`` names Python, numba,
aeon, a hash of where aeon is installed, and a hash of the warm-up code (this
module and :mod:`.learned`) and of the stamps (modification time, size) of
aeon's modules.  Either would otherwise make every episode pay the JIT
again (the solver reports it as ``jit``): a cache warmed by other code may miss
a signature the episodes call, and numba files each function's cache under the
absolute path of its source, so a cache built by another environment (another
virtual environment or checkout sharing ``~/.cache``) is never hit.  The build
time (the JIT an episode would otherwise pay) is written to ``build.json``
beside the cache.  Building a cache removes the caches of the same
environment (same versions and aeon location) built from older warm-up code:
no episode can hit them again.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

STAMP = "build.json"


def cache_dir() -> Path:
    """Where the cache of the installed versions lives."""
    root = Path(os.environ["HARNESS_CACHE_DIR"]) if os.environ.get("HARNESS_CACHE_DIR") else Path.home() / ".cache" / "harness"
    try:
        versions = f"py{sys.version_info.major}{sys.version_info.minor}-numba{metadata.version('numba')}-aeon{metadata.version('aeon')}"
    except metadata.PackageNotFoundError as exc:
        raise RuntimeError(f"dtw-1nn and minirocket-ridge need aeon: pip install -e '.[baselines]' ({exc})") from None
    here = Path(__file__).resolve().parent
    code = hashlib.sha256(b"".join((here / name).read_bytes() for name in ("numba_cache.py", "learned.py")))
    spec = importlib.util.find_spec("aeon")  # locates the package without importing it
    package = Path(spec.submodule_search_locations[0]).resolve() if spec else None
    where = hashlib.sha256(str(package or "").encode())
    code.update(source_stamps(package).encode() if package else b"")
    return root / "numba" / f"{versions}-{where.hexdigest()[:8]}-{code.hexdigest()[:10]}"


def source_stamps(package: Path) -> str:
    """``(path, mtime, size)`` of every module of ``package``, the stamp numba's cache index checks per source
    file: aeon reinstalled at the same path (a recreated virtual environment) gets new modification times,
    and every cached function would miss, each episode compiling again in its read-only copy."""
    stamps = []
    for folder, _, files in os.walk(package):
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(folder, name))
                stamps.append(f"{folder}/{name}:{st.st_mtime_ns}:{st.st_size}")
    return "\n".join(sorted(stamps))


def superseded(target: Path) -> list[Path]:
    """Caches of ``target``'s environment (its name up to the code hash) built from other warm-up code."""
    prefix = target.name.rsplit("-", 1)[0] + "-"
    return sorted(p for p in target.parent.glob(f"{prefix}*")
                  if p.is_dir() and p.name != target.name and p.name.count("-") == target.name.count("-"))


def ensure_cache() -> Path:
    """The cache directory, built first if absent (RuntimeError with the build's stderr if it fails)."""
    target = cache_dir()
    if (target / STAMP).exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / STAMP).exists():
            started = time.perf_counter()
            env = {**os.environ, "NUMBA_CACHE_DIR": str(target), "NUMBA_NUM_THREADS": "1"}
            done = subprocess.run([sys.executable, "-m", "tsagent_plugins.agents.classical.numba_cache"], env=env,
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"building the numba cache in {target} failed: {done.stderr[-2000:]}")
            (target / STAMP).write_text(json.dumps({"seconds": round(time.perf_counter() - started, 2)}))
            for old in superseded(target):
                shutil.rmtree(old, ignore_errors=True)
                (old.parent / f"{old.name}.lock").unlink(missing_ok=True)
    return target


def warm() -> None:
    """Compile every numba function the baselines call, with the argument types they use."""
    import warnings

    import numpy as np

    from tsagent_plugins.agents.classical import learned

    rng = np.random.default_rng(0)
    for channels in (1, 3):
        xs = [rng.normal(size=(40, channels)) for _ in range(6)]
        learned.dtw_distance(xs[0], xs[1])
        learned.dtw_distance(xs[0], xs[1][:30])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = learned.fit_minirocket(xs, [0, 1, 2, 0, 1, 2])
            learned.predict_minirocket(model, xs[:2])


if __name__ == "__main__":
    from tsagent_plugins.agents.classical.learned import hide_torch

    hide_torch()  # as in the solver, so the cache holds what an episode loads
    warm()
