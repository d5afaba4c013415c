"""Agent runtime recipe, Dockerfile, bootstrap spec and backend pieces that need no Docker engine."""

from __future__ import annotations

import json
import re
import struct
import types

import pytest
from click.testing import CliRunner

from harness import plugins as registry
from harness.config import ConfigError
from harness.contracts import Agent, ImageRecipe
from harness.hookspecs import hookimpl
from harness.image import dockerfile
from harness.image.bootstrap import BootstrapSpec
from harness.image.build import wheel_platforms
from harness.image.recipe import (
    RUNTIME_PACKAGES,
    RecipeConflict,
    agent_recipe,
    compose,
    default_recipe_path,
    load_recipe_file,
    parse_npm,
    parse_pip,
    runtime_recipe,
)
from harness.sandbox import docker as backend

# TraceBench Appendix C.5, Table 20, as printed in the paper.
PAPER_TABLE_20 = """
contourpy 1.3.3
cycler 0.12.1
fonttools 4.61.1
iniconfig 2.3.0
joblib 1.5.3
kiwisolver 1.4.9
llvmlite 0.46.0
matplotlib 3.10.8
numba 0.63.1
numpy 2.3.5
packaging 26.0
pandas 3.0.0
pillow 12.1.0
pluggy 1.6.0
pyarrow 23.0.0
Pygments 2.19.2
pyparsing 3.3.2
pytest 8.4.1
python-dateutil 2.9.0.post0
ruptures 1.1.10
scikit-learn 1.8.0
scipy 1.17.0
six 1.17.0
threadpoolctl 3.6.0
tslearn 0.7.0
"""


def test_table_20_is_the_papers():
    rows = dict(line.split() for line in PAPER_TABLE_20.strip().splitlines())
    assert RUNTIME_PACKAGES == rows and len(RUNTIME_PACKAGES) == 25


def test_runtime_recipe_pins_table_20_uv_and_the_four_clis():
    recipe = compose(("default", load_recipe_file(default_recipe_path())))
    assert set(recipe.pip) == {f"{k}=={v}" for k, v in RUNTIME_PACKAGES.items()} | {"uv==0.8.15"}
    assert recipe.npm == ("@anthropic-ai/claude-code@2.1.96", "@google/gemini-cli@0.35.3",
                          "@openai/codex@0.124.0", "opencode-ai@1.14.41")
    assert recipe.python == "3.13" and recipe.min_node_major == 20 and recipe.base == "python:3.13-slim"
    assert {"tmux", "procps", "asciinema", "ripgrep", "nodejs", "ca-certificates"} == {p for _, p in recipe.system}


def test_pins_are_parsed_strictly():
    assert parse_npm("@openai/codex@0.124.0") == ("@openai/codex", "0.124.0")
    assert parse_npm("opencode-ai@1.14.41") == ("opencode-ai", "1.14.41")
    assert parse_pip("Pygments==2.19.2") == ("pygments", "2.19.2")
    for bad in ("opencode-ai", "opencode-ai@latest", "@openai/codex@^0.124.0", "codex@0.124"):
        with pytest.raises(ValueError, match="must be pinned as name@X.Y.Z"):
            parse_npm(bad)
    for bad in ("numpy", "numpy>=2", "numpy==2.*,<3"):
        with pytest.raises(ValueError, match="must be pinned as name==version"):
            parse_pip(bad)


def test_recipe_file_errors_name_file_and_field(tmp_path):
    f = tmp_path / "extra.yaml"
    f.write_text("npm: ['opencode-ai']\n")
    with pytest.raises(ConfigError) as err:
        load_recipe_file(f)
    assert str(f) in str(err.value) and "npm" in str(err.value) and "name@X.Y.Z" in str(err.value)
    f.write_text("npm: []\napt: [curl]\n")
    with pytest.raises(ConfigError, match=r"apt: Extra inputs are not permitted"):
        load_recipe_file(f)
    f.write_text("files:\n  relative/path: x\n")
    with pytest.raises(ConfigError, match="files: .*must be an absolute path"):
        load_recipe_file(f)
    f.write_text("npm: [\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_recipe_file(f)


def test_extra_recipe_merges_and_conflicts_name_both_sources(tmp_path):
    f = tmp_path / "extra.yaml"
    f.write_text("npm: ['opencode-ai@1.14.41', 'left-pad@1.3.0']\npip: ['polars==1.30.0']\n"
                 "files: {/etc/harness/note.txt: hello}\n")
    recipe, _ = runtime_recipe([f], include_agents=False)
    assert "left-pad@1.3.0" in recipe.npm and recipe.npm.count("opencode-ai@1.14.41") == 1
    assert "polars==1.30.0" in recipe.pip and recipe.files == (("/etc/harness/note.txt", "hello"),)
    f.write_text("pip: ['numpy==2.0.0']\n")
    with pytest.raises(RecipeConflict, match=r"numpy==2.3.5 \(from runtime package pins\) conflicts with "
                                             rf"numpy==2.0.0 \(from recipe file {re.escape(str(f))}\)"):
        runtime_recipe([f], include_agents=False)
    f.write_text("npm: ['opencode-ai@1.14.29']\n")
    with pytest.raises(RecipeConflict, match="opencode-ai@1.14.41 .*conflicts with opencode-ai@1.14.29"):
        runtime_recipe([f], include_agents=False)


class _CodexLike(Agent):
    name = "codex-like"

    def install(self, recipe: ImageRecipe) -> None:
        recipe.npm.append("@openai/codex@0.124.0")
        recipe.files["/opt/harness/codex-note"] = "x"
        recipe.commands.append("codex")

    def command(self, ctx):
        raise NotImplementedError


class _Broken(Agent):
    name = "broken-installer"

    def install(self, recipe: ImageRecipe) -> None:
        recipe.npm.append("left-pad")  # not pinned

    def command(self, ctx):
        raise NotImplementedError


def test_agents_contribute_through_install_and_a_bad_one_is_left_out():
    plugin = types.SimpleNamespace(register_agents=hookimpl(lambda register: (register(_CodexLike()),
                                                                               register(_Broken()))))
    fresh = registry.Plugins(load_entrypoints=False)
    fresh.add(plugin, "test-agents")
    saved = registry.reset(fresh)
    try:
        part, problems = agent_recipe()
    finally:
        registry.reset(saved)
    assert part.npm == ["@openai/codex@0.124.0"] and part.files == {"/opt/harness/codex-note": "x"}
    assert part.commands == ["codex"]
    assert len(problems) == 1 and "broken-installer" in problems[0] and "name@X.Y.Z" in problems[0]


def test_image_tag_is_a_content_hash():
    recipe = compose(("default", load_recipe_file(default_recipe_path())))
    tag = dockerfile.tag_for(recipe)
    assert re.fullmatch(r"harness-agent:[0-9a-f]{12}", tag)
    assert dockerfile.tag_for(compose(("default", load_recipe_file(default_recipe_path())))) == tag
    more = compose(("default", load_recipe_file(default_recipe_path())), ("x", ImageRecipe(npm=["left-pad@1.3.0"])))
    assert dockerfile.tag_for(more) != tag
    assert dockerfile.tag_for(recipe.with_base("harness-base:0123456789ab")) != tag


def test_dockerfile_installs_offline_and_checks_versions():
    recipe = compose(("default", load_recipe_file(default_recipe_path()))).with_base("harness-base:abc")
    text = dockerfile.render(recipe)
    assert text.startswith("# Agent runtime image") and "FROM harness-base:abc AS base" in text
    assert "pip install --no-index" in text and "--find-links /tmp/harness-wheels" in text
    assert "assert v[:2] == (3, 13)" in text and '[ "$major" -ge 20 ]' in text
    assert "for bin in claude codex gemini opencode; do" in text
    assert "COPY npm/ /usr/local/" in text and "COPY files/" not in text
    assert "ENV PATH=/opt/venv/bin:" in text
    assert dockerfile.requirements_txt(recipe).splitlines()[0] == "contourpy==1.3.3"


def test_wheel_platforms_cover_manylinux_2_17_to_2_36(monkeypatch):
    monkeypatch.setattr("platform.machine", lambda: "x86_64")
    plats = wheel_platforms()
    assert plats[0] == "manylinux_2_36_x86_64" and "manylinux_2_17_x86_64" in plats and "manylinux2014_x86_64" in plats
    assert len([p for p in plats if p.startswith("manylinux_2_")]) == 36 - 17 + 1


def test_bootstrap_spec_hash_covers_content_not_mirror():
    a = BootstrapSpec(mirror="http://deb.debian.org/debian")
    b = BootstrapSpec(mirror="http://mirror.example/debian")
    assert a.tag == b.tag and re.fullmatch(r"harness-base:[0-9a-f]{12}", a.tag)
    assert BootstrapSpec(packages=a.packages + ("git",)).tag != a.tag
    assert BootstrapSpec(suite="forky").tag != a.tag
    assert a.suite == "trixie" and a.variant == "minbase"
    assert {"python3", "python3-venv", "nodejs", "ca-certificates", "tmux", "procps", "ripgrep"} <= set(a.packages)


# -- backend pieces -------------------------------------------------------------------------------
def _frame(stream: int, data: bytes) -> bytes:
    return struct.pack(">BxxxL", stream, len(data)) + data


def test_frame_reader_demultiplexes_split_frames():
    blob = _frame(1, b"hello ") + _frame(2, b"warn\n") + _frame(1, b"world\n")
    reader = backend._FrameReader()
    for i in range(len(blob)):  # one byte at a time
        reader.feed(blob[i:i + 1])
    assert (reader.text(1), reader.text(2)) == ("hello world\n", "warn\n")


def test_frame_reader_caps_output(monkeypatch):
    monkeypatch.setattr(backend, "MAX_OUTPUT_BYTES", 10)
    reader = backend._FrameReader()
    reader.feed(_frame(1, b"0123456789abcdef"))
    assert reader.text(1) == "0123456789\n[harness: 6 more bytes of output dropped]\n"


def test_no_engine_reason_is_one_sentence(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/absent.sock")
    ok, why = backend.DockerBackend().available()
    assert not ok
    assert why == f"no Docker engine answers at unix://{tmp_path}/absent.sock: start one (e.g. scripts/docker-engine.sh)"
    with pytest.raises(backend.DockerSandboxError) as err:
        backend.DockerBackend(image="x").create(types.SimpleNamespace(image="x"))
    assert str(err.value) == why


def test_image_show_json_without_engine(monkeypatch, tmp_path):
    from harness.cli.image import image

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/absent.sock")
    result = CliRunner().invoke(image, ["show", "--json", "--bootstrap"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    recipe, _ = runtime_recipe()
    assert shown["tag"] == dockerfile.tag_for(recipe.with_base(BootstrapSpec().tag))
    assert shown["built"] is None and shown["base"] == BootstrapSpec().tag
    assert "uv==0.8.15" in shown["pip"] and "opencode-ai@1.14.41" in shown["npm"]
    result = CliRunner().invoke(image, ["build", "--bootstrap", "--base", "python:3.13-slim"])
    assert result.exit_code == 2 and "either --bootstrap or --base" in result.output


def test_terminal_agents_declare_the_command_their_package_installs():
    agents = {name: reg.obj for name, reg in registry.plugins().registry("agent").items()}
    for name in ("claude-code", "codex", "gemini-cli", "opencode"):
        part = ImageRecipe()
        agents[name].install(part)
        assert part.commands == [agents[name].binary] and len(part.npm) == 1
    recipe = dockerfile.render(compose(("agents", agent_recipe()[0])))
    assert "for bin in claude codex gemini opencode; do" in recipe
