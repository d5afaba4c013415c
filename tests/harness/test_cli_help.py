"""``--help`` texts: plugin commands listed with their own one-line help (read from source, nothing imported),
no reStructuredText markup in any command's help."""

from __future__ import annotations

import importlib.metadata as md
import sys
import textwrap

import click
import pytest
from click.testing import CliRunner

import harness.cli
from harness.cli import cli
from harness.cli._entry_help import LIMIT, module_file, short_help


def flat(text: str) -> str:
    """``text`` with runs of whitespace (click's wrapping) collapsed to one space."""
    return " ".join(text.split())


def test_help_lists_each_plugin_command_with_its_own_help():
    out = flat(CliRunner().invoke(cli, ["--help"]).output)
    eps = list(md.entry_points(group="harness.commands"))
    assert eps, "no plugin command installed: the check would be vacuous"
    for ep in eps:
        own = ep.load().get_short_help_str(LIMIT)
        assert own and f"{ep.name} {own}" in out, (ep.name, own)
    assert "plugin command from" not in out


def test_the_run_line_covers_experiments_and_forecasters():
    out = CliRunner().invoke(cli, ["--help"]).output
    line = flat(out.split("\n  run ", 1)[1].split("\n  runs ", 1)[0])
    assert line == ("Run a task spec or an experiment (agents in sandboxes, forecasters in the harness), score it "
                    "and write runs/<run_id>/.")


def _commands(group: click.Group, ctx: click.Context, path: tuple[str, ...] = ()):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, click.Context(command, parent=ctx, info_name=name), (*path, name))


def test_no_help_text_shows_rst_markup():
    """Click prints help verbatim: ``--agent`` would show its backticks (it did in ``profiles list``)."""
    seen = []
    for path, _ in _commands(cli, click.Context(cli, info_name="harness")):
        result = CliRunner().invoke(cli, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "``" not in result.output, f"harness {' '.join(path)} --help:\n{result.output}"
        seen.append(" ".join(path))
    assert {"run", "profiles list", "plot-sample", "dr-score", "runs list"} <= set(seen)


def test_plot_sample_options_all_have_help():
    command = harness.cli.command_entry_points()["plot-sample"].load()
    assert [p.name for p in command.params if isinstance(p, click.Option) and not p.help] == []


SOURCES = {
    "doc_cmd": '''
        import click

        @click.command("doc")
        @click.option("--n", help="N.")
        def doc(n):
            """Plot one sample's channels: clean and noisy.

            More text that the listing leaves out.
            """
        ''',
    "kw_cmd": '''
        import click

        @click.group(help="Inspect widgets. Second sentence.")
        def widgets():
            """Ignored: help= wins."""
        ''',
    "short_cmd": '''
        import click

        @click.command(short_help="Short one.")
        def short():
            """The long help, ignored in a listing."""

        alias = short
        ''',
    "call_cmd": '''
        import click

        def _run():
            pass

        built = click.Command("built", callback=_run, help="Built by a call.")
        ''',
    "long_cmd": '''
        import click

        @click.command()
        def long():
            """''' + "word " * 40 + '''end."""
        ''',
}


@pytest.fixture
def plugin_site(tmp_path, monkeypatch):
    """A folder on sys.path with the SOURCES modules and a package whose import would fail."""
    for name, source in SOURCES.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    package = tmp_path / "brokenpkg"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('importing the package is not allowed')\n")
    (package / "cmd.py").write_text(textwrap.dedent(SOURCES["doc_cmd"]))
    (tmp_path / "dynamic_cmd.py").write_text("import click\nHELP = 'x'\ncmd = click.command(help=HELP)(print)\n")
    (tmp_path / "bad_syntax.py").write_text("def (:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [*SOURCES, "brokenpkg", "brokenpkg.cmd", "dynamic_cmd", "bad_syntax"]:
        monkeypatch.delitem(sys.modules, name, raising=False)
    return tmp_path


@pytest.mark.parametrize("value", ["doc_cmd:doc", "kw_cmd:widgets", "short_cmd:short", "short_cmd:alias",
                                   "call_cmd:built", "long_cmd:long"])
def test_short_help_from_source_equals_clicks(plugin_site, value):
    read = short_help(value)  # before the import below: read from the file alone
    module, _, attr = value.partition(":")
    assert module not in sys.modules
    own = getattr(__import__(module), attr).get_short_help_str(LIMIT)
    assert read == own and read


def test_short_help_values(plugin_site):
    assert short_help("doc_cmd:doc") == "Plot one sample's channels: clean and noisy."
    assert short_help("kw_cmd:widgets") == "Inspect widgets."
    assert short_help("short_cmd:alias") == "Short one."
    assert short_help("long_cmd:long").endswith("...") and len(short_help("long_cmd:long")) <= LIMIT


def test_a_module_in_a_package_is_read_without_importing_the_package(plugin_site):
    assert module_file("brokenpkg.cmd") == plugin_site / "brokenpkg" / "cmd.py"
    assert short_help("brokenpkg.cmd:doc") == "Plot one sample's channels: clean and noisy."
    assert "brokenpkg" not in sys.modules


@pytest.mark.parametrize("value", ["dynamic_cmd:cmd", "bad_syntax:cmd", "no_such_module:cmd", "doc_cmd:missing",
                                   "doc_cmd:doc.attr", "doc_cmd", "brokenpkg.nothing:cmd"])
def test_unreadable_help_is_none(plugin_site, value):
    assert short_help(value) is None


def test_an_unreadable_command_is_listed_with_a_pointer(plugin_site, monkeypatch):
    ep = md.EntryPoint(name="dyn", value="dynamic_cmd:cmd", group="harness.commands")
    monkeypatch.setattr(harness.cli, "command_entry_points", lambda: {"dyn": ep})
    out = flat(CliRunner().invoke(cli, ["--help"]).output)
    assert "dyn (plugin command from ?; see `harness dyn --help`)" in out
    assert "dynamic_cmd" not in sys.modules


def test_a_config_error_is_one_line_even_before_the_configuration_models_load(tmp_path):
    """:class:`harness.ConfigError` is defined without pydantic (a plugin raises it on a bad file before any
    spec is read) and is the one :mod:`harness.config` raises; the CLI prints it as one line, exit 2."""
    import subprocess

    import harness.config
    from harness import ConfigError

    assert harness.config.ConfigError is ConfigError and ConfigError.__module__ == "harness.errors"
    code = ("from harness import ConfigError\n"
            "from harness.cli import cli, main\n"
            "@cli.command('bad')\n"
            "def bad():\n"
            "    raise ConfigError('spec.yaml', ['params.x: expected a number'])\n"
            "main(['bad'])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == "error: spec.yaml: params.x: expected a number"
