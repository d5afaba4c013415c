"""The four terminal agents without Docker: registration, pins, the headless command, failures.

The launch script is run for real with ``sh`` against a stand-in CLI (a
script that records its argv, environment and the files it finds), so the
config files, the prompt and the standard input the real CLI gets are checked
byte for byte.  Failure classification is checked on outputs captured from the
real CLIs (``tests/fixtures/native_logs/<agent>/error-*``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from harness import plugins as registry
from harness.config import AgentProfile, load_profile
from harness.contracts import AgentContext, ImageRecipe
from harness.errors import ErrorKind
from harness.proxy import DUMMY_API_KEY
from tsagent_plugins.agents.terminal import ClaudeCode, Codex, GeminiCli, OpenCode
from tsagent_plugins.agents.terminal.base import PREFIX_ENV, ProfileError, classify_message, merge
from tsagent_plugins.agents.terminal.toml import dumps
from tests.support.paths import REPO, TESTS

FIXTURES = TESTS / "fixtures" / "native_logs"
PROFILES = {"claude-code": "claude-opus-4.6", "codex": "gpt-5.5", "gemini-cli": "gemini-3.1-pro",
            "opencode": "minimax-m2.7"}
#: TraceBench Appendix C.3 pins.
PINS = {"claude-code": "@anthropic-ai/claude-code@2.1.96", "codex": "@openai/codex@0.124.0",
        "gemini-cli": "@google/gemini-cli@0.35.3", "opencode": "opencode-ai@1.14.41"}
URL = "http://127.0.0.1:8765"
PROMPT = "Line one with 'single' and \"double\" quotes, $HOME and `ticks`.\n-starts like an option\nsix times seven"


def profile(agent: str, **update) -> AgentProfile:
    prof = load_profile(REPO / "agent_profiles" / f"{PROFILES[agent]}.yaml")
    return prof.model_copy(update=update) if update else prof


def context(agent: str, home: str = "/home/agent", **update) -> AgentContext:
    return AgentContext(workspace="/workspace", home=home, prompt=PROMPT, profile=profile(agent, **update),
                        model_base_url=URL)


# -- registration and image ------------------------------------------------------------


def test_the_four_agents_are_registered_with_their_pins():
    for name, pin in PINS.items():
        agent = registry.get("agent", name)
        assert agent.needs_model is True
        recipe = ImageRecipe()
        agent.install(recipe)
        agent.install(recipe)  # idempotent
        assert recipe.npm == [pin] and f"{agent.package}@{agent.version}" == pin


def test_the_profiles_name_these_agents():
    for agent, name in PROFILES.items():
        assert load_profile(REPO / "agent_profiles" / f"{name}.yaml").agent == agent


def test_runtime_recipe_takes_the_pins_without_conflict():
    from harness.image.recipe import runtime_recipe

    recipe, warnings = runtime_recipe()
    assert not [w for w in warnings if "terminal" in w or any(a in w for a in PINS)]
    assert set(PINS.values()) <= set(recipe.npm)


# -- the launch script, run for real against a stand-in CLI ------------------------------

FAKE_CLI = r'''#!{python}
import json, os, sys
home = os.environ["HOME"]
files = {{}}
for root, _, names in os.walk(home):
    for n in names:
        p = os.path.join(root, n)
        files[os.path.relpath(p, home)] = open(p).read()
print(json.dumps({{"argv": sys.argv[1:], "env": dict(os.environ), "files": files, "stdin": sys.stdin.read(),
                  "pid": os.getpid()}}))
'''


def run_launch(agent, tmp_path, monkeypatch, **update) -> dict:
    """Run the agent's command with ``sh`` on the host, the CLI replaced by a recorder."""
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    fake = prefix / "bin" / agent.binary
    fake.write_text(FAKE_CLI.format(python=sys.executable))
    fake.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv(PREFIX_ENV, str(prefix))
    invocation = agent.command(context(agent.name, home=str(home), **update))
    assert invocation.ro_binds == [prefix.resolve()]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), **invocation.env}
    proc = subprocess.run(invocation.argv, env=env, input=invocation.stdin, capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("name", sorted(PINS))
def test_launch_passes_the_prompt_intact_and_keeps_secrets_out(name, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-real-host-key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-host-key")
    agent = registry.get("agent", name)
    seen = run_launch(agent, tmp_path, monkeypatch)
    if agent.prompt_on_stdin:
        assert seen["stdin"] == PROMPT and PROMPT not in seen["argv"]
    else:
        assert seen["argv"][-1] == PROMPT and seen["stdin"] == ""
    text = json.dumps(seen)
    assert "real-host-key" not in text
    assert DUMMY_API_KEY in text
    # the login-shell profile keeps the CLI's PATH (Codex runs commands with bash -lc)
    assert seen["files"][".profile"] == f"export PATH='{seen['env']['PATH']}'\n"
    assert seen["env"]["PATH"].startswith(str(tmp_path / "prefix" / "bin"))


def test_claude_code_command(tmp_path, monkeypatch):
    seen = run_launch(ClaudeCode(), tmp_path, monkeypatch)
    argv, env = seen["argv"], seen["env"]
    assert argv[:7] == ["-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions",
                        "--model", "claude-opus-4-6"]
    assert argv[argv.index("--effort") + 1] == "high" and argv[-2] == "--"
    assert env["ANTHROPIC_BASE_URL"] == URL and env["ANTHROPIC_API_KEY"] == DUMMY_API_KEY
    assert env["CLAUDE_CONFIG_DIR"] == str(tmp_path / "home" / ".claude")
    for flag in ("IS_SANDBOX", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY",
                 "DISABLE_ERROR_REPORTING"):
        assert env[flag] == "1"
    assert not [f for f in seen["files"] if f.startswith(".claude")]  # no settings unless asked


def test_claude_code_effort_and_options(tmp_path, monkeypatch):
    seen = run_launch(ClaudeCode(), tmp_path, monkeypatch, reasoning_effort="xhigh",
                      options={"env": {"CLAUDE_CODE_MAX_RETRIES": "2"}, "args": ["--max-turns", "40"],
                               "config": {"permissions": {"deny": ["WebSearch"]}}})
    argv = seen["argv"]
    assert argv[argv.index("--effort") + 1] == "max"
    assert argv[-4:] == ["--max-turns", "40", "--", PROMPT]
    assert seen["env"]["CLAUDE_CODE_MAX_RETRIES"] == "2"
    assert json.loads(seen["files"][".claude/settings.json"]) == {"permissions": {"deny": ["WebSearch"]}}
    no_effort = ClaudeCode().command(context("claude-code", reasoning_effort=None))
    assert "--effort" not in no_effort.argv


def test_codex_command_and_config(tmp_path, monkeypatch):
    seen = run_launch(Codex(), tmp_path, monkeypatch,
                      options={"config": {"model_providers": {"harness": {"request_max_retries": 0}}}})
    argv = seen["argv"]
    assert argv[:5] == ["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                        "--model"]
    assert "model_reasoning_effort=high" in argv and argv[-2:] == ["--", PROMPT]
    assert seen["env"]["CODEX_HOME"] == str(tmp_path / "home" / ".codex")
    assert seen["env"]["OPENAI_API_KEY"] == DUMMY_API_KEY
    config = tomllib.loads(seen["files"][".codex/config.toml"])
    assert config["model"] == "gpt-5.5" and config["model_provider"] == "harness"
    assert config["model_reasoning_effort"] == "high" and config["model_supports_reasoning_summaries"] is True
    assert config["approval_policy"] == "never" and config["sandbox_mode"] == "danger-full-access"
    assert config["check_for_update_on_startup"] is False
    assert config["analytics"] == {"enabled": False} and config["features"] == {"plugins": False}
    assert config["model_providers"]["harness"] == {
        "name": "harness model proxy", "base_url": URL + "/v1", "env_key": "OPENAI_API_KEY",
        "wire_api": "responses", "request_max_retries": 0}


def test_gemini_cli_command_and_settings(tmp_path, monkeypatch):
    seen = run_launch(GeminiCli(), tmp_path, monkeypatch, options={"config": {"general": {"maxAttempts": 1}}})
    argv, env = seen["argv"], seen["env"]
    assert argv[:5] == ["--yolo", "-m", "gemini-3.1-pro-preview", "--output-format", "json"]
    assert argv[-2:] == ["-p", PROMPT]
    assert env["GEMINI_API_KEY"] == DUMMY_API_KEY and env["GOOGLE_GEMINI_BASE_URL"] == URL
    assert env["GEMINI_CLI_NO_RELAUNCH"] == "true"
    settings = json.loads(seen["files"][".gemini/settings.json"])
    assert settings["security"] == {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}}
    assert settings["privacy"]["usageStatisticsEnabled"] is False and settings["telemetry"]["enabled"] is False
    assert settings["general"] == {"enableAutoUpdate": False, "enableAutoUpdateNotification": False, "maxAttempts": 1}
    assert settings["tools"]["useRipgrep"] is False and settings["model"]["skipNextSpeakerCheck"] is True
    [override] = settings["modelConfigs"]["customOverrides"]
    assert override["match"] == {"model": "gemini-3.1-pro-preview"}
    assert override["modelConfig"]["generateContentConfig"]["thinkingConfig"]["thinkingLevel"] == "HIGH"


def test_opencode_command_and_config(tmp_path, monkeypatch):
    seen = run_launch(OpenCode(), tmp_path, monkeypatch)
    argv, env = seen["argv"], seen["env"]
    assert argv == ["run", "--format", "json", "--model", "harness/minimax/minimax-m2.7"]
    home = str(tmp_path / "home")
    assert env["XDG_DATA_HOME"] == home + "/.local/share" and env["XDG_CONFIG_HOME"] == home + "/.config"
    for flag in ("OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_LSP_DOWNLOAD",
                 "OPENCODE_DISABLE_SHARE", "OPENCODE_DISABLE_DEFAULT_PLUGINS"):
        assert env[flag] == "1"
    config = json.loads(env["OPENCODE_CONFIG_CONTENT"])
    provider = config["provider"]["harness"]
    assert provider["npm"] == "@ai-sdk/openai-compatible"
    assert provider["options"] == {"baseURL": URL + "/v1", "apiKey": DUMMY_API_KEY}
    model = provider["models"]["minimax/minimax-m2.7"]
    assert model["tool_call"] is True and "options" not in model  # the profile sets no effort
    assert model["cost"] == {"input": 0.3, "output": 1.2, "cache_read": 0.059}  # Table 21 prices
    assert config["model"] == config["small_model"] == "harness/minimax/minimax-m2.7"
    assert config["permission"]["bash"] == "allow" and config["autoupdate"] is False
    with_effort = json.loads(OpenCode().command(context("opencode", reasoning_effort="high")).env[
        "OPENCODE_CONFIG_CONTENT"])
    assert with_effort["provider"]["harness"]["models"]["minimax/minimax-m2.7"]["options"] == {"reasoningEffort": "high"}


def test_without_any_prefix_the_sandbox_path_is_used(monkeypatch, tmp_path):
    monkeypatch.delenv(PREFIX_ENV, raising=False)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "empty-cache"))
    for name in PINS:
        agent = registry.get("agent", name)
        invocation = agent.command(context(name))
        assert invocation.ro_binds == [] and "PATH" not in invocation.env
        assert not any("PATH=" in line and "export PATH;" in line for line in invocation.argv[2].splitlines())
    # a sandbox without the CLI stops at once, saying how to get it
    agent = registry.get("agent", "codex")
    home = tmp_path / "home"
    home.mkdir()
    invocation = agent.command(context("codex", home=str(home)))
    proc = subprocess.run(invocation.argv, env={"PATH": "/usr/bin:/bin", "HOME": str(home)}, capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 127
    assert "codex (@openai/codex@0.124.0) is not installed in this sandbox" in proc.stderr
    assert "--sandbox docker" in proc.stderr and PREFIX_ENV in proc.stderr


def _fake_prefix(folder: Path, package: str, version: str, binary: str, complete: bool = True) -> Path:
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / binary).write_text(FAKE_CLI.format(python=sys.executable))
    (folder / "bin" / binary).chmod(0o755)
    pkg = folder / "lib" / "node_modules" / package
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": package, "version": version}))
    if complete:
        (folder / ".complete").write_text(package)
    return folder


def test_a_cached_prefix_of_the_pinned_version_is_the_fallback(monkeypatch, tmp_path):
    monkeypatch.delenv(PREFIX_ENV, raising=False)
    cache = tmp_path / "cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    _fake_prefix(cache / "npm" / "aaa", "@openai/codex", "0.1.0", "codex")            # wrong version
    _fake_prefix(cache / "npm" / "bbb", "@openai/codex", "0.124.0", "codex", False)   # unfinished download
    good = _fake_prefix(cache / "npm" / "ccc", "@openai/codex", "0.124.0", "codex")
    home = tmp_path / "home"
    home.mkdir()
    invocation = Codex().command(context("codex", home=str(home)))
    assert invocation.ro_binds == [good.resolve()]
    # used only when the sandbox has no codex of its own (the agent image has one)
    guard = f"command -v codex >/dev/null 2>&1 || {{ PATH={good.resolve()}/bin:\"$PATH\"; export PATH; }}"
    assert guard in invocation.argv[2].splitlines()
    proc = subprocess.run(invocation.argv, env={"PATH": "/usr/bin:/bin", "HOME": str(home)}, capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["env"]["PATH"].startswith(str(good.resolve() / "bin"))


@pytest.mark.parametrize("options,field", [
    ({"nope": 1}, "options.nope"),
    ({"env": {"1BAD": "x"}}, "options.env"),
    ({"env": {"OK": 3}}, "options.env"),
    ({"args": "--x"}, "options.args"),
    ({"config": ["x"]}, "options.config"),
])
def test_bad_profile_options_name_the_profile_and_field(options, field):
    with pytest.raises(ProfileError) as err:
        Codex().command(context("codex", options=options))
    assert "'gpt-5.5'" in str(err.value) and field in str(err.value)


def test_a_profile_without_model_or_a_context_without_proxy_is_refused():
    with pytest.raises(ProfileError, match="'model' is required"):
        ClaudeCode().command(context("claude-code", model=None))
    ctx = context("claude-code")
    ctx.model_base_url = None
    with pytest.raises(ValueError, match="model proxy URL"):
        ClaudeCode().command(ctx)


def test_merge_is_recursive_and_pure():
    base = {"a": {"b": 1, "c": 2}, "d": 1}
    assert merge(base, {"a": {"c": 3}, "e": 4}) == {"a": {"b": 1, "c": 3}, "d": 1, "e": 4}
    assert base == {"a": {"b": 1, "c": 2}, "d": 1}


# -- TOML writer ---------------------------------------------------------------------------


def test_toml_round_trips_through_tomllib():
    data = {"model": "gpt-5.5", "n": 3, "x": 0.5, "on": True, "list": ["a", 'b"q'], "skip": None,
            "t": {"k": "v\nline", "inner": {"deep": 1}}, "dotted key": {"a b": "c"}}
    back = tomllib.loads(dumps(data))
    assert back == {k: v for k, v in data.items() if v is not None}


@pytest.mark.parametrize("bad", [{"x": float("nan")}, {"x": {1, 2}}, {"": 1}])
def test_toml_refuses_what_it_cannot_write(bad):
    with pytest.raises(ValueError):
        dumps(bad)


# -- failure classification -------------------------------------------------------------------


@pytest.mark.parametrize("status,message,kind", [
    (429, "whatever", ErrorKind.RATE_LIMIT),
    (None, "Resource has been exhausted (e.g. check quota).", ErrorKind.RATE_LIMIT),
    (500, "boom", ErrorKind.UPSTREAM),
    (529, "Overloaded", ErrorKind.UPSTREAM),
    (None, "We're currently experiencing high demand, which may cause temporary errors.", ErrorKind.UPSTREAM),
    (None, "API Error: Unable to connect to API (ECONNREFUSED)", ErrorKind.PROXY),
    (None, "exception TypeError: fetch failed sending request", ErrorKind.PROXY),
    (400, "invalid request: context too long", ErrorKind.CRASH),
    (400, "rate limit in the message but a 400 status", ErrorKind.CRASH),
    (None, "something odd", ErrorKind.CRASH),
])
def test_classify_message(status, message, kind):
    assert classify_message(status, message) is kind


@pytest.mark.parametrize("name", sorted(PINS))
def test_classify_failure_on_captured_outputs(name):
    agent = registry.get("agent", name)
    folder = FIXTURES / name
    expected = {"direct": None, "error-400": ErrorKind.CRASH.value, "error-429": ErrorKind.RATE_LIMIT.value}
    seen = 0
    for case, kind in expected.items():
        if not (folder / case).exists():
            continue
        outcome = json.loads((folder / case / "outcome.json").read_text())
        stdout = (folder / case / "agent.stdout").read_text()
        stderr = (folder / case / "agent.stderr").read_text()
        assert agent.classify_failure(stdout, stderr, outcome["exit_code"]) == kind, case
        seen += 1
    assert seen >= 2
    # OpenCode exits 0 after the failed call; the classification still sees it
    if name == "opencode":
        assert json.loads((folder / "error-400" / "outcome.json").read_text())["exit_code"] == 0


def test_fixture_outcomes_are_what_the_cases_say():
    for outcome in FIXTURES.glob("*/*/outcome.json"):
        data = json.loads(outcome.read_text())
        case = outcome.parent.name
        if case == "direct":
            assert data["status"] == "ok" and data["exit_code"] == 0
        elif case == "timeout":
            assert data["error_kind"] == "agent_timeout" and data["exit_code"] is None



def test_a_user_profile_needs_no_code(tmp_path):
    from harness.profiles import resolve_profile

    path = tmp_path / "my-codex.yaml"
    path.write_text("name: my-codex\nagent: codex\nprovider: openai\nmodel: gpt-5.4-mini\nreasoning_effort: low\n"
                    "prices: {input: 0.25, cached: 0.025, output: 2}\n"
                    "options: {config: {model_providers: {harness: {stream_max_retries: 1}}}}\n")
    prof = resolve_profile(str(path))
    invocation = registry.get("agent", prof.agent).command(
        AgentContext(workspace="/workspace", home="/home/agent", prompt="p", profile=prof, model_base_url=URL))
    config = tomllib.loads(next(a for a in invocation.argv if a.startswith("model = ")))  # the config.toml content
    assert config["model"] == "gpt-5.4-mini" and config["model_reasoning_effort"] == "low"
    assert config["model_providers"]["harness"]["stream_max_retries"] == 1
    assert invocation.argv[invocation.argv.index("--model") + 1] == "gpt-5.4-mini"
    assert "model_reasoning_effort=low" in invocation.argv
