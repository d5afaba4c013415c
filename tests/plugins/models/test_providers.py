"""Provider model backends: registration, key lookup in the host environment, option errors."""

import importlib.metadata as md

import pytest

from harness import plugins
from harness.proxy import HttpUpstream, MissingApiKey, UpstreamConfigError, UpstreamRequest
from tsagent_plugins.models.providers import BACKENDS

CANARY = "sk-canary-providers-91b2"
KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "MY_KEY")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)


def backend(name):
    return {b.name: b for b in BACKENDS}[name]


def test_all_backends_registered_through_entry_points():
    # load only this area's entry points (the others import heavy dependencies)
    eps = {ep.name: ep for ep in md.entry_points(group="harness")}
    assert eps["provider-models"].value == "tsagent_plugins.models.providers"
    assert eps["scripted-model"].value == "tsagent_plugins.models.scripted"
    pm = plugins.Plugins(load_entrypoints=False)
    for name in ("provider-models", "scripted-model"):
        pm.add(eps[name].load(), name)
    registry = pm.registry("model_backend")
    assert set(registry) == {"anthropic", "openai", "google", "openrouter", "custom", "scripted"}
    assert registry["anthropic"].plugin == "provider-models"
    assert registry["scripted"].plugin == "scripted-model"
    assert pm.problems == []


@pytest.mark.parametrize("name,var,header,value,base", [
    ("anthropic", "ANTHROPIC_API_KEY", "x-api-key", CANARY, "https://api.anthropic.com"),
    ("openai", "OPENAI_API_KEY", "authorization", f"Bearer {CANARY}", "https://api.openai.com"),
    ("openrouter", "OPENROUTER_API_KEY", "authorization", f"Bearer {CANARY}", "https://openrouter.ai/api"),
    ("google", "GEMINI_API_KEY", "x-goog-api-key", CANARY, "https://generativelanguage.googleapis.com"),
    ("google", "GOOGLE_API_KEY", "x-goog-api-key", CANARY, "https://generativelanguage.googleapis.com"),
])
def test_key_from_host_env_in_provider_scheme(monkeypatch, name, var, header, value, base):
    monkeypatch.setenv(var, CANARY)
    up = backend(name).upstream({})
    assert isinstance(up, HttpUpstream) and up.base_url == base
    req = UpstreamRequest("e", "POST", "/v1/x", headers={"X-Api-Key": "dummy", "Authorization": "Bearer dummy",
                                                         "x-goog-api-key": "dummy", "Content-Length": "3",
                                                         "Accept-Encoding": "br", "anthropic-beta": "b"})
    out = up.outgoing_headers(req)
    assert out[header] == value
    assert out["anthropic-beta"] == "b"
    assert "dummy" not in " ".join(out.values())
    assert not {"content-length", "accept-encoding"} & set(out)
    assert up.secrets() == [CANARY]
    assert CANARY not in repr(up)


def test_missing_key_names_the_variables(monkeypatch):
    with pytest.raises(MissingApiKey, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        backend("google").upstream({})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "   ")
    with pytest.raises(MissingApiKey, match="ANTHROPIC_API_KEY"):
        backend("anthropic").upstream({})


def test_base_url_and_key_variable_overrides(monkeypatch):
    monkeypatch.setenv("MY_KEY", CANARY)
    up = backend("openai").upstream({"base_url": "http://127.0.0.1:8000", "api_key_env": "MY_KEY",
                                     "read_timeout": 5})
    assert up.base_url == "http://127.0.0.1:8000" and up.secrets() == [CANARY]


def test_custom_backend(monkeypatch):
    with pytest.raises(UpstreamConfigError, match="options.base_url"):
        backend("custom").upstream({})
    up = backend("custom").upstream({"base_url": "http://127.0.0.1:8000/v1"})
    assert up.auth == "none" and up.secrets() == []
    with pytest.raises(UpstreamConfigError, match="options.api_key_env"):
        backend("custom").upstream({"base_url": "http://h", "auth": "bearer"})
    monkeypatch.setenv("MY_KEY", CANARY)
    up = backend("custom").upstream({"base_url": "http://h", "api_key_env": "MY_KEY", "auth": "x-api-key"})
    assert up.outgoing_headers(UpstreamRequest("e", "POST", "/v1/messages"))["x-api-key"] == CANARY


@pytest.mark.parametrize("options,match", [
    ({"base_url": "ftp://host"}, "options.base_url must be an http"),
    ({"base_url": "http://h", "auth": "magic", "api_key_env": "MY_KEY"}, "options.auth must be one of"),
    ({"base_url": "http://h", "read_timeout": -1}, "options.read_timeout"),
    ({"base_url": "http://h", "api_key_env": ""}, "options.api_key_env"),
])
def test_bad_options_name_the_option(monkeypatch, options, match):
    monkeypatch.setenv("MY_KEY", CANARY)
    with pytest.raises(UpstreamConfigError, match=match):
        backend("custom").upstream(options)


def test_fixed_auth_scheme_of_named_providers(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    with pytest.raises(UpstreamConfigError, match="fixed to 'x-api-key'"):
        backend("anthropic").upstream({"auth": "bearer"})
