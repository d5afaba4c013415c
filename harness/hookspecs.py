"""The plugin contract: one register-callback hook per plugin kind.

Each hook receives a ``register`` callable; a plugin calls it once per object it
provides. The host validates the object against the kind's contract (see
:mod:`harness.contracts`) and rejects duplicate names, naming both distributions.
Plugins are found through the entry-point group ``harness``; the built-ins in
``plugins/`` use the same path as third parties.
"""

import pluggy

hookspec = pluggy.HookspecMarker("harness")
hookimpl = pluggy.HookimplMarker("harness")


@hookspec
def register_simulators(register):
    """Register :class:`harness.contracts.Simulator` instances: ``register(sim)``."""


@hookspec
def register_task_templates(register):
    """Register :class:`harness.contracts.TaskTemplate` instances: ``register(template)``."""


@hookspec
def register_agents(register):
    """Register :class:`harness.contracts.Agent` instances: ``register(agent)``."""


@hookspec
def register_forecasters(register):
    """Register :class:`harness.contracts.Forecaster` instances: ``register(forecaster)``."""


@hookspec
def register_metric_extractors(register):
    """Register :class:`harness.contracts.MetricExtractor` instances: ``register(extractor)``."""


@hookspec
def register_sandbox_backends(register):
    """Register :class:`harness.contracts.SandboxBackend` instances: ``register(backend)``."""


@hookspec
def register_model_backends(register):
    """Register :class:`harness.contracts.ModelBackend` instances: ``register(backend)``."""


@hookspec
def register_commands(cli):
    """Add commands to the ``harness`` click group: ``cli.add_command(cmd)`` or ``@cli.command()``."""


@hookspec
def register_report_sections(register):
    """Add sections to ``harness report`` for a task template's rows:
    ``register(template, build)``, where ``template`` is a value of the results'
    ``template`` column and ``build(rows) -> harness.report.sections.Section``
    receives that template's rows (rows flagged ``flag_*`` already refused)."""


@hookspec
def register_report_folders(register):
    """Add folders other than run directories to ``harness report``: ``register(kind, recognise, build)``,
    where ``recognise(path) -> bool`` says whether a folder given to ``harness report`` is of this kind and
    ``build(path) -> harness.report.sections.Section`` tabulates it (e.g. a generated benchmark)."""


@hookspec
def register_view_pages(register):
    """Add a task template's pages to ``harness view``: ``register(page)`` with a
    :class:`harness.view.pages.ViewPage` (leaderboard metric and conditions, episode
    panels, whether its labels are public)."""


@hookspec
def register_judges(register):
    """Register :class:`harness.contracts.Judge` instances: ``register(judge)``."""
