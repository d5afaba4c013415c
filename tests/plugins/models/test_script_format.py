"""Script files: loading, errors naming file and field, the backend's options, replay of a proxy.jsonl."""


import pytest

from harness.config import Budget, ConfigError, Prices
from harness.proxy import ModelProxy, UpstreamConfigError, read_log
from harness.proxy.client import request, stream_answer
from tsagent_plugins.models.replay import ReplayUpstream
from tsagent_plugins.models.script_format import body_get, load_script, parse_script
from tsagent_plugins.models.scripted import ScriptedBackend, ScriptedUpstream
from tests.support.paths import TESTS

SCRIPTS = TESTS / "fixtures" / "scripts"


@pytest.mark.parametrize("path", sorted(SCRIPTS.glob("*.yaml")), ids=lambda p: p.name)
def test_example_scripts_load(path):
    script = load_script(path)
    assert len(script.turns) == 2
    assert script.turns[0].tool_calls[0].shell.startswith("python3 -c")
    assert script.turns[1].expect.last_tool_result_contains == "42"


def test_bare_list_is_the_turn_list():
    script = parse_script([{"text": "a"}, {"text": "b"}])
    assert [t.text for t in script.turns] == ["a", "b"] and script.final.text == "done"


@pytest.mark.parametrize("text,problem", [
    ("- tool_calls:\n  - shell: ls\n    name: Bash\n", "turns.0.tool_calls.0: give exactly one of"),
    ("- tool_calls:\n  - shell: ls\n    arguments: {a: 1}\n", "'arguments' goes with 'name'"),
    ("- usage: {prompt_tokens: 10, cached_tokens: 20}\n", "turns.0.usage: cached_tokens cannot exceed"),
    ("- usage: {completion_tokens: 1, reasoning_tokens: 2}\n", "reasoning_tokens cannot exceed completion_tokens"),
    ("- txt: hello\n", "turns.0.txt: Extra inputs are not permitted"),
    ("- expect: {wire: grpc}\n", "turns.0.expect.wire"),
    ("- error: {status: 200}\n", "turns.0.error.status"),
    ("turns:\n  - text: [unclosed\n", "line 3, column 1: invalid YAML"),
    ("42\n", "expected a list of turns or a mapping"),
])
def test_bad_scripts_name_file_and_field(tmp_path, text, problem):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_script(path)
    assert str(info.value).startswith(f"{path}: ")
    assert problem in str(info.value)


def test_missing_script_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read file"):
        load_script(tmp_path / "nope.yaml")


def test_json_script(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{"turns": [{"text": "hi"}], "model": "m"}')
    assert load_script(path).model == "m"


def test_body_get_paths():
    body = {"a": {"b": [10, {"c": "x"}]}}
    assert body_get(body, "a.b.0") == 10 and body_get(body, "a.b.1.c") == "x" and body_get(body, "a.b.-1.c") == "x"
    assert body_get(body, "a.b.2") is not None and body_get(body, "a.z") is body_get(body, "q")


def test_backend_options(tmp_path):
    backend = ScriptedBackend()
    up = backend.upstream({"script": str(SCRIPTS / "codex.yaml")})
    assert isinstance(up, ScriptedUpstream) and len(up.script.turns) == 2
    assert backend.upstream({"script": [{"text": "inline"}]}).script.turns[0].text == "inline"
    with pytest.raises(UpstreamConfigError, match="needs a script: pass --script FILE"):
        backend.upstream({})
    with pytest.raises(UpstreamConfigError, match="not both"):
        backend.upstream({"script": "a", "replay": "b"})
    with pytest.raises(UpstreamConfigError, match="options.script must be"):
        backend.upstream({"script": 3})
    with pytest.raises(UpstreamConfigError, match="none.jsonl not found"):
        backend.upstream({"replay": str(tmp_path / "none.jsonl")})
    with pytest.raises(ConfigError, match="options.script"):
        backend.upstream({"script": [{"nope": 1}]})


def test_per_episode_scripts(tmp_path):
    up = ScriptedUpstream(parse_script([{"text": "default"}]))
    up.assign("b", parse_script([{"text": "special"}]))
    with ModelProxy(up) as proxy:
        for name in ("a", "b"):
            proxy.open_episode(name, tmp_path / f"{name}.s", tmp_path / f"{name}.jsonl", Prices(), Budget())
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        texts = [request(tmp_path / f"{n}.s", "POST", "/v1/messages", body).json()["content"][0]["text"]
                 for n in ("a", "b")]
    assert texts == ["default", "special"]


def test_replay_reproduces_recorded_answers(tmp_path):
    script = parse_script([{"text": "streamed " * 5, "usage": {"prompt_tokens": 10, "completion_tokens": 3}},
                           {"text": "plain"}])
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}
    with ModelProxy(ScriptedUpstream(script)) as proxy:
        proxy.open_episode("rec", tmp_path / "rec.s", tmp_path / "rec.jsonl", Prices(), Budget())
        _, _, pieces = stream_answer(tmp_path / "rec.s", "POST", "/v1/messages", body)
        first = b"".join(p for _, p in pieces)
        second = request(tmp_path / "rec.s", "POST", "/v1/messages", {**body, "stream": False}).json()
        recorded = proxy.close_episode("rec")
    replay = ReplayUpstream(tmp_path / "rec.jsonl")
    with ModelProxy(replay) as proxy:
        proxy.open_episode("rep", tmp_path / "rep.s", tmp_path / "rep.jsonl", Prices(), Budget())
        status, headers, pieces = stream_answer(tmp_path / "rep.s", "POST", "/v1/messages", body)
        again = request(tmp_path / "rep.s", "POST", "/v1/messages", body)
        exhausted = request(tmp_path / "rep.s", "POST", "/v1/messages", body)
        replayed = proxy.close_episode("rep")
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    assert b"".join(p for _, p in pieces) == first
    assert len(pieces) > 3  # re-sent event by event
    assert again.json() == second
    assert exhausted.status == 400 and "exhausted after 2 responses" in exhausted.json()["error"]["message"]
    assert (replayed.prompt_tokens, replayed.completion_tokens) == \
        (recorded.prompt_tokens, recorded.completion_tokens)
    assert replayed.assertion_failures == ["replay of rec.jsonl exhausted after 2 responses"]
    assert len(read_log(tmp_path / "rep.jsonl")) == 6
