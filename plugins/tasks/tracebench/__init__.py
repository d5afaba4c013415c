"""TraceBench task template plugin: registers ``tracebench`` (see :mod:`.template`), the
commands ``harness generate`` (:mod:`.cli_generate`) and ``harness plot-sample`` (:mod:`.cli_plot`),
and its report section, Table 22 (:mod:`.table22`)."""

from harness.hookspecs import hookimpl


@hookimpl
def register_task_templates(register):
    """Register the ``tracebench`` template."""
    from plugins.tasks.tracebench.template import TracebenchTemplate

    register(TracebenchTemplate())


@hookimpl
def register_commands(cli):
    """Add ``generate`` and ``plot-sample``."""
    from plugins.tasks.tracebench.cli_generate import generate
    from plugins.tasks.tracebench.cli_plot import plot_sample

    cli.add_command(generate)
    cli.add_command(plot_sample)


def _report_section(frame):
    from plugins.tasks.tracebench.table22 import build_section

    return build_section(frame)


@hookimpl
def register_report_sections(register):
    """Table 22 (classical baselines beside the agents) in ``harness report``."""
    register("tracebench", _report_section)
