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

  Token usage (the model proxy: :data:`harness.columns.USAGE`)
    ``prompt_tokens`` int: input tokens incl. cached · ``cached_tokens`` int ·
    ``completion_tokens`` int: output tokens incl. reasoning · ``reasoning_tokens`` int ·
    ``total_tokens`` int: prompt + completion · ``cost_usd`` float: the token cost at
    the profile's prices · ``n_requests`` int: LLM requests through the proxy ·
    ``n_refused`` int: requests refused by a budget cap · ``budget_exceeded`` str:
    the cap that was hit (null: none) · ``proxy_errors``, ``assertion_failures`` str:
    JSON lists (upstream errors; failed assertions of a model script) ·
    ``usage_missing`` int: model responses without usage or cut mid-stream (above 0: the
    token and cost totals are lower bounds).

  Metrics (each metric extractor's declared ``columns``; :func:`describe` lists them)

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

from harness.columns import (  # noqa: F401 - the schema's declarations live with the rows they type
    CORE, IN_HARNESS, SHARED, TOKENS, USAGE, Columns, agent_episode_columns, arrow_schema, check_frame,
    schemas, template_groups,
)

GROUPS: dict[str, dict[str, Columns]] = template_groups()

#: template -> every column its rows may have
SCHEMAS: dict[str, Columns] = schemas()

#: The columns the harness writes into every agent-episode row, whatever its template (core, proxy usage,
#: every registered metric extractor's); rows without a ``template`` are checked against these.
COLUMNS: Columns = agent_episode_columns()


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
