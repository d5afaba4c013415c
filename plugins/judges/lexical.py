"""``lexical``: an offline, deterministic evidence judge (no model, no weights).

Stands in for the paper's LLM judge (Appendix H.1) where no model can be called; its
numbers are *not* the paper's and every report labels them ``lexical``.

Rule (version :data:`VERSION`), for a ground-truth item g and a candidate c:

1. Normalise both: Unicode NFKC, lower case; dates (``2025-10-12``, ``2025/10/12``, with an
   optional ``hh:mm[:ss]`` time) become one token ``2025-10-12`` (``2025-10-12t08:20`` with a
   non-midnight time); numbers lose thousands separators and trailing zeros
   (``1,200.50`` → ``1200.5``; ``20%`` → ``20`` and ``%``); other tokens are runs of letters;
   English stop words are dropped.
2. Every date and every number of g must appear in c (exact match after normalisation):
   a claim with another date or count is not a match.
3. Word overlap: the share of g's remaining distinct words found in c, ≥ :data:`THRESHOLD`.
   An item without words (only dates/numbers) is decided by step 2 alone.

The first candidate (in the agent's order) meeting 2 and 3 is the match.  The threshold 0.5
is a fixed choice: half of the item's content words, so a paraphrase that keeps the key
nouns passes and a topical neighbour that shares one or two words does not.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Sequence

from harness import Judge, Verdict

VERSION = "lexical-v1"
THRESHOLD = 0.5

STOP_WORDS = frozenset("""a an the and or of to in on at for from by with as is are was were be been being this that
these those it its there their they them he she his her we our you your i not no but if then than so such
which who whom whose what when where while into over under about after before during between through
would will can could should may might must has have had do does did also very more most""".split())

_DATE = re.compile(r"(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[ t](\d{1,2}):(\d{2})(?::(\d{2}))?)?")
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")
_WORD = re.compile(r"[^\W\d_]+")


def _number(text: str) -> str:
    value = text.replace(",", "").lstrip("+")
    if "." in value:
        value = value.rstrip("0").rstrip(".")
    return value or "0"


def tokens(text: str) -> tuple[set[str], set[str]]:
    """(dates and numbers, content words) of ``text`` after normalisation (see module docstring)."""
    text = unicodedata.normalize("NFKC", text).lower()
    exact: set[str] = set()

    def date(m: re.Match) -> str:
        y, mo, d, hh, mm, ss = m.groups()
        stamp = f"{y}-{int(mo):02d}-{int(d):02d}"
        if hh is not None and (int(hh), int(mm), int(ss or 0)) != (0, 0, 0):
            stamp += f"t{int(hh):02d}:{mm}" + (f":{ss}" if ss and ss != "00" else "")
        exact.add(stamp)
        return " "

    rest = _DATE.sub(date, text)
    for m in _NUMBER.finditer(rest):
        exact.add(_number(m.group()))
    rest = _NUMBER.sub(" ", rest)
    words = {w for w in _WORD.findall(rest) if w not in STOP_WORDS and len(w) > 1}
    return exact, words


def overlap(item: str, candidate: str) -> tuple[bool, float]:
    """(every date/number of ``item`` is in ``candidate``, share of ``item``'s words in ``candidate``)."""
    g_exact, g_words = tokens(item)
    c_exact, c_words = tokens(candidate)
    share = len(g_words & c_words) / len(g_words) if g_words else 1.0
    return g_exact <= c_exact, share


class LexicalJudge(Judge):
    """Normalised token overlap with exact dates and numbers (module docstring); deterministic."""

    name = "lexical"
    version = VERSION
    kind = "lexical"

    def __init__(self, threshold: float = THRESHOLD):
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"lexical judge threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold

    def judge(self, item: str, candidates: Sequence[str]) -> Verdict:
        best = 0.0
        for index, candidate in enumerate(candidates, 1):
            exact_ok, share = overlap(item, candidate)
            if exact_ok:
                best = max(best, share)
            if exact_ok and share >= self.threshold:
                return Verdict(True, index, info={"overlap": round(share, 4)})
        return Verdict(False, None, info={"best_overlap": round(best, 4)})
