"""TraceBench task template plugin: registers ``tracebench`` (see :mod:`.template`)."""

from harness import hookimpl


@hookimpl
def register_task_templates(register):
    """Register the ``tracebench`` template."""
    from tsagent_plugins.tasks.tracebench.template import TracebenchTemplate

    register(TracebenchTemplate())


def _report_section(rows):
    from tsagent_plugins.tasks.tracebench.report import build_section  # pandas and matplotlib load with a report

    return build_section(rows)


@hookimpl
def register_report_sections(register):
    """TraceBench's tables and figures in ``harness report``."""
    register("tracebench", _report_section)
