"""``harness export SOURCE --format NAME --out DIR``: a run or a task spec in another tool's format."""

from __future__ import annotations

from pathlib import Path

import click

#: Formats the harness itself writes: name -> (what SOURCE is, "module:function" of the exporter).
BUILTIN_FORMATS: dict[str, tuple[str, str]] = {
    "inspect": ("run", "harness.export.inspect_log:export_run"),
}


def formats() -> dict[str, tuple[str, object]]:
    """Every format: name -> (source kind, exporter), the built-in ones and those plugins register."""
    import importlib

    from harness.plugins import plugins

    found: dict[str, tuple[str, object]] = {}
    for name, (source, target) in BUILTIN_FORMATS.items():
        module, attr = target.split(":")
        found[name] = (source, lambda *args, _m=module, _a=attr: getattr(importlib.import_module(_m), _a)(*args))
    taken = {name: "the harness" for name in BUILTIN_FORMATS}
    for name, (_, (source, export)) in plugins().exporters(taken).items():
        found[name] = (source, export)
    return found


@click.command("export")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option("--format", "format_", required=True, metavar="NAME",
              help="inspect: a run directory as Inspect AI eval logs; plugins add formats (e.g. task specs as "
                   "Harbor task directories): `harness plugins list` shows them (export_format).")
@click.option("--out", "dest", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write into (created; files of the same name are replaced).")
def export(source: Path, format_: str, dest: Path) -> None:
    """Write SOURCE (a run directory, or a task spec YAML for task formats) in another tool's format into
    --out.  The harness's results stay as they are: an export is a view of them (docs/results/exports.md)."""
    known = formats()
    if format_ not in known:
        raise click.UsageError(f"--format: unknown format {format_!r} (known: {', '.join(sorted(known))})")
    kind, exporter = known[format_]
    if kind == "run":
        if not source.is_dir():
            raise click.UsageError(f"{source}: --format {format_} exports a run directory, not a file")
        written = exporter(source, dest)
    else:
        if not source.is_file():
            raise click.UsageError(f"{source}: --format {format_} exports a task spec (a YAML file)")
        from harness.run import load_task

        written = exporter(load_task(source), dest)
    for path in written:
        click.echo(str(path))  # one path a line, never folded
    from harness.cli._console import console  # rich: imported when an export is written, not to list formats

    console().print(f"{len(written)} {format_} export(s) in {dest}", highlight=False, soft_wrap=True)
