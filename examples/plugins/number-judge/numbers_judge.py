"""A third-party evidence judge: an item matches the first candidate that states every number it states
(and, for an item without numbers, shares at least half of its words)."""

from __future__ import annotations

import re
from typing import Sequence

from harness import Judge, Verdict, hookimpl

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
WORD = re.compile(r"[a-z]+")


def _words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if len(w) > 2}


class NumberJudge(Judge):
    name = "number-judge"
    version = "1"
    kind = "rule"

    def judge(self, item: str, candidates: Sequence[str]) -> Verdict:
        numbers = set(NUMBER.findall(item))
        for index, candidate in enumerate(candidates, start=1):
            if numbers:
                if numbers <= set(NUMBER.findall(candidate)):
                    return Verdict(matched=True, index=index)
            elif _words(item) and len(_words(item) & _words(candidate)) * 2 >= len(_words(item)):
                return Verdict(matched=True, index=index)
        return Verdict(matched=False)


@hookimpl
def register_judges(register):
    register(NumberJudge())
