"""Conformance tests every sandbox backend must pass: the isolation properties, each with a positive control.

Fixture contract: override ``backend`` to return your
:class:`harness.contracts.SandboxBackend`; a backend whose ``available()``
says it cannot run here is skipped with its reason.  The areas are separate
classes, so a backend that does not isolate a resource (e.g. one that runs
directly on the host) subclasses only the areas it guarantees:

- :class:`SandboxEgressTests`: a listener on the host's loopback, reachable from
  the host, is refused inside;
- :class:`SandboxDnsTests`: a name the host resolves does not resolve inside;
- :class:`SandboxFilesystemTests`: the workspace is the only writable place whose
  writes reach the host;
- :class:`SandboxTimeoutTests`: a timeout kills the whole process tree, including a
  grandchild that ignores SIGTERM.

Probes run ``python`` inside the sandbox.
"""

from __future__ import annotations

import json
import os
import socket
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from harness.contracts import SandboxBackend, SandboxSpec


def run_probe(sandbox, source: str, timeout: float = 60) -> dict:
    """Run a Python probe inside ``sandbox``; it must print one JSON object as its last line."""
    result = sandbox.exec(["python", "-c", textwrap.dedent(source)], timeout=timeout)
    assert result.returncode == 0, f"probe failed ({result.returncode}): {result.stderr[-2000:]}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def processes_with(token: str) -> list[str]:
    """Host PIDs whose command line contains ``token``."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if token.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                pass
    return found


class _Base:
    @pytest.fixture
    def backend(self) -> SandboxBackend:
        pytest.fail("override the `backend` fixture to return your SandboxBackend instance")

    @pytest.fixture
    def available(self, backend) -> SandboxBackend:
        ok, why = backend.available()
        if not ok:
            pytest.skip(f"{backend.name} backend unavailable here: {why}")
        return backend

    @pytest.fixture
    def workspace(self, tmp_path) -> Path:
        folder = tmp_path / "ws"
        folder.mkdir()
        return folder


class SandboxEgressTests(_Base):
    def test_host_loopback_listener_is_refused_inside(self, available, workspace):
        server = socket.create_server(("127.0.0.1", 0))
        port = server.getsockname()[1]

        def serve():
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return
                conn.sendall(b"hello")
                conn.close()

        threading.Thread(target=serve, daemon=True).start()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=3) as conn:  # positive control
                assert conn.recv(5) == b"hello"
            with available.create(SandboxSpec(workspace=workspace)) as sandbox:
                inside = run_probe(sandbox, f"""
                    import json, socket
                    try:
                        with socket.create_connection(("127.0.0.1", {port}), timeout=3) as s:
                            out = {{"ok": True, "data": s.recv(5).decode()}}
                    except OSError as e:
                        out = {{"ok": False, "error": type(e).__name__}}
                    print(json.dumps(out))
                """)
            assert inside["ok"] is False, inside
        finally:
            server.close()


class SandboxDnsTests(_Base):
    host_name = "pypi.org"

    def test_names_do_not_resolve_inside(self, available, workspace):
        try:
            socket.getaddrinfo(self.host_name, 443)  # positive control
        except OSError:
            pytest.skip("the host itself cannot resolve names here, so there is no positive control")
        with available.create(SandboxSpec(workspace=workspace)) as sandbox:
            inside = run_probe(sandbox, f"""
                import json, socket
                try:
                    socket.getaddrinfo({self.host_name!r}, 443); resolved = True
                except OSError:
                    resolved = False
                print(json.dumps({{"resolved": resolved}}))
            """)
        assert inside["resolved"] is False


class SandboxFilesystemTests(_Base):
    def test_only_the_workspace_reaches_the_host(self, available, workspace):
        name = f"sbx-escape-{uuid.uuid4().hex}"
        targets = [f"/tmp/{name}", f"/home/{name}", f"/etc/{name}", f"/root/{name}", f"/{name}", f"/var/{name}"]
        assert not any(os.path.exists(t) for t in targets)
        with available.create(SandboxSpec(workspace=workspace)) as sandbox:
            run_probe(sandbox, f"""
                import json, os
                out = {{}}
                for p in {targets + ["/workspace/" + name]!r}:
                    try:
                        open(p, "w").write("x"); out[p] = "written"
                    except OSError as e:
                        out[p] = type(e).__name__
                print(json.dumps(out))
            """)
        leaked = [t for t in targets if os.path.exists(t)]
        assert not leaked, f"{leaked} reached the host"
        assert (workspace / name).read_text() == "x"  # positive control: the workspace write did


class SandboxTimeoutTests(_Base):
    timeout = 1.5

    def test_timeout_kills_the_whole_process_tree(self, available, workspace):
        token = f"sbx-tree-{uuid.uuid4().hex}"
        grandchild = (f"import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                      f"open('started', 'w').write('1'); time.sleep(120)  # {token}")
        with available.create(SandboxSpec(workspace=workspace)) as sandbox:
            started = time.monotonic()
            result = sandbox.exec(["sh", "-c", f"python -c \"{grandchild}\" & sleep 120"], timeout=self.timeout)
            elapsed = time.monotonic() - started
        assert result.timed_out is True
        assert self.timeout <= elapsed < self.timeout + 15
        assert (workspace / "started").exists()  # positive control: the grandchild was running
        deadline = time.monotonic() + 10
        while processes_with(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_with(token) == []


class SandboxBackendTests(SandboxEgressTests, SandboxDnsTests, SandboxFilesystemTests, SandboxTimeoutTests):
    """Aggregate conformance suite for :class:`harness.contracts.SandboxBackend`."""
