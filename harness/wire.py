"""The model proxy's public API: what a model backend plugin builds on.

Upstreams (a provider's HTTP API, or a backend that answers in process), the wire formats the proxy speaks
(request and response shapes per provider, :func:`wire_format` by name), server-sent events, token usage, the
proxy log an episode's ``proxy.jsonl.zst`` (an older run's ``proxy.jsonl``) holds and its readers (every read of
a proxy log goes through them: compressed or plain, several frames, a cut last record), and a client request to the
proxy.  (A plugin
that calls a model opens a :class:`harness.ModelClient`, whose proxy gets the run's caps.)
Loaded lazily like the package root (:func:`harness.lazy.public_api`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.lazy import public_api

if TYPE_CHECKING:
    from harness.proxy.upstream import DUMMY_API_KEY as DUMMY_API_KEY
    from harness.proxy.upstream import KEY_ENV_VARS as KEY_ENV_VARS
    from harness.proxy.upstream import Upstream as Upstream
    from harness.proxy.upstream import UpstreamConfigError as UpstreamConfigError
    from harness.proxy.upstream import UpstreamRequest as UpstreamRequest
    from harness.proxy.upstream import UpstreamResponse as UpstreamResponse
    from harness.proxy.http import HttpUpstream as HttpUpstream
    from harness.proxy.http import key_from_env as key_from_env
    from harness.proxy.sse import encode_event as encode_event
    from harness.proxy.sse import parse_sse as parse_sse
    from harness.proxy.usage import Usage as Usage
    from harness.proxy.wire.anthropic import from_anthropic as from_anthropic
    from harness.proxy.wire import Wire as Wire
    from harness.proxy.wire import WireFormat as WireFormat
    from harness.proxy.wire import Block as WireBlock
    from harness.proxy.wire import ToolSpec as ToolSpec
    from harness.proxy.wire import string_leaves as string_leaves
    from harness.proxy.wire import UsageStream as UsageStream
    from harness.proxy.wire import register_wire_format as register_wire_format
    from harness.proxy.wire import unregister_wire_format as unregister_wire_format
    from harness.proxy.wire import wire_format as wire_format
    from harness.proxy.wire import wire_of_record as wire_of_record
    from harness.proxy.wire import is_completion as is_completion
    from harness.proxy.wire import error_body as error_body
    from harness.proxy.wire.gemini import gemini_target as gemini_target
    from harness.proxy_records import ProxyRecords as ProxyRecords
    from harness.proxy.log import decode_body as decode_body
    from harness.proxy_records import load_log as load_log
    from harness.proxy_records import read_log as read_log
    from harness.proxy_records import first_record as first_record
    from harness.proxy_records import proxy_log as proxy_log
    from harness.proxy_records import LOG_NAMES as PROXY_LOG_NAMES
    from harness.proxy.client import request as proxy_request
    from harness.limits import RunLimits as RunLimits

__getattr__, __dir__ = public_api(globals())
