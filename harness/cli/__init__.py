"""The ``harness`` command line: one module per command, plugins may add more.

Start-up is kept cheap: this module imports only click.  A built-in command's
module is imported when that command runs; a plugin's command is named by an
entry point in the group ``harness.commands`` (``name = "module:command"``),
so ``harness --help`` lists it from installed metadata without importing the
plugin (its one-line help is read from the module's source file).  That is the one way a plugin adds a
command (there is no command hook); ``HARNESS_LOAD_PLUGINS`` leaves out the commands of distributions it
does not name (:mod:`harness.plugin_allowlist`).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from harness import __version__

COMMAND_GROUP = "harness.commands"

#: built-in command name -> (module, attribute, one-line help shown by --help)
BUILTIN: dict[str, tuple[str, str, str]] = {
    "run": ("harness.cli.run", "run", "Run a task spec or an experiment (agents in sandboxes, forecasters in the "
                                      "harness), score it and write runs/<run_id>/."),
    "plugins": ("harness.cli.plugins", "plugins_group", "Inspect installed plugins."),
    "tasks": ("harness.cli.tasks", "tasks_group", "Inspect task specs."),
    "report": ("harness.cli.report", "report", "Tables, paired statistics and figures from run directories."),
    "image": ("harness.cli.image", "image", "Build and inspect the agent runtime image."),
    "sandbox": ("harness.cli.sandbox_cmd", "sandbox", "Sandbox housekeeping."),
    "view": ("harness.cli.view", "view", "Serve a local web viewer for run directories (or write a static bundle)."),
    "profiles": ("harness.cli.profiles", "profiles_group", "Inspect agent profiles."),
    "settings": ("harness.cli.settings", "settings", "Show the --settings file format (run settings)."),
    "plan": ("harness.cli.plan", "plan", "List an experiment's episodes, those already done, and its token and cost estimate."),
    "runs": ("harness.cli.runs", "runs_group", "Inspect run directories; convert older ones in place to today's "
                                               "storage (compact)."),
    "rescore": ("harness.cli.rescore", "rescore", "Recompute a run's stored scores and metrics with today's code "
                                                  "(new versions recorded in its rows)."),
    "export": ("harness.cli.export", "export", "Write a run (or a task spec) in another tool's format: Inspect AI "
                                               "eval logs, Harbor tasks."),
}


def command_entry_points(scanned: Any = None) -> dict:
    """Plugin commands declared in installed metadata: name -> ``importlib.metadata.EntryPoint``, of the
    distributions ``HARNESS_LOAD_PLUGINS`` lets load; the first of a name is kept.  ``scanned``: the entry
    points of every group, already read (``importlib.metadata.entry_points()``, as
    :attr:`harness.plugins.Plugins.entry_points` holds them: reading them walks every installed distribution);
    None: read now."""
    from importlib.metadata import entry_points

    from harness.plugin_allowlist import loads

    names: dict[int, str | None] = {}  # ``dist.name`` parses the distribution's METADATA: once per distribution
    found = {}
    for ep in (scanned if scanned is not None else entry_points()).select(group=COMMAND_GROUP):
        if id(ep.dist) not in names:
            names[id(ep.dist)] = ep.dist.name if ep.dist else None
        if loads(names[id(ep.dist)]):
            found.setdefault(ep.name, ep)
    return found


class LazyGroup(click.Group):
    """A click group whose commands are imported on use (click's documented lazy-loading pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *BUILTIN, *command_entry_points()})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands:
            return self.commands[name]
        if name in BUILTIN:
            module, attr, _ = BUILTIN[name]
            return self._add(name, getattr(__import__(module, fromlist=[attr]), attr))
        ep = command_entry_points().get(name)
        if ep is not None:
            try:
                return self._add(name, ep.load())
            except Exception as exc:  # noqa: BLE001 - a broken plugin must not take the CLI down
                dist = ep.dist.name if ep.dist else "?"
                raise click.ClickException(
                    f"command {name!r} from distribution {dist!r} failed to load ({ep.value}): "
                    f"{type(exc).__name__}: {exc}") from exc
        return None

    def _add(self, name: str, command: click.Command) -> click.Command:
        self.add_command(command, name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List commands from the table and metadata; nothing is imported to print ``--help``: a plugin
        command's one-line help is read from its module's source (:mod:`harness.cli._entry_help`)."""
        rows = [(name, help_) for name, (_, _, help_) in BUILTIN.items()]
        entry_points = {name: ep for name, ep in command_entry_points().items() if name not in BUILTIN}
        if entry_points:
            from harness.cli._entry_help import short_help

            for name, ep in entry_points.items():
                dist = ep.dist.name if ep.dist else "?"
                pointer = f"(plugin command from {dist}; see `harness {name} --help`)"
                rows.append((name, short_help(ep.value) or pointer))
        with formatter.section("Commands"):
            formatter.write_dl(sorted(rows))


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="harness")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Evaluate LLM agents on time-series tasks in isolated sandboxes."""
    ctx.ensure_object(dict)["debug"] = debug


def _user_error(exc: BaseException) -> bool:
    """A configuration, harness or unknown-plugin error: one line, no traceback.  The classes are looked
    up in ``sys.modules`` so that checking does not import their modules (an error of a class whose
    module was never imported cannot have been raised)."""
    for module, name in (("harness.errors", "ConfigError"), ("harness.errors", "HarnessError"),
                         ("harness.plugins", "UnknownPlugin")):
        cls = getattr(sys.modules.get(module), name, None)
        if cls is not None and isinstance(exc, cls):
            return True
    return False


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors print one line (exit 2); ``--debug`` shows the traceback."""
    args = sys.argv[1:] if argv is None else argv
    try:
        cli.main(args=args, prog_name="harness", standalone_mode=False)
    except click.exceptions.Abort as exc:
        from harness.interrupt import Terminated

        click.echo("aborted", err=True)
        sys.exit(143 if isinstance(exc.__cause__, Terminated) else 130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except Exception as exc:
        if not _user_error(exc) or "--debug" in args:
            raise
        from harness.cli._console import console

        from rich.markup import escape

        console(stderr=True).print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, markup=True)
        sys.exit(getattr(exc, "exit_code", 2))  # 2, or a user error's own (a full disk: harness.diskfull)
