"""An agent-written tree 1,500 levels deep: every walk of it is bounded and iterative, one extractor's
failure costs only its own columns (named in the row), the proxy's tokens and cost stay, and the viewer
and its bundle show a broken episode as broken and go on."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from harness.untrusted import WalkBounds, copy_tree, remove_tree, walk_files
from harness.cli import cli
from harness.config import AgentProfile, RunSettings
from harness.contracts import Agent, AgentInvocation, EpisodeScore, Materialized, MetricExtractor
from harness.episode import EpisodePlan, run_episode
from harness.proxy.accounting import EpisodeUsage
from harness.sandbox.none import NoneBackend
from harness.store import RunStore, run_dirs, write_json
from harness.view.data import load_runs
from harness.view.site import Site
from tsagent_plugins.metrics.extractors import InteractionMetrics, PlotMetrics

DEPTH = 1500
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


@pytest.fixture(autouse=True)
def _remove_deep_trees(tmp_path):
    """pytest's own clean-up of old temporary folders recurses per level: remove the trees here."""
    yield
    remove_tree(tmp_path)


def deep_tree(root: Path, depth: int = DEPTH, files: int = 200) -> Path:
    """``root/d/d/.../d`` (``depth`` levels, a file at the bottom), ``files`` files beside it, a plot."""
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mkdir", "-p", "d/" * depth], cwd=root, check=True)  # os.makedirs recurses per level
    subprocess.run(["touch", "bottom.png"], cwd=root / ("d/" * depth), check=True)
    many = root / "many"
    many.mkdir()
    for i in range(files):
        (many / f"f{i}.txt").write_text("x")
    (root / "fig.png").write_bytes(PNG)
    return root


# -- the walk ----------------------------------------------------------------------------------------------------

def test_walk_is_iterative_and_bounded_in_depth(tmp_path):
    walk = walk_files(deep_tree(tmp_path / "ws"))
    assert walk.reason == "folders nested deeper than 64 levels (" + "d/" * 40 + "...)"
    assert "fig.png" in walk.files and len([f for f in walk.files if f.startswith("many/")]) == 200
    assert not any(f.endswith("bottom.png") for f in walk.files)


def test_walk_is_bounded_in_entries_and_skips_folders(tmp_path):
    root = deep_tree(tmp_path / "ws", depth=3, files=50)
    assert walk_files(root, bounds=WalkBounds(max_entries=20)).reason == "more than 20 entries"
    walk = walk_files(root, {"many"})
    assert walk.complete and walk.files == ["d/d/d/bottom.png", "fig.png"]
    assert walk_files(tmp_path / "missing").files == [] and walk_files(tmp_path / "missing").complete


def test_deep_trees_are_copied_and_removed(tmp_path):
    root = deep_tree(tmp_path / "ws", files=3)
    copy_tree(root, tmp_path / "copy")
    assert (tmp_path / "copy" / ("d/" * DEPTH) / "bottom.png").is_file()
    remove_tree(root)
    remove_tree(tmp_path / "copy")
    assert not root.exists() and not (tmp_path / "copy").exists()


def test_run_listing_never_enters_episode_folders(tmp_path):
    run = tmp_path / "runs" / "r1"
    (run / "episodes" / "e1" / "workspace").mkdir(parents=True)
    (run / "run.json").write_text("{}")
    (run / "episodes" / "e1" / "workspace" / "run.json").write_text("{}")  # an agent's decoy
    deep_tree(run / "episodes" / "e1" / "workspace", files=0)
    assert run_dirs(tmp_path / "runs") == [run]
    assert run_dirs(tmp_path / "runs", "episodes") == [run]


# -- the episode's row -------------------------------------------------------------------------------------------

class Params(BaseModel):
    seed: int = 0


class Template:
    name = "deep"

    def materialize(self, params, episode, workspace, key_dir):
        return Materialized(prompt="make a deep tree", task_info={})

    def score(self, params, episode, workspace, key_dir, runner):
        return EpisodeScore(metrics={"accuracy": 1.0})


class DeepAgent(Agent):
    """Builds the tree in its workspace; its native log cannot be converted."""

    name = "deep-agent"
    version = "1"
    needs_model = False
    image_capable = False

    def command(self, ctx):
        return AgentInvocation(argv=["sh", "-c", f"mkdir -p {'d/' * DEPTH} && : > fig.png"])

    def trajectory(self, home, stdout, proxy_log):
        raise RecursionError("maximum recursion depth exceeded")


class Broken(MetricExtractor):
    name = "broken"
    columns = {"broken_a": ("int", "never extracted"), "broken_b": ("float", "never extracted")}

    def extract(self, artifacts):
        raise KeyError("boom")


class Channel:
    """A model channel whose proxy measured some spend."""

    socket_path = base_url = None

    def close(self):
        return EpisodeUsage("ep", prompt_tokens=1000, completion_tokens=200, cost_usd=0.25, n_requests=3)


def test_one_failing_extractor_costs_only_its_columns(tmp_path):
    store = RunStore.create(tmp_path / "run")
    plan = EpisodePlan("ep", "t", Template(), Params(), "0", AgentProfile(name="p", agent="deep-agent"),
                       DeepAgent(), NoneBackend(), RunSettings(sandbox="none"), store.run_id,
                       extractors=[PlotMetrics(), Broken(), InteractionMetrics()], model_channel=Channel())
    row = run_episode(plan, store.episode("ep"), lambda: None)
    assert row["status"] == "ok" and row["accuracy"] == 1.0
    assert row["metrics_error"] == (
        "trajectory: RecursionError: maximum recursion depth exceeded; "
        "broken: KeyError: 'boom'")
    # the listing stopped at its depth bound: the images found before it, and the flag (never a null count)
    assert row["plots_generated"] == 1 and row["plots_truncated"] is True and row["plots_inspected"] is None
    assert row["broken_a"] is None and row["broken_b"] is None
    assert row["agent_iterations"] is None and row["tool_calls"] is None  # no trajectory, no proxy log: None
    assert (row["prompt_tokens"], row["completion_tokens"], row["total_tokens"], row["cost_usd"]) == \
        (1000, 200, 1200, 0.25)
    assert json.loads(store.episode("ep").row.read_text())["cost_usd"] == 0.25


# -- the viewer and its bundle -----------------------------------------------------------------------------------

def _two_episodes(tmp_path) -> Path:
    store = RunStore.create(tmp_path / "run")
    for key in ("deep", "fine"):
        paths = store.episode(key).create()
        write_json(paths.row, {"run_id": store.run_id, "episode": key, "template": "other", "status": "ok"})
    deep_tree(store.episode("deep").workspace, files=10)
    (store.episode("fine").workspace / "fine.png").write_bytes(PNG)
    store.write_results()
    return store.root


def test_viewer_shows_a_deep_workspace(tmp_path):
    site = Site(load_runs([_two_episodes(tmp_path)]))
    page = site.render("runs/run/deep/index.html")[0].decode()
    assert 'src="ws/fig.png"' in page
    assert site.render("runs/run/deep/ws/fig.png") == (PNG, "image/png")


def test_a_broken_episode_renders_as_broken_and_the_bundle_goes_on(tmp_path, monkeypatch):
    run = _two_episodes(tmp_path)

    def fails(folder, steps):
        if folder.name == "deep":
            raise RecursionError("maximum recursion depth exceeded")
        return real(folder, steps)

    import harness.view.page_episode as site_module

    real = site_module.find_plots
    monkeypatch.setattr(site_module, "find_plots", fails)
    site = Site(load_runs([run]))
    page = site.render("runs/run/deep/index.html")[0].decode()
    assert ("episode deep cannot be shown: RecursionError: maximum recursion depth exceeded") in page
    result = CliRunner().invoke(cli, ["view", str(run), "--bundle", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    written = sorted(p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("*.html"))
    assert written == ["index.html", "runs/run/deep/index.html", "runs/run/fine/index.html", "runs/run/index.html"]
    assert (tmp_path / "site" / "runs/run/fine/ws/fine.png").read_bytes() == PNG
    assert "cannot be shown" in (tmp_path / "site" / "runs/run/deep/index.html").read_text()
