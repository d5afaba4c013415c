"""Isolation of the local sandbox backends, each probe with a positive control.

Every test runs on bubblewrap and unshare (skipped, with the reason, only when
the backend's ``available()`` says it cannot run here).  A positive control
shows the same probe succeeds on the host, so a failure inside is the
sandbox's doing.
"""

from __future__ import annotations

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
from tests.support.sandbox import ISOLATING, get_backend, run_probe

from harness.contracts.sandbox import SandboxSpec
from harness.sandbox.mounts import repository_root
from tests.support.paths import REPO


@pytest.fixture(params=ISOLATING)
def backend(request):
    return get_backend(request.param)


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def _listener(host: str = "127.0.0.1") -> tuple[socket.socket, threading.Thread]:
    srv = socket.create_server((host, 0))

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conn.sendall(b"hello")
            conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return srv, t


CONNECT_PROBE = """
import json, socket, sys
host, port = sys.argv[1], int(sys.argv[2])
try:
    with socket.create_connection((host, port), timeout=3) as s:
        out = {"ok": True, "data": s.recv(5).decode()}
except OSError as e:
    out = {"ok": False, "errno": e.errno, "error": type(e).__name__}
print(json.dumps(out))
"""


def _connect_inside(sandbox, host: str, port: int) -> dict:
    r = sandbox.exec(["python", "-c", CONNECT_PROBE, host, str(port)], timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def _processes_with(token: str) -> list[str]:
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


def _wait_gone(token: str, seconds: float = 5.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while _processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _processes_with(token)


def test_host_loopback_listener_is_unreachable(backend, workspace):
    srv, _ = _listener()
    port = srv.getsockname()[1]
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3) as s:  # positive control
            assert s.recv(5) == b"hello"
        with backend.create(SandboxSpec(workspace=workspace)) as sb:
            inside = _connect_inside(sb, "127.0.0.1", port)
            assert inside["ok"] is False and inside["error"] == "ConnectionRefusedError", inside
            # loopback itself is up inside: a listener in the sandbox is reachable from the sandbox
            own = run_probe(sb, """
                import json, socket
                srv = socket.create_server(("127.0.0.1", 0))
                c = socket.create_connection(srv.getsockname(), timeout=3)
                a, _ = srv.accept(); a.sendall(b"loop")
                print(json.dumps({"data": c.recv(4).decode(),
                                  "ifaces": [l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]]}))
            """)
            assert own == {"data": "loop", "ifaces": ["lo"]}
    finally:
        srv.close()


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=20)


@pytest.fixture
def netns_host():
    """A listener on a host inside a network namespace, reachable from the host over a veth pair (/30)."""
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
        port = int(server.stdout.readline())
        yield ns_ip, port
    finally:
        if server is not None:
            server.kill()
            server.wait()
        _ip("netns", "del", ns, check=False)
        _ip("link", "del", host_if, check=False)


def test_host_in_another_network_namespace_is_unreachable(backend, workspace, netns_host):
    ip, port = netns_host
    with socket.create_connection((ip, port), timeout=5) as s:  # positive control over the veth pair
        assert s.recv(5) == b"hello"
    with backend.create(SandboxSpec(workspace=workspace)) as sb:
        inside = _connect_inside(sb, ip, port)
    assert inside["ok"] is False and inside["errno"] == 101, inside  # ENETUNREACH: no route at all


def test_dns_resolution_fails_inside(backend, workspace):
    name = "pypi.org"
    try:
        socket.getaddrinfo(name, 443)  # positive control
    except OSError:
        pytest.skip("the host itself cannot resolve names here, so there is no positive control")
    nameservers = [l.split()[1] for l in Path("/etc/resolv.conf").read_text().splitlines()
                   if l.startswith("nameserver") and ":" not in l.split()[1]]
    with backend.create(SandboxSpec(workspace=workspace)) as sb:
        inside = run_probe(sb, f"""
            import json, os, socket
            out = {{"resolv_conf": os.path.exists("/etc/resolv.conf")}}
            try:
                socket.getaddrinfo({name!r}, 443); out["resolved"] = True
            except socket.gaierror as e:
                out["resolved"] = False
            errs = []
            for ns in {nameservers!r}:
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                try:
                    s.sendto(b"\\0" * 12, (ns, 53)); errs.append(0)
                except OSError as e:
                    errs.append(e.errno)
            out["udp_errnos"] = errs
            print(json.dumps(out))
        """)
    assert inside["resolved"] is False
    assert inside["resolv_conf"] is False
    assert all(e == 101 for e in inside["udp_errnos"]), inside


def test_answer_keys_heldout_and_repository_are_not_visible(backend, tmp_path, workspace):
    key = tmp_path / "runs" / "r1" / "ep0" / "key" / "answers.json"
    heldout = tmp_path / "heldout" / "sample_000.parquet"
    for f in (key, heldout):
        f.parent.mkdir(parents=True)
        f.write_text("secret-label")
    assert key.read_text() == heldout.read_text() == "secret-label"  # positive control on the host
    repo = repository_root()
    host_only = "/work/shared" if os.path.isdir("/work/shared") else str(tmp_path)
    with backend.create(SandboxSpec(workspace=workspace)) as sb:
        inside = run_probe(sb, f"""
            import json, os
            out = {{}}
            for p in {[str(key), str(heldout), str(key.parent), str(heldout.parent), host_only]!r}:
                try:
                    out[p] = open(p).read() if os.path.isfile(p) else os.listdir(p)
                except OSError as e:
                    out[p] = type(e).__name__
            out["repo"] = sorted(os.listdir({str(repo)!r}))
            print(json.dumps(out))
        """)
    for p in (key, heldout, key.parent, heldout.parent):
        assert inside[str(p)] == "FileNotFoundError", inside
    assert inside[host_only] == "FileNotFoundError"
    allowed = {"harness", "plugins"}
    prefix = Path(sys.prefix).resolve()
    if prefix.is_relative_to(repo):  # the interpreter's own environment (e.g. a .venv in the checkout) is bound
        allowed.add(prefix.relative_to(repo).parts[0])  # read-only so that Python runs; it holds no answer key
    assert set(inside["repo"]) <= allowed, inside["repo"]


def test_writes_outside_workspace_do_not_survive(backend, workspace):
    name = f"sbx-escape-{uuid.uuid4().hex}"
    targets = [f"/tmp/{name}", f"/home/{name}", f"/etc/{name}", f"/root/{name}", f"/{name}", f"/var/{name}"]
    for t in targets:
        assert not os.path.exists(t)
    with backend.create(SandboxSpec(workspace=workspace)) as sb:
        inside = run_probe(sb, f"""
            import json, os, sys
            out = {{}}
            for p in {targets + ["/workspace/" + name, sys.prefix + "/" + name, "/usr/" + name]!r}:
                try:
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    open(p, "w").write("x"); out[p] = "written"
                except OSError as e:
                    out[p] = type(e).__name__
            print(json.dumps(out))
        """)
        again = sb.exec(["cat", f"/workspace/{name}"])
    assert inside[f"/tmp/{name}"] == "written"  # the sandbox could write there ...
    for t in targets:
        assert not os.path.exists(t), f"{t} leaked to the host"  # ... but nothing reached the host
    assert (workspace / name).read_text() == "x"
    assert again.stdout == "x"
    assert inside[f"{sys.prefix}/{name}"] != "written" and inside[f"/usr/{name}"] != "written"
    assert not os.path.exists(f"{sys.prefix}/{name}") and not os.path.exists(f"/usr/{name}")


def test_environment_has_no_host_variables(backend, workspace, tmp_path, monkeypatch):
    canary = f"sk-canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("HARNESS_TEST_CANARY_KEY", canary)
    host = subprocess.run(["env"], check=True, capture_output=True, text=True).stdout  # positive control
    assert canary in host
    proxy = socket.socket(socket.AF_UNIX)
    proxy.bind(str(tmp_path / "p.sock"))
    proxy.listen()
    probe = """
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
    try:
        for spec in (SandboxSpec(workspace=workspace, env={"SPEC_VAR": "1"}),
                     SandboxSpec(workspace=workspace, env={"SPEC_VAR": "1"}, proxy_socket=tmp_path / "p.sock")):
            with backend.create(spec) as sb:
                inside = run_probe(sb, probe, env={"EXEC_VAR": "2"})
            assert set(inside["env"]) - {"PWD", "SHLVL", "_", "LC_CTYPE"} == {"PATH", "HOME", "LANG", "SPEC_VAR", "EXEC_VAR"}
            # PID 1 (the launcher) was started with an empty environment (bwrap adds PWD)
            assert {v.split("=")[0] for v in inside["environs"]["1"].split("\0") if v} <= {"PWD"}
            for pid, environ in inside["environs"].items():
                assert canary not in environ and "HARNESS_TEST_CANARY_KEY" not in environ, pid
    finally:
        proxy.close()


def test_proc_sys_capabilities_and_user_namespaces_are_locked(backend, workspace):
    assert os.geteuid() != 0 or os.access("/proc/sys/kernel/core_pattern", os.W_OK)  # positive control
    with backend.create(SandboxSpec(workspace=workspace)) as sb:
        inside = run_probe(sb, """
            import json, os, subprocess
            caps = {l.split(":")[0]: int(l.split()[1], 16) for l in open("/proc/self/status") if l.startswith("Cap")}
            nested = subprocess.run(["unshare", "--user", "true"], capture_output=True).returncode
            print(json.dumps({"core_pattern_writable": os.access("/proc/sys/kernel/core_pattern", os.W_OK),
                              "caps": caps, "nested_userns_rc": nested, "uid": os.getuid()}))
        """)
    assert inside["core_pattern_writable"] is False
    assert inside["caps"]["CapEff"] == inside["caps"]["CapPrm"] == inside["caps"]["CapBnd"] == 0
    assert inside["nested_userns_rc"] != 0


@pytest.mark.parametrize("name", ISOLATING + ["none"])
def test_timeout_kills_the_whole_process_tree(name, workspace):
    backend = get_backend(name)
    token = f"sbx-tree-{uuid.uuid4().hex}"
    # The grandchild ignores SIGTERM; inside isolating backends it also leaves the session.
    leave_session = "os.setsid(); " if name != "none" else ""
    grandchild = (
        f"import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); {leave_session}"
        f"open('started', 'w').write('1'); time.sleep(120)  # {token}"
    )
    cmd = f"python -c \"{grandchild}\" & sleep 120"
    with backend.create(SandboxSpec(workspace=workspace)) as sb:
        started = time.monotonic()
        r = sb.exec(["sh", "-c", cmd], timeout=1.5)
        elapsed = time.monotonic() - started
    assert r.timed_out is True and r.returncode is None
    assert 1.5 <= elapsed < 10
    assert (workspace / "started").exists()  # positive control: the grandchild was running
    assert _wait_gone(token) == []


@pytest.mark.parametrize("name", ISOLATING)
def test_sandbox_dies_with_the_harness(name, workspace, tmp_path):
    get_backend(name)
    token = f"sbx-orphan-{uuid.uuid4().hex}"
    harness = textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from tests.support.sandbox import BACKENDS
        from harness.contracts.sandbox import SandboxSpec
        sb = BACKENDS[{name!r}].create(SandboxSpec(workspace=Path({str(workspace)!r})))
        sb.spawn(["sh", "-c", "touch started; sleep 120 # {token}"])
        while not Path({str(workspace / "started")!r}).exists():
            time.sleep(0.01)
        os._exit(0)  # the harness crashes without destroying its sandbox
    """)
    # TMPDIR: the crashed harness leaves its sandbox's private folder behind; keep it in tmp_path
    subprocess.run([sys.executable, "-c", harness], check=True, timeout=60,
                   env={**os.environ, "TMPDIR": str(tmp_path)})
    assert (workspace / "started").exists()  # positive control: the command ran
    assert _wait_gone(token) == []
