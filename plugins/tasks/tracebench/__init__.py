"""TraceBench task template plugin: registers ``tracebench`` (see :mod:`.template`), declares the
commands ``harness generate`` (:mod:`.cli_generate`) and ``harness plot-sample`` (:mod:`.cli_plot`) as
entry points of the group ``harness.commands``, and registers its report section (:mod:`.report`, with
Table 22 from :mod:`.table22`)."""

from harness import hookimpl


@hookimpl
def register_task_templates(register):
    """Register the ``tracebench`` template."""
    from tsagent_plugins.tasks.tracebench.template import TracebenchTemplate

    register(TracebenchTemplate())


def _report_section(rows):
    # pandas and matplotlib load with a report
    from tsagent_plugins.tasks.tracebench.report import build_section
    from tsagent_plugins.tasks.tracebench.table22 import table22

    section = build_section(rows)
    table = table22(rows)
    if table is not None:
        section.tables.append(table)
    return section


@hookimpl
def register_report_sections(register):
    """TraceBench's tables and figures in ``harness report`` (Table 22 when baselines ran)."""
    register("tracebench", _report_section)


@hookimpl
def register_exporters(register):
    """``harness export TASKSPEC --format harbor``: each episode as a Harbor task directory (:mod:`.harbor`)."""
    def export(task, out):
        from tsagent_plugins.tasks.tracebench.harbor import export_harbor

        return export_harbor(task, out)

    register("harbor", "task", export)
