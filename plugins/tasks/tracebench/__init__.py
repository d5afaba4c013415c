"""TraceBench task template plugin: registers ``tracebench`` (see :mod:`.template`) and its report
section, Table 22 (:mod:`.table22`)."""

from harness.hookspecs import hookimpl


@hookimpl
def register_task_templates(register):
    """Register the ``tracebench`` template."""
    from plugins.tasks.tracebench.template import TracebenchTemplate

    register(TracebenchTemplate())


def _report_section(frame):
    from plugins.tasks.tracebench.table22 import build_section

    return build_section(frame)


@hookimpl
def register_report_sections(register):
    """Table 22 (classical baselines beside the agents) in ``harness report``."""
    register("tracebench", _report_section)
