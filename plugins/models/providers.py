"""Real providers as model backends: the proxy forwards upstream with the host's key.

=============  ==========================================  ================  =====================================
name           default base URL                            auth              key (host environment)
=============  ==========================================  ================  =====================================
``anthropic``  https://api.anthropic.com                   ``x-api-key``     ``ANTHROPIC_API_KEY``
``openai``     https://api.openai.com                      ``bearer``        ``OPENAI_API_KEY``
``google``     https://generativelanguage.googleapis.com   ``x-goog-api-key`` ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``
``openrouter`` https://openrouter.ai/api                   ``bearer``        ``OPENROUTER_API_KEY``
``custom``     ``options.base_url`` (required)             ``options.auth``  ``options.api_key_env``
=============  ==========================================  ================  =====================================

The request path is appended to the base URL unchanged (``/v1/messages``,
``/v1/responses``, ``/v1/chat/completions``, ``/v1beta/models/...``).  Options
(from the agent profile): ``base_url`` (override), ``api_key_env`` (variable
name override), ``auth`` (``custom`` only: ``bearer`` (default with a key),
``x-api-key``, ``x-goog-api-key``, ``none`` (default without a key)),
``connect_timeout`` and ``read_timeout`` in seconds.  A missing key raises
:class:`harness.proxy.MissingApiKey` naming the variables (never a value).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness import ModelBackend, hookimpl

if TYPE_CHECKING:
    from harness.wire import HttpUpstream


class ProviderBackend(ModelBackend):
    """One provider: a default base URL, an auth scheme and the host variables holding its key."""

    def __init__(self, name: str, base_url: str | None, auth: str, key_envs: tuple[str, ...]):
        self.name = name
        self.base_url = base_url
        self.auth = auth
        self.key_envs = key_envs

    def upstream(self, options: dict[str, Any]) -> HttpUpstream:
        # the proxy's modules (and aiohttp) load when a run needs a provider, not when the backends register
        from harness.wire import HttpUpstream, UpstreamConfigError, key_from_env

        opts = dict(options or {})
        base_url = opts.get("base_url") or self.base_url
        if not base_url:
            raise UpstreamConfigError(f"model backend {self.name!r} needs options.base_url "
                                      "(e.g. http://127.0.0.1:8000 for a local server)")
        key_env = opts.get("api_key_env")
        if key_env is not None and (not isinstance(key_env, str) or not key_env):
            raise UpstreamConfigError(f"model backend {self.name!r}: options.api_key_env must be a variable name, "
                                      f"got {key_env!r}")
        envs = (key_env,) if key_env else self.key_envs
        auth = opts.get("auth") or (self.auth if envs else "none")
        if self.name != "custom" and "auth" in opts and opts["auth"] != self.auth:
            raise UpstreamConfigError(f"model backend {self.name!r}: options.auth is fixed to {self.auth!r}; "
                                      "use the 'custom' backend for another scheme")
        timeouts = {}
        for key in ("connect_timeout", "read_timeout"):
            if key in opts:
                value = opts[key]
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                    raise UpstreamConfigError(f"model backend {self.name!r}: options.{key} must be a positive "
                                              f"number of seconds, got {value!r}")
                timeouts[key] = float(value)
        if auth != "none" and not envs:
            raise UpstreamConfigError(f"model backend {self.name!r}: options.auth {auth!r} needs options.api_key_env "
                                      "(the host variable holding the key)")
        key = key_from_env(envs, self.name) if auth != "none" else None
        return HttpUpstream(base_url, auth=auth, api_key=key, name=self.name, **timeouts)


BACKENDS = (
    ProviderBackend("anthropic", "https://api.anthropic.com", "x-api-key", ("ANTHROPIC_API_KEY",)),
    ProviderBackend("openai", "https://api.openai.com", "bearer", ("OPENAI_API_KEY",)),
    ProviderBackend("google", "https://generativelanguage.googleapis.com", "x-goog-api-key",
                    ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
    ProviderBackend("openrouter", "https://openrouter.ai/api", "bearer", ("OPENROUTER_API_KEY",)),
    ProviderBackend("custom", None, "bearer", ()),
)


@hookimpl
def register_model_backends(register):
    for backend in BACKENDS:
        register(backend)
