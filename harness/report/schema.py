"""The columns of ``results.parquet``: one row per episode (or per forecast), readable in one line.

::

    import pandas as pd
    frame = pd.read_parquet("runs/<run_id>/results.parquet")

Every row has ``run_id``, ``template``, ``task`` and ``episode``; the other
columns depend on the row's ``template``: each task template declares the
columns its params and score add (``TaskTemplate.result_columns``), and
:data:`SCHEMAS` holds every registered template's full column set.  A column a
run did not produce is absent; a value that does not apply is null.  Integer
columns that hold nulls are read back as floats (``NaN`` = null), and columns
whose values are all null as objects, which :func:`check_frame` accepts.  The
same name can mean different things in different templates (e.g. a bool in
one and a condition name in another): rows are checked per template.

dtype names: ``str`` (pandas object/string), ``int``, ``float``, ``bool``
(object when it holds nulls).

Agent-episode templates (``harness run`` episodes in a sandboxed agent)
  Core (harness)
    ``run_id`` str: run directory name (``YYYYmmdd-HHMMSS-<hex>``, or the ``--out`` folder's name) ·
    ``episode`` str: episode key (folder under ``episodes/``: ``<label>-<episode_id>``) ·
    ``episode_id`` str: short hash of the episode's canonical content ·
    ``task`` str: TaskSpec name · ``template`` str: task template ·
    ``profile`` str: agent profile name (the evaluated configuration) ·
    ``agent`` str: agent plugin · ``model`` str: model name (null for non-LLM agents) ·
    ``sandbox`` str: sandbox backend · ``status`` str: ``ok`` | ``failed`` |
    ``infra_failed`` (infrastructure failure after the allowed retries) ·
    ``error_kind`` str: typed failure (``agent_timeout``, ``budget_exceeded``, ...) ·
    ``error`` str: one-line reason · ``exit_code`` int: agent exit code (null when killed) ·
    ``agent_seconds`` float: agent wall-clock, start to exit (s) ·
    ``episode_seconds`` float: whole episode incl. scoring (s) ·
    ``infra_retries`` int: infrastructure retries spent (``infra_failed`` rows).

  Template (the template's ``result_columns``: its parameters and score)

  Token usage (model proxy and/or the ``usage`` extractor)
    ``prompt_tokens`` int: input tokens incl. cached · ``cached_tokens`` int ·
    ``completion_tokens`` int: output tokens incl. reasoning · ``reasoning_tokens`` int ·
    ``total_tokens`` int: prompt + completion · ``cost_usd`` float: the token cost at
    the profile's prices · ``n_requests`` int: LLM requests through the proxy ·
    ``n_refused`` int: requests refused by a budget cap · ``budget_exceeded`` str:
    the cap that was hit (null: none) · ``proxy_errors``, ``assertion_failures`` str:
    JSON lists (upstream errors; failed assertions of a model script) ·
    ``usage_missing`` int: model responses without usage or cut mid-stream (above 0: the
    token and cost totals are lower bounds) ·
    ``usage_source`` str: ``proxy`` | ``trajectory`` · ``total_seconds`` float:
    agent-system wall-clock (s): the longer of the trajectory's span and the
    proxy log's (first request to last response byte).

  Trajectory metrics (the metric extractors)
    ``agent_iterations`` int: LLM calls · ``tool_calls`` int: well-formed tool calls ·
    ``python_calls`` int: Python interpreter invocations · ``python_statements`` int:
    AST statements over distinct displayed source versions · ``shell_parse_fallbacks``
    int: commands read by the fallback shell lexer · ``plots_generated`` int ·
    ``plots_inspected`` int (null: the profile has no image support) ·
    ``numeric_values_printed`` int · ``console_tokens``, ``context_tokens`` int ·
    ``console_token_share`` float: console_tokens / context_tokens (0..1) ·
    ``tokenizer`` str: ``tiktoken:<encoding>`` or ``fallback:...`` ·
    ``context_source`` str: ``proxy`` | ``trajectory``.

In-harness templates (``TaskTemplate.agent_episode_columns`` False, e.g. forecasting rows)
    the row key, ``episode_seconds`` float, ``error_kind`` and ``error`` str, ``infra_retries`` int,
    and the template's ``result_columns``.

Rows without a ``template`` (or with a null one) are checked against the
agent-episode columns the harness writes (:data:`COLUMNS`); pass ``template=``
to :func:`check_frame` to check them against one template's.

Flags (every template)
    ``flag_*`` bool (e.g. ``flag_untrained``): the row is not comparable
    (a forecaster run without its trained weights); reports refuse flagged rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

#: column -> (dtype, meaning)
Columns = dict[str, tuple[str, str]]

CORE: Columns = {
    "run_id": ("str", "run directory name"),
    "episode": ("str", "episode key (folder under episodes/): <label>-<episode_id>"),
    "episode_id": ("str", "short hash of the episode's canonical content (task params, profile, seed)"),
    "task": ("str", "TaskSpec name"),
    "template": ("str", "task template"),
    "profile": ("str", "agent profile (evaluated configuration)"),
    "agent": ("str", "agent plugin"),
    "model": ("str", "model name; null for non-LLM agents"),
    "sandbox": ("str", "sandbox backend"),
    "status": ("str", "ok | failed | infra_failed"),
    "error_kind": ("str", "typed failure kind"),
    "error": ("str", "one-line failure reason"),
    "exit_code": ("int", "agent exit code; null when the agent was killed"),
    "agent_seconds": ("float", "agent wall-clock from start to exit (s)"),
    "episode_seconds": ("float", "whole episode incl. scoring (s)"),
    "infra_retries": ("int", "infrastructure retries spent (infra_failed rows)"),
}

TOKENS: Columns = {
    "prompt_tokens": ("int", "input tokens incl. cached"),
    "cached_tokens": ("int", "cached input tokens"),
    "completion_tokens": ("int", "output tokens incl. reasoning"),
    "reasoning_tokens": ("int", "reasoning share of completion tokens"),
    "total_tokens": ("int", "prompt + completion tokens"),
    "cost_usd": ("float", "token cost at the profile's prices (USD)"),
    "n_requests": ("int", "LLM requests through the proxy"),
}

USAGE: Columns = {
    **TOKENS,
    "n_refused": ("int", "requests the proxy refused (budget caps)"),
    "budget_exceeded": ("str", "which budget cap was hit; null when none"),
    "proxy_errors": ("str", "JSON list of upstream errors seen by the proxy"),
    "assertion_failures": ("str", "JSON list of failed assertions of a model script"),
    "usage_missing": ("int", "model responses without usage or cut mid-stream: above 0, tokens and cost are "
                             "lower bounds"),
    "usage_source": ("str", "proxy | trajectory"),
    "total_seconds": ("float", "agent-system wall-clock: longer of the trajectory's and the proxy log's span (s)"),
}

METRICS: Columns = {
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

#: The columns every row has, whatever its template.
SHARED: Columns = {
    "run_id": ("str", "run directory name"),
    "template": ("str", "task template"),
    "task": ("str", "task or experiment spec name"),
    "episode": ("str", "row key within the run"),
    "episode_id": ("str", "short hash of the episode's canonical content"),
}

#: The columns of rows written without a row of agent-episode columns (in-harness templates,
#: ``TaskTemplate.agent_episode_columns`` False): the row key, the episode's wall-clock and failure.
IN_HARNESS: Columns = {**SHARED, **{k: CORE[k] for k in ("episode_seconds", "error_kind", "error", "infra_retries")}}

#: The columns the harness itself writes into every agent-episode row, whatever its template; rows
#: without a ``template`` (or with a null one) are checked against these.
COLUMNS: Columns = {**CORE, **USAGE, **METRICS}


def template_groups() -> dict[str, dict[str, Columns]]:
    """template -> group -> columns (the groups of :func:`describe`): an agent-episode template's rows have
    the core columns, the ones it declares, usage and trajectory metrics; an in-harness template's rows
    the row key and the ones it declares."""
    from harness.plugins import plugins

    groups = {}
    for name, reg in sorted(plugins().registry("task_template").items()):
        declared = dict(reg.obj.result_columns)
        groups[name] = ({"core": CORE, name: declared, "usage": USAGE, "metrics": METRICS}
                        if reg.obj.agent_episode_columns else {"core": IN_HARNESS, name: declared})
    return groups


GROUPS: dict[str, dict[str, Columns]] = template_groups()

#: template -> every column its rows may have
SCHEMAS: dict[str, Columns] = {name: {k: v for group in groups.values() for k, v in group.items()}
                               for name, groups in GROUPS.items()}


#: dtype name -> Arrow type of the results files
ARROW_TYPES = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}


def arrow_schema(columns: Columns) -> pa.Schema:
    """The ``pyarrow.Schema`` of ``columns`` (every field nullable; its meaning kept as field metadata)."""
    return pa.schema([pa.field(name, ARROW_TYPES[dtype], nullable=True, metadata={"meaning": meaning})
                      for name, (dtype, meaning) in columns.items()])


def _conforms(series: pd.Series, field: pa.Field) -> bool:
    """Whether ``series`` holds ``field``'s type: Arrow infers the values' type (nulls allowed), which must
    be the field's, or an integer type for a float field, or floats that cast to integers without loss."""
    values = series.dropna()
    if values.empty:
        return True
    numeric = pa.types.is_integer(field.type) or pa.types.is_floating(field.type)
    if numeric and values.map(lambda v: isinstance(v, (bool, np.bool_))).any():
        return False  # Arrow would read True as 1.0; a flag is not a number
    try:
        inferred = pa.array(values, from_pandas=True)
        if inferred.type == field.type or (pa.types.is_floating(field.type) and pa.types.is_integer(inferred.type)):
            return True
        if pa.types.is_integer(field.type) and pa.types.is_floating(inferred.type):
            inferred.cast(field.type, safe=True)
            return True
        return pa.types.is_integer(field.type) and pa.types.is_integer(inferred.type) \
            or pa.types.is_floating(field.type) and pa.types.is_floating(inferred.type) \
            or pa.types.is_string(field.type) and pa.types.is_large_string(inferred.type)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return False


def _template_groups(frame: pd.DataFrame, template: str | None) -> list[tuple[str | None, pd.DataFrame, bool]]:
    """(template or None for rows without one, its rows, whether messages name the template) to check."""
    if template is not None:
        return [(template, frame, False)]
    if "template" not in frame.columns:
        return [(None, frame, False)]
    names = frame["template"].astype(object).where(frame["template"].notna(), "")
    return [(str(name) or None, frame[names == name], True) for name in pd.unique(names)]


def check_frame(frame: pd.DataFrame, required: tuple[str, ...] = (), template: str | None = None,
                strict: bool = False) -> list[str]:
    """Problems of a results frame against the documented schema (empty list: it conforms).

    Rows are checked against the schema of their ``template`` column
    (:data:`SCHEMAS`; a frame without that column, and rows with a null
    template, against the agent-episode columns :data:`COLUMNS`), or all
    against ``template`` when given;
    a frame mixing templates (several run directories) is checked per
    template, and its messages name the template.  Documented columns must have
    their dtype; ``required`` columns must be present; ``flag_*`` columns must
    be boolean.  Other columns are allowed unless ``strict``: then a column
    holding values that its template does not document is a problem, and so
    are rows of an undocumented template.
    """
    problems = [f"missing column {name!r}" for name in required if name not in frame.columns]
    for name, rows, tagged in _template_groups(frame, template):
        schema = COLUMNS if name is None else SCHEMAS.get(name)
        where = (f" ({name} rows)" if name else " (rows without a template)") if tagged else ""
        if schema is None:
            if strict:
                problems.append(f"template {name!r}: {len(rows)} row(s) of a template whose columns are not "
                                f"documented (documented: {', '.join(SCHEMAS)})")
            schema = SHARED
        fields = arrow_schema(schema)
        for column in rows.columns:
            series = rows[column]
            if column in schema:
                dtype = schema[column][0]
                if not _conforms(series, fields.field(column)):
                    problems.append(f"column {column!r}{where}: expected {dtype}, got {series.dtype}")
            elif column.startswith("flag_"):
                if not _conforms(series, pa.field(column, pa.bool_())):
                    problems.append(f"column {column!r}{where}: flag columns must be bool, got {series.dtype}")
            elif strict and name in SCHEMAS and series.notna().any():
                problems.append(f"column {column!r}{where}: not documented for template {name!r}")
    return problems


def describe(template: str | None = None) -> list[dict[str, Any]]:
    """The schema as records (``name``, ``dtype``, ``meaning``, ``group``, ``template``) for docs and
    ``--format json``: one template's columns, or every template's (``None``, the default)."""
    if template is not None and template not in GROUPS:
        raise KeyError(f"no documented schema for template {template!r} (documented: {', '.join(GROUPS)})")
    out = []
    for name, groups in GROUPS.items():
        if template is not None and name != template:
            continue
        for group, columns in groups.items():
            out += [{"name": k, "dtype": v[0], "meaning": v[1], "group": group, "template": name}
                    for k, v in columns.items()]
    return out
