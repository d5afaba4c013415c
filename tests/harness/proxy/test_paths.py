"""Dot segments in request paths: removed before forwarding; a path leaving the base URL's path gets 400 and
never reaches the upstream (whose base URL here has a gateway's path prefix, ``/api/v1``)."""

from __future__ import annotations

import json
import socket

import pytest
from aiohttp import web

from harness.config import Budget, Prices
from harness.proxy import HttpUpstream, ModelProxy, Secret, read_log
from harness.proxy.paths import PathOutsideBase, normal_path
from tests.support.http_server import LocalServer

KEY = "sk-real-key-0123456789abcdef"


class Gateway(LocalServer):
    """An upstream at 127.0.0.1 under the path prefix ``/api/v1``, recording the raw path of each request."""

    def __init__(self):
        super().__init__(self.handle, prefix="/api/v1")
        self.paths: list[str] = []

    async def handle(self, req: web.Request) -> web.Response:
        self.paths.append(req.raw_path)
        return web.json_response({"object": "chat.completion", "choices": [],
                                  "usage": {"prompt_tokens": 1, "completion_tokens": 1}})


def raw_request(sock_path, path: str) -> tuple[int, bytes]:
    """POST ``path`` exactly as given (no client normalises it); (status, body)."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(sock_path))
        sock.sendall(f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nconnection: close\r\n"
                     f"content-length: 2\r\n\r\n{{}}".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.fixture
def gateway_episode(tmp_path):
    with Gateway() as gateway, ModelProxy(HttpUpstream(gateway.url, auth="bearer", api_key=Secret(KEY))) as proxy:
        proxy.open_episode("e", tmp_path / "s", tmp_path / "p.jsonl", Prices(), Budget())
        yield gateway, tmp_path / "s"
        proxy.close_episode("e")


@pytest.mark.parametrize("path", ["/v1/../../x", "/v1/%2e%2e/%2E%2E/x", "/../x", "/v1/..%2f..%2fx",
                                  "/v1/%2e%2e%5c%2e%2e/x", "/v1/chat/../../../secret"])
def test_a_path_leaving_the_base_url_gets_400_and_is_not_forwarded(gateway_episode, tmp_path, path):
    gateway, sock = gateway_episode
    status, body = raw_request(sock, path)
    assert status == 400
    assert "model proxy: " in json.loads(body)["error"]["message"]
    assert gateway.paths == []  # nothing, least of all the key, went out
    records = read_log(tmp_path / "p.jsonl")
    assert [r["type"] for r in records] == ["request", "response"] and records[1]["status"] == 400


def test_dot_segments_inside_the_base_are_removed_before_forwarding(gateway_episode):
    gateway, sock = gateway_episode
    for path in ("/v1/./chat/../chat/completions", "/v1/x/%2e%2e/chat/completions", "/chat/completions"):
        assert raw_request(sock, path)[0] == 200
    assert gateway.paths == ["/api/v1/chat/completions"] * 3


@pytest.mark.parametrize("raw, normal", [("/v1/chat/completions", "/v1/chat/completions"), ("/a/./b", "/a/b"),
                                         ("/a/b/..", "/a/"), ("/a/%2E/b/", "/a/b/"), ("/", "/"),
                                         ("/a/b%2e%2e/c", "/a/b%2e%2e/c"), ("/v1beta/models/m:generate", "/v1beta/models/m:generate")])
def test_normal_path(raw, normal):
    assert normal_path(raw) == normal


@pytest.mark.parametrize("raw", ["/..", "/a/../..", "/%2e%2e", "/a/..%2F..", "/a\\..\\..", "/a/.%2f"])
def test_paths_leaving_the_root_or_hiding_dots_are_refused(raw):
    with pytest.raises(PathOutsideBase):
        normal_path(raw)
