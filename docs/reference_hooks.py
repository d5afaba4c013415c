"""MkDocs hook: the reference pages' tables are generated from the code at build time, never typed by hand.

A page asks for a table with a marker line:

- ``<!-- reference: spec harness.config.TaskSpec -->``: every field of a pydantic model (and of the models
  it nests), with its type, default and description;
- ``<!-- reference: columns -->``: every results column of every registered task template, metric extractor
  and the harness itself, with its type and meaning (``harness.columns.template_groups``).

``problems()`` lists what has no description (a spec field of a model above or of any page's marker, a
results column, a CLI option or command):
``tests/architecture/test_docs.py`` fails on any, so the generated reference never has an empty entry.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

MARKER = re.compile(r"^<!-- reference: (\w+)(?: (\S+))? -->$", re.M)
SPEC_MODELS = ("harness.config.TaskSpec", "harness.config.ExperimentSpec", "harness.config.StageSpec",
               "harness.config.AgentProfile", "harness.config.RunSettings")


def _obj(path: str) -> Any:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _type(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    text = text or str(annotation).replace("typing.", "")
    return re.sub(r"\b(?:[a-z_]+\.)+([A-Z]\w*)", r"\1", text)


def _nested(annotation: Any) -> list[type]:
    from pydantic import BaseModel

    found, stack = [], [annotation]
    while stack:
        a = stack.pop()
        if isinstance(a, type) and issubclass(a, BaseModel):
            found.append(a)
        stack.extend(getattr(a, "__args__", ()) or ())
    return found


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def model_fields(model: type) -> list[tuple[str, str, str, str]]:
    """(field, type, default, description) for each field of the pydantic ``model``."""
    from pydantic_core import PydanticUndefined

    rows = []
    for name, field in model.model_fields.items():
        if field.is_required():
            default = "required"
        elif field.default_factory is not None:
            default = f"`{field.default_factory()!r}`"
        else:
            default = "`None`" if field.default is None else f"`{field.default!r}`"
        if field.default is PydanticUndefined and field.default_factory is None:
            default = "required"
        rows.append((name, _type(field.annotation), default, field.description or ""))
    return rows


def spec_reference(path: str) -> str:
    """Markdown tables for the model at ``path`` and every model it nests, one table each."""
    seen: list[type] = []
    todo = [_obj(path)]
    while todo:
        model = todo.pop(0)
        if model in seen:
            continue
        seen.append(model)
        for field in model.model_fields.values():
            todo.extend(m for m in _nested(field.annotation) if m not in seen)
    out = []
    for i, model in enumerate(seen):
        doc = (model.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        title = f"`{model.__name__}`" if i else f"`{model.__module__}.{model.__name__}`"
        out += [f"### {title}", "", doc, "", "| field | type | default | description |", "|---|---|---|---|"]
        out += [f"| `{n}` | `{_cell(t)}` | {_cell(d)} | {_cell(desc)} |" for n, t, d, desc in model_fields(model)]
        out.append("")
    return "\n".join(out)


def columns_reference() -> str:
    """Markdown tables of every results column, per task template and part."""
    from harness.columns import template_groups

    out = []
    for template, groups in template_groups().items():
        out += [f"### Template `{template}`", ""]
        for group, columns in groups.items():
            out += [f"**{group}**", "", "| column | type | meaning |", "|---|---|---|"]
            out += [f"| `{name}` | `{dtype}` | {_cell(meaning)} |" for name, (dtype, meaning) in columns.items()]
            out.append("")
    return "\n".join(out)


def cli_commands() -> list[tuple[str, Any]]:
    """(full command name, click command) for every command of ``harness``, plugin commands included."""
    import click

    from harness.cli import cli

    found = []

    def walk(group: click.Group, ctx: click.Context, path: str) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if command is None:
                continue
            found.append((f"{path} {name}", command))
            if isinstance(command, click.Group):
                walk(command, click.Context(command, parent=ctx, info_name=name), f"{path} {name}")

    walk(cli, click.Context(cli, info_name="harness"), "harness")
    return found


def page_models() -> list[str]:
    """The model of every ``<!-- reference: spec ... -->`` marker of the site's pages (a plugin's format too,
    e.g. the CAF task of docs/benchmarks/drcik-own-data.md)."""
    from pathlib import Path

    return sorted({m.group(2) for page in Path(__file__).parent.rglob("*.md")
                   for m in MARKER.finditer(page.read_text(encoding="utf-8")) if m.group(1) == "spec" and m.group(2)})


def problems() -> list[str]:
    """Every spec field (of :data:`SPEC_MODELS` and of the models the pages show), results column, CLI command
    and CLI option that has no description."""
    import click

    out = []
    for path in dict.fromkeys((*SPEC_MODELS, *page_models())):
        seen, todo = set(), [_obj(path)]
        while todo:
            model = todo.pop()
            if model in seen:
                continue
            seen.add(model)
            for name, field in model.model_fields.items():
                if not (field.description or "").strip():
                    out.append(f"spec field {model.__name__}.{name} has no description")
                todo.extend(_nested(field.annotation))
    from harness.columns import template_groups

    for template, groups in template_groups().items():
        for group, columns in groups.items():
            out += [f"results column {template}/{group}:{name} has no meaning"
                    for name, (_, meaning) in columns.items() if not meaning.strip()]
    for name, command in cli_commands():
        if not (command.help or command.short_help or "").strip():
            out.append(f"command `{name}` has no help")
        for param in command.params:
            if isinstance(param, click.Option) and not (param.help or "").strip() and param.name != "help":
                out.append(f"option {'/'.join(param.opts)} of `{name}` has no help")
    return out


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    def render(match: re.Match) -> str:
        kind, arg = match.group(1), match.group(2)
        if kind == "spec":
            return spec_reference(arg)
        if kind == "columns":
            return columns_reference()
        raise ValueError(f"{page.file.src_path}: unknown reference marker {kind!r}")

    return MARKER.sub(render, markdown)
