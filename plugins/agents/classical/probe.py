"""In-sandbox script of the ``proxy-probe`` agent: ``python3 -S probe.py`` (standard library only).

A minimal LLM-agent stand-in for testing and measuring the harness itself
(parallel episodes, rate limits, resume): it sends ``--turns`` OpenAI Chat
Completions requests to the model proxy (``--base-url``), one after another,
then submits the last allowed label for every test sample (``results.json``)
or a rule that always predicts it (``rule.py``).  It never reads the model's
answers beyond checking the HTTP status: a failed request exits with code 3;
bad arguments exit with code 2.

``benchmarks/scale.py`` measures the harness with this agent, so it imports
only C modules: ``_socket`` and ``_json`` (the scanner and string quoting the
``json`` module is built on; ``json`` itself when they are missing).  With
``urllib.request``, ``argparse`` and ``pathlib`` its own start took 66 + 45 ms
of CPU per episode, as much as the harness's work on the episode; ``json``
and ``socket`` (``re`` and ``enum`` with them) took 21 ms more than these two.
Requests are plain HTTP/1.0 over a socket.
"""

from __future__ import annotations

import _socket
import os
import sys

try:  # the C parts of ``json``: importing ``json`` loads ``re`` and ``enum``, 13 ms of CPU per start
    from _json import encode_basestring_ascii as _quote
    from _json import make_scanner
except ImportError:  # pragma: no cover - an interpreter without the C accelerator
    from json import dumps as _quote  # type: ignore[assignment]
    make_scanner = None

RULE = '''LABEL = {label!r}


def predict(df) -> list:
    return [LABEL]
'''

#: the options and their defaults (None: required)
OPTIONS = {"--task-info": None, "--base-url": None, "--model": "probe", "--turns": "3", "--prompt-file": ""}


def parse(argv: list[str]) -> dict[str, str]:
    """``{option: value}`` from ``--option value`` / ``--option=value`` pairs; ValueError naming a problem."""
    got, rest = {}, list(argv)
    while rest:
        item = rest.pop(0)
        name, eq, value = item.partition("=")
        if name not in OPTIONS:
            raise ValueError(f"unknown argument {item!r} (options: {', '.join(OPTIONS)})")
        if not eq:
            if not rest:
                raise ValueError(f"{name} needs a value")
            value = rest.pop(0)
        got[name] = value
    missing = [name for name, default in OPTIONS.items() if default is None and name not in got]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    return {name: got.get(name, default) for name, default in OPTIONS.items()}


class _Decoding:
    """What :func:`_json.make_scanner` reads from its context: the defaults of :func:`json.loads`."""

    strict, object_hook, object_pairs_hook = True, None, None
    parse_float, parse_int, parse_constant = float, int, float


_scan = make_scanner(_Decoding()) if make_scanner is not None else None  # one scanner: it clears its memo per call


def loads(text: str | bytes):
    """:func:`json.loads` of ``text``; ValueError when it is no JSON document (said by ``json``, imported only
    then: the C scanner's own error path imports it too, and fails under ``-S`` before it has been)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if _scan is not None:
        start = len(text) - len(text.lstrip(" \t\n\r"))
        try:
            value, end = _scan(text, start)
            if not text[end:].strip(" \t\n\r"):
                return value
        except Exception:  # noqa: BLE001, S110 - malformed: json.loads below raises the named error
            pass
    import json

    return json.loads(text)


def dumps(value) -> str:
    """Compact JSON of ``value`` (str, int, finite float, bool, None, lists and dicts of them, keys as text);
    non-ASCII is escaped, as :func:`json.dumps` does by default.  TypeError for anything else."""
    if isinstance(value, str):
        return _quote(value)
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_quote(str(k))}:{dumps(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def _connect(host: str, port: int, timeout: float):
    """A connected TCP socket to ``host:port`` (each address ``getaddrinfo`` gives, in turn); OSError."""
    error: OSError = OSError(f"cannot resolve {host}")
    name = host.encode("ascii") if host.isascii() else host  # a str would be IDNA-encoded, which imports re
    for family, kind, proto, _, address in _socket.getaddrinfo(name, port, 0, _socket.SOCK_STREAM):
        conn = _socket.socket(family, kind, proto)
        try:
            conn.settimeout(timeout)
            conn.connect(address)
            return conn
        except OSError as exc:
            conn.close()
            error = exc
    raise error


def post_json(url: str, body: bytes, timeout: float = 600) -> tuple[int, bytes]:
    """POST ``body`` (JSON) to ``url`` (``http://host[:port]/path``) over HTTP/1.0; returns (status, response
    body).  Raises OSError when the server cannot be reached or sends no HTTP response, ValueError for a URL
    that is not ``http://``."""
    if not url.startswith("http://"):
        raise ValueError(f"expected an http:// URL, got {url!r}")
    netloc, _, path = url[len("http://"):].partition("/")
    host, _, port = netloc.rpartition(":") if netloc.rsplit(":", 1)[-1].isdigit() else (netloc, "", "80")
    if not host:
        raise ValueError(f"expected an http:// URL with a host, got {url!r}")
    head = (f"POST /{path} HTTP/1.0\r\nHost: {netloc}\r\ncontent-type: application/json\r\n"
            f"authorization: Bearer sk-dummy\r\ncontent-length: {len(body)}\r\n\r\n").encode("latin-1")
    conn = _connect(host.strip("[]"), int(port), timeout)
    try:
        conn.sendall(head + body)
        chunks = []
        while chunk := conn.recv(1 << 16):  # HTTP/1.0: the server ends the response by closing
            chunks.append(chunk)
    finally:
        conn.close()
    header, sep, payload = b"".join(chunks).partition(b"\r\n\r\n")
    status = header.split(b" ", 2)[1] if header.startswith(b"HTTP/") and b" " in header else b""
    if not sep or not status.isdigit():
        raise OSError(f"no HTTP response from {url}")
    return int(status), payload


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse(sys.argv[1:] if argv is None else argv)
        turns = int(args["--turns"])
        info = loads(args["--task-info"])
    except ValueError as exc:
        print(f"probe.py: {exc}", file=sys.stderr)
        return 2
    url = args["--base-url"].rstrip("/") + "/v1/chat/completions"
    prompt = "go"
    if args["--prompt-file"]:
        with open(args["--prompt-file"], encoding="utf-8") as handle:
            prompt = handle.read()
    messages = [{"role": "user", "content": prompt}]
    for turn in range(turns):
        body = dumps({"model": args["--model"], "messages": messages}).encode()
        try:
            status, payload = post_json(url, body)
            if status >= 400:
                raise OSError(f"HTTP Error {status}: {payload[:200].decode('utf-8', 'replace')}")
            answer = loads(payload)
        except (OSError, ValueError) as exc:
            print(f"probe: request {turn + 1} failed: {exc}", file=sys.stderr)
            return 3
        text = (answer.get("choices") or [{}])[0].get("message", {}).get("content") or ""
        messages += [{"role": "assistant", "content": text}, {"role": "user", "content": "continue"}]
    label = info["labels"][-1]
    if info.get("submission") == "programmatic":
        with open("rule.py", "w", encoding="utf-8") as handle:
            handle.write(RULE.format(label=label))
    else:
        names = sorted(n for n in (os.listdir("test_samples") if os.path.isdir("test_samples") else [])
                       if n.endswith(".parquet"))
        with open("results.json", "w", encoding="utf-8") as handle:
            handle.write(dumps({name: [label] for name in names}))
    print(f"probe: {turns} model request(s), submitted {label!r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
