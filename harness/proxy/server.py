"""The model proxy: a reverse HTTP proxy on one Unix socket per episode.

One :class:`ModelProxy` serves a whole run from a background thread that owns
an asyncio event loop (the harness itself is synchronous).  Each episode gets
its own socket, proxy log, prices, budget and counters; every request on
that socket goes to the run's :class:`~harness.proxy.upstream.Upstream` (or an
episode-specific one), and the answer is streamed back chunk by chunk as the
upstream produces it.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
import time
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web

from harness.limits import InflightBytes
from harness.proxy.connections import DEFAULT_PER_EPISODE, ConnectionCap, raise_open_files
from harness.proxy.accounting import EpisodeMeter, EpisodeUsage, classify_status, describe_cap
from harness.proxy.http import HOP_HEADERS
from harness.proxy.paths import PathOutsideBase, normal_path
from harness.proxy.spool import SPOOL_BYTES, Spooled, spool
from harness.proxy.log import ProxyLogWriter, encode_body, logged_headers
from harness.proxy.redact import Redactor, StreamScrubber
from harness.proxy.sse import SSEParser
from harness.proxy.upstream import Upstream, UpstreamRequest, UpstreamResponse, UpstreamUnreachable
from harness.proxy.wire import StreamUsage, error_body, usage_from_body

T = TypeVar("T")

#: Longest socket path Linux accepts (``sun_path`` is 108 bytes with the NUL).
MAX_SOCKET_PATH = 107
#: Largest request body accepted (image inputs can be big).
MAX_BODY_BYTES = 512 * 1024 * 1024
#: Request bodies a proxy holds at once when not given a run's shared bound (RunSettings.proxy_inflight_mb).
DEFAULT_INFLIGHT_BYTES = 1024 * 1024 * 1024


class _TooLarge(Exception):
    """A request body that can never fit the in-flight bound."""


@dataclass
class _Episode:
    episode_id: str
    socket_path: Path
    log: ProxyLogWriter
    meter: EpisodeMeter
    upstream: Upstream
    own_upstream: bool
    redact: Redactor
    runner: web.AppRunner | None = None


_EPISODE = web.AppKey("episode", _Episode)


class ModelProxy:
    """Serve episodes' model traffic; see :mod:`harness.proxy` for the full contract.

    ``start()``/``stop()`` (or ``with ModelProxy(upstream) as proxy:``) run the
    background loop.  ``shutdown_timeout`` (s) bounds how long closing an
    episode waits for in-flight responses before cutting them off.
    """

    def __init__(self, upstream: Upstream, *, shutdown_timeout: float = 2.0, max_body_bytes: int = MAX_BODY_BYTES,
                 limiter: Any = None, inflight: Any = None, log_budget: int | None = None,
                 max_connections: int = DEFAULT_PER_EPISODE):
        if not isinstance(upstream, Upstream):
            raise TypeError(f"ModelProxy needs a harness.proxy.Upstream, got {type(upstream).__name__}")
        self.upstream = upstream
        self.shutdown_timeout = shutdown_timeout
        self.max_body_bytes = max_body_bytes
        self.limiter = limiter  # harness.limits.RateLimiter shared by the run's proxies (None: no limit)
        # harness.limits.InflightBytes shared by the run's proxies: request bodies held at once
        self.inflight = inflight if inflight is not None else InflightBytes(DEFAULT_INFLIGHT_BYTES)
        self.log_budget = log_budget  # bytes of bodies (uncompressed) each episode's proxy log stores in full (None: all)
        self.max_connections = max_connections  # per episode socket, see harness.proxy.connections
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._episodes: dict[str, _Episode] = {}
        self._lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> ModelProxy:
        """Start the background loop (idempotent; raises the process's soft open-file limit to the hard one,
        :func:`harness.proxy.connections.raise_open_files`); returns self."""
        if self.running:
            return self
        raise_open_files()
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=self._run, args=(loop,), name="model-proxy", daemon=True)
        self._loop, self._thread = loop, thread
        thread.start()
        self._call(self.upstream.startup())
        return self

    @staticmethod
    def _run(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            loop.close()

    def stop(self) -> None:
        """Close every open episode (their usage is discarded), stop the upstream and the loop."""
        if not self.running:
            return
        for episode_id in list(self._episodes):
            try:
                self.close_episode(episode_id)
            except Exception:  # noqa: BLE001 - stopping must not fail half-way
                pass
        try:
            self._call(self.upstream.shutdown())
        finally:
            assert self._loop is not None and self._thread is not None
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop = self._thread = None

    def __enter__(self) -> ModelProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float | None = 60.0) -> T:
        if self._loop is None:
            coro.close()
            raise RuntimeError("the model proxy is not running: call start() or use it as a context manager")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    # -- episodes ------------------------------------------------------------
    def open_episode(self, episode_id: str, socket_path: Path | str, log_path: Path | str, prices: Any,
                     budget: Any, upstream: Upstream | None = None) -> None:
        """Serve ``episode_id`` on a new Unix socket at ``socket_path`` (mode 0666).

        Requests and responses go to ``log_path`` (``proxy.jsonl.zst``: compressed); usage is
        priced with ``prices`` (:class:`harness.config.Prices`) and capped by
        ``budget`` (:class:`harness.config.Budget`).  ``upstream`` overrides the
        run's upstream for this episode only.  Raises ``ValueError`` for a
        duplicate episode id, a socket path over 107 bytes or a path occupied by
        something that is not a socket; ``RuntimeError`` if the proxy is not running.
        """
        socket_path = Path(socket_path)
        size = len(os.fsencode(str(socket_path)))
        if size > MAX_SOCKET_PATH:
            raise ValueError(f"proxy socket path is {size} bytes, over the {MAX_SOCKET_PATH}-byte limit of "
                             f"Unix sockets: {socket_path}")
        if socket_path.exists() or socket_path.is_symlink():
            if not stat.S_ISSOCK(socket_path.lstat().st_mode):
                raise ValueError(f"proxy socket path exists and is not a socket: {socket_path}")
            socket_path.unlink()
        socket_path.parent.mkdir(parents=True, exist_ok=True)
        up = upstream or self.upstream
        with self._lock:
            if episode_id in self._episodes:
                raise ValueError(f"episode {episode_id!r} is already open on the model proxy")
            redact = Redactor(up.secrets() + self.upstream.secrets())
            episode = _Episode(episode_id, socket_path, ProxyLogWriter(log_path, redact, self.log_budget),
                               EpisodeMeter(episode_id, prices, budget), up, up is not self.upstream, redact)
            self._episodes[episode_id] = episode
        try:
            self._call(self._serve(episode))
        except BaseException:
            with self._lock:
                self._episodes.pop(episode_id, None)
            episode.log.close()
            raise

    async def _serve(self, episode: _Episode) -> None:
        if episode.own_upstream:
            await episode.upstream.startup()
        app = web.Application(client_max_size=self.max_body_bytes)
        app[_EPISODE] = episode
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=self.shutdown_timeout)
        await runner.setup()
        site = _CappedUnixSite(runner, str(episode.socket_path), self.max_connections)
        await site.start()
        os.chmod(episode.socket_path, 0o666)
        episode.runner = runner
        episode.upstream.open_episode(episode.episode_id)

    def close_episode(self, episode_id: str) -> EpisodeUsage:
        """Stop serving ``episode_id``; returns its :class:`EpisodeUsage`.  ``KeyError`` if not open."""
        with self._lock:
            episode = self._episodes.pop(episode_id, None)
        if episode is None:
            raise KeyError(f"episode {episode_id!r} is not open on the model proxy")
        return self._call(self._close(episode), timeout=self.shutdown_timeout + 60)

    async def _close(self, episode: _Episode) -> EpisodeUsage:
        try:
            if episode.runner is not None:
                await episode.runner.cleanup()
            episode.upstream.close_episode(episode.episode_id)
            if episode.own_upstream:
                await episode.upstream.shutdown()
        finally:
            episode.log.close()
            try:
                episode.socket_path.unlink()
            except FileNotFoundError:
                pass
        episode.meter.finalize()
        return episode.meter.snapshot()

    def usage(self, episode_id: str) -> EpisodeUsage:
        """A live snapshot of an open episode's counters."""
        with self._lock:
            episode = self._episodes.get(episode_id)
        if episode is None:
            raise KeyError(f"episode {episode_id!r} is not open on the model proxy")

        async def snap() -> EpisodeUsage:
            return episode.meter.snapshot()

        return self._call(snap())

    # -- request handling ----------------------------------------------------
    async def _read_body(self, request: web.Request) -> tuple[bytes | Spooled, int]:
        """The request body and the in-flight bytes taken for it (given back by the caller); waits for room
        under the run's in-flight bound; raises _TooLarge for a body that can never fit.  A body over
        ``SPOOL_BYTES`` is written to disk as it comes (:mod:`harness.proxy.spool`) and holds no in-flight bytes."""
        limit = min(self.inflight.limit, self.max_body_bytes)
        known = request.content_length
        if known is not None:
            if known > limit:
                raise _TooLarge(known)
            if known > SPOOL_BYTES:  # on disk, not in memory (harness.proxy.spool)
                return await spool(request.content, request.app[_EPISODE].log.path.parent), 0
            await self.inflight.take(known)
            try:  # filled in place: the body is held once (request.read() holds it twice while reading)
                body = bytearray(known)
                view, pos = memoryview(body), 0
                while pos < known:
                    chunk = await request.content.readany()
                    if not chunk:
                        break
                    view[pos:pos + len(chunk)] = chunk[:known - pos]
                    pos += len(chunk)
                view.release()
                del body[pos:]
                return body, known
            except BaseException:
                self.inflight.give(known)
                raise
        parts, held = [], 0
        try:
            async for chunk in request.content.iter_chunked(1 << 20):
                if held + len(chunk) > limit:
                    raise _TooLarge(held + len(chunk))
                if held + len(chunk) > SPOOL_BYTES:  # from here on, on disk (harness.proxy.spool)
                    first, parts = b"".join(parts) + chunk, []
                    self.inflight.give(held)
                    held = 0
                    try:
                        return await spool(request.content, request.app[_EPISODE].log.path.parent, first, limit), 0
                    except ValueError as exc:
                        raise _TooLarge(exc.args[0]) from None
                await self.inflight.take(len(chunk))
                held += len(chunk)
                parts.append(chunk)
        except BaseException:
            self.inflight.give(held)
            raise
        return b"".join(parts), held

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        ep = request.app[_EPISODE]
        meter = ep.meter
        seq = meter.next_seq()
        try:  # dot segments out; a path leaving the base URL's path is refused before anything is forwarded
            path = normal_path(request.rel_url.raw_path)
        except PathOutsideBase as exc:
            raw = request.rel_url.raw_path
            wire = UpstreamRequest(ep.episode_id, request.method, raw, "", {}, b"").wire or "unknown"
            ep.log.write({"type": "request", "seq": seq, "ts": time.time(), "method": request.method, "path": raw,
                          "wire": wire, "headers": logged_headers(dict(request.headers)), "body": None,
                          "body_encoding": None})
            return self._local_error(ep, seq, wire, 400, f"model proxy: {exc}", code="invalid_path")
        try:
            body, held = await self._read_body(request)
        except _TooLarge as exc:
            limit = min(self.inflight.limit, self.max_body_bytes)
            url = request.rel_url
            wire = UpstreamRequest(ep.episode_id, request.method, url.raw_path, "", {}, b"").wire or "unknown"
            ep.log.write({"type": "request", "seq": seq, "ts": time.time(), "method": request.method,
                          "path": url.raw_path, "wire": wire, "headers": logged_headers(dict(request.headers)),
                          "body": None, "body_encoding": None, "truncated": True, "size": int(str(exc))})
            return self._local_error(ep, seq, wire, 413, f"model proxy: request body of at least {exc} bytes "
                                     f"is over the proxy's bound of {limit} bytes", code="request_too_large")
        try:
            return await self._forward(request, ep, seq, body, path)
        finally:
            self.inflight.give(held)
            if isinstance(body, Spooled):
                body.close()

    async def _forward(self, request: web.Request, ep: _Episode, seq: int, body: bytes | Spooled,
                       path: str) -> web.StreamResponse:
        meter = ep.meter
        url = request.rel_url
        spooled = body if isinstance(body, Spooled) else None
        ureq = UpstreamRequest(ep.episode_id, request.method, path, url.raw_query_string,
                               dict(request.headers), b"" if spooled else body,
                               body_file=spooled.file if spooled else None)
        wire = ureq.wire or "unknown"
        shown_query = "&".join(p for p in ureq.query.split("&") if p and not p.startswith("key="))
        ep.log.write({"type": "request", "seq": seq, "ts": time.time(), "method": ureq.method, "path": ureq.path,
                      "query": shown_query, "wire": wire, "headers": logged_headers(ureq.headers),
                      **(spooled.log_fields() if spooled else ep.log.body_fields(body))})

        cap = meter.admit() if request.method != "HEAD" else None  # connectivity probes are not model requests
        if cap:
            message = describe_cap(cap, meter.budget, meter)
            return self._local_error(ep, seq, wire, 400, message, code="budget_exceeded", extra={"refused": cap})
        ticket = (ep.episode_id, seq)
        if self.limiter is not None and request.method != "HEAD":
            await self.limiter.acquire(ticket)
        try:
            uresp = await ep.upstream.handle(ureq)
        except UpstreamUnreachable as exc:
            self._settle(ticket, None)
            message = ep.redact(str(exc))
            err = meter.record_error("upstream_unreachable", message, None, seq)
            return self._local_error(ep, seq, wire, 502, f"model proxy: upstream unreachable: {message}",
                                     extra={"error": {"kind": err.kind, "message": message}})
        except Exception as exc:  # noqa: BLE001 - an upstream bug is an infrastructure error
            self._settle(ticket, None)
            message = ep.redact(f"{type(exc).__name__}: {exc}")
            err = meter.record_error("upstream_error", message, None, seq)
            return self._local_error(ep, seq, wire, 502, f"model proxy: upstream failed: {message}",
                                     extra={"error": {"kind": err.kind, "message": message}})
        return await self._relay(request, ep, seq, wire, uresp)

    def _settle(self, ticket: tuple[str, int], usage: Any) -> None:
        if self.limiter is not None:
            self.limiter.settle(ticket, usage.total_tokens if usage is not None else 0)

    def _local_error(self, ep: _Episode, seq: int, wire: Any, status: int, message: str,
                     code: str | None = None, extra: dict | None = None) -> web.Response:
        payload = error_body(wire, status, message, code)
        now = time.time()
        ep.log.write({"type": "response", "seq": seq, "ts": now, "status": status, "stream": False,
                      "content_type": "application/json", "first_byte_ts": now, "last_byte_ts": now,
                      "body": payload, "body_encoding": "json", "usage": None, "cost_usd": 0.0,
                      "origin": "proxy", **(extra or {})})
        return web.json_response(payload, status=status)

    async def _relay(self, request: web.Request, ep: _Episode, seq: int, wire: Any,
                     uresp: UpstreamResponse) -> web.StreamResponse:
        meter = ep.meter
        ctype = uresp.headers.get("content-type", "")
        stream = "text/event-stream" in ctype.lower()
        headers = {k: v for k, v in uresp.headers.items() if k.lower() not in HOP_HEADERS}
        resp = web.StreamResponse(status=uresp.status, headers=headers)
        buf = bytearray()
        first = last = None
        parser, acc = SSEParser(), StreamUsage(wire)
        scrub = StreamScrubber(ep.redact.secrets)
        interrupted: str | None = None
        client_gone = cut_off = False
        if uresp.assertion_failure:
            meter.assertion_failures.append(uresp.assertion_failure)
        try:
            try:
                await resp.prepare(request)
            except (ConnectionError, RuntimeError):
                client_gone = True
            async for chunk in _nothing() if client_gone else uresp.chunks:
                now = time.time()
                first = first or now
                last = now
                buf += chunk
                if stream:
                    for event in parser.feed(chunk):
                        acc.feed(event)
                try:
                    safe = scrub.feed(chunk)
                    if safe:
                        await resp.write(safe)
                except (ConnectionError, RuntimeError):
                    client_gone = True
                    break
        except asyncio.CancelledError:
            cut_off = True  # the episode was closed while the response was streaming
            raise
        except Exception as exc:  # noqa: BLE001 - a broken upstream stream is recorded, not fatal
            interrupted = ep.redact(f"stream interrupted: {type(exc).__name__}: {exc}")
        finally:
            closer = getattr(uresp.chunks, "aclose", None)
            if closer is not None:
                try:
                    await closer()
                except Exception:  # noqa: BLE001
                    pass
            if uresp.release is not None:
                try:
                    await uresp.release()
                except Exception:  # noqa: BLE001
                    pass
            self._finish(ep, seq, wire, uresp, bytes(buf), stream, parser, acc, first, last, interrupted,
                         client_gone, cut_off, request.method != "HEAD")
        if interrupted and request.transport is not None:
            request.transport.close()  # the client must see a broken stream, not a clean end
        elif not client_gone:
            try:
                rest = scrub.flush()
                if rest:
                    await resp.write(rest)
                await resp.write_eof()
            except (ConnectionError, RuntimeError):
                pass
        return resp

    def _finish(self, ep: _Episode, seq: int, wire: Any, uresp: UpstreamResponse, raw: bytes, stream: bool,
                parser: SSEParser, acc: StreamUsage, first: float | None, last: float | None,
                interrupted: str | None, client_gone: bool, cut_off: bool, model_call: bool = True) -> None:
        meter = ep.meter
        usage = None
        parsed = encode_body(raw) if not stream or ep.log.body_budget is None or len(raw) <= ep.log.body_budget \
            else None
        if uresp.status < 400:
            if stream:
                for event in parser.close():
                    acc.feed(event)
                usage = acc.result()
            elif parsed is not None and parsed[1] == "json":
                usage = usage_from_body(parsed[0], wire)
        cost = meter.add(usage) if usage is not None else 0.0
        self._settle((ep.episode_id, seq), usage)
        record: dict[str, Any] = {
            "type": "response", "seq": seq, "ts": time.time(), "status": uresp.status, "stream": stream,
            "content_type": uresp.headers.get("content-type"), "headers": logged_headers(uresp.headers),
            "first_byte_ts": first, "last_byte_ts": last, **ep.log.body_fields(raw, parsed),
            "usage": usage.to_dict() if usage is not None else None, "cost_usd": cost, "origin": "upstream",
        }
        kind = classify_status(uresp.status)
        if interrupted:
            kind = "upstream_error"
        if kind:
            excerpt = ep.redact(raw[:500].decode("utf-8", "replace"))
            message = interrupted or f"HTTP {uresp.status} from upstream: {excerpt}"
            err = meter.record_error(kind, message, uresp.status, seq)
            record["error"] = {"kind": err.kind, "message": err.message}
        if client_gone:
            record["client_disconnected"] = True
        if cut_off:
            record["cut_off"] = "the episode was closed while the response was streaming"
        if uresp.assertion_failure:
            record["assertion_failure"] = uresp.assertion_failure
        if model_call and uresp.status < 400 and (usage is None or interrupted or cut_off or client_gone):
            meter.usage_missing += 1  # the totals are lower bounds (EpisodeUsage.usage_missing)
            record["usage_missing"] = "partial" if usage is not None else "none"
        ep.log.write(record)


class _CappedUnixSite(web.UnixSite):
    """aiohttp's Unix-socket site serving at most ``limit`` connections at once (:class:`ConnectionCap`)."""

    def __init__(self, runner: web.AppRunner, path: str, limit: int):
        super().__init__(runner, path)
        self.cap: ConnectionCap | None = None
        self._limit = limit

    async def start(self) -> None:
        await web.BaseSite.start(self)  # registers the site with its runner (which stops it on cleanup)
        assert self._runner.server is not None
        self.cap = ConnectionCap(self._runner.server, self._limit)
        self._server = await asyncio.get_running_loop().create_unix_server(self.cap, self._path,
                                                                           backlog=self._backlog)


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield b""  # pragma: no cover - makes this an async generator
