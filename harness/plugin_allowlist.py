"""Which plugin distributions to load: ``HARNESS_LOAD_PLUGINS``, an allow-list like ``llm``'s
``LLM_LOAD_PLUGINS``.

Unset: every installed distribution's plugins load (entry-point groups ``harness`` and ``harness.commands``).
Set: only the distributions it names, comma-separated (``HARNESS_LOAD_PLUGINS=acme-forecasts,acme-judges``;
empty: none), so one broken third-party plugin can be switched off without uninstalling it.  Names compare
as PEP 503 normalises them (case, ``-``, ``_`` and ``.`` alike).  The harness's own distribution
(:data:`OWN`, the built-in plugins under ``plugins/``: sandbox backends, model providers, the benchmarks)
always loads: without it no run is possible, and it is not third-party code.

Kept apart from :mod:`harness.plugins` (which imports pluggy) so that ``harness --help`` can filter the
command entry points without loading it.
"""

from __future__ import annotations

import os
import re

ENV = "HARNESS_LOAD_PLUGINS"
#: the distribution of the harness and its built-in plugins
OWN = "tsagent-harness"


def normalise(name: str) -> str:
    """A distribution name as PEP 503 compares it: lower case, runs of ``-``, ``_``, ``.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def allowed() -> frozenset[str] | None:
    """The distributions ``HARNESS_LOAD_PLUGINS`` allows (normalised), or None when it is unset (all)."""
    value = os.environ.get(ENV)
    if value is None:
        return None
    return frozenset(normalise(n.strip()) for n in value.split(",") if n.strip())


def loads(distribution: str | None) -> bool:
    """Whether the plugins of ``distribution`` (None: unknown) load under ``HARNESS_LOAD_PLUGINS``."""
    names = allowed()
    if names is None:
        return True
    name = normalise(distribution or "")
    return name == OWN or name in names
