"""``harness image``: build and inspect the agent runtime image (the pinned environment of containerised agents)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from harness.cli._console import console as make_console
from rich.table import Table

console = make_console()
recipe_option = click.option(
    "--recipe", "recipes", multiple=True, metavar="FILE.yaml",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Extra recipe file (npm/pip/files, every entry pinned); may be repeated.",
)


@click.group("image")
def image() -> None:
    """Build and inspect the agent runtime image (Python 3.13 + pinned packages + agent CLIs)."""


@image.command("build")
@click.option("--bootstrap", is_flag=True,
              help="Make the base image with debootstrap (Debian trixie) + docker import: no image registry needed.")
@click.option("--base", metavar="IMAGE", default=None, help="Base image of the Dockerfile (default python:3.13-slim).")
@recipe_option
@click.option("--force", is_flag=True, help="Rebuild even if an image for this recipe exists.")
@click.option("--no-cache", "nocache", is_flag=True, help="Do not reuse Docker's layer cache.")
@click.option("--offline/--online", default=None,
              help="Build with --network none (default: offline with --bootstrap, online otherwise).")
def build(bootstrap: bool, base: str | None, recipes: tuple[Path, ...], force: bool, nocache: bool,
          offline: bool | None) -> None:
    """Build the agent runtime image, tagged harness-agent:<recipe hash>; reused while the recipe is unchanged."""
    from harness.image.build import build_image
    from harness.sandbox.docker import connect

    if bootstrap and base:
        raise click.UsageError("give either --bootstrap or --base IMAGE, not both")
    result = build_image(list(recipes), bootstrap=bootstrap, base=base, force=force, nocache=nocache, offline=offline,
                         client=connect(timeout=3600),
                         log=lambda line: console.print(line, highlight=False, markup=False))
    verb = "reused" if result.reused else f"built in {result.seconds:.0f} s"
    console.print(f"[bold]{result.tag}[/] ({verb})", highlight=False)


@image.command("show")
@click.option("--bootstrap", is_flag=True, help="Show the recipe on the bootstrapped base.")
@click.option("--base", metavar="IMAGE", default=None, help="Show the recipe on this base image.")
@recipe_option
@click.option("--json", "as_json", is_flag=True, help="Print the recipe as JSON.")
def show(bootstrap: bool, base: str | None, recipes: tuple[Path, ...], as_json: bool) -> None:
    """Show the runtime recipe, its image tag, whether that image is built here, and the image runs use."""
    from harness.image.bootstrap import BootstrapSpec
    from harness.image.dockerfile import tag_for
    from harness.image.recipe import DEFAULT_BASE, runtime_recipe

    if bootstrap and base:
        raise click.UsageError("give either --bootstrap or --base IMAGE, not both")
    recipe, warnings = runtime_recipe(list(recipes))
    recipe = recipe.with_base(BootstrapSpec().tag if bootstrap else (base or DEFAULT_BASE))
    tag = tag_for(recipe)
    built = _built(tag)
    if as_json:
        click.echo(json.dumps({"tag": tag, "built": built, "warnings": warnings, **recipe.to_dict()}, indent=2))
        return
    table = Table(title=f"Agent runtime image {tag}", show_header=True)
    table.add_column("kind")
    table.add_column("entries")
    table.add_row("base", recipe.base)
    table.add_row("python", f"{recipe.python} (venv /opt/venv)")
    table.add_row("pip", "\n".join(recipe.pip))
    table.add_row("npm", "\n".join(recipe.npm) or "-")
    table.add_row("system", ", ".join(sorted({pkg for _, pkg in recipe.system})) + f" (Node.js >= {recipe.min_node_major})")
    table.add_row("files", "\n".join(p for p, _ in recipe.files) or "-")
    table.add_row("built", {True: "yes", False: "no", None: "unknown (no Docker engine answers)"}[built])
    from harness.sandbox.docker import DockerBackend

    used = DockerBackend().describe()
    table.add_row("runs use", used.get("image") or used.get("error", "-"))
    console.print(table)
    for w in warnings:
        console.print(f"[yellow]warning:[/] {w}", highlight=False)


def _built(tag: str) -> bool | None:
    """Whether ``tag`` exists in the engine; None when no engine answers."""
    from harness.sandbox.docker import DockerSandboxError, connect

    try:
        client = connect(timeout=10)
    except DockerSandboxError:
        return None
    import docker.errors

    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False
    finally:
        client.close()
