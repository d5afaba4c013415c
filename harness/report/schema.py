"""The columns of ``results.parquet``: one row per episode (or per forecast), readable in one line.

::

    import pandas as pd
    frame = pd.read_parquet("runs/<run_id>/results.parquet")

Every row has ``run_id``, ``template``, ``task`` and ``episode``; the other
columns depend on the row's ``template``, and :data:`SCHEMAS` documents each
template's columns.  A column a run did not produce is absent (e.g.
``heldout_accuracy`` in a direct-answer-only run); a value that does not apply
is null.  Integer columns that hold nulls are read back as floats (``NaN`` =
null), and columns whose values are all null as objects, which
:func:`check_frame` accepts.  The same name can mean different things in
different templates: ``context`` is a bool in TraceBench rows and a context
condition name in Dr-CiK rows.

dtype names: ``str`` (pandas object/string), ``int``, ``float``, ``bool``
(object when it holds nulls).

``template: tracebench`` -- ``harness run`` episodes (:data:`TRACEBENCH_SCHEMA`)
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

  TraceBench (template parameters and score)
    ``simulator`` str · ``noise`` str: ``low`` (kappa_ref) | ``high`` (4 kappa_ref) ·
    ``context`` bool: domain context in the prompt · ``examples_per_class`` int:
    labeled support samples per class (3 in the main experiment, 0 in the
    no-examples ablation) · ``submission`` str: ``direct`` | ``programmatic`` ·
    ``n_test`` int: test batch size · ``seed`` int: repetition seed ·
    ``pool_seed`` int · ``heldout_per_class`` int · ``pool_per_class`` int:
    generated pool size per class (null: the default) ·
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
    agent-system wall-clock (s): the longer of the trajectory's span and the
    proxy log's (first request to last response byte).

  Trajectory metrics (``tsagent_plugins.metrics``; Appendix G)
    ``agent_iterations`` int: LLM calls · ``tool_calls`` int: well-formed tool calls ·
    ``python_calls`` int: Python interpreter invocations · ``python_statements`` int:
    AST statements over distinct displayed source versions · ``shell_parse_fallbacks``
    int: commands read by the fallback shell lexer · ``plots_generated`` int ·
    ``plots_inspected`` int (null: the profile has no image support) ·
    ``numeric_values_printed`` int · ``console_tokens``, ``context_tokens`` int ·
    ``console_token_share`` float: console_tokens / context_tokens (0..1) ·
    ``tokenizer`` str: ``tiktoken:<encoding>`` or ``fallback:...`` ·
    ``context_source`` str: ``proxy`` | ``trajectory``.

``template: drcik`` -- forecasting rows, one per forecaster × context condition × task (:data:`DRCIK_SCHEMA`)
    ``run_id`` str · ``template`` str · ``task`` str: TaskSpec name ·
    ``episode`` str: episode folder · ``episode_id`` str · ``episode_seconds`` float ·
    ``forecaster`` str: forecaster name · ``forecaster_options`` str (JSON) ·
    ``episode_kind`` str · ``evidence_run``, ``evidence_agent`` str: the evidence
    source of DR conditions · ``fitted_model`` str (JSON) · ``seasonal_period`` int ·
    ``data_rules`` str · ``tasks_source`` str · ``context`` str: context condition
    (``no-context``, ``background``, ``supporting-evidence``,
    ``supporting-documents``, ``dr-evidence``, ``verified-dr``) ·
    ``benchmark_id`` str: Dr-CiK task id · ``reproduces_paper`` bool: the
    condition is the paper's (False for stand-ins) · ``context_used`` bool: the
    forecaster read the text (False: one forecast reused under every condition) ·
    ``scale_status`` str: ``ok`` | ``undefined_scale`` | ``labels_hidden`` ·
    ``n_samples`` int: sample paths S · ``seed`` int ·
    ``context_status`` str: ``ok`` | ``empty`` | ``verified_empty`` |
    ``labels_hidden`` | ``missing`` · ``context_items`` int: evidence items or
    documents in the context · ``fallback`` str: fallback forecaster used (null: none) ·
    ``seconds`` float: forecast wall-clock (s) · ``weights`` str: model weights used ·
    ``prompt_tokens`` ... ``n_requests``: token usage of model-backed
    forecasters, as in TraceBench rows · ``invalid_samples`` int: sample
    answers that did not parse · ``status`` str: ``ok`` | ``failed`` |
    ``undefined_scale`` | ``labels_hidden`` · ``smae``, ``srmse``, ``scrps``
    float: scaled errors capped at 5 (null unless ``status`` is ``ok``) ·
    ``smae_uncapped``, ``srmse_uncapped``, ``scrps_uncapped`` float ·
    ``scale`` float: a = 1 / mean |y_future| · ``reason`` str: why not scored
    (empty when scored) · ``profile``, ``model`` str: agent profile and model of
    model-backed forecasters (null for the others).

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
    "cost_usd": ("float", "equation (1) at the profile's prices (USD)"),
    "n_requests": ("int", "LLM requests through the proxy"),
}

USAGE: Columns = {
    **TOKENS,
    "n_refused": ("int", "requests the proxy refused (budget caps)"),
    "budget_exceeded": ("str", "which budget cap was hit; null when none"),
    "proxy_errors": ("str", "JSON list of upstream errors seen by the proxy"),
    "assertion_failures": ("str", "JSON list of failed scripted-model assertions"),
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

DRCIK_CORE: Columns = {
    **SHARED,
    "template": ("str", "drcik"),
    "task": ("str", "TaskSpec name"),
    "episode": ("str", "episode folder: <forecaster>_<context>_<benchmark_id>-s<S>-<episode_id>"),
    "episode_seconds": ("float", "whole episode incl. scoring (s)"),
}

DRCIK: Columns = {
    "forecaster": ("str", "forecaster name"),
    "forecaster_options": ("str", "JSON of the forecaster's options; null: none"),
    "episode_kind": ("str", "forecast | research"),
    "evidence_run": ("str", "DR conditions: the evidence folder or research run directory; null otherwise"),
    "evidence_agent": ("str", "DR conditions: the agent profile whose research produced the evidence"),
    "fitted_model": ("str", "JSON of what the forecaster fitted (e.g. ARIMA order and AIC, seasonal terms)"),
    "seasonal_period": ("int", "the task's seasonal period m"),
    "data_rules": ("str", "the loader's data rules applied to the task ('; '-separated); null: none"),
    "tasks_source": ("str", "task set: sample or a folder"),
    "context": ("str", ("context condition: no-context | background | supporting-evidence | "
                        "supporting-documents | dr-evidence | verified-dr")),
    "benchmark_id": ("str", "Dr-CiK task id"),
    "reproduces_paper": ("bool", "the condition is the paper's (False: a stand-in)"),
    "context_used": ("bool", "the forecaster read the context (False: one forecast reused for every condition)"),
    "scale_status": ("str", "ok | undefined_scale | labels_hidden"),
    "n_samples": ("int", "sample paths per task (S)"),
    "seed": ("int", "forecast seed"),
    "context_status": ("str", "ok | empty | verified_empty | labels_hidden | missing"),
    "context_items": ("int", "evidence items or documents in the context"),
    "fallback": ("str", "fallback forecaster used; null: none"),
    "seconds": ("float", "forecast wall-clock (s)"),
    "weights": ("str", "model weights used"),
    **TOKENS,
    "invalid_samples": ("int", "sample answers that did not parse"),
    "status": ("str", "ok | failed | undefined_scale | labels_hidden"),
    "smae": ("float", "scaled MAE of the sample mean, capped at 5; null unless status is ok"),
    "srmse": ("float", "scaled RMSE of the sample mean, capped at 5; null unless status is ok"),
    "scrps": ("float", "scaled energy-form CRPS, capped at 5; null unless status is ok"),
    "smae_uncapped": ("float", "sMAE before the cap"),
    "srmse_uncapped": ("float", "sRMSE before the cap"),
    "scrps_uncapped": ("float", "sCRPS before the cap"),
    "scale": ("float", "a = 1 / mean |y_future|"),
    "reason": ("str", "why the forecast was not scored; empty when scored"),
    "profile": ("str", "agent profile of a model-backed forecaster; null for the others"),
    "model": ("str", "model of a model-backed forecaster; null for the others"),
}

def template_columns() -> dict[str, Columns]:
    """The result columns each registered task template declares (``TaskTemplate.result_columns``)."""
    from harness.plugins import plugins

    return {name: dict(reg.obj.result_columns)
            for name, reg in sorted(plugins().registry("task_template").items())}


#: template -> group -> columns (the groups of :func:`describe`): a registered task template's rows
#: have the core columns, the ones it declares, usage and trajectory metrics
GROUPS: dict[str, dict[str, Columns]] = {
    **{name: {"core": CORE, name: declared, "usage": USAGE, "metrics": METRICS}
       for name, declared in template_columns().items()},
    "drcik": {"core": DRCIK_CORE, "drcik": DRCIK},
}

TRACEBENCH_SCHEMA: Columns = {k: v for group in GROUPS["tracebench"].values() for k, v in group.items()}
DRCIK_SCHEMA: Columns = {k: v for group in GROUPS["drcik"].values() for k, v in group.items()}

#: template -> every column its rows may have
SCHEMAS: dict[str, Columns] = {"tracebench": TRACEBENCH_SCHEMA, "drcik": DRCIK_SCHEMA}

#: The schema of rows without a ``template`` column (and of a null template): TraceBench's.
DEFAULT_TEMPLATE = "tracebench"
COLUMNS: Columns = TRACEBENCH_SCHEMA


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


def _template_groups(frame: pd.DataFrame, template: str | None) -> list[tuple[str, pd.DataFrame, bool]]:
    """(template, its rows, whether messages name the template) to check."""
    if template is not None:
        return [(template, frame, False)]
    if "template" not in frame.columns:
        return [(DEFAULT_TEMPLATE, frame, False)]
    names = frame["template"].astype(object).where(frame["template"].notna(), DEFAULT_TEMPLATE)
    return [(str(name), frame[names == name], True) for name in pd.unique(names)]


def check_frame(frame: pd.DataFrame, required: tuple[str, ...] = (), template: str | None = None,
                strict: bool = False) -> list[str]:
    """Problems of a results frame against the documented schema (empty list: it conforms).

    Rows are checked against the schema of their ``template`` column
    (:data:`SCHEMAS`; a frame without that column, and rows with a null
    template, against TraceBench's), or all against ``template`` when given;
    a frame mixing templates (several run directories) is checked per
    template, and its messages name the template.  Documented columns must have
    their dtype; ``required`` columns must be present; ``flag_*`` columns must
    be boolean.  Other columns are allowed unless ``strict``: then a column
    holding values that its template does not document is a problem, and so
    are rows of an undocumented template.
    """
    problems = [f"missing column {name!r}" for name in required if name not in frame.columns]
    for name, rows, tagged in _template_groups(frame, template):
        schema = SCHEMAS.get(name)
        where = f" ({name} rows)" if tagged else ""
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


def describe(template: str | None = DEFAULT_TEMPLATE) -> list[dict[str, Any]]:
    """The schema as records (``name``, ``dtype``, ``meaning``, ``group``, ``template``) for docs and
    ``--format json``: one template's columns (default TraceBench's), or every template's (``None``)."""
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
