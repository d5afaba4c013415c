"""The Direct Prompt profiles of the paper's zero-shot LLM forecasters (Dr-CiK §5.1, Appendix G): open-weights
models through the ``custom`` backend at a local OpenAI-compatible server, the two closed models via OpenRouter."""

from __future__ import annotations

import pytest

from harness import resolve_profile

OPEN_WEIGHTS = {"dp-qwen3.5-4b": "Qwen/Qwen3.5-4B", "dp-qwen3.5-9b": "Qwen/Qwen3.5-9B",
                "dp-qwen3.5-27b": "Qwen/Qwen3.5-27B", "dp-llama-3.2-3b": "meta-llama/Llama-3.2-3B-Instruct",
                "dp-phi-4-mini": "microsoft/Phi-4-mini-instruct"}
ROUTED = {"dp-mistral-medium-3.1": "mistralai/mistral-medium-3.1",
          "dp-gemini-3.1-flash-lite": "google/gemini-3.1-flash-lite-preview"}


@pytest.mark.parametrize("name", sorted(OPEN_WEIGHTS))
def test_open_weights_profiles_use_a_local_openai_compatible_server(name):
    profile = resolve_profile(name)
    assert (profile.agent, profile.provider, profile.model) == ("llm-dp", "custom", OPEN_WEIGHTS[name])
    assert profile.base_url == "http://localhost:8000/v1"


@pytest.mark.parametrize("name", sorted(ROUTED))
def test_closed_models_are_routed_through_openrouter(name):
    profile = resolve_profile(name)
    assert (profile.agent, profile.provider, profile.model) == ("llm-dp", "openrouter", ROUTED[name])
    assert profile.base_url is None
