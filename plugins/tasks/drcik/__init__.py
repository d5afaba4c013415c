"""Dr-CiK: deep research for context-aided forecasting (Tang et al., 2026).

Modules: :mod:`.loader` (release task format and data rules) and :mod:`.flat`
(the flat Hugging Face layout), :mod:`.frequency` (frequency alias table,
seasonal periods), :mod:`.corpus` (the shared corpus as agents see it),
:mod:`.contexts` (context conditions), :mod:`.metrics` (sMAE, sRMSE, sCRPS,
aggregation and average ranks), :mod:`.experiment` (forecasters × conditions,
submission files), :mod:`.spec` (the experiment spec), :mod:`.runner` (a
``harness forecast`` run directory), :mod:`.cli` (the ``harness forecast``
command) and :mod:`.report` (Table 2 in ``harness report``).  The embedded
public sample (3 tasks, CC BY 4.0) lives in ``data/sample`` with its attribution.

No task template is registered yet: the deep-research episode template
(workspace with the salted corpus, report + cited evidence, scoring) is to come.
"""

from harness import hookimpl
from tsagent_plugins.tasks.drcik.loader import SAMPLE_DIR, Document, DrcikTask, EvidenceItem, load_task_file, load_tasks

__all__ = ["SAMPLE_DIR", "Document", "DrcikTask", "EvidenceItem", "load_task_file", "load_tasks"]


@hookimpl
def register_commands(cli):
    from tsagent_plugins.tasks.drcik.cli import forecast

    cli.add_command(forecast)


def _report_section(frame):
    from tsagent_plugins.tasks.drcik.report import build_section

    return build_section(frame)


@hookimpl
def register_report_sections(register):
    register("drcik", _report_section)
