"""The ``harness`` command line: one module per command, plugins may add more."""

from __future__ import annotations

import sys

import click
from harness.cli._console import console

from harness import __version__
from harness.config import ConfigError
from harness.errors import HarnessError
from harness import plugins as registry

stderr = console(stderr=True)
USER_ERRORS = (ConfigError, HarnessError, registry.UnknownPlugin)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="harness")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Evaluate LLM agents on time-series tasks (TraceBench, Dr-CiK) in isolated sandboxes."""
    ctx.ensure_object(dict)["debug"] = debug


def _add_builtin_commands() -> None:
    from harness.cli import image as image_cmd
    from harness.cli import plan as plan_cmd
    from harness.cli import plugins as plugins_cmd
    from harness.cli import report as report_cmd
    from harness.cli import run as run_cmd
    from harness.cli import runs as runs_cmd
    from harness.cli import sandbox_cmd
    from harness.cli import tasks as tasks_cmd
    from harness.cli import view as view_cmd

    for command in (run_cmd.run, plugins_cmd.plugins_group, tasks_cmd.tasks_group, report_cmd.report,
                    image_cmd.image, sandbox_cmd.sandbox, view_cmd.view, plan_cmd.plan, runs_cmd.runs_group):
        cli.add_command(command)


_add_builtin_commands()


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors print one line (exit 2); ``--debug`` shows the traceback."""
    args = sys.argv[1:] if argv is None else argv
    registry.plugins().commands(cli)
    try:
        cli.main(args=args, prog_name="harness", standalone_mode=False)
    except click.exceptions.Abort:
        stderr.print("aborted")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except USER_ERRORS as exc:
        if "--debug" in args:
            raise
        stderr.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
        sys.exit(2)
