"""Evidence judges (Dr-CiK Appendix H.1): ``llm-judge`` (through the model proxy) and ``lexical`` (offline)."""

from harness import hookimpl


@hookimpl
def register_judges(register):
    from tsagent_plugins.judges.lexical import LexicalJudge
    from tsagent_plugins.judges.llm import LLMJudge

    register(LLMJudge())
    register(LexicalJudge())
