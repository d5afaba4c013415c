"""Config models: malformed files fail with the file, the field path and what was expected."""

import pytest

from harness.config import AgentProfile, ConfigError, Prices, load_profile, load_task_spec


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_unknown_field_names_file_and_field(tmp_path):
    path = write(tmp_path, "t.yaml", "name: x\ntemplate: tracebench\nparams: {}\ncolour: red\n")
    with pytest.raises(ConfigError) as err:
        load_task_spec(path)
    assert str(path) in str(err.value) and "colour: Extra inputs are not permitted" in str(err.value)


def test_missing_and_wrong_type(tmp_path):
    path = write(tmp_path, "t.yaml", "name: [1, 2]\nparams: 3\n")
    with pytest.raises(ConfigError) as err:
        load_task_spec(path)
    text = str(err.value)
    assert "template: Field required" in text
    assert "name: Input should be a valid string" in text
    assert "params: Input should be a valid dictionary" in text


def test_invalid_yaml_reports_line(tmp_path):
    path = write(tmp_path, "t.yaml", "name: x\n  template: : y\n")
    with pytest.raises(ConfigError, match=r"line 2, column \d+: invalid YAML"):
        load_task_spec(path)


def test_not_a_mapping_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="expected a mapping of fields, got list"):
        load_task_spec(write(tmp_path, "t.yaml", "- a\n- b\n"))
    with pytest.raises(ConfigError, match="cannot read file"):
        load_task_spec(tmp_path / "absent.yaml")


def test_profile_literal_error_says_what_was_expected(tmp_path):
    path = write(tmp_path, "p.yaml", "name: p\nagent: codex\nreasoning_effort: extreme\n")
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert "reasoning_effort: Input should be 'low', 'medium', 'high' or 'xhigh' (got: 'extreme')" in str(err.value)


def test_cost_is_equation_1():
    # claude-opus-4.6 prices (Table 21): 1M prompt tokens of which 400k cached, 100k completion.
    prices = Prices(input=5, cached=0.5, output=25)
    assert prices.cost(1_000_000, 400_000, 100_000) == pytest.approx((600_000 * 5 + 400_000 * 0.5 + 100_000 * 25) / 1e6)
    assert prices.cost(1_000_000, 400_000, 100_000) == pytest.approx(5.7)


@pytest.mark.parametrize("name, prices", [
    ("claude-opus-4.6", (5, 0.5, 25)), ("gemini-3.1-pro", (2, 0.2, 12)),
    ("gpt-5.5", (5, 0.5, 30)), ("minimax-m2.7", (0.3, 0.059, 1.20)),
])
def test_shipped_profiles_match_table_19_and_21(name, prices):
    from harness.profiles import resolve_profile

    profile = resolve_profile(name)
    assert isinstance(profile, AgentProfile)
    assert (profile.prices.input, profile.prices.cached, profile.prices.output) == prices
    assert profile.image_support is (name != "minimax-m2.7")
    assert profile.reasoning_effort == (None if name == "minimax-m2.7" else "high")
    assert profile.agent == {"claude-opus-4.6": "claude-code", "gemini-3.1-pro": "gemini-cli",
                             "gpt-5.5": "codex", "minimax-m2.7": "opencode"}[name]


def test_a_profile_is_named_by_its_file(tmp_path):
    """One name per profile: the file's stem; ``name:`` is optional and must equal it when given."""
    assert load_profile(write(tmp_path, "mine.yaml", "agent: codex\n")).name == "mine"
    assert load_profile(write(tmp_path, "same.yml", "name: same\nagent: codex\n")).name == "same"
    path = write(tmp_path, "mine4.yaml", "name: other\nagent: codex\n")
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert str(err.value) == (f"{path}: name: must be the file's name 'mine4' (got: 'other'); "
                              "drop the field or rename the file to other.yaml")


def test_a_profile_requires_only_its_agent(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_profile(write(tmp_path, "p.yaml", "model: m\n"))
    assert str(err.value) == f"{tmp_path / 'p.yaml'}: agent: Field required"
