"""``--agent NAME`` lookup: one name per profile (its file's stem), only valid profiles are known, and a
profile naming an unregistered plugin is refused with its file and field."""

from __future__ import annotations

import pytest

from harness.config import ConfigError
from harness.errors import HarnessError
from harness.profiles import find_profiles, resolve_profile
from tests.support.paths import REPO


def test_lookup_listing_and_name_agree(profiles):
    (profiles / "plain.yaml").write_text("agent: euclidean-1nn\n")
    (profiles / "named.yaml").write_text("name: named\nagent: euclidean-1nn\n")
    assert resolve_profile("plain").name == "plain" and resolve_profile("named").name == "named"
    assert resolve_profile(str(profiles / "plain.yaml")).name == "plain"
    listed = {f.name: f for f in find_profiles()}
    assert listed["plain"].profile.name == "plain" and listed["plain"].path == profiles / "plain.yaml"
    assert listed["named"].error is None


def test_a_name_field_other_than_the_file_is_refused_and_not_known(profiles):
    (profiles / "mine4.yaml").write_text("name: other\nagent: euclidean-1nn\n")
    with pytest.raises(ConfigError) as err:
        resolve_profile("mine4")
    assert str(err.value).startswith(f"{profiles / 'mine4.yaml'}: name: must be the file's name 'mine4' (got: 'other')")
    with pytest.raises(HarnessError) as err:
        resolve_profile("other")
    message = str(err.value)
    assert message.startswith("no agent profile named 'other' (known: ")
    known = message.split("(known: ")[1].split(";")[0].split(", ")
    assert "euclidean-1nn" in known and "mine4" not in known and "other" not in known
    assert message.endswith(f"; 1 invalid profile left out: {profiles / 'mine4.yaml'} "
                            "(`harness profiles list` says why))")


def test_known_lists_only_valid_profiles_and_counts_the_invalid_ones(profiles):
    (profiles / "mine.yaml").write_text("name: mine\nagent: [1]\n")
    (profiles / "mine2.yaml").write_text("agent: euclidean-1nn\ncolour: red\n")
    (profiles / "ok.yaml").write_text("agent: euclidean-1nn\n")
    with pytest.raises(HarnessError) as err:
        resolve_profile("absent")
    message = str(err.value)
    known = message.split("(known: ")[1].split(";")[0].split(", ")
    assert "ok" in known and "mine" not in known and "mine2" not in known
    assert f"; 2 invalid profiles left out: {profiles / 'mine.yaml'}, {profiles / 'mine2.yaml'} " in message


def test_a_profile_naming_an_unregistered_agent_is_refused_with_file_and_field(profiles):
    path = profiles / "typo.yaml"
    path.write_text("agent: euclidan-1nn\n")
    with pytest.raises(ConfigError) as err:
        resolve_profile("typo")
    assert str(err.value).startswith(f"{path}: agent: no agent, forecaster or judge named 'euclidan-1nn' "
                                     "(known agents: ")
    assert "euclidean-1nn" in str(err.value)
    [found] = [f for f in find_profiles() if f.name == "typo"]
    assert found.profile is None and found.error == str(err.value)


def test_forecaster_and_judge_profiles_are_valid(profiles):
    """``agent`` may name a forecaster (in-harness forecasting) or a judge, as the shipped judge profile does."""
    (profiles / "fc.yaml").write_text("agent: naive\n")
    assert resolve_profile("fc").agent == "naive"
    assert resolve_profile("judge-gemini-3-flash").agent == "llm-judge"


def test_a_profile_naming_an_unregistered_model_backend_is_refused(profiles, monkeypatch):
    from harness import plugins as registry

    real = registry.plugins()
    registries = {**real.registries, "model_backend": {k: v for k, v in real.registries["model_backend"].items()
                                                       if k != "openrouter"}}
    monkeypatch.setattr(registry, "plugins", lambda: type("P", (), {"registries": registries})())
    path = profiles / "r.yaml"
    path.write_text("agent: euclidean-1nn\nprovider: openrouter\n")
    with pytest.raises(ConfigError) as err:
        resolve_profile("r")
    assert str(err.value).startswith(f"{path}: provider: no model backend named 'openrouter' (known: ")


def test_every_shipped_profile_is_valid(tmp_path, monkeypatch):
    """The shipped folder's profiles and those the built-in plugins ship (``register_agent_profiles``)."""
    from harness.profiles import plugin_profiles

    monkeypatch.delenv("HARNESS_PROFILES", raising=False)
    monkeypatch.chdir(tmp_path)
    shipped = [p.stem for p in (REPO / "agent_profiles").glob("*.yaml")]
    assert "proxy-probe" in plugin_profiles() and "proxy-probe" not in shipped
    assert len(find_profiles()) == len(shipped) + len(plugin_profiles())
    bad = [f"{f.path}: {f.error}" for f in find_profiles() if f.error]
    assert bad == []


def test_the_documented_profile_example_is_valid(profiles):
    from tests.support import docs

    readme = docs.text()
    [block] = [b for b in readme.split("```yaml\n")[1:] if b.startswith("# agent_profiles/my-codex.yaml")]
    block = block.split("```")[0]
    (profiles / "my-codex.yaml").write_text(block)
    profile = resolve_profile("my-codex")
    assert (profile.name, profile.agent, profile.provider, profile.prices.output) == ("my-codex", "codex", "openai", 2)


def test_harness_run_refuses_an_invalid_profile_with_its_file_and_field(profiles, capsys):
    from harness.cli import main

    (profiles / "typo.yaml").write_text("agent: euclidan-1nn\n")
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--task", str(REPO / "tasks/tracebench/balldrop-low-direct.yaml"), "--agent", "typo",
              "--out", str(profiles.parent / "run")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {profiles / 'typo.yaml'}: agent: no agent, forecaster or judge named 'euclidan-1nn'")
    assert not (profiles.parent / "run").exists()


def test_a_typo_gets_did_you_mean_instead_of_every_name(profiles):
    (profiles / "claude-opus-4.6.yaml").write_text("agent: euclidean-1nn\n")
    with pytest.raises(HarnessError) as err:
        resolve_profile("claude-opus-4.7")
    message = str(err.value)
    assert message.startswith("no agent profile named 'claude-opus-4.7' (did you mean 'claude-opus-4.6'")
    assert "known: " not in message and "euclidean-1nn," not in message
    assert "`harness profiles list` lists all" in message
