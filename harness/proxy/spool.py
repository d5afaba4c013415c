"""Large request bodies go to disk, not memory.

A request body over :data:`SPOOL_BYTES` is written, chunk by chunk as it arrives, to an anonymous temporary
file in the episode's folder (beside its proxy log; removed when the request is done) and streamed from
there to the upstream, so one body costs the proxy a few chunks of memory, not its size.  The threshold is
:data:`harness.proxy.log.FULL_BODY_MAX`, the size past which the proxy log stores a body truncated anyway
(a text prefix, ``size`` and ``sha256``, computed here while the body is written): nothing that the log or
the usage arithmetic needs is lost by spooling.  An upstream that wants the bytes themselves (the offline
script backends) reads them from :attr:`harness.proxy.UpstreamRequest.body_file`
(:meth:`~harness.proxy.UpstreamRequest.read_body`).
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

from harness.proxy.log import FULL_BODY_MAX, TRUNCATED_PREFIX

#: Bodies larger than this (bytes) are spooled to disk.
SPOOL_BYTES = FULL_BODY_MAX


class Spooled:
    """A request body on disk: ``file`` (rewound when :meth:`finish` is called), ``size`` bytes."""

    def __init__(self, folder: Path | str, first: bytes | bytearray = b""):
        self.file = tempfile.TemporaryFile(dir=folder, prefix=".body-")
        self.size = 0
        self._sha = hashlib.sha256()
        self._prefix = bytearray()
        if first:
            self.write(first)

    def write(self, chunk: bytes | bytearray) -> None:
        self.file.write(chunk)
        self._sha.update(chunk)
        if len(self._prefix) < TRUNCATED_PREFIX:
            self._prefix += chunk[:TRUNCATED_PREFIX - len(self._prefix)]
        self.size += len(chunk)

    def finish(self) -> Spooled:
        self.file.flush()
        self.file.seek(0)
        return self

    def log_fields(self) -> dict[str, Any]:
        """The ``proxy.jsonl`` fields of the body: stored truncated (see :func:`harness.proxy.log.truncated_body`)."""
        return {"body": bytes(self._prefix).decode("utf-8", "replace"), "body_encoding": "text", "truncated": True,
                "size": self.size, "sha256": self._sha.hexdigest()}

    def close(self) -> None:
        self.file.close()


async def spool(content: Any, folder: Path | str, first: bytes | bytearray = b"",
                limit: int | None = None) -> Spooled:
    """Write ``first`` and the rest of the aiohttp stream ``content`` to a :class:`Spooled` body in ``folder``;
    ``limit``: raise ``ValueError`` with the size so far once the body passes it."""
    body = Spooled(folder, first)
    try:
        async for chunk in content.iter_chunked(1 << 20):
            body.write(chunk)
            if limit is not None and body.size > limit:
                raise ValueError(body.size)
        return body.finish()
    except BaseException:
        body.close()
        raise
