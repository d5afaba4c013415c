"""``harness report RUN_DIR... [--format table|markdown|html|json] [--out DIR] [--ci] [--compare A B]...``."""

from __future__ import annotations

from pathlib import Path

import click

from harness.report.render import FORMATS


@click.command("report")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path, file_okay=False))
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="table", show_default=True,
              help="Also write the document in this format (Markdown, HTML, CSV and LaTeX are always written).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Folder for the documents, tables/*.csv|.tex and figures/*.png (default: <first RUN_DIR>/report).")
@click.option("--exclude-agent", "excluded", multiple=True,
              help="Profile left out of the agent-averaged condition effects (repeatable).")
@click.option("--no-figures", is_flag=True, help="Skip the figures.")
@click.option("--paper", is_flag=True, help="Put the paper's values beside each reproduced table that has them.")
@click.option("--ci", is_flag=True, help="A 95% interval beside every mean cell, in columns of their own "
              "(docs/results/statistics.md).")
@click.option("--compare", "compare", nargs=2, multiple=True, metavar="A B",
              help="Paired comparison A − B: a profile, a run (id or folder name) or conditions KEY=VALUE[,...] "
                   "(e.g. noise=low noise=high); repeatable, p-values Holm-corrected over all; printed first.")
def report(run_dirs: tuple[Path, ...], fmt: str, out: Path | None, excluded: tuple[str, ...], no_figures: bool,
           paper: bool, ci: bool, compare: tuple[tuple[str, str], ...]) -> None:
    """Tables, paired statistics and figures from run directories (each task template contributes its own);
    prints the paths of the files written (and the comparison table, with --compare)."""
    from harness.report import build_report  # matplotlib loads only when a report is made
    from harness.report.render import to_text

    built = build_report(run_dirs, exclude_from_conditions=excluded, with_figures=not no_figures, paper=paper,
                         ci=ci, compare=compare)
    out = out or Path(run_dirs[0]) / "report"
    built.write(out, fmt)
    if compare:
        click.echo(to_text([built.table("compare")]), nl=False)
    for message in built.messages:
        click.echo(f"note: {message}", err=True)
    for path in built.written:
        click.echo(str(path))
