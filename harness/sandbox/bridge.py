"""TCP -> Unix-socket forwarder: the sandbox's only way to the model proxy.

The model proxy listens on a host Unix socket that a backend bind-mounts into
the sandbox (at ``/run/harness/proxy.sock``).  This bridge runs inside the
sandbox's network namespace and exposes that socket as
``http://127.0.0.1:<port>``, which is what agent CLIs accept as a base URL.

Each accepted TCP connection gets its own Unix-socket connection; bytes are
copied in both directions as soon as they arrive (no buffering of whole
messages, so streamed SSE responses keep their timing), half-closes are passed
on, and a reset on either side closes both.  Standard library only: the
sandbox launcher runs it with ``python -S``.

One thread and a :mod:`selectors` loop serve every connection: no thread per
connection (the sandbox's process limit counts threads) and no asyncio, whose
import cost about 80 ms of CPU at the start of every episode, on the way of its
first model request.  A direction whose receiver is slow buffers at most
:data:`BUFFER` bytes before its sender stops being read (back-pressure).

Run stand-alone::

    python -m harness.sandbox.bridge --listen 127.0.0.1:8765 --unix /run/harness/proxy.sock
"""

from __future__ import annotations

import selectors
import socket
import struct
import sys
import threading

CHUNK = 64 * 1024
#: the most bytes held for one direction of one connection before its sender stops being read
BUFFER = 1 << 20


def listen_socket(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket (``port`` 0 picks a free port).  Raises OSError if taken."""
    return socket.create_server((host, port), backlog=256)


class _Side:
    """One socket of a connection: what is still to be sent to it, and how far each direction got."""

    __slots__ = ("sock", "out", "reading", "eof_pending", "write_shut", "link", "events")

    def __init__(self, sock: socket.socket, link: "_Link"):
        self.sock, self.link = sock, link
        self.out = bytearray()
        self.reading = True        # its peer's bytes still come from it
        self.eof_pending = False   # its peer half-closed: shut its write side once ``out`` is sent
        self.write_shut = False
        self.events = 0            # what the selector watches it for now


class _Link:
    """A forwarded connection: the client's TCP socket and the proxy's Unix socket."""

    __slots__ = ("client", "upstream", "closed")

    def __init__(self, client: socket.socket, upstream: socket.socket):
        self.client, self.upstream = _Side(client, self), _Side(upstream, self)
        self.closed = False

    def peer(self, side: _Side) -> _Side:
        return self.upstream if side is self.client else self.client

    def done(self) -> bool:
        return all(not s.reading and s.write_shut for s in (self.client, self.upstream))


class Bridge:
    """Forward every connection accepted on the listening socket ``sock`` to the Unix socket ``unix_path``
    (:meth:`serve_forever`, on one thread, until :meth:`close` is called from any thread)."""

    def __init__(self, unix_path: str, sock: socket.socket):
        self.unix_path, self.sock = unix_path, sock
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._stopping = False
        self._links: set[_Link] = set()

    def close(self) -> None:
        """Stop serving (thread-safe, idempotent): :meth:`serve_forever` closes every connection and returns."""
        self._stopping = True
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass

    def serve_forever(self, started: threading.Event | None = None) -> None:
        self.sock.setblocking(False)
        self._selector.register(self.sock, selectors.EVENT_READ, None)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        if started is not None:
            started.set()
        try:
            while not self._stopping:
                for key, mask in self._selector.select():
                    if key.fileobj is self.sock:
                        self._accept()
                    elif key.fileobj is self._wake_r:
                        continue
                    elif not key.data.link.closed:
                        self._ready(key.data, mask)
        finally:
            for link in list(self._links):
                self._close(link)
            self._selector.close()
            for s in (self._wake_r, self._wake_w, self.sock):
                s.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # e.g. out of file descriptors: the client waits in the backlog
                print(f"bridge: accept failed: {exc}", file=sys.stderr, flush=True)
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                upstream.settimeout(10)  # a Unix connect only waits while the proxy's backlog is full
                upstream.connect(self.unix_path)
            except OSError as exc:
                print(f"bridge: cannot reach {self.unix_path}: {exc}", file=sys.stderr, flush=True)
                upstream.close()
                _abort(client)
                continue
            client.setblocking(False)
            upstream.setblocking(False)
            link = _Link(client, upstream)
            self._links.add(link)
            self._watch(link)

    def _ready(self, side: _Side, mask: int) -> None:
        link, peer = side.link, side.link.peer(side)
        try:
            if mask & selectors.EVENT_WRITE:
                self._flush(side)
            if mask & selectors.EVENT_READ and side.reading:
                data = side.sock.recv(CHUNK)
                if data:
                    peer.out += data
                else:  # half-close: passed on once what it sent is delivered
                    side.reading = False
                    peer.eof_pending = True
                self._flush(peer)
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:  # a reset on either side closes both
            self._close(link, abort=True)
            return
        if link.done():
            self._close(link)
        else:
            self._watch(link)

    @staticmethod
    def _flush(side: _Side) -> None:
        while side.out:
            try:
                sent = side.sock.send(side.out)
            except (BlockingIOError, InterruptedError):
                return
            del side.out[:sent]
        if side.eof_pending and not side.write_shut:
            side.sock.shutdown(socket.SHUT_WR)
            side.write_shut = True

    def _watch(self, link: _Link) -> None:
        """Watch each side for what it can do now: read while its peer's buffer has room, write while it has
        bytes to send."""
        for side in (link.client, link.upstream):
            peer = link.peer(side)
            events = ((selectors.EVENT_READ if side.reading and len(peer.out) < BUFFER else 0)
                      | (selectors.EVENT_WRITE if side.out else 0))
            if events == side.events:
                continue
            if not side.events:
                self._selector.register(side.sock, events, side)
            elif not events:
                self._selector.unregister(side.sock)
            else:
                self._selector.modify(side.sock, events, side)
            side.events = events

    def _close(self, link: _Link, abort: bool = False) -> None:
        if link.closed:
            return
        link.closed = True
        self._links.discard(link)
        for side in (link.client, link.upstream):
            if side.events:
                self._selector.unregister(side.sock)
                side.events = 0
            if abort:
                _abort(side.sock)
            else:
                side.sock.close()


def _abort(sock: socket.socket) -> None:
    """Close ``sock`` with a reset rather than an orderly end (the peer sees the connection fail)."""
    try:
        if sock.family != socket.AF_UNIX:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


def serve(unix_path: str, sock: socket.socket) -> None:
    """Forward every connection accepted on ``sock`` to the Unix socket ``unix_path``; runs until the process
    ends (see :class:`Bridge` to stop it)."""
    Bridge(unix_path, sock).serve_forever()


class BridgeThread:
    """The bridge on a daemon thread.

    ``sock`` is an already listening socket (see :func:`listen_socket`): clients
    that connect before the loop runs wait in the listen backlog, so a command
    can start as soon as the socket exists.
    """

    def __init__(self, unix_path: str, sock: socket.socket):
        self.unix_path = unix_path
        self.sock = sock
        self.port = sock.getsockname()[1]
        self.started = threading.Event()
        self.error: BaseException | None = None
        self._bridge = Bridge(unix_path, sock)
        self._thread = threading.Thread(target=self._run, name="proxy-bridge", daemon=True)

    def start(self, wait: float | None = None) -> BridgeThread:
        """Start serving; with ``wait`` seconds, block until the loop accepts (raise on failure)."""
        self._thread.start()
        if wait is not None and not self.started.wait(wait):
            raise RuntimeError(f"bridge did not start within {wait} s: {self.error!r}")
        if self.error is not None:
            raise RuntimeError(f"bridge failed: {self.error!r}")
        return self

    def _run(self) -> None:
        try:
            self._bridge.serve_forever(self.started)
        except BaseException as exc:  # noqa: BLE001 - reported through .error
            self.error = exc
            self.started.set()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop accepting, close every connection and the listening socket (idempotent)."""
        self._bridge.close()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.sock.close()


def _parse_listen(value: str) -> tuple[str, int]:
    import argparse

    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"--listen must be HOST:PORT, got {value!r}")
    return host or "127.0.0.1", int(port)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m harness.sandbox.bridge", description=__doc__.split("\n")[0])
    parser.add_argument("--listen", type=_parse_listen, default=("127.0.0.1", 8765), help="HOST:PORT to accept on")
    parser.add_argument("--unix", required=True, help="Unix socket to forward to")
    args = parser.parse_args(argv)
    host, port = args.listen
    try:
        sock = listen_socket(host, port)
    except OSError as exc:
        print(f"bridge: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
        return 1
    print(f"bridge: {host}:{sock.getsockname()[1]} -> {args.unix}", file=sys.stderr, flush=True)
    try:
        serve(args.unix, sock)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
