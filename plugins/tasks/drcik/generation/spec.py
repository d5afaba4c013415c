"""The generation spec of ``harness dr-generate`` (e.g. ``tasks/drcik/generate-sample.yaml``)::

    command: dr-generate              # marks a command spec (``harness tasks list`` shows how to run it)
    name: generate-sample
    description: ...
    input: caf-sample                 # folder of CAF tasks, relative to this file
    hops: 4                           # new contexts per reasoning chain (step 5; the release has 4)
    distractors_per_subtype: 5        # as the release has
    rounds: 5                         # attempts per unit (Appendix D.2)
    seed: 0
    window_shift_weeks: 156           # step 3's shift of real series (see generation.window)
    split: open
    script: FILE                      # the scripted backend's script (--model-backend scripted), relative
    models:                           # agent profiles; defaults as the paper ran it (Section 5.1, D.2)
      generator: dr-generator-gemini-3-flash
      judge_entity: judge-gemini-3-flash
      judge_evidence: dr-judge-gpt-5.4-nano
      judge_chain: dr-judge-gpt-5.4-mini
      judge_supporting: dr-judge-gpt-5.4-nano
      judge_distractor: dr-judge-gpt-5.4-mini
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from harness import Strict, load_yaml, parse_config


class Models(Strict):
    """Agent profile of each stage's generator and judge (Dr-CiK Section 5.1 and D.2 "Judge models")."""

    generator: str = "dr-generator-gemini-3-flash"
    judge_entity: str = "judge-gemini-3-flash"
    judge_evidence: str = "dr-judge-gpt-5.4-nano"
    judge_chain: str = "dr-judge-gpt-5.4-mini"
    judge_supporting: str = "dr-judge-gpt-5.4-nano"
    judge_distractor: str = "dr-judge-gpt-5.4-mini"


class GenerationSpec(Strict):
    command: Literal["dr-generate"] = "dr-generate"
    name: str
    description: str = ""
    input: str
    hops: int = Field(4, ge=1, le=20)
    distractors_per_subtype: int = Field(5, ge=1, le=20)
    rounds: int = Field(5, ge=1, le=20)
    seed: int = 0
    window_shift_weeks: int = 156
    split: str = "open"
    script: str | None = None
    models: Models = Models()

    def path(self, spec_file: Path, value: str) -> Path:
        """``value`` resolved against the spec file's folder."""
        p = Path(value)
        return p if p.is_absolute() else (spec_file.resolve().parent / p)


def load_spec(path: Path | str) -> GenerationSpec:
    """Read and validate a generation spec; :class:`harness.ConfigError` naming the file and field."""
    path = Path(path)
    return parse_config(GenerationSpec, load_yaml(path), path)
