"""Bodies over the spool threshold go through the proxy from disk: the upstream gets every byte, the log
stores them truncated with size and hash, and nothing is left in the episode's folder."""

from __future__ import annotations

import hashlib
import socket

import pytest
from aiohttp import web

from harness.config import Budget, Prices
from harness.proxy import HttpUpstream, ModelProxy, UpstreamRequest, read_log
from harness.proxy.spool import SPOOL_BYTES, Spooled
from tests.support.http_server import LocalServer

SIZE = SPOOL_BYTES + 3 * 2**20 + 7


async def read_all(req: web.Request) -> web.Response:
    """An upstream that reads every body and answers with its size and SHA-256."""
    digest, size = hashlib.sha256(), 0
    async for chunk in req.content.iter_chunked(1 << 20):
        digest.update(chunk)
        size += len(chunk)
    return web.json_response({"object": "chat.completion", "choices": [], "size": size,
                              "sha256": digest.hexdigest(), "usage": {"prompt_tokens": 1, "completion_tokens": 1}})


def body() -> bytes:
    return b'{"model": "m", "messages": [{"role": "user", "content": "' + b"x" * (SIZE - 60) + b'"}]}'.ljust(SIZE)


def send(sock_path, data: bytes, chunked: bool) -> bytes:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(sock_path))
        head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nconnection: close\r\n"
        if chunked:
            sock.sendall(head + b"transfer-encoding: chunked\r\n\r\n")
            for start in range(0, len(data), 1 << 20):
                part = data[start:start + (1 << 20)]
                sock.sendall(b"%x\r\n" % len(part) + part + b"\r\n")
            sock.sendall(b"0\r\n\r\n")
        else:
            sock.sendall(head + b"content-length: %d\r\n\r\n" % len(data) + data)
        answer = b""
        while chunk := sock.recv(1 << 16):
            answer += chunk
    return answer


@pytest.mark.parametrize("chunked", [False, True])
def test_a_spooled_body_reaches_the_upstream_whole_and_is_logged_truncated(tmp_path, chunked):
    data = body()
    episode = tmp_path / "episode"
    with LocalServer(read_all) as upstream, ModelProxy(HttpUpstream(upstream.url, auth="none")) as proxy:
        proxy.open_episode("e", tmp_path / "s", episode / "proxy.jsonl", Prices(), Budget())
        answer = send(tmp_path / "s", data, chunked)
        proxy.close_episode("e")
    assert answer.startswith(b"HTTP/1.1 200")
    digest = hashlib.sha256(data).hexdigest()
    assert f'"size": {len(data)}, "sha256": "{digest}"'.encode() in answer  # every byte went upstream
    [request] = [r for r in read_log(episode / "proxy.jsonl") if r["type"] == "request"]
    assert (request["truncated"], request["size"], request["sha256"]) == (True, len(data), digest)
    assert request["body"] == data[:1024].decode()
    assert sorted(p.name for p in episode.iterdir()) == ["proxy.jsonl"]  # the spool file is gone


def test_an_upstream_reads_a_spooled_body(tmp_path):
    spooled = Spooled(tmp_path, b'{"model": ')
    spooled.write(b'"m"}')
    request = UpstreamRequest("e", "POST", "/v1/chat/completions", body_file=spooled.finish().file)
    assert request.body == b"" and request.body_size() == 14 and request.read_body() == b'{"model": "m"}'
    assert request.json() == {"model": "m"}
    spooled.close()
