"""Docker sandbox isolation beyond the conformance kit, each check with a positive control.

The properties every backend has (no egress, no DNS, the workspace the only writable place and the only
state that outlives a sandbox, no host environment, a timeout kills the whole process tree) are checked by
:class:`harness.testing.SandboxBackendTests` (``tests/harness/test_testing_kits.py``).  Here: the proxy URL
answers through the bridge, a host secret is in no file of the container, a destroyed container is gone.
"""

from __future__ import annotations

import json
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


def test_destroy_removes_the_container(make_sandbox, client):
    import docker.errors

    box = make_sandbox()
    cid = box.container_id
    client.api.inspect_container(cid)  # positive control: it exists while the sandbox lives
    box.destroy()
    with pytest.raises(docker.errors.NotFound):
        client.api.inspect_container(cid)
