"""``harness generate`` and ``harness plot-sample`` (registered by the tracebench plugin)."""

from __future__ import annotations

import json

import click
from click.testing import CliRunner

from harness.cli import cli, command_entry_points


def test_registered_through_the_plugin_hook():
    """Declared as entry points of the group ``harness.commands`` (how the built-in plugins add commands), so
    ``harness --help`` lists them without loading plugins and the CLI imports one when it runs."""
    from tsagent_plugins.tasks.tracebench.cli_generate import generate
    from tsagent_plugins.tasks.tracebench.cli_plot import plot_sample

    declared = command_entry_points()
    assert declared["generate"].value == "tsagent_plugins.tasks.tracebench.cli_generate:generate"
    assert declared["plot-sample"].value == "tsagent_plugins.tasks.tracebench.cli_plot:plot_sample"
    ctx = click.Context(cli)
    assert {"generate", "plot-sample"} <= set(cli.list_commands(ctx))
    assert cli.get_command(ctx, "generate") is generate and cli.get_command(ctx, "plot-sample") is plot_sample


def _gen(tmp_path, name, workers):
    r = CliRunner().invoke(cli, ["generate", "--simulator", "balldrop", "--per-class", "3", "--seed", "4",
                                 "--out", str(tmp_path / name), "--workers", str(workers)])
    assert r.exit_code == 0, r.output
    return tmp_path / name / "balldrop-v2-seed4-n3"


def test_generate_is_byte_identical_with_one_and_two_workers(tmp_path):
    a, b = _gen(tmp_path, "w1", 1), _gen(tmp_path, "w2", 2)
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    for name in names:
        if name != "timings.json":  # workers and seconds
            assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert json.loads((a / "timings.json").read_text())["workers"] == 1
    assert json.loads((b / "timings.json").read_text())["workers"] == 2
    assert json.loads((a / "meta.json").read_text())["n_samples"] == 15
    # a second call finds the pool
    r = CliRunner().invoke(cli, ["generate", "--simulator", "balldrop", "--per-class", "3", "--seed", "4",
                                 "--out", str(tmp_path / "w1")])
    assert r.exit_code == 0 and "found in cache" in r.output and r.output.strip().endswith(str(a))


def test_generate_released_and_plot_sample(tmp_path):
    rel = tmp_path / "release"
    r = CliRunner().invoke(cli, ["generate", "--simulator", "balldrop", "--per-class", "30", "--seed", "0",
                                 "--out", str(tmp_path / "p"), "--released", str(rel)])
    assert r.exit_code == 0, r.output
    assert (rel / "questions.json").exists() and len(list((rel / "dataframes").iterdir())) == 150
    pool_dir = tmp_path / "p" / "balldrop-v2-seed0-n30"
    for src in (pool_dir, rel):
        png = tmp_path / f"{src.name}.png"
        r = CliRunner().invoke(cli, ["plot-sample", "--simulator", "balldrop", "--pool", str(src),
                                     "--label", "gravity", "--out", str(png)])
        assert r.exit_code == 0, r.output
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_bad_arguments_are_named(tmp_path):
    r = CliRunner().invoke(cli, ["generate", "--simulator", "nope", "--out", str(tmp_path)])
    assert r.exit_code != 0 and "--simulator" in r.output
    r = CliRunner().invoke(cli, ["plot-sample", "--simulator", "balldrop", "--pool", str(tmp_path),
                                 "--out", str(tmp_path / "x.png")])
    assert r.exit_code != 0 and "--pool" in r.output
