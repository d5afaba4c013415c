"""The ``none`` sandbox backend (priority -1): no isolation, for debugging only.

Commands run directly on the host with the working directory mapped to the
host workspace (``/workspace/x`` -> ``<workspace>/x``, ``/home/agent`` ->
``spec.home``).  The environment is still cleared (only PATH, HOME, LANG,
``spec.env`` and the exec env), the timeout still kills the command's process
group (a descendant that starts its own session escapes it), and with a proxy
socket the bridge runs on the host at ``127.0.0.1:<proxy_port>``.  Never
chosen by ``auto``; only by an explicit ``--sandbox none``.
"""

from __future__ import annotations

from pathlib import Path

from harness.contracts.sandbox import HOME, SandboxBackend, SandboxSpec
from harness.sandbox import bridge
from harness.sandbox.errors import SandboxError
from harness.sandbox.local import Launch, LocalSandbox, limits_enforcement
from harness.sandbox.mounts import Mount


class NoneSandbox(LocalSandbox):
    """Runs commands on the host (see the module docstring)."""

    isolated = False

    def __init__(self, backend: SandboxBackend, spec: SandboxSpec, *, mounts: tuple[Mount, ...] = (),
                 run_as: int | None = None):
        if mounts or run_as is not None:
            raise SandboxError("the none backend cannot add mounts or change uid: it does not isolate")
        super().__init__(backend, spec)
        self.home = Path(spec.home) if spec.home is not None else self.private / "home"
        self.home.mkdir(exist_ok=True)
        self.bridge: bridge.BridgeThread | None = None
        if spec.proxy_socket is not None:
            try:
                sock = bridge.listen_socket("127.0.0.1", int(spec.proxy_port))
            except OSError as exc:
                super().destroy()
                raise SandboxError(f"SandboxSpec.proxy_port: cannot listen on 127.0.0.1:{spec.proxy_port}: {exc}") from exc
            self.bridge = bridge.BridgeThread(str(spec.proxy_socket), sock).start(wait=30)

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = super().environment(extra)
        if env.get("HOME") == HOME:
            env["HOME"] = str(self.home)
        return env

    def _command(self, argv: list[str], env: dict[str, str], cwd: str) -> Launch:
        host_cwd = self.host_path(cwd)
        if not host_cwd.is_dir():
            raise SandboxError(f"cwd {cwd}: not a directory in the workspace")
        return Launch(list(argv), env, cwd=str(host_cwd))

    def destroy(self) -> None:
        if self.bridge is not None:
            self.bridge.stop()
            self.bridge = None
        super().destroy()


class NoneBackend(SandboxBackend):
    """``none``: no isolation at all (explicit opt-in)."""

    name = "none"
    runs_rule_workers = True
    priority = -1

    def available(self) -> tuple[bool, str]:
        return True, "ok"

    def describe(self) -> dict[str, str]:
        return {"backend": self.name, **limits_enforcement(isolated=False)}

    def create(self, spec: SandboxSpec, *, mounts: tuple[Mount, ...] = (), run_as: int | None = None) -> NoneSandbox:
        return NoneSandbox(self, spec, mounts=mounts, run_as=run_as)
