"""The five generation judges of Dr-CiK Appendix L.2 (and the generator) as plugins of the judge registry.

Each stage of ``harness dr-generate`` that the paper guards has its judge (Appendix D.2): Entity (step 1),
Ground-Truth Evidence (step 4), Reasoning Chain (step 5), Supporting Documents and Distractor Documents
(step 8).  They are registered (kind ``generation``) so that agent profiles can configure their models
(``agent: dr-gen-evidence``) and ``harness plugins list`` shows them with their prompt hashes; the engine
(:mod:`.engine`) asks them through the prompt named by :attr:`GenerationJudge.prompt` and reads their
verdict with :meth:`GenerationJudge.read`.  They do not match evidence items: ``judge()`` (the evidence
contract) answers an ``error`` verdict, and ``harness dr-score`` refuses them.
"""

from __future__ import annotations

from typing import Sequence

from harness import VERDICT_ERROR, VERDICT_MALFORMED, Judge, Verdict


class GenerationJudge(Judge):
    """One generation-stage judge: ``name``, the Appendix L ``prompt`` it fills, the ``steps`` it guards."""

    kind = "generation"

    def __init__(self, name: str, prompt: str, steps: tuple[int, ...]):
        self.name, self.prompt, self.steps = name, prompt, steps

    @property
    def version(self) -> str:  # the prompt's hash: a changed prompt is another judge
        from tsagent_plugins.tasks.drcik.generation import prompts

        return prompts.load(self.prompt).sha256[:12] if self.prompt else "none"

    def read(self, text: str | None) -> Verdict:
        """The verdict of an answer: matched True only for ``"judge": "correct"``; malformed when the answer
        is not the L.2 JSON."""
        from tsagent_plugins.tasks.drcik.generation.engine import Malformed, parse_json
        from tsagent_plugins.tasks.drcik.generation.schemas import JudgeVerdict

        try:
            verdict = parse_json(text, JudgeVerdict)
        except Malformed as exc:
            return Verdict(None, status=VERDICT_MALFORMED, reason=str(exc), raw=(text or "")[:500])
        return Verdict(verdict["judge"] == "correct", reason=verdict.get("correction_hint") or verdict["summary"],
                       raw=(text or "")[:500], info={"judge": verdict["judge"]})

    def judge(self, item: str, candidates: Sequence[str]) -> Verdict:
        return Verdict(None, status=VERDICT_ERROR, reason=f"{self.name} guards a dr-generate stage; it does not "
                                                          "match evidence items (use llm-judge or lexical)")


JUDGES = (
    GenerationJudge("dr-gen-entity", "judge_entity", (1,)),
    GenerationJudge("dr-gen-evidence", "judge_evidence", (4,)),
    GenerationJudge("dr-gen-chain", "judge_chain", (5,)),
    GenerationJudge("dr-gen-supporting", "judge_supporting", (8,)),
    GenerationJudge("dr-gen-distractor", "judge_distractor", (8,)),
)
#: the generator's registry entry, so a profile can configure the generator's model (it judges nothing)
GENERATOR = GenerationJudge("dr-gen-generator", "", (1, 2, 3, 4, 5, 6, 7, 8))
