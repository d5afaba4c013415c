"""Conformance tests every model backend must pass: typed option errors, answers with normalised usage.

Fixture contract: override ``backend`` to return your
:class:`harness.contracts.ModelBackend`.  ``bad_options`` (default ``{}``
with every provider key variable removed from the environment) must make
``upstream`` raise :class:`harness.UpstreamConfigError`.  Override
``options`` to return options under which the upstream answers offline, and
``model_request`` for the request it answers; without ``options`` the answer
checks are skipped (a backend that needs the network opts out this way).

::

    import pytest
    from harness.testing import ModelBackendTests

    class TestMyBackend(ModelBackendTests):
        @pytest.fixture
        def backend(self):
            return MyBackend()
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from harness.contracts import ModelBackend
from harness.proxy import KEY_ENV_VARS, UpstreamConfigError, UpstreamRequest
from harness.proxy.wire import usage_from_text


def chat_request(text: str = "Say hi.") -> UpstreamRequest:
    """A streamed OpenAI chat-completions request (a wire every backend in this project speaks)."""
    body = {"model": "test-model", "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": text}]}
    return UpstreamRequest("conformance", "POST", "/v1/chat/completions",
                           headers={"content-type": "application/json", "authorization": "Bearer dummy"},
                           body=json.dumps(body).encode())


def answer(upstream: Any, request: UpstreamRequest) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and the whole body of ``upstream``'s answer (its start/shutdown hooks are run)."""

    async def run() -> tuple[int, dict[str, str], bytes]:
        if hasattr(upstream, "startup"):
            await upstream.startup()
        try:
            if hasattr(upstream, "open_episode"):
                upstream.open_episode(request.episode_id)
            response = await upstream.handle(request)
            body = b"".join([chunk async for chunk in response.chunks])
            if getattr(response, "release", None) is not None:
                await response.release()
            return response.status, {k.lower(): v for k, v in response.headers.items()}, body
        finally:
            if hasattr(upstream, "shutdown"):
                await upstream.shutdown()

    return asyncio.run(run())


class ModelBackendErrorTests:
    """Unusable options raise a typed error naming the problem, never a bare exception.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``backend`` (required, function scope): your :class:`harness.contracts.ModelBackend` instance;
    - ``bad_options`` (optional, function scope): options that must make ``upstream`` raise
      :class:`harness.UpstreamConfigError` (default ``{}``, every provider key variable unset).
    """

    @pytest.fixture
    def backend(self) -> ModelBackend:
        pytest.fail("override the `backend` fixture to return your ModelBackend instance")

    @pytest.fixture
    def bad_options(self, monkeypatch) -> dict[str, Any]:
        for variable in KEY_ENV_VARS:
            monkeypatch.delenv(variable, raising=False)
        return {}

    def test_bad_options_raise_a_typed_error(self, backend, bad_options):
        assert isinstance(backend, ModelBackend) and isinstance(backend.name, str) and backend.name
        with pytest.raises(UpstreamConfigError) as caught:
            backend.upstream(bad_options)
        assert str(caught.value).strip(), "the error must say what is wrong"


class ModelBackendUsageTests:
    """An answer carries usage the proxy can normalise: non-negative counts, total = prompt + completion.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``backend`` (required, function scope): your :class:`harness.contracts.ModelBackend` instance;
    - ``options`` (optional, function scope): options under which the upstream answers offline (default
      ``None``: the answer check is skipped, as for a backend that needs the network);
    - ``model_request`` (optional, function scope): the :class:`UpstreamRequest` it answers (default:
      :func:`chat_request`).
    """

    @pytest.fixture
    def backend(self) -> ModelBackend:
        pytest.fail("override the `backend` fixture to return your ModelBackend instance")

    @pytest.fixture
    def options(self) -> dict[str, Any] | None:
        return None

    @pytest.fixture
    def model_request(self) -> UpstreamRequest:
        return chat_request()

    def test_answers_with_normalised_usage(self, backend, options, model_request):
        if options is None:
            pytest.skip("no offline options given (override the `options` fixture)")
        status, headers, body = answer(backend.upstream(options), model_request)
        assert status == 200, body[:300]
        usage = usage_from_text(body, model_request.wire, stream="text/event-stream" in headers.get("content-type", ""))
        assert usage is not None, "the answer carries no usage"
        counts = (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, usage.reasoning_tokens)
        assert all(isinstance(n, int) and n >= 0 for n in counts), counts
        assert usage.cached_tokens <= usage.prompt_tokens and usage.reasoning_tokens <= usage.completion_tokens
        assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens > 0


class ModelBackendTests(ModelBackendErrorTests, ModelBackendUsageTests):
    """Aggregate conformance suite for :class:`harness.contracts.ModelBackend`.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``backend`` (required, function scope): your :class:`harness.contracts.ModelBackend` instance;
    - ``bad_options`` (optional, function scope): options that must make ``upstream`` raise
      :class:`harness.UpstreamConfigError` (default ``{}``, every provider key variable unset);
    - ``options`` (optional, function scope): options under which the upstream answers offline (default
      ``None``: the answer check is skipped, as for a backend that needs the network);
    - ``model_request`` (optional, function scope): the :class:`UpstreamRequest` it answers (default:
      :func:`chat_request`).
    """
