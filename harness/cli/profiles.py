"""``harness profiles list``: the agent profiles ``--agent`` can name."""

from __future__ import annotations

import json

import click
from rich import box
from rich.table import Table

from harness.cli._console import console


@click.group("profiles")
def profiles_group() -> None:
    """Agent profiles (agent plugin, model, image support, prices)."""


@profiles_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per profile instead of a table.")
def list_profiles(as_json: bool) -> None:
    """Every profile found ($HARNESS_PROFILES, ./agent_profiles, the shipped ones); the first of a name wins."""
    from harness.config import ConfigError, load_profile
    from harness.run import profile_dirs

    seen: dict[str, dict] = {}
    for folder in profile_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.y*ml")):
            if path.stem in seen:
                continue
            try:
                p = load_profile(path)
            except ConfigError as exc:
                seen[path.stem] = {"profile": path.stem, "file": str(path), "error": str(exc)}
                continue
            seen[path.stem] = {"profile": p.name, "agent": p.agent, "model": p.model, "provider": p.provider,
                               "image_support": p.image_support, "price_input": p.prices.input,
                               "price_cached": p.prices.cached, "price_output": p.prices.output, "file": str(path)}
    rows = [seen[k] for k in sorted(seen)]
    if as_json:
        for row in rows:
            click.echo(json.dumps(row))
        return
    table = Table(box=box.SIMPLE_HEAD, title="agent profiles (prices: USD per 1M tokens)")
    for col in ("profile", "agent", "model", "image input", "input", "cached", "output"):
        table.add_column(col, justify="right" if col in ("input", "cached", "output") else "left")
    for r in rows:
        if "error" in r:
            table.add_row(r["profile"], f"[red]invalid[/]: {r['error']}", "", "", "", "", "")
            continue
        table.add_row(r["profile"], r["agent"], r["model"] or "–", "yes" if r["image_support"] else "no",
                      f"{r['price_input']:g}", f"{r['price_cached']:g}", f"{r['price_output']:g}")
    console().print(table)
