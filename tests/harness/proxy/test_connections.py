"""Bounded connections at the proxy: a per-episode cap (excess answered 503 and closed), the process-wide
budget under the soft open-file limit, and the soft limit raised to the hard one."""

from __future__ import annotations

import json
import resource
import socket
import subprocess
import sys

from harness.config import Budget, Prices
from harness.proxy import ModelProxy, Upstream, UpstreamResponse
from harness.proxy import connections
from harness.proxy.client import request

REQUEST = (b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
           b"content-length: 2\r\n\r\n{}")


class Answer(Upstream):
    async def handle(self, req):
        return UpstreamResponse.json(200, {"object": "chat.completion", "choices": [],
                                           "usage": {"prompt_tokens": 1, "completion_tokens": 1}})


def answer(sock: socket.socket, whole: bool) -> bytes:
    """What ``sock`` received: its first line at least, or (``whole``) everything until the peer closed."""
    data = b""
    while whole or b"\r\n" not in data:
        try:
            chunk = sock.recv(4096)
        except ConnectionResetError:  # closed with our request unread: what came before it stands
            chunk = b""
        if not chunk:
            break
        data += chunk
    return data


def test_connections_over_the_cap_are_refused_with_503_and_held_ones_stay_served(tmp_path):
    with ModelProxy(Answer(), max_connections=8) as proxy:
        proxy.open_episode("e", tmp_path / "s", tmp_path / "p.jsonl", Prices(), Budget())
        held = []
        for _ in range(100):
            sock = socket.socket(socket.AF_UNIX)
            sock.connect(str(tmp_path / "s"))
            sock.sendall(REQUEST)
            held.append(sock)
        answers = [answer(sock, whole=i >= 8) for i, sock in enumerate(held)]  # served in connection order
        assert [int(a.split()[1]) for a in answers] == [200] * 8 + [503] * 92
        assert all(b"too_many_connections" in a and b"already has 8 open connections" in a for a in answers[8:])
        for sock in held:
            sock.close()
        # once the held connections are closed the episode is served again (the cap counts open ones)
        assert request(tmp_path / "s", "POST", "/v1/chat/completions", {"model": "m"}).status == 200
        usage = proxy.close_episode("e")
    assert usage.n_requests == 9


def test_the_default_cap_is_64():
    assert connections.DEFAULT_PER_EPISODE == 64
    assert ModelProxy(Answer()).max_connections == 64


def test_the_process_budget_keeps_a_reserve_under_the_soft_limit():
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert connections.process_budget() == max(16, soft - connections.RESERVE_FILES)


def test_the_soft_open_file_limit_is_raised_to_the_hard_one():
    code = ("import resource\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (256, 4096))\n"
            "from harness.proxy.connections import raise_open_files\n"
            "print(raise_open_files(), resource.getrlimit(resource.RLIMIT_NOFILE))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split(") (") == ["(4096, 4096", "4096, 4096)\n"]


def test_a_proxy_started_raises_the_soft_limit():
    code = ("import resource\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (256, 2048))\n"
            "from harness.proxy import ModelProxy, Upstream\n"
            "class U(Upstream):\n"
            "    async def handle(self, req): pass\n"
            "with ModelProxy(U()):\n"
            "    print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == 2048
