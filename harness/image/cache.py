"""Where image-build inputs are cached: ``$HARNESS_CACHE_DIR`` or ``~/.cache/harness``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$HARNESS_CACHE_DIR``, else ``$XDG_CACHE_HOME/harness``, else ``~/.cache/harness``."""
    if os.environ.get("HARNESS_CACHE_DIR"):
        return Path(os.environ["HARNESS_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "harness"


def cache_dir(*parts: str) -> Path:
    """``cache_root()/parts...``, created if missing."""
    path = cache_root().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
