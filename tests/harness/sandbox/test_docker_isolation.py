"""Docker sandbox isolation, each check with a positive control: loopback, other hosts, DNS, proxy, secrets, state."""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid

import pytest
from tests.support.docker import (  # noqa: F401 - fixtures
    UnixProxy,
    client,
    dirs,
    docker_marks,
    make_sandbox,
    py,
    run_id,
    test_image,
)

pytestmark = docker_marks


def _tcp_listener():
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            conn.sendall(b"host-loopback")
            conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return srv, stop


def test_host_loopback_is_unreachable(make_sandbox):
    srv, stop = _tcp_listener()
    port = srv.getsockname()[1]
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as c:  # positive control
            assert c.recv(100) == b"host-loopback"
        box = make_sandbox()
        r = box.exec(py(f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=2); print("connected")
            except OSError as e:
                print("errno", e.errno)
            print(sorted(n for _, n in socket.if_nameindex()))
        """))
        assert r.stdout.splitlines() == [f"errno {errno.ECONNREFUSED}", "['lo']"], r
    finally:
        stop.set()
        srv.close()


@pytest.fixture
def netns_host():
    """A host in a network namespace the test creates, on a private /30 reached over a veth pair."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 to create a network namespace")
    tag = uuid.uuid4().hex[:6]
    ns, host_if, ns_if = f"h7t-{tag}", f"h7h{tag}", f"h7n{tag}"
    host_ip, ns_ip, port = "10.254.213.1", "10.254.213.2", 18080

    def ip(*args, ns_exec=False):
        cmd = (["ip", "netns", "exec", ns] if ns_exec else []) + ["ip", *args]
        subprocess.run(cmd, check=True, capture_output=True)

    server = None
    try:
        ip("netns", "add", ns)
        ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        ip("link", "set", ns_if, "netns", ns)
        ip("addr", "add", f"{host_ip}/30", "dev", host_if)
        ip("link", "set", host_if, "up")
        ip("addr", "add", f"{ns_ip}/30", "dev", ns_if, ns_exec=True)
        ip("link", "set", ns_if, "up", ns_exec=True)
        ip("link", "set", "lo", "up", ns_exec=True)
        code = (f"import socket,time\ns=socket.create_server(('{ns_ip}',{port}));s.settimeout(0.5)\n"
                "end=time.time()+60\nwhile time.time()<end:\n"
                " try: c,_=s.accept()\n except OSError: continue\n c.sendall(b'netns-host'); c.close()\n")
        server = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", code])
        deadline = time.time() + 10
        while True:
            try:
                with socket.create_connection((ns_ip, port), timeout=1) as c:
                    banner = c.recv(100)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        yield ns_ip, port, banner
    finally:
        if server is not None:
            server.kill()
            server.wait()
        subprocess.run(["ip", "link", "del", host_if], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_namespace_host_reachable_from_host_not_from_sandbox(make_sandbox, netns_host):
    ns_ip, port, banner = netns_host
    assert banner == b"netns-host"  # positive control: the host reaches it
    box = make_sandbox()
    r = box.exec(py(f"""
        import socket
        try:
            socket.create_connection(("{ns_ip}", {port}), timeout=3); print("connected")
        except OSError as e:
            print("errno", e.errno)
    """))
    assert r.stdout.strip() == f"errno {errno.ENETUNREACH}", r


def test_dns_fails_inside(make_sandbox):
    box = make_sandbox()
    r = box.exec(py("""
        import socket
        print(socket.getaddrinfo("localhost", 80)[0][4][0] in ("127.0.0.1", "::1"))
        for name in ("deb.debian.org", "pypi.org"):
            try:
                socket.getaddrinfo(name, 443); print("resolved", name)
            except socket.gaierror as e:
                print("gaierror", name)
    """), timeout=60)
    assert r.stdout.splitlines() == ["True", "gaierror deb.debian.org", "gaierror pypi.org"], r


def test_proxy_url_answers_through_the_bridge(make_sandbox, tmp_path):
    sock_dir = tmp_path / "proxy"
    sock_dir.mkdir()
    with UnixProxy(sock_dir) as proxy:
        box = make_sandbox(proxy_socket=proxy.path, proxy_port=8765)
        r = box.exec(py("""
            import json, urllib.request
            req = urllib.request.Request("http://127.0.0.1:8765/v1/messages?beta=true", data=b'{"x": 1}',
                                         headers={"X-Test": "through-bridge", "Content-Type": "application/json"})
            print(urllib.request.urlopen(req, timeout=10).read().decode())
        """), timeout=60)
        assert r.returncode == 0, r
        answer = json.loads(r.stdout)
        assert answer == {"method": "POST", "path": "/v1/messages?beta=true", "body": '{"x": 1}',
                          "x_test": "through-bridge", "via": "unix-proxy"}
        # the socket's folder is mounted read-only
        r = box.exec(["sh", "-c", "touch /run/harness/new 2>/dev/null && echo wrote || echo read-only"])
        assert r.stdout.strip() == "read-only"


def test_canary_secret_in_host_env_appears_nowhere_inside(make_sandbox, monkeypatch):
    canary = f"sk-canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("HARNESS_TEST_CANARY_KEY", canary)
    monkeypatch.setenv("ANTHROPIC_API_KEY", canary)
    box = make_sandbox(env={"SAFE_VAR": "positive-control"})
    visible = f"visible-{uuid.uuid4().hex}"
    r = box.exec(["sh", "-c", f"echo {visible} > /tmp/control.txt; env"])
    assert "SAFE_VAR=positive-control" in r.stdout  # positive control: spec.env does reach the sandbox
    assert canary not in r.stdout and "HARNESS_TEST_CANARY_KEY" not in r.stdout
    search = ("grep -rlsI --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev -e {0} / ; "
              "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c -e {0}; true")
    found = box.exec(["sh", "-c", search.format(visible)], timeout=120)
    assert "/tmp/control.txt" in found.stdout  # positive control: the search finds a planted marker
    r = box.exec(["sh", "-c", search.format(canary)], timeout=120)
    assert r.stdout.strip() == "0", r  # no file, and no process environment, holds the canary


def test_files_outside_the_workspace_do_not_survive(make_sandbox, client, dirs):
    first = make_sandbox()
    r = first.exec(["sh", "-c", "echo keep > /workspace/kept.txt; echo gone > /tmp/gone.txt; "
                                "cat /tmp/gone.txt"])
    assert r.stdout == "gone\n"  # positive control: the file existed
    cid = first.container_id
    first.destroy()
    import docker.errors

    with pytest.raises(docker.errors.NotFound):
        client.api.inspect_container(cid)
    second = make_sandbox()
    r = second.exec(["sh", "-c", "cat /workspace/kept.txt; test -e /tmp/gone.txt && echo survived || echo absent"])
    assert r.stdout == "keep\nabsent\n"


