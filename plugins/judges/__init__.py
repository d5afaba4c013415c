"""Evidence judges (Dr-CiK Appendix H.1): ``llm-judge`` (through the model proxy) and ``lexical`` (offline)."""

from harness.hookspecs import hookimpl


@hookimpl
def register_judges(register):
    from plugins.judges.lexical import LexicalJudge
    from plugins.judges.llm import LLMJudge

    register(LLMJudge())
    register(LexicalJudge())
