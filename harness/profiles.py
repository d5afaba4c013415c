"""Agent profiles on disk: where ``--agent NAME`` looks them up, and their check against the registered plugins.

A profile is the file ``NAME.yaml`` (or ``.yml``) in a profile folder (:func:`profile_dirs`), or one an
installed plugin ships (hook ``register_agent_profiles``, :func:`plugin_profiles`); its name is the file's
stem (:func:`harness.config.load_profile`), so lookup, ``harness profiles list`` and the rows agree.  The
first file of a name wins: the folders in order, then the plugins' files.  A profile is valid when it loads
and the plugins it names are registered (:func:`check_plugins`); lookup refuses an invalid one with the file
and field, and lists only valid ones as known.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path

from harness import plugins as plugin_registry
from harness.config import REPO_ROOT, AgentProfile, ConfigError, load_profile
from harness.errors import HarnessError

#: plugin kinds a profile's ``agent`` field may name: an agent runs in a sandbox; a forecaster (in-harness
#: forecasting episodes) and a judge (scoring) take their model and options from a profile too
RUNNABLE_KINDS = ("agent", "forecaster", "judge")
SUFFIXES = plugin_registry.PROFILE_SUFFIXES


def profile_dirs() -> list[Path]:
    """Where ``--agent NAME`` is looked up, in order: ``$HARNESS_PROFILES`` (os.pathsep-separated),
    ``./agent_profiles``, then the profiles shipped beside the harness."""
    dirs = [Path(p) for p in os.environ.get("HARNESS_PROFILES", "").split(os.pathsep) if p]
    return dirs + [Path("agent_profiles"), REPO_ROOT / "agent_profiles"]


def plugin_profiles() -> dict[str, Path]:
    """The profile files installed plugins ship (hook ``register_agent_profiles``): name -> path, not yet read
    (a path a plugin got wrong is a plugin problem, shown by ``harness plugins list``)."""
    return {name: path for name, (_, path) in plugin_registry.plugins().agent_profiles().items()}


def check_plugins(profile: AgentProfile, path: Path | str) -> None:
    """Raise :class:`ConfigError` naming ``path`` and the field when ``agent`` names no registered agent,
    forecaster or judge, or ``provider`` no registered model backend."""
    registries = plugin_registry.plugins().registries
    problems = []
    if not any(profile.agent in registries[kind] for kind in RUNNABLE_KINDS):
        known = ", ".join(sorted(registries["agent"])) or "none"
        problems.append(f"agent: no agent, forecaster or judge named {profile.agent!r} (known agents: {known}; "
                        f"see `harness plugins list`)")
    if profile.provider is not None and profile.provider not in registries["model_backend"]:
        known = ", ".join(sorted(registries["model_backend"])) or "none"
        problems.append(f"provider: no model backend named {profile.provider!r} (known: {known})")
    if problems:
        raise ConfigError(path, problems)


def load_checked(path: Path | str) -> AgentProfile:
    """Load the profile file ``path`` and check the plugins it names (ConfigError naming file and field)."""
    profile = load_profile(path)
    check_plugins(profile, path)
    return profile


@dataclass(frozen=True)
class ProfileFile:
    """One profile file found: its profile when valid, else the error (file, field, expectation)."""

    name: str
    path: Path
    profile: AgentProfile | None = None
    error: str | None = None


def find_profiles() -> list[ProfileFile]:
    """Every profile ``--agent`` can name, sorted by name (the first file of a name wins), valid or not."""
    found: dict[str, ProfileFile] = {}
    files = [path for folder in profile_dirs() if folder.is_dir()
             for path in sorted(p for p in folder.iterdir() if p.suffix in SUFFIXES and p.is_file())]
    for path in files + list(plugin_profiles().values()):
        if path.stem in found:
            continue
        try:
            found[path.stem] = ProfileFile(path.stem, path, profile=load_checked(path))
        except ConfigError as exc:
            found[path.stem] = ProfileFile(path.stem, path, error=str(exc))
    return [found[k] for k in sorted(found)]


def resolve_profile(name: str) -> AgentProfile:
    """The valid profile named ``name`` (or in the file at path ``name``): a profile folder's file, else the
    one an installed plugin ships.

    Raises ConfigError (file and field) for an invalid profile, and HarnessError when no file has that name:
    saying how to add a profile when ``name`` is a registered agent (forecaster, judge) plugin's, else listing
    the valid profiles (and where the invalid ones are)."""
    candidate = Path(name)
    if candidate.suffix in SUFFIXES and candidate.is_file():
        return load_checked(candidate)
    for folder in profile_dirs():
        for suffix in SUFFIXES:
            path = folder / f"{name}{suffix}"
            if path.is_file():
                return load_checked(path)
    shipped = plugin_profiles().get(name)
    if shipped is not None:
        return load_checked(shipped)
    files = find_profiles()
    plugin = _plugin_without_profile(name, files)
    if plugin is not None:
        raise HarnessError(plugin)
    valid = [f.name for f in files if f.profile is not None]
    invalid = [str(f.path) for f in files if f.profile is None]
    note = (f"; {len(invalid)} invalid profile{'s' if len(invalid) > 1 else ''} left out: {', '.join(invalid)} "
            f"(`harness profiles list` says why)") if invalid else ""
    close = difflib.get_close_matches(name, valid, n=3, cutoff=0.75)
    if close:  # a typo: the nearest names, not all ~30
        guess = " or ".join(repr(c) for c in close)
        raise HarnessError(f"no agent profile named {name!r} (did you mean {guess}? "
                           f"`harness profiles list` lists all {len(valid)}{note})")
    raise HarnessError(f"no agent profile named {name!r} (known: {', '.join(valid) or 'none'}{note})")


def _plugin_without_profile(name: str, files: list[ProfileFile]) -> str | None:
    """The message for ``--agent NAME`` when ``name`` is a registered agent's (forecaster's, judge's) and no
    profile's, or None when no plugin has that name: ``--agent`` names a profile (the agent and its model and
    options), so the message names the profiles of that agent, or says how to add one."""
    registries = plugin_registry.plugins().registries
    kind = next((k for k in RUNNABLE_KINDS if name in registries[k]), None)
    if kind is None:
        return None
    article = "an" if kind[0] in "aeiou" else "a"
    head = (f"no agent profile named {name!r}: {name!r} is {article} {kind} plugin (distribution "
            f"{registries[kind][name].distribution!r}), and --agent names an agent profile, which says the "
            f"{kind} and its model and options")
    running = [f.name for f in files if f.profile is not None and f.profile.agent == name]
    if running:
        return f"{head}; the profiles of this {kind}: {', '.join(running)}"
    return (f"{head}; no profile names this {kind}. Add one: a file agent_profiles/{name}.yaml (in the working "
            f"directory or a folder of $HARNESS_PROFILES) holding `agent: {name}`; a plugin ships its own "
            f"profiles through the hook register_agent_profiles (docs/plugins/agent.md)")
