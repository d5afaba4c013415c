"""``harness profiles list``: the agent profiles ``--agent`` can name."""

from __future__ import annotations

import json

import click
from rich import box
from rich.markup import escape
from rich.table import Table

from harness.cli._console import console


@click.group("profiles")
def profiles_group() -> None:
    """Agent profiles (agent plugin, model, image support, prices)."""


@profiles_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per profile instead of a table.")
def list_profiles(as_json: bool) -> None:
    """Every profile found ($HARNESS_PROFILES, ./agent_profiles, the shipped ones, then those installed plugins
    ship; the first of a name wins).

    A profile's name is its file's stem.  An invalid profile (malformed, or naming an agent or model
    backend that is not a registered plugin) is listed with its error (file and field); --agent
    refuses it."""
    from harness.profiles import find_profiles

    rows = []
    for f in find_profiles():
        p = f.profile
        rows.append({"profile": f.name, "file": str(f.path), "error": f.error} if p is None else
                    {"profile": p.name, "agent": p.agent, "model": p.model, "provider": p.provider,
                     "image_support": p.image_support, "price_input": p.prices.input,
                     "price_cached": p.prices.cached, "price_output": p.prices.output, "file": str(f.path)})
    if as_json:
        for row in rows:
            click.echo(json.dumps(row))
        return
    table = Table(box=box.SIMPLE_HEAD, title="agent profiles (prices: USD per 1M tokens)")
    for col in ("profile", "agent", "model", "image input", "input", "cached", "output"):
        table.add_column(col, justify="right" if col in ("input", "cached", "output") else "left")
    for r in rows:
        if "error" in r:
            table.add_row(r["profile"], f"[red]invalid[/]: {escape(r['error'])}", "", "", "", "", "")
            continue
        table.add_row(r["profile"], r["agent"], r["model"] or "–", "yes" if r["image_support"] else "no",
                      f"{r['price_input']:g}", f"{r['price_cached']:g}", f"{r['price_output']:g}")
    console().print(table)
    invalid = sum("error" in r for r in rows)
    if invalid:
        console().print(f"[red]{invalid} invalid profile{'s' if invalid > 1 else ''}[/]: `--agent` refuses "
                        f"{'them' if invalid > 1 else 'it'} until fixed")
