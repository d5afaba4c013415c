"""The columns of ``results.parquet``: one row per episode, readable in one line.

::

    import pandas as pd
    frame = pd.read_parquet("runs/<run_id>/results.parquet")

Columns come from four places: the harness (core), the task template's
parameters and score (TraceBench), the model proxy (token usage) and the
metric extractors (TraceBench Appendix G).  A column a run did not produce is
absent (e.g. ``heldout_accuracy`` in a direct-answer-only run); a value that
does not apply is null.  Integer columns that hold nulls are read back as
floats (``NaN`` = null), which :func:`check_frame` accepts.

dtype names: ``str`` (pandas object/string), ``int``, ``float``, ``bool``
(object when it holds nulls).

Core (harness)
    ``run_id`` str: run directory name (``YYYYmmdd-HHMMSS-<hex>``) ·
    ``episode`` str: episode key (folder under ``episodes/``) ·
    ``task`` str: TaskSpec name · ``template`` str: task template (``tracebench``, ``drcik``) ·
    ``profile`` str: agent profile name (the evaluated configuration) ·
    ``agent`` str: agent plugin · ``model`` str: model name (null for non-LLM agents) ·
    ``sandbox`` str: sandbox backend · ``status`` str: ``ok`` | ``failed`` ·
    ``error_kind`` str: typed failure (``agent_timeout``, ``budget_exceeded``, ...) ·
    ``error`` str: one-line reason · ``exit_code`` int: agent exit code ·
    ``agent_seconds`` float: agent wall-clock, start to exit (s) ·
    ``episode_seconds`` float: whole episode incl. scoring (s).

TraceBench (template parameters and score)
    ``simulator`` str · ``noise`` str: ``low`` (kappa_ref) | ``high`` (4 kappa_ref) ·
    ``context`` bool: domain context in the prompt · ``examples_per_class`` int:
    labeled support samples per class (3 in the main experiment, 0 in the
    no-examples ablation) · ``submission`` str: ``direct`` | ``programmatic`` ·
    ``n_test`` int: test batch size · ``seed`` int: repetition seed ·
    ``pool_seed`` int · ``heldout_per_class`` int ·
    ``accuracy`` float: top-1 accuracy on the episode batch ·
    ``shortlist`` float: mean shortlist score (1/m when the label is in a list of m) ·
    ``n_invalid`` int: invalid predictions · ``heldout_accuracy``,
    ``heldout_shortlist`` float, ``heldout_n``, ``heldout_n_invalid`` int:
    the same on the held-out batch (programmatic submission only).

Token usage (model proxy and/or the ``usage`` extractor; Appendix G.3)
    ``prompt_tokens`` int: input tokens incl. cached · ``cached_tokens`` int ·
    ``completion_tokens`` int: output tokens incl. reasoning · ``reasoning_tokens`` int ·
    ``total_tokens`` int: prompt + completion · ``cost_usd`` float: equation (1) at
    the profile's prices · ``n_requests`` int: LLM requests through the proxy ·
    ``n_refused`` int: requests refused by a budget cap · ``budget_exceeded`` str:
    the cap that was hit (null: none) · ``proxy_errors``, ``assertion_failures`` str:
    JSON lists (upstream errors; failed scripted-model assertions) ·
    ``usage_source`` str: ``proxy`` | ``trajectory`` · ``total_seconds`` float:
    first to last trajectory timestamp (s).

Trajectory metrics (``plugins.metrics``; Appendix G)
    ``agent_iterations`` int: LLM calls · ``tool_calls`` int: well-formed tool calls ·
    ``python_calls`` int: Python interpreter invocations · ``python_statements`` int:
    AST statements over distinct displayed source versions · ``shell_parse_fallbacks``
    int: commands read by the fallback shell lexer · ``plots_generated`` int ·
    ``plots_inspected`` int (null: the profile has no image support) ·
    ``numeric_values_printed`` int · ``console_tokens``, ``context_tokens`` int ·
    ``console_token_share`` float: console_tokens / context_tokens (0..1) ·
    ``tokenizer`` str: ``tiktoken:<encoding>`` or ``fallback:...`` ·
    ``context_source`` str: ``proxy`` | ``trajectory``.

Flags
    ``flag_*`` bool (e.g. ``flag_untrained``): the row is not comparable
    (a forecaster run without its trained weights); reports refuse flagged rows.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

#: column -> (dtype, meaning)
CORE: dict[str, tuple[str, str]] = {
    "run_id": ("str", "run directory name"),
    "episode": ("str", "episode key (folder under episodes/)"),
    "task": ("str", "TaskSpec name"),
    "template": ("str", "task template"),
    "profile": ("str", "agent profile (evaluated configuration)"),
    "agent": ("str", "agent plugin"),
    "model": ("str", "model name; null for non-LLM agents"),
    "sandbox": ("str", "sandbox backend"),
    "status": ("str", "ok | failed"),
    "error_kind": ("str", "typed failure kind"),
    "error": ("str", "one-line failure reason"),
    "exit_code": ("int", "agent exit code"),
    "agent_seconds": ("float", "agent wall-clock from start to exit (s)"),
    "episode_seconds": ("float", "whole episode incl. scoring (s)"),
}

TRACEBENCH: dict[str, tuple[str, str]] = {
    "simulator": ("str", "simulator name"),
    "noise": ("str", "low (kappa_ref) | high (4 kappa_ref)"),
    "context": ("bool", "domain context in the prompt"),
    "examples_per_class": ("int", "labeled support samples per class"),
    "submission": ("str", "direct | programmatic"),
    "n_test": ("int", "test batch size"),
    "seed": ("int", "repetition seed"),
    "pool_seed": ("int", "sample pool seed"),
    "heldout_per_class": ("int", "held-out samples per class"),
    "accuracy": ("float", "top-1 accuracy on the episode batch"),
    "shortlist": ("float", "mean shortlist score on the episode batch"),
    "n_invalid": ("int", "invalid predictions on the episode batch"),
    "heldout_accuracy": ("float", "top-1 accuracy on the held-out batch"),
    "heldout_shortlist": ("float", "mean shortlist score on the held-out batch"),
    "heldout_n": ("int", "held-out batch size"),
    "heldout_n_invalid": ("int", "invalid predictions on the held-out batch"),
}

USAGE: dict[str, tuple[str, str]] = {
    "prompt_tokens": ("int", "input tokens incl. cached"),
    "cached_tokens": ("int", "cached input tokens"),
    "completion_tokens": ("int", "output tokens incl. reasoning"),
    "reasoning_tokens": ("int", "reasoning share of completion tokens"),
    "total_tokens": ("int", "prompt + completion tokens"),
    "cost_usd": ("float", "equation (1) at the profile's prices (USD)"),
    "n_requests": ("int", "LLM requests through the proxy"),
    "n_refused": ("int", "requests the proxy refused (budget caps)"),
    "budget_exceeded": ("str", "which budget cap was hit; null when none"),
    "proxy_errors": ("str", "JSON list of upstream errors seen by the proxy"),
    "assertion_failures": ("str", "JSON list of failed scripted-model assertions"),
    "usage_source": ("str", "proxy | trajectory"),
    "total_seconds": ("float", "first to last trajectory timestamp (s)"),
}

METRICS: dict[str, tuple[str, str]] = {
    "agent_iterations": ("int", "LLM calls"),
    "tool_calls": ("int", "well-formed tool calls"),
    "python_calls": ("int", "Python interpreter invocations"),
    "python_statements": ("int", "AST statements over distinct displayed source versions"),
    "shell_parse_fallbacks": ("int", "shell commands read by the fallback lexer"),
    "plots_generated": ("int", "image-like files created in the workspace"),
    "plots_inspected": ("int", "generated images opened successfully; null without image support"),
    "numeric_values_printed": ("int", "numeric literals in tool output"),
    "console_tokens": ("int", "console-output tokens summed over LLM calls"),
    "context_tokens": ("int", "input-context tokens summed over LLM calls"),
    "console_token_share": ("float", "console_tokens / context_tokens"),
    "tokenizer": ("str", "tiktoken:<encoding> or fallback:..."),
    "context_source": ("str", "proxy | trajectory"),
}

COLUMNS: dict[str, tuple[str, str]] = {**CORE, **TRACEBENCH, **USAGE, **METRICS}


def _conforms(series: pd.Series, dtype: str) -> bool:
    values = series.dropna()
    if values.empty:
        return True
    kind = series.dtype.kind
    if dtype == "str":
        return all(isinstance(v, str) for v in values)
    if dtype == "bool":
        return kind == "b" or all(isinstance(v, bool) for v in values)
    if dtype == "int":
        if kind in "iu":
            return True
        return kind == "f" and bool((values == values.round()).all())
    if dtype == "float":
        return kind in "iuf"
    return True


def check_frame(frame: pd.DataFrame, required: tuple[str, ...] = ()) -> list[str]:
    """Problems of a results frame against :data:`COLUMNS` (empty list: it conforms).

    Known columns must have their dtype; ``required`` columns must be present;
    ``flag_*`` columns must be boolean; other columns are allowed.
    """
    problems = [f"missing column {name!r}" for name in required if name not in frame.columns]
    for name in frame.columns:
        if name in COLUMNS:
            dtype = COLUMNS[name][0]
            if not _conforms(frame[name], dtype):
                problems.append(f"column {name!r}: expected {dtype}, got {frame[name].dtype}")
        elif name.startswith("flag_") and not _conforms(frame[name], "bool"):
            problems.append(f"column {name!r}: flag columns must be bool, got {frame[name].dtype}")
    return problems


def describe() -> list[dict[str, Any]]:
    """The schema as records (``name``, ``dtype``, ``meaning``, ``group``) for docs and ``--format json``."""
    out = []
    for group, columns in (("core", CORE), ("tracebench", TRACEBENCH), ("usage", USAGE), ("metrics", METRICS)):
        out += [{"name": k, "dtype": v[0], "meaning": v[1], "group": group} for k, v in columns.items()]
    return out
