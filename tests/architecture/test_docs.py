"""The documentation: a short README whose links resolve, a reference generated from the code with no empty
entry (docs/reference_hooks.py), and tutorial commands that run.

The site itself is built by ``.ci/run`` with ``mkdocs build --strict`` (broken links, anchors, pages outside
the navigation and missing snippet files are errors there)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from tests.support import docs
from tests.support.paths import REPO

#: a fenced bash block that a test runs: the marker line just before it names it
TESTED = re.compile(r"<!-- tested: ([\w-]+) -->\n```bash\n(.*?)```", re.S)


def _hooks():
    spec = importlib.util.spec_from_file_location("reference_hooks", REPO / "docs" / "reference_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_is_short_and_every_link_resolves():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    assert len(links) >= 10
    assert [link for link in links if "://" not in link and not (REPO / link).exists()] == []


def test_every_spec_field_results_column_command_and_option_has_a_description():
    assert _hooks().problems() == []


def test_a_missing_description_is_reported(monkeypatch):
    """Removing a spec field's, a results column's or a CLI option's description is caught."""
    import harness.columns
    from harness.cli import cli
    from harness.config import RunSettings

    hooks = _hooks()
    monkeypatch.setattr(RunSettings.model_fields["jobs"], "description", None)
    groups = {"some-template": {"core": {"run_id": ("str", "run directory name"), "score": ("float", " ")}}}
    monkeypatch.setattr(harness.columns, "template_groups", lambda: groups)
    run = cli.get_command(click.Context(cli, info_name="harness"), "run")
    option = next(p for p in run.params if isinstance(p, click.Option) and p.name == "jobs")
    monkeypatch.setattr(option, "help", None)
    assert set(hooks.problems()) == {"spec field RunSettings.jobs has no description",
                                     "results column some-template/core:score has no meaning",
                                     "option --jobs/-j of `harness run` has no help"}


def test_a_model_shown_by_any_page_is_checked_too(monkeypatch):
    """A ``<!-- reference: spec ... -->`` marker outside the reference pages (a plugin's file format) gets the
    same check: a field without a description is reported."""
    hooks = _hooks()
    shown = [p for p in hooks.page_models() if p not in hooks.SPEC_MODELS]
    assert shown, "no page shows a model beyond SPEC_MODELS: the check below would be vacuous"
    model = hooks._obj(shown[0])
    name = next(iter(model.model_fields))
    monkeypatch.setattr(model.model_fields[name], "description", None)
    assert f"spec field {model.__name__}.{name} has no description" in hooks.problems()


def test_the_generated_reference_lists_every_field_and_column():
    from harness.columns import template_groups
    from harness.config import AgentProfile, ExperimentSpec, RunSettings, TaskSpec

    hooks = _hooks()
    for model in (TaskSpec, ExperimentSpec, AgentProfile, RunSettings):
        page = hooks.spec_reference(f"{model.__module__}.{model.__name__}")
        for name, field in model.model_fields.items():
            assert f"| `{name}` |" in page and hooks._cell(field.description) in page, (model.__name__, name)
    page = hooks.columns_reference()
    for template, groups in template_groups().items():
        assert f"### Template `{template}`" in page
        for columns in groups.values():
            for name, (dtype, _) in columns.items():
                assert f"| `{name}` | `{dtype}` |" in page, (template, name)


def test_every_command_is_in_the_generated_cli_reference():
    """mkdocs-click renders the commands it finds by walking the click group: the same walk must reach every
    command ``harness --help`` lists, plugin commands included."""
    from click.testing import CliRunner

    from harness.cli import cli

    names = {name.split()[1] for name, _ in _hooks().cli_commands()}
    listed = re.findall(r"^  (\S+)\s", CliRunner().invoke(cli, ["--help"], terminal_width=200).output.split(
        "Commands:", 1)[1], re.M)
    assert set(listed) <= names and {"run", "report", "view", "plan"} <= names


def test_every_page_is_in_the_navigation_and_every_nav_entry_exists():
    import yaml

    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())

    def entries(nav):
        for item in nav:
            if isinstance(item, str):
                yield item
            else:
                for value in item.values():
                    yield from ([value] if isinstance(value, str) else entries(value))

    listed = set(entries(config["nav"]))
    pages = {p.relative_to(docs.DOCS).as_posix() for p in docs.DOCS.rglob("*.md")}
    assert listed == pages


def _blocks() -> list[tuple[str, str]]:
    return [(name, body) for page in docs.pages() for name, body in TESTED.findall(page.read_text(encoding="utf-8"))]


def test_the_tested_blocks_are_found():
    assert {"tour", "inspect"} <= {name for name, _ in _blocks()}


@pytest.mark.slow
@pytest.mark.parametrize("name,body", _blocks(), ids=[name for name, _ in _blocks()])
def test_a_documented_tutorial_block_runs(name, body, tmp_path):
    """Every ``<!-- tested: NAME -->`` block runs as written from the repository root (``harness`` from this
    environment): a documented command that stops working fails here."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    outputs = re.findall(r"--(?:out|bundle) (runs/[\w.-]+)", body)
    for out in outputs:
        subprocess.run(["rm", "-rf", str(REPO / out)], check=True)
    try:
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=900)
        assert proc.returncode == 0, f"block {name!r} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        for out in outputs:
            assert (REPO / out).exists(), out
    finally:
        for out in outputs:
            subprocess.run(["rm", "-rf", str(REPO / out)], check=True)
