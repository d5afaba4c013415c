"""TraceBench task template plugin: registers ``tracebench`` (see :mod:`.template`)."""

from harness import hookimpl


@hookimpl
def register_task_templates(register):
    """Register the ``tracebench`` template."""
    from plugins.tasks.tracebench.template import TracebenchTemplate

    register(TracebenchTemplate())
