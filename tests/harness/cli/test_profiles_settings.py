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
    result = CliRunner().invoke(list_profiles, [])
    assert result.exit_code == 0, result.output
    assert "mine" in result.output and "invalid" in result.output


def test_settings_example_is_a_valid_settings_file_with_the_defaults():
    result = CliRunner().invoke(settings, ["--example"])
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(result.output)
    assert RunSettings(**data) == RunSettings()
    assert data["rule_budget"] == 600 and data["tmp_mb"] == 1024
    assert "# MiB: total memory of all of a sandbox's processes" in result.output
