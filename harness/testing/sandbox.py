"""Conformance tests every sandbox backend must pass: the isolation properties, each with a positive control.

Fixture contract: override ``backend`` to return your
:class:`harness.contracts.SandboxBackend`; a backend whose ``available()``
says it cannot run here is skipped with its reason.  The areas are separate
classes, so a backend that does not isolate a resource (e.g. one that runs
directly on the host) subclasses only the areas it guarantees:

- :class:`SandboxEgressTests`: a listener on the host's loopback, reachable from
  the host, is refused inside; loopback is the only interface and works inside; a
  host the machine routes to (in a network namespace the test creates; needs root
  and iproute2) is unreachable inside;
- :class:`SandboxDnsTests`: names the host resolves do not resolve inside,
  ``localhost`` does, and the host's nameservers cannot be reached;
- :class:`SandboxFilesystemTests`: the workspace is the only writable place whose
  writes reach the host, and the only one that outlives the sandbox; host files
  outside it are not visible;
- :class:`SandboxEnvironmentTests`: the host's environment (e.g. a provider key) is
  in no process inside, while the spec's and the command's variables are;
- :class:`SandboxTimeoutTests`: a timeout kills the whole process tree, including a
  grandchild that ignores SIGTERM and leaves the session (``grandchild_leaves_session
  = False`` for a backend that runs on the host, where such a process escapes by design).

Probes run ``python`` inside the sandbox.  Errno values are Linux's.
"""

from __future__ import annotations

import errno
import ipaddress
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from harness.contracts import SandboxBackend, SandboxSpec


def run_probe(sandbox, source: str, timeout: float = 60, env: dict[str, str] | None = None) -> dict:
    """Run a Python probe inside ``sandbox``; it must print one JSON object as its last line."""
    result = sandbox.exec(["python", "-c", textwrap.dedent(source)], timeout=timeout, env=env)
    assert result.returncode == 0, f"probe failed ({result.returncode}): {result.stderr[-2000:]}"
    return json.loads(result.stdout.strip().splitlines()[-1])


#: Probe printing the sandbox's own environment and every visible process's ``/proc/<pid>/environ``.
ENVIRON_PROBE = """
import json, os
environs = {}
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            environs[pid] = open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace")
        except OSError as e:
            environs[pid] = type(e).__name__
print(json.dumps({"env": dict(os.environ), "environs": environs}))
"""


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


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=20)


CONNECT_PROBE = """
import json, socket
try:
    with socket.create_connection(({host!r}, {port}), timeout=3) as s:
        out = {{"ok": True, "data": s.recv(5).decode()}}
except OSError as e:
    out = {{"ok": False, "errno": e.errno, "error": type(e).__name__}}
print(json.dumps(out))
"""


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
    """Nothing outside the sandbox is reachable; loopback inside works.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``backend`` (required, function scope): your :class:`harness.contracts.SandboxBackend` instance;
    - ``available`` (provided, function scope): ``backend`` when its ``available()`` says it runs here,
      else the test is skipped with its reason;
    - ``workspace`` (provided, function scope): an empty host folder mounted as the sandbox's workspace;
    - ``routed_host`` (provided, function scope): ``(address, port)`` of a listener in a network namespace
      the host routes to (skipped without root and iproute2).
    """

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
                inside = run_probe(sandbox, CONNECT_PROBE.format(host="127.0.0.1", port=port))
            assert inside["ok"] is False and inside["errno"] == errno.ECONNREFUSED, inside
        finally:
            server.close()

    def test_loopback_is_the_only_interface_and_works_inside(self, available, workspace):
        with available.create(SandboxSpec(workspace=workspace)) as sandbox:
            inside = run_probe(sandbox, """
                import json, socket
                srv = socket.create_server(("127.0.0.1", 0))
                c = socket.create_connection(srv.getsockname(), timeout=3)
                a, _ = srv.accept(); a.sendall(b"loop")
                print(json.dumps({"data": c.recv(4).decode(), "ifaces": sorted(n for _, n in socket.if_nameindex())}))
            """)
        # positive control: a listener inside the sandbox is reachable from inside
        assert inside == {"data": "loop", "ifaces": ["lo"]}

    @pytest.fixture
    def routed_host(self):
        """(address, port) of a listener in a network namespace the host reaches over a veth pair (/30)."""
        if os.geteuid() != 0 or shutil.which("ip") is None:
            pytest.skip("needs root and iproute2 to create a network namespace")
        tag = uuid.uuid4().hex[:6]
        ns, host_if, ns_if = f"hsbx-{tag}", f"hv{tag}a", f"hv{tag}b"
        routes = _ip("-4", "route").stdout
        for _ in range(50):  # a /30 in 198.18.0.0/15 (benchmarking range) not routed on this host
            net = ipaddress.ip_network(f"198.18.{random.randrange(256)}.{4 * random.randrange(64)}/30")
            if str(net.network_address)[:-2] not in routes:
                break
        host_ip, ns_ip = str(net.network_address + 1), str(net.network_address + 2)
        server = None
        try:
            _ip("netns", "add", ns)
            _ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
            _ip("link", "set", ns_if, "netns", ns)
            _ip("addr", "add", f"{host_ip}/30", "dev", host_if)
            _ip("link", "set", host_if, "up")
            _ip("netns", "exec", ns, "ip", "addr", "add", f"{ns_ip}/30", "dev", ns_if)
            _ip("netns", "exec", ns, "ip", "link", "set", ns_if, "up")
            _ip("netns", "exec", ns, "ip", "link", "set", "lo", "up")
            serve = (
                "import socket,sys\n"
                f"s=socket.create_server(('{ns_ip}',0));print(s.getsockname()[1],flush=True)\n"
                "while True:\n c,_=s.accept();c.sendall(b'hello');c.close()\n"
            )
            server = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", serve],
                                      stdout=subprocess.PIPE, text=True)
            yield ns_ip, int(server.stdout.readline())
        finally:
            if server is not None:
                server.kill()
                server.wait()
            _ip("netns", "del", ns, check=False)
            _ip("link", "del", host_if, check=False)

    def test_a_host_the_machine_routes_to_is_unreachable_inside(self, available, workspace, routed_host):
        address, port = routed_host
        with socket.create_connection((address, port), timeout=5) as conn:  # positive control over the veth pair
            assert conn.recv(5) == b"hello"
        with available.create(SandboxSpec(workspace=workspace)) as sandbox:
            inside = run_probe(sandbox, CONNECT_PROBE.format(host=address, port=port))
        assert inside["ok"] is False and inside["errno"] == errno.ENETUNREACH, inside  # no route at all


class SandboxDnsTests(_Base):
    """Names the host resolves do not resolve inside; ``localhost`` does; the host's nameservers are
    unreachable.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``backend`` (required, function scope): your :class:`harness.contracts.SandboxBackend` instance;
    - ``available`` (provided, function scope): ``backend`` when its ``available()`` says it runs here,
      else the test is skipped with its reason;
    - ``workspace`` (provided, function scope): an empty host folder mounted as the sandbox's workspace.
    """

    host_names = ("pypi.org", "deb.debian.org")

    def test_names_do_not_resolve_inside(self, available, workspace):
        resolved = []
        for name in self.host_names:
            try:
                socket.getaddrinfo(name, 443)  # positive control
                resolved.append(name)
            except OSError:
                pass
        if not resolved:
            pytest.skip("the host itself cannot resolve names here, so there is no positive control")
        nameservers = []
        if os.path.exists("/etc/resolv.conf"):
            nameservers = [line.split()[1] for line in Path("/etc/resolv.conf").read_text().splitlines()
                           if line.startswith("nameserver") and ":" not in line.split()[1]]
        with available.create(SandboxSpec(workspace=workspace)) as sandbox:
            inside = run_probe(sandbox, f"""
                import json, socket
                out = {{"resolved": [], "localhost": None, "udp_errnos": []}}
                for name in {resolved!r}:
                    try:
                        socket.getaddrinfo(name, 443); out["resolved"].append(name)
                    except OSError:
                        pass
                try:
                    out["localhost"] = socket.getaddrinfo("localhost", 80)[0][4][0]
                except OSError as e:
                    out["localhost"] = type(e).__name__
                for ns in {nameservers!r}:
                    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                    try:
                        s.sendto(b"\\0" * 12, (ns, 53)); out["udp_errnos"].append(0)
                    except OSError as e:
                        out["udp_errnos"].append(e.errno)
                print(json.dumps(out))
            """)
        assert inside["resolved"] == [], inside
        assert inside["localhost"] in ("127.0.0.1", "::1"), inside  # the resolver itself works inside
        assert inside["udp_errnos"] == [errno.ENETUNREACH] * len(nameservers), inside


class SandboxFilesystemTests(_Base):
    """Only the workspace is shared with the host and outlives the sandbox.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``backend`` (required, function scope): your :class:`harness.contracts.SandboxBackend` instance;
    - ``available`` (provided, function scope): ``backend`` when its ``available()`` says it runs here,
      else the test is skipped with its reason;
    - ``workspace`` (provided, function scope): an empty host folder mounted as the sandbox's workspace.
    """

    def test_only_the_workspace_reaches_the_host(self, available, workspace):
        name = f"sbx-escape-{uuid.uuid4().hex}"
        targets = [f"/tmp/{name}", f"/home/{name}", f"/etc/{name}", f"/root/{name}", f"/{name}", f"/var/{name}"]
        assert not any(os.path.exists(t) for t in targets)
        with available.create(SandboxSpec(workspace=workspace)) as sandbox:
            inside = run_probe(sandbox, f"""
                import json, os
                out = {{}}
                for p in {targets + ["/workspace/" + name]!r}:
                    try:
                        os.makedirs(os.path.dirname(p), exist_ok=True)
                        open(p, "w").write("x"); out[p] = "written"
                    except OSError as e:
                        out[p] = type(e).__name__
                print(json.dumps(out))
            """)
            again = sandbox.exec(["cat", f"/workspace/{name}"])
        assert inside[f"/tmp/{name}"] == "written"  # the sandbox could write there ...
        leaked = [t for t in targets if os.path.exists(t)]
        assert not leaked, f"{leaked} reached the host"  # ... but nothing reached the host
        assert (workspace / name).read_text() == "x"  # positive control: the workspace write did
        assert again.stdout == "x"  # and a later command in the same sandbox sees it

    def test_only_the_workspace_outlives_the_sandbox(self, available, workspace):
        name = f"sbx-state-{uuid.uuid4().hex}"
        with available.create(SandboxSpec(workspace=workspace)) as first:
            r = first.exec(["sh", "-c", f"echo keep > /workspace/{name}; echo gone > /tmp/{name}; cat /tmp/{name}"])
        assert r.stdout == "gone\n"  # positive control: the file existed
        with available.create(SandboxSpec(workspace=workspace)) as second:
            r = second.exec(["sh", "-c", f"cat /workspace/{name}; test -e /tmp/{name} && echo survived || echo absent"])
        assert r.stdout == "keep\nabsent\n"

    def test_host_files_outside_the_workspace_are_not_visible(self, available, workspace, tmp_path):
        key = tmp_path / "runs" / "r1" / "ep0" / "key" / "answers.json"
        heldout = tmp_path / "heldout" / "sample_000.parquet"
        for f in (key, heldout):
            f.parent.mkdir(parents=True)
            f.write_text("secret-label")
        assert key.read_text() == heldout.read_text() == "secret-label"  # positive control on the host
        paths = [str(key), str(heldout), str(key.parent), str(heldout.parent)]
        with available.create(SandboxSpec(workspace=workspace)) as sandbox:
            inside = run_probe(sandbox, f"""
                import json, os
                out = {{}}
                for p in {paths!r}:
                    try:
                        out[p] = open(p).read() if os.path.isfile(p) else os.listdir(p)
                    except OSError as e:
                        out[p] = type(e).__name__
                print(json.dumps(out))
            """)
        assert inside == {p: "FileNotFoundError" for p in paths}, inside


class SandboxEnvironmentTests(_Base):
    """The host's environment reaches no process inside; the spec's and the command's variables do.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``backend`` (required, function scope): your :class:`harness.contracts.SandboxBackend` instance;
    - ``available`` (provided, function scope): ``backend`` when its ``available()`` says it runs here,
      else the test is skipped with its reason;
    - ``workspace`` (provided, function scope): an empty host folder mounted as the sandbox's workspace.
    """

    def test_host_environment_is_in_no_process_inside(self, available, workspace, monkeypatch):
        canary = f"sk-canary-{uuid.uuid4().hex}"
        monkeypatch.setenv("HARNESS_TEST_CANARY_KEY", canary)
        monkeypatch.setenv("ANTHROPIC_API_KEY", canary)
        host = subprocess.run(["env"], check=True, capture_output=True, text=True).stdout  # positive control
        assert canary in host
        spec = SandboxSpec(workspace=workspace, env={"SPEC_VAR": "from-spec"})
        with available.create(spec) as sandbox:
            inside = run_probe(sandbox, ENVIRON_PROBE, env={"EXEC_VAR": "from-exec"})
        # positive control: the variables the harness passes do reach the sandbox
        assert inside["env"]["SPEC_VAR"] == "from-spec" and inside["env"]["EXEC_VAR"] == "from-exec"
        assert canary not in json.dumps(inside["env"]) and "HARNESS_TEST_CANARY_KEY" not in inside["env"]
        for pid, environ in inside["environs"].items():
            assert canary not in environ and "HARNESS_TEST_CANARY_KEY" not in environ, pid


class SandboxTimeoutTests(_Base):
    """A timeout kills the whole process tree (``grandchild_leaves_session``: see the module).

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``backend`` (required, function scope): your :class:`harness.contracts.SandboxBackend` instance;
    - ``available`` (provided, function scope): ``backend`` when its ``available()`` says it runs here,
      else the test is skipped with its reason;
    - ``workspace`` (provided, function scope): an empty host folder mounted as the sandbox's workspace.
    """

    timeout = 1.5
    grandchild_leaves_session = True

    def test_timeout_kills_the_whole_process_tree(self, available, workspace):
        token = f"sbx-tree-{uuid.uuid4().hex}"
        leave = "os.setsid(); " if self.grandchild_leaves_session else ""
        grandchild = (f"import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); {leave}"
                      f"open('started', 'w').write('1'); time.sleep(120)  # {token}")
        with available.create(SandboxSpec(workspace=workspace)) as sandbox:
            started = time.monotonic()
            result = sandbox.exec(["sh", "-c", f"python -c \"{grandchild}\" & sleep 120"], timeout=self.timeout)
            elapsed = time.monotonic() - started
        assert result.timed_out is True and result.returncode is None
        assert self.timeout <= elapsed < self.timeout + 15
        assert (workspace / "started").exists()  # positive control: the grandchild was running
        deadline = time.monotonic() + 10
        while processes_with(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_with(token) == []


class SandboxBackendTests(SandboxEgressTests, SandboxDnsTests, SandboxFilesystemTests, SandboxEnvironmentTests,
                          SandboxTimeoutTests):
    """Aggregate conformance suite for :class:`harness.contracts.SandboxBackend`: every area above.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``backend`` (required, function scope): your :class:`harness.contracts.SandboxBackend` instance;
    - ``available`` (provided, function scope): ``backend`` when its ``available()`` says it runs here,
      else the test is skipped with its reason;
    - ``workspace`` (provided, function scope): an empty host folder mounted as the sandbox's workspace;
    - ``routed_host`` (provided, function scope): ``(address, port)`` of a listener in a network namespace
      the host routes to (skipped without root and iproute2).
    """
