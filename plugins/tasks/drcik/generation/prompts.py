"""The generator and judge prompts of Dr-CiK Appendix L, shipped as data (``prompts/<name>.txt``).

The files are the paper's text.  The paper is a PDF extraction, so the files differ from it only by
this documented normalisation (:func:`normalise`, applied to both sides when they are compared):

* whitespace runs (line breaks included) collapse to one space;
* the extraction's ``“‘`` (a code fence) is written as a fence of three backticks on its own line,
  and its lone ``‘`` (an inline code quote) as a backtick; ``’`` as an apostrophe;
* the ``⬇`` marker after each prompt's title is dropped (the title is the file's name).

Placeholders are ``{name}`` with a lower-case identifier (the JSON schemas' braces are not
placeholders); :func:`Prompt.render` fills every one of them and refuses a missing or unknown value.
Each prompt's ``sha256`` (of the file's bytes) is recorded with every generation attempt.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

FOLDER = Path(__file__).parent / "prompts"
PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")

#: file name -> the title of the prompt in Appendix L
TITLES = {
    "entity_extraction": "Entity Extraction (Stage 1)",
    "profile_generation": "Entity Profile Generation (Stage 2)",
    "profile_assignment": "Profile Assignment / Rewritten Background (Stage 3)",
    "evidence_decomposition": "Ground-Truth Evidence Extraction",
    "chain_expansion": "Reasoning Chain Expansion",
    "source_metadata": "Source Metadata Reconstruction",
    "meta2doc": "Metadata-to-Document Content",
    "distractor_generic": "Distractor Content Generation (Off-variable / Irrelevant / Off-entity / Off-window)",
    "counterfactual_spec": "Counterfactual-History Distractor Specification",
    "counterfactual_item": "Counterfactual-History Distractor Item",
    "judge_entity": "Entity Judge",
    "judge_evidence": "Ground-Truth Evidence Judge",
    "judge_chain": "Reasoning Chain Judge",
    "judge_supporting": "Supporting Documents Judge",
    "judge_distractor": "Distractor Documents Judge",
}

#: Appendix L.3-L.4 prompts: instructions without placeholders; their input is appended by :meth:`Prompt.with_input`
INSTRUCTIONS = {
    "difficulty_certainty": "Certainty",
    "difficulty_domain_knowledge": "Domain Knowledge",
    "difficulty_explicitness": "Explicitness",
    "difficulty_temporal_complexity": "Temporal Complexity",
    "final_agent_audit": "Final Agent Audit",
}
#: prompts the harness writes for what the paper describes without printing a prompt (the audits of Appendix D.1)
HARNESS = {
    "audit_distractor": "Distractor distinguishability check (harness, Appendix D.1)",
    "audit_cloze": "Cloze reconstruction (harness, Appendix D.1)",
}
#: the line between an instruction prompt and its input (the paper prints the instructions only)
INPUT_HEADER = "\n\nInput:\n"


def normalise(text: str) -> str:
    """The comparison form of a prompt (module docstring)."""
    text = text.replace("⬇", " ").replace("“‘", " ``` ").replace("‘", "`").replace("’", "'")
    return re.sub(r"\s+", " ", text).strip()


@dataclass(frozen=True)
class Prompt:
    """One Appendix L prompt: ``name`` (file stem), ``text``, ``sha256`` of the file, ``placeholders``."""

    name: str
    text: str
    sha256: str

    @property
    def placeholders(self) -> list[str]:
        """Placeholder names in order of first appearance."""
        return list(dict.fromkeys(PLACEHOLDER.findall(self.text)))

    def render(self, **values: object) -> str:
        """The prompt with every placeholder filled (``str(value)``); ValueError naming a missing or unused
        value, so a stage never sends a prompt with a ``{placeholder}`` left in it."""
        wanted = set(self.placeholders)
        missing, extra = sorted(wanted - set(values)), sorted(set(values) - wanted)
        if missing or extra:
            raise ValueError(f"prompt {self.name}: " + "; ".join(
                ([f"missing value(s) {', '.join(missing)}"] if missing else [])
                + ([f"no placeholder for {', '.join(extra)}"] if extra else [])))
        return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), self.text)

    def with_input(self, text: str) -> str:
        """An Appendix L.3/L.4 instruction prompt followed by :data:`INPUT_HEADER` and ``text`` (the paper
        prints the instructions without saying how the input is attached; this is the one way the harness
        attaches it)."""
        return self.text.rstrip("\n") + INPUT_HEADER + text


@lru_cache(maxsize=None)
def load(name: str) -> Prompt:
    """The shipped prompt ``name`` (a key of :data:`TITLES`, :data:`INSTRUCTIONS` or :data:`HARNESS`)."""
    if name not in TITLES and name not in INSTRUCTIONS and name not in HARNESS:
        raise KeyError(f"no Appendix L prompt named {name!r} (known: {', '.join([*TITLES, *INSTRUCTIONS])})")
    data = (FOLDER / f"{name}.txt").read_bytes()
    return Prompt(name, data.decode("utf-8"), hashlib.sha256(data).hexdigest())
