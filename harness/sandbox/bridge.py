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

Run stand-alone::

    python -m harness.sandbox.bridge --listen 127.0.0.1:8765 --unix /run/harness/proxy.sock
"""

from __future__ import annotations

import socket
import sys
import threading

CHUNK = 64 * 1024


def listen_socket(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket (``port`` 0 picks a free port).  Raises OSError if taken."""
    return socket.create_server((host, port), backlog=256)


async def _pump(reader, writer, peer) -> None:
    """Copy ``reader`` -> ``writer`` until EOF, then half-close; on a reset abort both sides."""
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof() and not writer.is_closing():
            writer.write_eof()
    except OSError:
        writer.transport.abort()
        peer.transport.abort()


async def _handle(unix_path: str, client_reader, client_writer) -> None:
    import asyncio

    try:
        up_reader, up_writer = await asyncio.open_unix_connection(unix_path, limit=CHUNK)
    except OSError as exc:
        print(f"bridge: cannot reach {unix_path}: {exc}", file=sys.stderr, flush=True)
        client_writer.transport.abort()
        return
    try:
        await asyncio.gather(
            _pump(client_reader, up_writer, client_writer),
            _pump(up_reader, client_writer, up_writer),
        )
    finally:
        for w in (up_writer, client_writer):
            w.close()


async def serve(unix_path: str, sock: socket.socket, started: threading.Event | None = None,
                stop: object | None = None) -> None:
    """Forward every connection accepted on ``sock`` to the Unix socket ``unix_path``.

    Runs until cancelled, or until the asyncio.Event ``stop`` is set.
    """
    import asyncio

    server = await asyncio.start_server(lambda r, w: _handle(unix_path, r, w), sock=sock, limit=CHUNK)
    async with server:
        if started is not None:
            started.set()
        if stop is None:
            await server.serve_forever()
        else:
            await stop.wait()


class BridgeThread:
    """The bridge on a daemon thread with its own event loop.

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
        self._loop = None
        self._stop = None
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
        import asyncio

        async def main():
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            await serve(self.unix_path, self.sock, self.started, self._stop)

        try:
            asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001 - reported through .error
            self.error = exc
            self.started.set()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop accepting and close the listening socket (idempotent)."""
        if self._loop is not None and self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
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
    import asyncio

    try:
        asyncio.run(serve(args.unix, sock))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
