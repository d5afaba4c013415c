"""TCP -> Unix-socket forwarder: the sandbox's only way to the model proxy.

The model proxy listens on a host Unix socket that a backend bind-mounts into
the sandbox (at ``/run/harness/proxy.sock``).  This bridge runs inside the
sandbox's network namespace and exposes that socket as
``http://127.0.0.1:<port>``, which is what agent CLIs accept as a base URL.

Each accepted TCP connection gets its own Unix-socket connection; bytes are
copied in both directions as soon as they arrive (no buffering of whole
messages, so streamed SSE responses keep their timing), half-closes are passed
on, and a reset on either side closes both, with one exception: a proxy that answers, then closes before
reading all of the request (it refuses a connection over its cap that way) looks reset to a Unix socket,
though every byte it wrote has been received; its answer is passed on and the client sees an orderly end,
as it would from the proxy itself, not a reset that could lose the answer.  Standard library only: the
sandbox launcher runs it with ``python -E -s -S``.

One thread and a :func:`select.poll` loop serve every connection: no thread per
connection (the sandbox's process limit counts threads).  The serving path
imports C modules only (``_socket``, ``select``, ``_struct``): it starts in
every sandbox, on the way of the episode's first model request, and the
Python-level ``socket``, ``selectors``, ``threading`` and ``struct`` pull in
``enum``: a ``python -E -s -S`` starting the bridge the launcher's way took
31 ms of CPU with them, 17 ms without (10 ms for ``pass``; asyncio, used
before them, cost about 80 ms more).  Only :class:`BridgeThread` (host side)
imports :mod:`threading`, when created, and the command line reads the Docker
backend's arguments without :mod:`argparse` (45 ms -> 19 ms per start).  A
direction whose receiver is slow buffers at most :data:`BUFFER` bytes before
its sender stops being read (back-pressure).

Run stand-alone (the Docker backend runs ``python -S bridge.py`` this way)::

    python -m harness.sandbox.bridge --listen 127.0.0.1:8765 --unix /run/harness/proxy.sock
"""

from __future__ import annotations

import _socket
import _struct
import select
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: never imported at run time
    import threading

CHUNK = 64 * 1024
#: the most bytes held for one direction of one connection before its sender stops being read
BUFFER = 1 << 20
_LINGER_RESET = _struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends a reset
#: the longest a new connection waits for room in the proxy's listen backlog (seconds), as a struct timeval
CONNECT_WAIT = 10
_CONNECT_WAIT = _struct.pack("ll", CONNECT_WAIT, 0)
# as in selectors.PollSelector: any event but POLLOUT (POLLIN, POLLHUP, POLLERR, POLLNVAL) makes a socket
# readable, any but POLLIN writable, so that the recv or send that follows reports a hang-up or reset
_READABLE, _WRITABLE = ~select.POLLOUT, ~select.POLLIN


def listen_socket(host: str, port: int) -> _socket.socket:
    """A bound TCP socket listening on ``host``:``port`` (IPv4; ``port`` 0 picks a free port), with
    ``SO_REUSEADDR`` as :func:`socket.create_server` sets it.  Raises OSError if the address is taken."""
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    try:
        sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(256)
    except BaseException:
        sock.close()
        raise
    return sock


class _Side:
    """One socket of a connection: what is still to be sent to it, and how far each direction got."""

    __slots__ = ("sock", "fd", "out", "reading", "eof_pending", "write_shut", "link", "events", "answered")

    def __init__(self, sock: _socket.socket, link: "_Link"):
        self.sock, self.fd, self.link = sock, sock.fileno(), link
        self.out = bytearray()
        self.reading = True        # its peer's bytes still come from it
        self.eof_pending = False   # its peer half-closed: shut its write side once ``out`` is sent
        self.write_shut = False
        self.events = 0            # what the poll object watches it for now (POLLIN | POLLOUT)
        self.answered = False      # bytes have come from it


class _Link:
    """A forwarded connection: the client's TCP socket and the proxy's Unix socket."""

    __slots__ = ("client", "upstream", "closed")

    def __init__(self, client: _socket.socket, upstream: _socket.socket):
        self.client, self.upstream = _Side(client, self), _Side(upstream, self)
        self.closed = False

    def peer(self, side: _Side) -> _Side:
        return self.upstream if side is self.client else self.client

    def done(self) -> bool:
        return all(not s.reading and s.write_shut for s in (self.client, self.upstream))


class Bridge:
    """Forward every connection accepted on the listening socket ``sock`` to the Unix socket ``unix_path``
    (:meth:`serve_forever`, on one thread, until :meth:`close` is called from any thread).

    ``sock`` is a :class:`socket.socket` or a bare ``_socket.socket`` (only the C methods are used); the
    bridge owns it from here on and closes it when the loop ends.
    """

    def __init__(self, unix_path: str, sock: _socket.socket):
        self.unix_path, self.sock = unix_path, sock
        self._poll = select.poll()
        self._sides: dict[int, _Side] = {}  # by file descriptor, the sides being watched
        self._wake_r, self._wake_w = _socket.socketpair()
        self._wake_w.setblocking(False)
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
        """Serve until :meth:`close`; ``started`` (anything with ``set()``) is set once connections are
        watched.  Every connection and the listening socket are closed on return."""
        self.sock.setblocking(False)
        listen_fd, wake_fd = self.sock.fileno(), self._wake_r.fileno()
        self._poll.register(listen_fd, select.POLLIN)
        self._poll.register(wake_fd, select.POLLIN)
        if started is not None:
            started.set()
        try:
            while not self._stopping:
                # sides looked up before any is handled: a link closed by an earlier event skips its later
                # ones, even when a new connection gets the same file descriptor meanwhile
                for fd, side, ev in [(fd, self._sides.get(fd), ev) for fd, ev in self._poll.poll()]:
                    if fd == listen_fd:
                        self._accept()
                    elif side is not None and not side.link.closed:
                        self._ready(side, ev & _READABLE, ev & _WRITABLE)
        finally:
            for link in list(self._links):
                self._close(link)
            for s in (self._wake_r, self._wake_w, self.sock):
                s.close()

    def _accept(self) -> None:
        while True:
            try:
                # the C accept, which socket.socket.accept wraps in Python (typeshed does not list it)
                fd, _ = self.sock._accept()  # type: ignore[attr-defined]
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # e.g. out of file descriptors: the client waits in the backlog
                print(f"bridge: accept failed: {exc}", file=sys.stderr, flush=True)
                return
            client = _socket.socket(self.sock.family, _socket.SOCK_STREAM, 0, fd)  # as socket.socket.accept
            upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            try:
                # a Unix connect waits only while the proxy's backlog is full: blocking, at most CONNECT_WAIT
                # seconds (the kernel's send timeout; with settimeout, Python connects without blocking, and
                # a full backlog fails at once with EAGAIN)
                upstream.setblocking(True)
                upstream.setsockopt(_socket.SOL_SOCKET, _socket.SO_SNDTIMEO, _CONNECT_WAIT)
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

    def _ready(self, side: _Side, readable: int, writable: int) -> None:
        link, peer = side.link, side.link.peer(side)
        try:
            if writable:
                self._flush(side)
            if readable and side.reading:
                try:
                    data = side.sock.recv(CHUNK)
                except ConnectionResetError:
                    if side is not link.upstream or not side.answered:
                        raise
                    # the proxy answered and closed without reading the rest: an end (module docstring); what
                    # the client still sends has nowhere to go
                    data, side.write_shut, peer.reading = b"", True, False
                    side.out.clear()
                if data:
                    side.answered = True
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
            side.sock.shutdown(_socket.SHUT_WR)
            side.write_shut = True

    def _watch(self, link: _Link) -> None:
        """Watch each side for what it can do now: read while its peer's buffer has room, write while it has
        bytes to send."""
        for side in (link.client, link.upstream):
            peer = link.peer(side)
            events = ((select.POLLIN if side.reading and len(peer.out) < BUFFER else 0)
                      | (select.POLLOUT if side.out else 0))
            if events == side.events:
                continue
            if events:
                self._poll.register(side.fd, events)  # adds or modifies
                self._sides[side.fd] = side
            else:
                self._poll.unregister(side.fd)
                del self._sides[side.fd]
            side.events = events

    def _close(self, link: _Link, abort: bool = False) -> None:
        if link.closed:
            return
        link.closed = True
        self._links.discard(link)
        for side in (link.client, link.upstream):
            if side.events:
                self._poll.unregister(side.fd)
                del self._sides[side.fd]
                side.events = 0
            if abort:
                _abort(side.sock)
            else:
                side.sock.close()


def _abort(sock: _socket.socket) -> None:
    """Close ``sock`` with a reset rather than an orderly end (the peer sees the connection fail)."""
    try:
        if sock.family != _socket.AF_UNIX:
            sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_LINGER, _LINGER_RESET)
    except OSError:
        pass
    sock.close()


def serve(unix_path: str, sock: _socket.socket) -> None:
    """Forward every connection accepted on ``sock`` (a :class:`socket.socket` or ``_socket.socket``) to the
    Unix socket ``unix_path``; runs until the process ends (see :class:`Bridge` to stop it)."""
    Bridge(unix_path, sock).serve_forever()


class BridgeThread:
    """The bridge on a daemon thread (imports :mod:`threading` when created: host side only).

    ``sock`` is an already listening socket (see :func:`listen_socket`): clients
    that connect before the loop runs wait in the listen backlog, so a command
    can start as soon as the socket exists.
    """

    def __init__(self, unix_path: str, sock: _socket.socket):
        import threading

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


def _split_listen(value: str) -> tuple[str, int] | None:
    host, sep, port = value.rpartition(":")
    return (host or "127.0.0.1", int(port)) if sep and port.isdigit() else None


def _parse_listen(value: str) -> tuple[str, int]:
    import argparse

    address = _split_listen(value)
    if address is None:
        raise argparse.ArgumentTypeError(f"--listen must be HOST:PORT, got {value!r}")
    return address


def _parse_args(argv: list[str]) -> tuple[tuple[str, int], str]:
    """``(host, port), unix_path`` from the command line.  ``--listen HOST:PORT --unix PATH``, as the Docker
    backend passes them at every sandbox start, is read without :mod:`argparse` (whose import, with ``re`` and
    ``enum``, costs about 25 ms of CPU); anything else (help, errors, defaults) goes through argparse."""
    opts = dict(zip(argv[::2], argv[1::2])) if len(argv) == 4 else {}
    if (set(opts) == {"--listen", "--unix"} and not opts["--unix"].startswith("-")
            and (address := _split_listen(opts["--listen"])) is not None):
        return address, opts["--unix"]
    import argparse

    parser = argparse.ArgumentParser(prog="python -m harness.sandbox.bridge", description=__doc__.split("\n")[0])
    parser.add_argument("--listen", type=_parse_listen, default=("127.0.0.1", 8765), help="HOST:PORT to accept on")
    parser.add_argument("--unix", required=True, help="Unix socket to forward to")
    args = parser.parse_args(argv)
    return args.listen, args.unix


def main(argv: list[str] | None = None) -> int:
    """Run the bridge from the command line (see the module's docstring); returns the exit status (1: cannot
    listen; bad arguments exit with 2)."""
    (host, port), unix_path = _parse_args(sys.argv[1:] if argv is None else argv)
    try:
        sock = listen_socket(host, port)
    except OSError as exc:
        print(f"bridge: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
        return 1
    print(f"bridge: {host}:{sock.getsockname()[1]} -> {unix_path}", file=sys.stderr, flush=True)
    try:
        serve(unix_path, sock)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
