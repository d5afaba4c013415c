"""Scrubbing secrets: from log lines (:class:`Redactor`) and from a byte stream (:class:`StreamScrubber`).

The proxy never sends the host's key into the sandbox, but an upstream could
reflect it (a misconfigured custom server echoing headers).  The stream
scrubber replaces it in the bytes relayed to the client without delaying
ordinary data: it holds back only a chunk's tail that could be the start of
a secret, which never happens at an SSE event boundary (``\\n\\n``).
"""

from __future__ import annotations

REDACTED = "[REDACTED]"


class Redactor:
    """Replaces each secret string with ``[REDACTED]``."""

    def __init__(self, secrets: list[str]):
        self.secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text


class StreamScrubber:
    """Replace secrets in a byte stream fed chunk by chunk.

    :meth:`feed` returns the bytes that are safe to send now; :meth:`flush`
    the held-back rest at the end of the stream.
    """

    def __init__(self, secrets: list[str]):
        self._secrets = [s.encode() for s in Redactor(secrets).secrets]
        self._held = b""

    def feed(self, chunk: bytes) -> bytes:
        if not self._secrets:
            return chunk
        data = self._held + chunk
        for secret in self._secrets:
            data = data.replace(secret, REDACTED.encode())
        keep = self._partial_tail(data)
        self._held = data[len(data) - keep:] if keep else b""
        return data[:len(data) - keep] if keep else data

    def flush(self) -> bytes:
        held, self._held = self._held, b""
        return held

    def _partial_tail(self, data: bytes) -> int:
        """Length of the longest suffix of ``data`` that is a proper prefix of a secret."""
        best = 0
        for secret in self._secrets:
            for n in range(min(len(secret) - 1, len(data)), best, -1):
                if data.endswith(secret[:n]):
                    best = n
                    break
        return best
