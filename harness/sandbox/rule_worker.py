"""Sandboxed worker that calls a submitted rule on one sample at a time (programmatic submission mode).

A programmatic submission asks the agent for ``rule.py`` defining ``predict(df)``, which
is then called on test and held-out samples.  This worker runs inside a
sandbox where only the submitted file is visible.  It caps its address space
(RLIMIT_AS), imports pandas, imports the submitted module once, then answers
requests until its input ends.

Protocol (the host side is :mod:`harness.submission`); a frame is an 8-byte
big-endian length followed by that many bytes:

* worker -> host, once pandas is imported: ``{"loading": true, "pid": <the worker's pid>}`` (or
  ``{"ready": false, "error": ...}``: the worker itself could not start, an
  infrastructure failure); then, once the module is imported,
  ``{"ready": true, "error": null}``, or with ``"error": "<Type>: <message>"``
  when the module cannot be imported or has no such function (every call then
  gets that error);
* host -> worker: a request: its sequence number (8 bytes, big-endian, counting from 1) then one sample
  as Parquet bytes; an empty frame ends the session;
* worker -> host: ``{"seq": n, "pid": p, "ok": true, "value": <JSON value>}`` or
  ``{"seq": n, "pid": p, "ok": false, "type": "<exception type>", "error": "<message>"}``: ``n`` the
  request's number, ``p`` the worker's pid.

A rule that forks: a child returning from ``predict`` exits at once, without replying or reading another
request (it shares the protocol descriptors); the host also discards every reply whose sequence number or
pid is not the one it waits for, so a reply can only ever answer its own request.

The protocol uses private duplicates of the original stdin/stdout: during the
calls file descriptor 0 is ``/dev/null`` and descriptor 1 (and ``sys.stdout``)
go to stderr, so prints inside ``predict`` cannot corrupt the answers.

Run as ``python -m harness.sandbox.rule_worker --module /submission/rule.py --function predict --memory-mb 2048``.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import resource
import struct
import sys

HEADER = struct.Struct(">Q")
#: A request's sequence number, before its sample.
SEQ = struct.Struct(">Q")
#: Largest JSON answer accepted for one call.
MAX_ANSWER = 1 << 20
EXIT_SETUP = 3


def read_exact(fd: int, n: int) -> bytes | None:
    """Exactly ``n`` bytes from ``fd``, or None at end of input."""
    parts, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def write_frame(fd: int, payload: bytes) -> None:
    view = memoryview(HEADER.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view):]


def send(fd: int, obj: dict) -> None:
    write_frame(fd, json.dumps(obj).encode())


def protect_stdio() -> tuple[int, int]:
    """Move the protocol to private descriptors; fd 0 becomes /dev/null, fd 1 goes to stderr."""
    proto_in, proto_out = os.dup(0), os.dup(1)  # not inherited by children
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stderr
    return proto_in, proto_out


def describe(exc: BaseException) -> tuple[str, str]:
    """(type name, message) of ``exc``; never raises (a hostile ``__str__`` gives a placeholder)."""
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001
        message = "<the exception's str() failed>"
    return type(exc).__name__, message[:2000]


def plain(value):
    """Array-likes (numpy arrays, pandas Series: anything with ``tolist``) as lists; tuples stay JSON lists."""
    if type(value).__module__.split(".")[0] in ("numpy", "pandas") and hasattr(value, "tolist"):
        return value.tolist()
    return value


def load_function(module_path: str, function: str):
    """Import the submitted file and return its ``function`` (raises what the import raises)."""
    spec = importlib.util.spec_from_file_location("submitted_rule", module_path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {os.path.basename(module_path)} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules["submitted_rule"] = module
    spec.loader.exec_module(module)
    fn = getattr(module, function, None)
    if not callable(fn):
        raise AttributeError(  # noqa: TRY004 - the rule's error type, as getattr would raise
            f"{os.path.basename(module_path)} does not define a function {function}()")
    return fn


def answer(fn, payload: bytes, read_parquet) -> dict:
    """Call ``fn`` on the sample and build the reply (errors become ``ok: false``)."""
    try:
        df = read_parquet(io.BytesIO(payload))
    except Exception as exc:  # noqa: BLE001
        kind, msg = describe(exc)
        return {"ok": False, "type": "InputError", "error": f"sample could not be read: {kind}: {msg}"}
    try:
        value = fn(df)
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt are rule errors too
        kind, msg = describe(exc)
        return {"ok": False, "type": kind, "error": msg}
    try:
        text = json.dumps(plain(value), allow_nan=False)
    except BaseException as exc:  # noqa: BLE001 - TypeError, ValueError, RecursionError, hostile __iter__ ...
        kind, msg = describe(exc)
        return {"ok": False, "type": kind, "error": f"return value is not JSON-serialisable: {msg}"}
    if len(text) > MAX_ANSWER:
        return {"ok": False, "type": "ValueError", "error": f"return value too large ({len(text)} bytes of JSON)"}
    return {"ok": True, "value": json.loads(text)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.sandbox.rule_worker")
    parser.add_argument("--module", required=True)
    parser.add_argument("--function", default="predict")
    parser.add_argument("--memory-mb", type=int, default=0)
    args = parser.parse_args(argv)

    proto_in, proto_out = protect_stdio()
    try:
        if args.memory_mb > 0:
            cap = args.memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        import pandas as pd
    except BaseException as exc:  # noqa: BLE001
        kind, msg = describe(exc)
        send(proto_out, {"ready": False, "error": f"worker setup failed ({kind}: {msg}); memory_mb={args.memory_mb}"})
        return EXIT_SETUP

    own = os.getpid()
    send(proto_out, {"loading": True, "pid": own})
    try:
        fn = load_function(args.module, args.function)
        error = None
    except BaseException as exc:  # noqa: BLE001 - any failure of the submitted module
        kind, msg = describe(exc)
        fn, error = None, f"{kind}: {msg}" if msg else kind
    if os.getpid() != own:  # a child the module forked while imported
        os._exit(0)
    send(proto_out, {"ready": True, "error": error})
    if fn is None:
        return 0

    while True:
        head = read_exact(proto_in, HEADER.size)
        if head is None:
            return 0
        (size,) = HEADER.unpack(head)
        if size == 0:
            return 0
        payload = read_exact(proto_in, size)
        if payload is None or size < SEQ.size:
            return 0
        (seq,) = SEQ.unpack(payload[:SEQ.size])
        reply = answer(fn, payload[SEQ.size:], pd.read_parquet)
        if os.getpid() != own:  # a child the rule forked, back from predict(): not the worker
            os._exit(0)
        send(proto_out, {"seq": seq, "pid": own, **reply})


if __name__ == "__main__":
    sys.exit(main())
