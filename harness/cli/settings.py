"""``harness settings --example``: the ``--settings`` file format, every field with its default."""

from __future__ import annotations

import click
import yaml

#: One line per RunSettings field (units and what it limits), printed above the field.
FIELD_NOTES = {
    "episode_timeout": "seconds of wall clock for the agent's whole run (default 3600)",
    "sandbox": "auto | bubblewrap | unshare | docker | none",
    "cpus": "CPU share of a sandbox (Docker only; local backends do not enforce it)",
    "memory_mb": "MiB: total memory of all of a sandbox's processes",
    "pids": "processes and threads of a sandbox at once",
    "tmp_mb": "MiB: size of the sandbox's private /tmp and of its /dev/shm",
    "workspace_mb": "MiB: most an agent may write into its workspace; past it the agent is stopped",
    "rule_call_timeout": "seconds per predict(df) call of a programmatic submission",
    "rule_budget": "seconds for all predict(df) calls of one episode; then the rest are scored wrong",
    "rule_memory_mb": "MiB: memory of the rule.py worker",
    "infra_retries": "retries of an episode after an infrastructure failure (sandbox start, provider)",
    "budget": "model-proxy caps per episode; null: no cap",
}


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
        if name in FIELD_NOTES:
            out.append(f"# {FIELD_NOTES[name]}")
        out.append(yaml.safe_dump({name: value}, sort_keys=False).rstrip())
    click.echo("\n".join(out))
