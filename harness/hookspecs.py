"""The plugin contract: one register-callback hook per plugin kind.

Each hook receives a ``register`` callable; a plugin calls it once per object it
provides. The host validates the object against the kind's contract (see
:mod:`harness.contracts`) and rejects duplicate names, naming both distributions.
Plugins are found through the entry-point group ``harness``; the built-ins in
``plugins/`` use the same path as third parties.  A command is not a hook: a plugin declares it as an entry
point of the group ``harness.commands`` (``name = "module:command"``), which ``harness --help`` lists without
loading any plugin.  A plugin may add hooks of its own (``harness_hookspecs``, see :mod:`harness.plugins`).

Every hook is called through :meth:`harness.plugins.Plugins.collect`, in pluggy's call order (the plugin
registered last first), with one duplicate rule: the first registration of a name is kept and each later one
is left out as a plugin problem naming both plugins (``harness plugins list`` shows it).  A hook that raises
costs its own plugin's registrations only.
"""

import pluggy

hookspec = pluggy.HookspecMarker("harness")
hookimpl = pluggy.HookimplMarker("harness")


@hookspec
def register_simulators(register):
    """Register simulators.

    :param register: ``register(sim)`` with a :class:`harness.contracts.Simulator` instance (not the class),
        once per simulator; an object that breaks the contract is left out as a plugin problem.
    :returns: nothing (the return value is ignored).

    Called once per process, when the plugin registry is first used.
    Duplicate ``sim.name``: the first registration is kept, a later one is a plugin problem naming both.
    """


@hookspec
def register_task_templates(register):
    """Register task templates.

    :param register: ``register(template)`` with a :class:`harness.contracts.TaskTemplate` instance (an
        :class:`~harness.contracts.AgentTaskTemplate`, an :class:`~harness.contracts.InHarnessTaskTemplate`
        or both), once per template.
    :returns: nothing (the return value is ignored).

    Called once per process, when the plugin registry is first used.
    Duplicate ``template.name``: the first registration is kept, a later one is a plugin problem naming both.
    """


@hookspec
def register_agents(register):
    """Register agents.

    :param register: ``register(agent)`` with a :class:`harness.contracts.Agent` instance, once per agent.
    :returns: nothing (the return value is ignored).

    Called once per process, when the plugin registry is first used.
    Duplicate ``agent.name``: the first registration is kept, a later one is a plugin problem naming both.
    """


@hookspec
def register_agent_profiles(register):
    """Ship agent profiles with a plugin, so that ``--agent NAME`` finds them once it is installed.

    :param register: ``register(path)`` with the path (a :class:`pathlib.Path` or str) of a profile file
        ``NAME.yaml`` or ``NAME.yml`` (e.g. package data beside the plugin's module), once per profile; the
        profile's name is the file's stem, as in a profile folder.  A path that is no existing file of those
        suffixes is left out as a plugin problem; the file's content is checked where it is used, as a folder's
        profile is (``--agent`` refuses an invalid one with its file and field, ``harness profiles list`` says why).
    :returns: nothing (the return value is ignored).

    Called once per process, when a profile is looked up by a name that no profile folder has, or the profiles
    are listed (:mod:`harness.profiles`, ``harness plugins list``).
    Duplicate name: the first registration is kept, a later one is a plugin problem naming both.  A file of the
    same name in a profile folder (``$HARNESS_PROFILES``, ``./agent_profiles``, the shipped profiles) comes
    first, so a user overrides a plugin's profile by writing one.
    """


@hookspec
def register_forecasters(register):
    """Register forecasters.

    :param register: ``register(forecaster)`` with a :class:`harness.contracts.Forecaster` instance.
    :returns: nothing (the return value is ignored).

    Called once per process, when the plugin registry is first used.
    Duplicate ``forecaster.name``: the first registration is kept, a later one is a plugin problem naming both.
    """


@hookspec
def register_metric_extractors(register):
    """Register metric extractors.

    :param register: ``register(extractor)`` with a :class:`harness.contracts.MetricExtractor` instance
        (its ``columns`` declared with dtype and meaning).
    :returns: nothing (the return value is ignored).

    Called once per process, when the plugin registry is first used.
    Duplicate ``extractor.name``: the first registration is kept, a later one is a plugin problem naming both
    (a results column two owners declare is refused when a run is planned, see :mod:`harness.columns`).
    """


@hookspec
def register_sandbox_backends(register):
    """Register sandbox backends.

    :param register: ``register(backend)`` with a :class:`harness.contracts.SandboxBackend` instance.
    :returns: nothing (the return value is ignored).

    Called once per process, when the plugin registry is first used.
    Duplicate ``backend.name``: the first registration is kept, a later one is a plugin problem naming both.
    """


@hookspec
def register_model_backends(register):
    """Register model backends.

    :param register: ``register(backend)`` with a :class:`harness.contracts.ModelBackend` instance.
    :returns: nothing (the return value is ignored).

    Called once per process, when the plugin registry is first used.
    Duplicate ``backend.name``: the first registration is kept, a later one is a plugin problem naming both.
    """


@hookspec
def register_report_sections(register):
    """Add sections to ``harness report`` for a task template's rows.

    :param register: ``register(template, build)``: ``template`` is a value of the results' ``template``
        column and ``build(rows) -> harness.reporting.Section`` receives that template's rows (rows flagged ``flag_*``
        already refused).
    :returns: nothing (the return value is ignored).

    Called by ``harness report`` (and ``harness plugins list``) once per invocation.
    Duplicate ``template``: the first registration is kept, a later one is a plugin problem naming both.
    """


@hookspec
def register_report_folders(register):
    """Add folders other than run directories to ``harness report`` (e.g. a generated benchmark).

    :param register: ``register(kind, recognise, build)``: ``kind`` names the folder kind,
        ``recognise(path) -> bool`` says whether a folder given to ``harness report`` is of this kind and
        ``build(path) -> harness.reporting.Section`` tabulates it (reading the user's options, e.g. ``--paper``,
        through ``harness.reporting.report_options()``, as a section builder does).
    :returns: nothing (the return value is ignored).

    Called by ``harness report`` when a folder it is given holds no ``results.parquet``, once per invocation.
    Duplicate ``kind``: the first registration is kept, a later one is a plugin problem naming both.
    """


@hookspec
def register_view_pages(register):
    """Add a task template's pages to ``harness view``.

    :param register: ``register(page)`` with a :class:`harness.pages.ViewPage` (leaderboard metric and conditions,
        episode panels, whether its labels are public), or a :class:`harness.pages.FolderPage` (a page for a folder
        that is no run, e.g. a generated benchmark; it may declare writes, see :mod:`harness.view.folders`).
    :returns: nothing (the return value is ignored).

    Called when ``harness view`` builds its site.
    Duplicate ``page.template`` (or folder page ``kind``): the first registration is kept, a later one is a
    plugin problem naming both.
    """


@hookspec
def register_exporters(register):
    """Add formats to ``harness export SOURCE --format NAME --out DIR`` (docs/results/exports.md).

    :param register: ``register(name, source, export)``: ``name`` is the ``--format`` value; ``source`` what
        SOURCE names: ``"run"`` (a run directory: ``export(run_dir, out)``) or ``"task"`` (a TaskSpec YAML,
        loaded and validated by the harness: ``export(task, out)`` with ``task.spec`` the
        :class:`harness.config.TaskSpec`, ``task.template`` its template, ``task.params`` its validated
        params); ``export`` writes into the folder ``out`` and returns the paths it wrote (a list), raising
        :class:`harness.HarnessError` or ValueError with a one-line message for input it cannot export.
    :returns: nothing (the return value is ignored).

    Called by ``harness export`` (and ``harness plugins list``).
    Duplicate ``name`` (also of a built-in format such as ``inspect``): the first is kept, a later one is a
    plugin problem naming both.
    """


@hookspec
def register_judges(register):
    """Register evidence judges.

    :param register: ``register(judge)`` with a :class:`harness.contracts.Judge` instance.
    :returns: nothing (the return value is ignored).

    Called once per process, when the plugin registry is first used.
    Duplicate ``judge.name``: the first registration is kept, a later one is a plugin problem naming both.
    """
