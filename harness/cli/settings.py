"""``harness settings --example``: the ``--settings`` file format, every field with its default."""

from __future__ import annotations

import click
import yaml

@click.command("settings")
@click.option("--example", is_flag=True, help="Print a complete --settings YAML file with the defaults.")
def settings(example: bool) -> None:
    """The --settings file of `harness run` (YAML, every field optional; unknown fields are errors)."""
    from harness.config import RunSettings

    if not example:
        click.echo("usage: harness settings --example > settings.yaml  (then: harness run --settings settings.yaml)")
        return
    data = RunSettings().model_dump(mode="json")
    out = ["# harness run --settings FILE: every field is optional; these are the defaults."]
    for name, value in data.items():
        out.append(f"# {RunSettings.model_fields[name].description}")
        out.append(yaml.safe_dump({name: value}, sort_keys=False).rstrip())
    click.echo("\n".join(out))
