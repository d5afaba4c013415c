"""``harness profiles list`` and ``harness settings --example``."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from harness.cli.profiles import list_profiles
from harness.cli.settings import settings
from harness.config import RunSettings


def test_profiles_list_names_agent_model_image_and_prices():
    result = CliRunner().invoke(list_profiles, ["--json"])
    assert result.exit_code == 0, result.output
    rows = {r["profile"]: r for r in map(json.loads, result.output.splitlines())}
    assert rows["euclidean-1nn"]["agent"] == "euclidean-1nn" and rows["euclidean-1nn"]["image_support"] is False
    claude = rows["claude-opus-4.6"]
    assert (claude["agent"], claude["image_support"]) == ("claude-code", True)
    assert (claude["price_input"], claude["price_cached"], claude["price_output"]) == (5, 0.5, 25)  # Table 21


def test_profiles_list_table(tmp_path, monkeypatch):
    (tmp_path / "mine.yaml").write_text("name: mine\nagent: euclidean-1nn\n")
    (tmp_path / "broken.yaml").write_text("name: broken\nagent: [1]\n")
    monkeypatch.setenv("HARNESS_PROFILES", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "400")
    result = CliRunner().invoke(list_profiles, [])
    assert result.exit_code == 0, result.output
    assert "mine" in result.output and "invalid" in result.output
    assert "1 invalid profile: `--agent` refuses it until fixed" in result.output


def test_profiles_list_flags_mismatched_names_and_unregistered_agents_by_file_and_field(tmp_path, monkeypatch):
    (tmp_path / "mine4.yaml").write_text("name: other\nagent: euclidean-1nn\n")
    (tmp_path / "typo.yaml").write_text("agent: euclidan-1nn\n")
    (tmp_path / "plain.yaml").write_text("agent: euclidean-1nn\n")
    monkeypatch.setenv("HARNESS_PROFILES", str(tmp_path))
    result = CliRunner().invoke(list_profiles, ["--json"])
    assert result.exit_code == 0, result.output
    rows = {r["profile"]: r for r in map(json.loads, result.output.splitlines())}
    assert "other" not in rows
    assert rows["mine4"]["error"].startswith(f"{tmp_path / 'mine4.yaml'}: name: must be the file's name 'mine4'")
    assert rows["typo"]["error"].startswith(f"{tmp_path / 'typo.yaml'}: agent: no agent, forecaster or judge "
                                            "named 'euclidan-1nn'")
    assert (rows["plain"]["agent"], rows["plain"]["file"], "error" in rows["plain"]) == (
        "euclidean-1nn", str(tmp_path / "plain.yaml"), False)


def test_settings_example_is_a_valid_settings_file_with_the_defaults():
    result = CliRunner().invoke(settings, ["--example"])
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(result.output)
    assert RunSettings(**data) == RunSettings()
    assert data["rule_budget"] == 600 and data["tmp_mb"] == 1024
    assert "# MiB: total memory of all of a sandbox's processes" in result.output
