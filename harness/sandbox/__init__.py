"""Sandbox backends and how one is chosen.

Backends register through the ``register_sandbox_backends`` hook (the local
ones in ``plugins/sandboxes/local.py``: ``bubblewrap`` priority 20,
``unshare`` 10, ``none`` -1).  :func:`choose_backend` picks one by name or, for
``"auto"``, the highest-priority available backend with priority >= 0 (so
``none``, which does not isolate, is only used when named).
"""

from __future__ import annotations

from harness.contracts.sandbox import SandboxBackend
from harness.sandbox.errors import SandboxError, SandboxUnavailable, SpecError

__all__ = ["SandboxError", "SandboxUnavailable", "SpecError", "choose_backend"]


def _available(backend: SandboxBackend) -> tuple[bool, str]:
    try:
        return backend.available()
    except Exception as exc:  # noqa: BLE001 - a broken probe means "unavailable", with the reason
        return False, f"availability probe failed: {type(exc).__name__}: {exc}"


def choose_backend(name: str = "auto", needs_image: bool = False) -> SandboxBackend:
    """The sandbox backend to use.

    ``"auto"``: the available backend with the highest priority >= 0; with ``needs_image`` (an agent whose
    tools exist only in the agent runtime image, e.g. the CLI agents), only backends that run that image:
    a local backend would start an episode that can only fail.
    Any other value: the backend of that name.  Raises
    :class:`SandboxUnavailable` naming the backend(s) and why each cannot run here (before any run folder).
    """
    from harness.plugins import plugins

    registry = plugins().registry("sandbox_backend")
    if name == "auto":
        reasons = []
        for reg in sorted(registry.values(), key=lambda reg: (-reg.obj.priority, reg.name)):
            backend = reg.obj
            if backend.priority < 0 or (needs_image and not backend.runs_images):
                continue
            ok, why = _available(backend)
            if ok:
                return backend
            reasons.append(f"{backend.name}: {why}")
        if needs_image:
            detail = "; ".join(reasons) or "no image backend is registered"
            raise SandboxUnavailable(
                f"this agent runs only in the agent runtime image and no image sandbox is available ({detail}); "
                "start a Docker engine and build the image (`harness image build`)")
        detail = "; ".join(reasons) or "no isolating backend is registered"
        raise SandboxUnavailable(
            f"no sandbox backend is available ({detail}); install bubblewrap, or pass --sandbox none "
            "to run without isolation"
        )
    if name not in registry:
        known = ", ".join(sorted(registry)) or "none registered"
        raise SandboxUnavailable(f"unknown sandbox backend {name!r} (known: {known})")
    backend = registry[name].obj
    ok, why = _available(backend)
    if not ok:
        raise SandboxUnavailable(f"sandbox backend {name!r} is unavailable: {why}")
    return backend
