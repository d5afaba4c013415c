"""Plugin manager: entry-point loading, per-kind registries, error isolation.

Every plugin, built-in or third-party, is a module named by an entry point in
the group ``harness``.  A plugin that fails to import, raises inside a hook, or
registers an invalid or duplicate object is recorded as a :class:`PluginProblem`
(shown by ``harness plugins list`` and as a warning) and the rest keep working.
``HARNESS_LOAD_PLUGINS`` limits which distributions load (:mod:`harness.plugin_allowlist`).

**Plugin-owned hooks.**  The core's hooks are :mod:`harness.hookspecs`; a plugin adds hooks of its own (for
other plugins to implement) by naming a module or class of ``pluggy.HookspecMarker("harness")``-marked
functions in its attribute ``harness_hookspecs`` (pluggy's ``PluginManager.add_hookspecs``).  Every loaded
plugin's specs are added before any plugin is registered, so load order does not matter; the owner calls its
hook with :func:`collect` (the same duplicate rule and isolation as the core's hooks).

**One dispatch path, one order.**  Every register hook (the plugin kinds, report sections, view pages, hooks
plugins own) is called through :meth:`Plugins.collect`, which calls the implementations through
:meth:`Plugins.call_each` in pluggy's call order: the plugin registered last is called first (entry points
are registered in the order ``importlib.metadata`` lists them).  **Duplicate rule** (the same for every
kind): the first registration of a name in that order is kept; each later one is left out, recorded as a
problem naming both plugins and their distributions.
"""

from __future__ import annotations

import functools
import gc
import importlib.metadata as md
import inspect
import os
import types
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pluggy

from harness import contracts, hookspecs

GROUP = "harness"
#: every hook a plugin may implement
HOOKS = tuple(name for name in vars(hookspecs) if name.startswith("register_"))

#: kind -> (hook name, contract class)
KINDS: dict[str, tuple[str, type]] = {
    "simulator": ("register_simulators", contracts.Simulator),
    "task_template": ("register_task_templates", contracts.TaskTemplate),
    "agent": ("register_agents", contracts.Agent),
    "forecaster": ("register_forecasters", contracts.Forecaster),
    "metric_extractor": ("register_metric_extractors", contracts.MetricExtractor),
    "sandbox_backend": ("register_sandbox_backends", contracts.SandboxBackend),
    "model_backend": ("register_model_backends", contracts.ModelBackend),
    "judge": ("register_judges", contracts.Judge),
}
#: the suffixes of an agent profile file (``NAME.yaml``), in a profile folder or registered by a plugin
PROFILE_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Registered:
    """A registered object and where it came from."""

    kind: str
    name: str
    obj: Any
    plugin: str
    distribution: str
    version: str


@dataclass(frozen=True)
class PluginProblem:
    """Why a plugin (or one object it registered) was left out."""

    distribution: str
    plugin: str
    hook: str | None
    reason: str

    def __str__(self) -> str:
        where = f"plugin {self.plugin!r} from distribution {self.distribution!r}"
        return f"{where}{f', hook {self.hook}' if self.hook else ''}: {self.reason}"


class PluginWarning(UserWarning):
    """A plugin was left out; the message says which and why."""


class UnknownPlugin(LookupError):
    """No plugin of that kind has that name."""


#: what pluggy hooks (an attribute of another type is never a hook implementation)
_HOOKABLE = (types.FunctionType, types.MethodType, classmethod, staticmethod)


class _Manager(pluggy.PluginManager):
    """pluggy's manager, which looks at every name of a plugin module with ``inspect.getattr_static`` (about
    20 us a name: the 700 names of the built-in plugins' modules took longer than registering them).  A module's
    name whose value pluggy would not hook anyway (not a function, or a function without the ``hookimpl``
    mark) is skipped first, by a look at the module's ``__dict__``; the rest is pluggy's own reading."""

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        if isinstance(plugin, types.ModuleType):
            value = vars(plugin).get(name)
            if not isinstance(value, _HOOKABLE) or (isinstance(value, types.FunctionType)
                                                    and not hasattr(value, self.project_name + "_impl")):
                return None
        return super().parse_hookimpl_opts(plugin, name)


class Plugins:
    """Loaded plugins: a pluggy manager plus one registry per kind."""

    def __init__(self, load_entrypoints: bool = True):
        self.pm = _Manager(GROUP)
        self.pm.add_hookspecs(hookspecs)
        self.problems: list[PluginProblem] = []
        self._origin: dict[str, tuple[str, str]] = {}  # plugin name -> (distribution, version)
        self._registries: dict[str, dict[str, Registered]] | None = None
        self._profiles: dict[str, tuple[str, Path]] | None = None  # register_agent_profiles, collected once
        self._current: str | None = None  # the plugin whose hook is running (see call_each)
        self._spec_sources: set[int] = set()  # harness_hookspecs objects already added
        #: distributions left out by HARNESS_LOAD_PLUGINS: name -> version
        self.skipped: dict[str, str] = {}
        #: the entry points of every group (``importlib.metadata.entry_points()``: ``select(group=...)``), as read
        #: when the plugins loaded; None: none were
        self.entry_points: Any = None
        if load_entrypoints:
            self._load_entrypoints()

    # -- loading ---------------------------------------------------------
    def _load_entrypoints(self) -> None:
        from harness.plugin_allowlist import loads

        modules = []
        self.entry_points = md.entry_points()  # every group: the commands' too, read in the same walk
        for ep in self.entry_points.select(group=GROUP):
            dist, version = distribution_of(ep)
            if not loads(dist):
                self.skipped.setdefault(dist, version)
                continue
            try:
                module = ep.load()
            except Exception as exc:  # noqa: BLE001 - isolation is the point
                self._problem(dist, ep.name, None, f"failed to import {ep.value!r}: {type(exc).__name__}: {exc}")
                continue
            modules.append((module, ep.name, dist, version))
        for module, name, dist, _ in modules:  # every plugin's own hooks first: load order does not matter
            self._add_hookspecs(module, name, dist)
        for module, name, dist, version in modules:
            self.add(module, name, dist, version)

    def _add_hookspecs(self, plugin: Any, name: str, distribution: str) -> bool:
        """Add the hooks ``plugin`` declares in ``harness_hookspecs`` (False: they were refused, a problem)."""
        specs = getattr(plugin, "harness_hookspecs", None)
        if specs is None or id(specs) in self._spec_sources:
            return True
        try:
            clash = sorted(n for n in vars(specs) if n in self.hook_names())
            if clash:
                raise ValueError(f"hook {clash[0]!r} already exists")
            before = set(self.hook_names())
            self.pm.add_hookspecs(specs)
            if set(self.hook_names()) == before:
                raise ValueError("no function in it is marked with pluggy.HookspecMarker('harness')")
        except Exception as exc:  # noqa: BLE001 - isolation is the point
            self._problem(distribution, name, None, f"harness_hookspecs refused: {exc}")
            return False
        self._spec_sources.add(id(specs))
        return True

    def hook_names(self) -> list[str]:
        """Every hook a plugin may implement: the core's (:data:`HOOKS`) and those plugins added."""
        return sorted(n for n, caller in vars(self.pm.hook).items() if not n.startswith("_")
                      and isinstance(caller, pluggy.HookCaller) and caller.has_spec())

    def add(self, plugin: Any, name: str, distribution: str = "(local)", version: str = "") -> None:
        """Register a plugin object (a module or instance with hookimpls), after the hooks it declares in
        ``harness_hookspecs`` (if any).

        A hook implementation with no matching hook (a misspelled name) is an error: pluggy's
        ``check_pending()`` finds it, and the plugin is left out with a problem naming it and the hook.
        """
        if not self._add_hookspecs(plugin, name, distribution):
            return
        try:
            self.pm.register(plugin, name=name)
        except Exception as exc:  # noqa: BLE001
            self._problem(distribution, name, None, f"rejected by the plugin manager: {exc}")
            return
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError:
            unknown = sorted(caller.name for caller in self.pm.get_hookcallers(plugin) or []
                             if not caller.has_spec())
            self.pm.unregister(plugin)
            for hook in unknown:
                known = self.hook_names()
                import difflib  # only to name a misspelled hook

                close = difflib.get_close_matches(hook, known, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; known hooks: {', '.join(known)}"
                self._problem(distribution, name, hook, f"implements unknown hook {hook!r}{hint}")
            return
        self._origin[name] = (distribution, version)
        self._registries = self._profiles = None

    def call_each(self, hook_name: str, *args: Any) -> None:
        """Call every implementation of ``hook_name`` with ``args``, in pluggy's call order (the plugin
        registered last first); one that raises is recorded as a problem naming its plugin and the hook, and
        the rest still run.  This is the only place hooks are called."""
        for impl in reversed(getattr(self.pm.hook, hook_name).get_hookimpls()):
            self._current = impl.plugin_name
            try:
                impl.function(*args)
            except Exception as exc:  # noqa: BLE001 - isolation is the point
                self._problem(self.origin(impl.plugin_name)[0], impl.plugin_name, hook_name,
                              f"raised {type(exc).__name__}: {exc}")
        self._current = None

    def origin(self, plugin: str) -> tuple[str, str]:
        """(distribution, version) of the plugin named ``plugin``."""
        return self._origin.get(plugin, ("(local)", ""))

    def _problem(self, dist: str, plugin: str, hook: str | None, reason: str) -> None:
        problem = PluginProblem(dist, plugin, hook, reason)
        self.problems.append(problem)
        warnings.warn(str(problem), PluginWarning, stacklevel=3)

    def collect(self, hook_name: str, what: str, make: Callable[..., tuple[str, Any]],
                taken: dict[str, str] | None = None) -> dict[str, tuple[str, Any]]:
        """The one dispatch path of the register hooks: call every implementation of ``hook_name``
        (:meth:`call_each`) with a ``register(*args)`` callable and return ``name -> (plugin, object)``.

        ``make(*args)`` turns one registration into ``(name, object)``, raising ValueError or TypeError with
        the rule it breaks (recorded as a problem naming the plugin and the hook).  Duplicate rule: the first
        registration of a name is kept, a later one is a problem naming both plugins; ``taken``: names already
        owned (name -> owner, e.g. the harness's built-in export formats), which every registration duplicates.
        ``what`` names the kind in messages (``forecaster``, ``view page``, ...).
        """
        found: dict[str, tuple[str, Any]] = {}

        def register(*args: Any) -> None:
            plugin = self._current or "(local)"
            dist = self.origin(plugin)[0]
            try:
                name, obj = make(*args)
            except (TypeError, ValueError) as exc:
                self._problem(dist, plugin, hook_name, str(exc))
                return
            if name in found or name in (taken or {}):
                other = (f"plugin {found[name][0]!r} from distribution {self.origin(found[name][0])[0]!r}"
                         if name in found else str((taken or {})[name]))
                self._problem(dist, plugin, hook_name, f"duplicate {what} name {name!r}: already registered by "
                                                       f"{other}")
                return
            found[name] = (plugin, obj)

        self.call_each(hook_name, register)
        return found

    # -- registries --------------------------------------------------------
    def _build(self) -> dict[str, dict[str, Registered]]:
        registries: dict[str, dict[str, Registered]] = {}
        for kind, (hook_name, contract) in KINDS.items():
            def make(obj: Any, _c: type = contract) -> tuple[str, Any]:
                reason = _invalid(obj, _c)
                if reason:
                    raise ValueError(reason)
                return obj.name, obj

            found = self.collect(hook_name, kind, make)
            registries[kind] = {name: Registered(kind, name, obj, plugin, *self.origin(plugin))
                                for name, (plugin, obj) in found.items()}
        return registries

    @property
    def registries(self) -> dict[str, dict[str, Registered]]:
        if self._registries is None:
            self._registries = self._build()
        return self._registries

    def registry(self, kind: str) -> dict[str, Registered]:
        """All registered objects of ``kind``, by name."""
        return self.registries[kind]

    def get(self, kind: str, name: str) -> Any:
        """The object of ``kind`` named ``name``; raises :class:`UnknownPlugin` listing the known names."""
        try:
            return self.registries[kind][name].obj
        except KeyError:
            known = ", ".join(sorted(self.registries[kind])) or "none"
            failed = "; ".join(f"{p.plugin!r} ({p.distribution})" for p in self.problems)
            hint = f"; plugins that failed to load: {failed} — see `harness plugins list`" if failed else ""
            raise UnknownPlugin(f"no {kind.replace('_', ' ')} named {name!r} (known: {known}){hint}") from None

    def agent_profiles(self) -> dict[str, tuple[str, Path]]:
        """Profile files plugins ship (``register_agent_profiles``): name (the file's stem) -> (plugin, path), by
        :meth:`collect`'s rule, collected once per plugin set; a path that is no existing ``NAME.yaml`` or
        ``NAME.yml`` file is a problem naming the plugin.  The files are not read here (see
        :mod:`harness.profiles`)."""
        if self._profiles is None:
            def make(path: Any) -> tuple[str, Path]:
                if not isinstance(path, (str, os.PathLike)):
                    raise TypeError(f"register(path) needs the path of a profile file, got {path!r}")
                file = Path(path)
                if file.suffix not in PROFILE_SUFFIXES or not file.is_file():
                    raise ValueError(f"register(path): {file} is not an existing profile file "
                                     f"(NAME{' or NAME'.join(PROFILE_SUFFIXES)})")
                return file.stem, file

            self._profiles = self.collect("register_agent_profiles", "agent profile", make)
        return self._profiles

    def report_folders(self) -> dict[str, tuple[Any, Any]]:
        """Folder kinds of ``harness report`` (``register_report_folders``): kind -> (recognise, build), by
        :meth:`collect`'s rule (the first registration of a kind is kept, a later one or a non-callable is a
        problem naming the plugin)."""
        def make(kind: Any, recognise: Any, build: Any) -> tuple[str, Any]:
            if not isinstance(kind, str) or not kind or not callable(recognise) or not callable(build):
                raise TypeError(f"register(kind, recognise, build) needs a name and two callables, got {kind!r}")
            return kind, (recognise, build)

        return {kind: obj for kind, (_, obj) in
                self.collect("register_report_folders", "report folder kind", make).items()}

    def exporters(self, taken: dict[str, str] | None = None) -> dict[str, tuple[str, Any]]:
        """Formats of ``harness export`` (``register_exporters``): name -> (plugin, (source, export)), by
        :meth:`collect`'s rule; ``taken``: the built-in formats (name -> owner).  ``source``: ``"run"`` or ``"task"``."""
        def make(name: Any, source: Any, export: Any) -> tuple[str, Any]:
            if not isinstance(name, str) or not name or source not in ("run", "task") or not callable(export):
                raise TypeError(f"register(name, source, export) needs a format name, 'run' or 'task' and a "
                                f"callable, got {name!r}, {source!r}, {export!r}")
            return name, (source, export)

        return self.collect("register_exporters", "export format", make, taken)

    def report_sections(self) -> dict[str, tuple[str, Any]]:
        """Report-section builders by template value: template -> (plugin, ``build(rows) -> Section``), by
        :meth:`collect`'s rule."""
        def make(template: Any, build: Any) -> tuple[str, Any]:
            if not isinstance(template, str) or not template or not callable(build):
                raise TypeError(f"register(template, build) needs a template name and a callable, "
                                f"got {template!r}, {build!r}")
            return template, build

        return self.collect("register_report_sections", "report section", make)


def distribution_of(ep: md.EntryPoint) -> tuple[str, str]:
    """(name, version) of the distribution that declares ``ep``; ``("?", "?")`` when it is unknown."""
    return _name_and_version(ep.dist) if ep.dist is not None else ("?", "?")


@functools.lru_cache(maxsize=64)
def _name_and_version(dist: md.Distribution) -> tuple[str, str]:
    # ``dist.name`` and ``dist.version`` each parse the whole METADATA file (long description included);
    # the entry points ``md.entry_points()`` returns for one distribution share its object: parse it once
    meta = dist.metadata
    return meta["Name"], meta["Version"]


def _invalid(obj: Any, contract: type) -> str | None:
    """Why ``obj`` breaks ``contract``, or None when it conforms."""
    if inspect.isclass(obj):
        return f"registered the class {obj.__name__}; register an instance of it"
    if not isinstance(obj, contract):
        return f"{type(obj).__name__} is not a {contract.__module__}.{contract.__name__}"
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        return f"{type(obj).__name__}.name must be a non-empty string, got {name!r}"
    return None


_plugins: Plugins | None = None


def plugins() -> Plugins:
    """The process-wide plugin set, loaded on first use.

    Loading imports every plugin module: some hundred modules whose objects (classes, functions, the registry)
    live as long as the process.  The cyclic garbage collector is paused meanwhile (each import would
    otherwise set off collections that walk the growing heap again) and what is alive then is frozen
    (``gc.freeze``: no later collection, nor the one at exit, walks it again).  Together this is about a
    tenth of ``harness plugins list`` (``benchmarks/startup.py``).
    """
    global _plugins
    if _plugins is None:
        collecting = gc.isenabled()
        gc.disable()
        try:
            with warnings.catch_warnings():  # problems are listed by `harness plugins list`, not warned twice
                warnings.simplefilter("ignore", PluginWarning)
                _plugins = Plugins()
                _plugins.registries  # noqa: B018 - validate every registration now, under the same filter
        finally:
            gc.freeze()
            if collecting:
                gc.enable()
    return _plugins


def reset(new: Plugins | None = None) -> Plugins | None:
    """Replace the process-wide plugin set (tests register throwaway plugins this way)."""
    global _plugins
    old, _plugins = _plugins, new
    return old


def get(kind: str, name: str) -> Any:
    """Shortcut for ``plugins().get(kind, name)``."""
    return plugins().get(kind, name)


def collect(hook_name: str, what: str, make: Callable[..., tuple[str, Any]]) -> dict[str, tuple[str, Any]]:
    """Call the hook ``hook_name`` (a plugin's own, see ``harness_hookspecs``) of the process-wide plugin set:
    ``name -> (plugin, object)`` by :meth:`Plugins.collect`'s rules (``make(*args) -> (name, object)`` per
    ``register(*args)``; ValueError or TypeError: a problem naming the plugin; the first of a name is kept)."""
    return plugins().collect(hook_name, what, make)
