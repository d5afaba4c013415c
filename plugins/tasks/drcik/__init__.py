"""Dr-CiK: deep research for context-aided forecasting (Tang et al., 2026).

The package is the paper's pipeline, one folder per stage (``README.md`` beside this file maps each
section, table and figure to its file and command).  The plugin's face is here: :mod:`.template` (the
``drcik`` task template run by ``harness run``), :mod:`.spec` (its params), :mod:`.columns` (its results
columns), :mod:`.view` (its ``harness view`` pages) and :mod:`.cli` (``harness dr-score``: judge a research run,
print Table 3; it spans research and report, so it sits above both).  The embedded public sample (3 tasks, CC BY 4.0)
lives in ``data/sample`` with its attribution.

- :mod:`.dataset`: the release read in (task files, the flat layout, frequencies, difficulty labels, the
  shared corpus as agents see it, the context conditions);
- :mod:`.forecast`: Level 1, forecaster x context x task episodes in the harness process (one forecast,
  batched chunks, sMAE / sRMSE / sCRPS, the release's submission files);
- :mod:`.research`: Level 2, one task x one deep-research agent in a sandbox (workspace and scoring, the
  agent's outputs and the release's export files, the DR metrics of Appendix H.1 and their inputs,
  judging a research run, a research run as the DR conditions' input);
- :mod:`.report`: ``harness report`` (Table 2, the deep-research tables, the figures, tables by stratum, and with
  ``--paper`` the values and findings the paper's text states beside them);
- :mod:`.generation` and :mod:`.quality`: ``harness dr-generate`` and its quality control
  (``dr-audit``, ``dr-calibrate``).
"""

from harness import hookimpl

__all__ = ["SAMPLE_DIR", "Document", "DrcikTask", "EvidenceItem", "load_task_file", "load_tasks"]


def __getattr__(name: str):
    """The loader's names, imported on first use (registering the plugin loads no task reader)."""
    if name in __all__:
        from tsagent_plugins.tasks.drcik.dataset import loader

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


def _with_paper(section):
    """``section`` with the paper's stated values beside its tables when the report asks (``--paper``)."""
    from harness.reporting import report_options

    options = report_options()
    if not options.paper:
        return section
    from tsagent_plugins.tasks.drcik.report.paper import with_paper

    return with_paper(section, options.with_figures)


def _report_section(frame):
    from tsagent_plugins.tasks.drcik.report.table2 import build_section

    return _with_paper(build_section(frame))


@hookimpl
def register_report_sections(register):
    register("drcik", _report_section)


def _generation_report(path):
    from tsagent_plugins.tasks.drcik.report import statistics
    from tsagent_plugins.tasks.drcik.quality.report import build

    section, stats = build(path), statistics.build(path)   # audits, then the generated set's statistics
    return _with_paper(type(section)(section.tables + stats.tables, section.messages + stats.messages,
                                     {**section.figures, **stats.figures}))


def _release_report(path):
    from tsagent_plugins.tasks.drcik.report import statistics

    return _with_paper(statistics.build(path))


def _is_release(path):
    from tsagent_plugins.tasks.drcik.report import statistics

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
