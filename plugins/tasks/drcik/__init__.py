"""Dr-CiK: deep research for context-aided forecasting (Tang et al., 2026).

Modules: :mod:`.loader` (release task format and data rules) and :mod:`.flat`
(the flat Hugging Face layout), :mod:`.frequency` (frequency alias table,
seasonal periods), :mod:`.corpus` (the shared corpus as agents see it),
:mod:`.contexts` (context conditions), :mod:`.metrics` (sMAE, sRMSE, sCRPS,
aggregation and average ranks), :mod:`.experiment` (one forecast, forecasters ×
conditions, submission files), :mod:`.spec` (the ``drcik`` params),
:mod:`.template` (the ``drcik`` task template run by ``harness run``) and
:mod:`.report` (Table 2 in ``harness report``).  The embedded public sample
(3 tasks, CC BY 4.0) lives in ``data/sample`` with its attribution.

Episodes have a kind (``params.episode_kind``): ``forecast`` (forecaster ×
context × task, in the harness process) and ``research`` (one task × one
deep-research agent, in a sandbox): :mod:`.research` (workspace, scoring) and
:mod:`.research_outputs` (bounded readers, the release's export files).

Deep-research metrics: :mod:`.dr_metrics` (Appendix H.1, pure functions), :mod:`.dr_inputs`
(reading research episodes), :mod:`.dr_scoring` (judging a research run, ``dr_scores.jsonl``;
the offline lexical judge runs at the end of every research run), :mod:`.dr_cli`
(``harness dr-score``), :mod:`.dr_contexts` (a research episode as the DR conditions' input) and
:mod:`.dr_report` (Tables 2–3, Figures 4, 7, 16).
"""

from harness import hookimpl

__all__ = ["SAMPLE_DIR", "Document", "DrcikTask", "EvidenceItem", "load_task_file", "load_tasks"]


def __getattr__(name: str):
    """The loader's names, imported on first use (registering the plugin loads no task reader)."""
    if name in __all__:
        from tsagent_plugins.tasks.drcik import loader

        return getattr(loader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@hookimpl
def register_task_templates(register):
    """Register the ``drcik`` template (forecasting and research episodes)."""
    from tsagent_plugins.tasks.drcik.template import DrcikTemplate

    register(DrcikTemplate())
    from tsagent_plugins.tasks.drcik.quality.agent_audit import AuditTemplate

    register(AuditTemplate())  # the final agent audit of a dr-generate output (Appendix L.4)


@hookimpl
def register_judges(register):
    """The generation pipeline's models (``harness dr-generate``): its five stage judges and its generator."""
    from tsagent_plugins.tasks.drcik.generation.judges import GENERATOR, JUDGES

    for judge in (*JUDGES, GENERATOR):
        register(judge)


#: Why ``--paper`` adds no Dr-CiK values: said in the report rather than left silent.
NO_PAPER_VALUES = ("--paper: no Dr-CiK paper values (Tables 2, 3, 8, 9, 13, 14): the team's text copy of the paper "
                   "(shared/seeds/002_e814895bd5b3896f.txt) carries the captions but not the table bodies")


def _report_section(frame):
    from harness.reporting import report_options
    from tsagent_plugins.tasks.drcik.report import build_section

    section = build_section(frame)
    if report_options().paper:
        section.messages.append(NO_PAPER_VALUES)
    return section


@hookimpl
def register_report_sections(register):
    register("drcik", _report_section)


def _generation_report(path):
    from tsagent_plugins.tasks.drcik import statistics
    from tsagent_plugins.tasks.drcik.quality.report import build

    section, stats = build(path), statistics.build(path)   # audits, then the generated set's statistics
    return type(section)(section.tables + stats.tables, section.messages + stats.messages,
                         {**section.figures, **stats.figures})


def _release_report(path):
    from tsagent_plugins.tasks.drcik import statistics

    return statistics.build(path)


def _is_release(path):
    from tsagent_plugins.tasks.drcik import statistics

    return statistics.is_release(path)


def _is_generation(path):
    from tsagent_plugins.tasks.drcik.quality.report import is_generation

    return is_generation(path)


@hookimpl
def register_report_folders(register):
    """``harness report GEN_DIR`` for a dr-generate output: its audits and judge calibration (Appendix D) and
    its dataset statistics; ``harness report RELEASE_DIR`` for any release folder: the statistics."""
    register("drcik-generation", _is_generation, _generation_report)
    # any other release folder (the public sample, the released files): Tables 5, 6, 7 and Figure 3
    register("drcik-release", _is_release, _release_report)
