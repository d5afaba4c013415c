"""Lost usage is counted: a stream cut after the tool call and a clean reply without usage each count in
``usage_missing`` (the row's column), so the token totals are known to be lower bounds; the report says so."""

from __future__ import annotations

import json

import pandas as pd

from harness.config import Budget, Prices
from harness.episode import _usage_columns
from harness.proxy import ModelProxy, Upstream, UpstreamResponse, read_log
from harness.proxy.client import request
from harness.proxy.sse import encode_event
from harness.report import lower_bound_notes

PATH = "/v1/chat/completions"
USAGE = {"prompt_tokens": 500, "completion_tokens": 100}
TOOL_CALL = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [
    {"index": 0, "id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\": \"ls\"}"}}]}}]}


async def _cut_after_tool_call():
    yield encode_event(json.dumps(TOOL_CALL))
    raise ConnectionResetError("upstream connection reset")


class Upstreamish(Upstream):
    """Answers by the request's ``mode``: ``cut`` (a stream cut after the tool call), ``bare`` (a clean
    reply without usage), ``full`` (a reply with usage)."""

    async def handle(self, req):
        if req.method == "HEAD":
            return UpstreamResponse.json(200, {})
        mode = json.loads(req.body)["mode"]
        if mode == "cut":
            return UpstreamResponse.sse(_cut_after_tool_call())
        if mode == "bare":
            return UpstreamResponse.json(200, {"object": "chat.completion", "choices": []})
        return UpstreamResponse.json(200, {"object": "chat.completion", "choices": [], "usage": USAGE})


def test_missing_and_partial_usage_are_counted(tmp_path):
    with ModelProxy(Upstreamish()) as proxy:
        proxy.open_episode("e", tmp_path / "s", tmp_path / "p.jsonl", Prices(input=1, output=1), Budget())
        request(tmp_path / "s", "HEAD", "/", None)
        statuses = []
        for mode in ("full", "cut", "bare", "full"):
            try:
                statuses.append(request(tmp_path / "s", "POST", PATH, {"model": "m", "mode": mode}).status)
            except Exception as exc:  # noqa: BLE001 - the cut stream reaches the client broken
                statuses.append(type(exc).__name__)
        usage = proxy.close_episode("e")
    assert statuses[0] == statuses[2] == statuses[3] == 200
    assert usage.usage_missing == 2
    assert (usage.prompt_tokens, usage.completion_tokens, usage.n_requests) == (1000, 200, 4)
    assert [e.kind for e in usage.errors] == ["upstream_error"]
    responses = {r["seq"]: r for r in read_log(tmp_path / "p.jsonl") if r["type"] == "response"}
    assert [responses[s].get("usage_missing") for s in sorted(responses)] == [None, None, "none", "none", None]
    columns = _usage_columns(usage)
    assert columns["usage_missing"] == 2 and columns["total_tokens"] == 1200


def test_report_says_totals_are_lower_bounds():
    frame = pd.DataFrame({"usage_missing": [0, 2, None, 1], "total_tokens": [10, 20, 30, 40]})
    assert lower_bound_notes(frame) == [
        "tokens and cost are lower bounds for 2 episode(s): 3 model response(s) carried no usage or were cut "
        "mid-stream (column usage_missing)"]
    assert lower_bound_notes(frame.assign(usage_missing=0)) == [] and lower_bound_notes(frame[["total_tokens"]]) == []
