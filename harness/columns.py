"""The columns of a results row, declared by their owners and assembled in one place.

A results row (``row.json``, one row of ``results.parquet``) is made of parts, each declared by its owner as
``name -> (dtype, meaning)`` (dtype ``str``, ``int``, ``float`` or ``bool``):

- the harness's own columns: :data:`CORE` for agent episodes, :data:`IN_HARNESS` for in-harness episodes,
  both with :data:`PROVENANCE` (the code versions and digests a row was computed with, :mod:`harness.provenance`);
- the task template's ``result_columns`` (its params and score);
- each metric extractor's ``columns`` (agent episodes);
- the model proxy's measured usage, :data:`USAGE` (agent episodes that reach a model).

**Duplicate rule**: two parts declaring the same column is an error (:class:`ColumnCollision`, naming both
owners), with one exception: the model proxy's usage is a measurement, and an extractor may declare a usage
column too (its estimate, e.g. from the trajectory when there is no proxy log); the proxy's value replaces
the extractor's when the episode had a proxy.  A value for a column no part declares is kept and typed by
Arrow's inference; a value for a column another part declares is refused.

``results.parquet`` is written with a ``pyarrow.Schema`` assembled from these declarations
(:func:`frame_schema`): a missing value is a null of the declared type, never a dtype change.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable

from harness.errors import HarnessError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

#: column -> (dtype, meaning)
Columns = dict[str, tuple[str, str]]

#: Where a row's values came from (:mod:`harness.provenance`), in every row: the code versions that computed
#: them and digests of what they were computed from.
PROVENANCE: Columns = {
    "scorer_version": ("str", "version of the task template's scoring that computed the score columns "
                              "(TaskTemplate.scorer_version)"),
    "extractor_versions": ("str", "JSON object: metric extractor name -> version of each extractor that computed "
                                  "the metric columns (MetricExtractor.version); null: no extractor ran"),
    "spec_sha256": ("str", "sha256 of the task spec as run: its canonical JSON after --set and experiment "
                           "overrides"),
    "inputs_digest": ("str", "digest of what the episode's inputs were made from, given by the template "
                             "(e.g. a generated pool's sample ids and noise seeds); null: none given"),
    "harness_version": ("str", "version of the tsagent-harness distribution that computed the row "
                               "(package metadata)"),
    "harness_commit": ("str", "git commit of the harness checkout that computed the row; null: not run from a "
                              "git checkout"),
    "rescored_at": ("str", "when `harness rescore` last recomputed the row's scores and metrics (ISO 8601); "
                           "null: as the run computed them"),
}

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
    "model_backend": ("str", "the model backend the episode's model calls went to (--model-backend, the task's "
                             "own, else the profile's provider); null: the episode calls no model"),
    "model_billed": ("bool", "whether those calls cost money; false: an offline backend (a script) answered, and "
                             "cost_usd is the profile's prices for its tokens, not money spent (marked wherever a "
                             "cost is shown); null: no model"),
    **PROVENANCE,
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

#: The model proxy's measured usage of an agent episode (see the duplicate rule above).
USAGE: Columns = {
    **TOKENS,
    "n_refused": ("int", "requests the proxy refused (budget caps)"),
    "budget_exceeded": ("str", "which budget cap was hit; null when none"),
    "proxy_errors": ("str", "JSON list of upstream errors seen by the proxy"),
    "assertion_failures": ("str", "JSON list of failed assertions of a model script"),
    "usage_missing": ("int", "model responses without usage or cut mid-stream: above 0, tokens and cost are "
                             "lower bounds"),
}

#: The columns every row has, whatever its template.
SHARED: Columns = {
    "run_id": ("str", "run directory name"),
    "template": ("str", "task template"),
    "task": ("str", "task or experiment spec name"),
    "episode": ("str", "row key within the run"),
    "episode_id": ("str", "short hash of the episode's canonical content"),
}

#: The harness's columns of in-harness rows (``TaskTemplate.agent_episode_columns`` False): the row key, the
#: episode's wall-clock and failure.  Such a template declares ``status`` itself; the harness writes ``failed``
#: there when the template raises and ``infra_failed`` after the allowed infrastructure retries.
IN_HARNESS: Columns = {**SHARED, **{k: CORE[k] for k in ("episode_seconds", "error_kind", "error", "infra_retries",
                                                          "model_backend", "model_billed")},
                       **PROVENANCE}


class ColumnCollision(HarnessError):
    """Two owners declare (or fill) the same results column; the message names both."""


@dataclass(frozen=True)
class Part:
    """One owner's share of a results row.  ``measured``: the model proxy's usage (see the duplicate rule)."""

    owner: str
    columns: Columns
    measured: bool = False


HARNESS = "the harness"
PROXY = "the model proxy"


def row_parts(template: Any, extractors: Iterable[Any] = (), in_harness: bool | None = None) -> list[Part]:
    """The declared parts of ``template``'s rows, in row order: the harness's, the template's, each metric
    extractor's and the model proxy's (agent episodes); the harness's and the template's (in-harness).

    ``in_harness``: the episode's mode (default: in-harness when the template's rows carry no agent-episode
    columns).  A template with both modes (its in-harness rows declare e.g. ``status``, ``profile`` and the
    token columns, which it fills itself) leaves those to the harness in its agent episodes: there the
    harness owns them, and a value the template gives for one is refused like any other collision."""
    own = Part(f"template {template.name!r}", dict(getattr(template, "result_columns", {})))
    agent_columns = getattr(template, "agent_episode_columns", True)
    if in_harness is None:
        in_harness = not agent_columns
    if in_harness:
        return [Part(HARNESS, IN_HARNESS), own]
    if not agent_columns:  # a template with both modes, in an agent episode
        own = Part(own.owner, {k: v for k, v in own.columns.items() if k not in CORE and k not in USAGE})
    return [Part(HARNESS, CORE), own,
            *[Part(f"metric extractor {e.name!r}", dict(_declared(e))) for e in extractors],
            Part(PROXY, USAGE, measured=True)]


def _declared(extractor: Any) -> Columns:
    columns = extractor.columns
    if isinstance(columns, dict):
        return columns
    raise HarnessError(f"metric extractor {extractor.name!r}: columns must be a dict name -> (dtype, meaning), "
                       f"got {type(columns).__name__}")


def owners(parts: Iterable[Part]) -> dict[str, Part]:
    """column -> the part that owns it; :class:`ColumnCollision` naming both owners when two parts declare the
    same column (except a measured usage column that an extractor also declares: the proxy owns it)."""
    found: dict[str, Part] = {}
    for part in parts:
        for name in part.columns:
            other = found.get(name)
            if other is None or other is part:
                found[name] = part
            elif other.measured != part.measured:
                found[name] = other if other.measured else part
            else:
                raise ColumnCollision(f"results column {name!r} is declared by both {other.owner} and "
                                      f"{part.owner}: one of them must rename it")
    return found


def assemble(parts: Iterable[Part]) -> Columns:
    """Every column of ``parts`` with its owner's declaration (:func:`owners` refuses collisions)."""
    return {name: part.columns[name] for name, part in owners(parts).items()}


class RowBuilder:
    """Builds one results row from its parts' values, in the order they are added.

    ``add(part, values)`` refuses (:class:`ColumnCollision`) a value whose column another part declares,
    unless ``part`` is the measured usage, whose values replace an extractor's estimate.
    """

    def __init__(self, parts: list[Part]):
        self.parts = parts
        self._owners = owners(parts)
        self.row: dict[str, Any] = {}

    def part(self, owner: str) -> Part:
        return next(p for p in self.parts if p.owner == owner)

    def add(self, part: Part, values: dict[str, Any]) -> "RowBuilder":
        for name, value in values.items():
            owner = self._owners.get(name)
            if owner is not None and owner is not part and not (owner.measured and name in part.columns) \
                    and not part.measured:
                raise ColumnCollision(f"{part.owner} gives results column {name!r}, which {owner.owner} declares: "
                                      "one of them must rename it")
            self.row[name] = value
        return self


@lru_cache(maxsize=1)
def template_groups() -> dict[str, dict[str, Columns]]:
    """template -> group -> columns for every registered template: an agent-episode template's rows have the
    harness's columns (``core``), the ones it declares, the proxy's usage (``usage``) and every registered
    metric extractor's (``metrics``); an in-harness template's rows the row key and the ones it declares."""
    from harness.plugins import plugins

    registry = plugins()
    extractors = [reg.obj for reg in registry.registry("metric_extractor").values()]
    groups = {}
    for name, reg in sorted(registry.registry("task_template").items()):
        template = reg.obj
        assemble(row_parts(template, extractors))  # a collision is an error here too
        own = dict(template.result_columns)
        if template.agent_episode_columns:
            metrics = {k: v for e in extractors for k, v in _declared(e).items() if k not in USAGE}
            groups[name] = {"core": CORE, name: own, "usage": USAGE, "metrics": metrics}
        else:
            groups[name] = {"core": IN_HARNESS, name: own}
    return groups


def schemas() -> dict[str, Columns]:
    """template -> every column its rows may have."""
    return {name: {k: v for group in groups.values() for k, v in group.items()}
            for name, groups in template_groups().items()}


@lru_cache(maxsize=1)
def agent_episode_columns() -> Columns:
    """The columns the harness writes into every agent-episode row, whatever its template (core, proxy usage,
    every registered extractor's); rows without a ``template`` are checked against these."""
    from harness.plugins import plugins

    extractors = [reg.obj for reg in plugins().registry("metric_extractor").values()]
    return {**CORE, **USAGE, **{k: v for e in extractors for k, v in _declared(e).items() if k not in USAGE}}


def arrow_type(dtype: str) -> "pa.DataType":
    import pyarrow as pa

    return {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}[dtype]


def arrow_schema(columns: Columns) -> "pa.Schema":
    """The ``pyarrow.Schema`` of ``columns`` (every field nullable; its meaning kept as field metadata)."""
    import pyarrow as pa

    return pa.schema([pa.field(name, arrow_type(dtype), nullable=True, metadata={"meaning": meaning})
                      for name, (dtype, meaning) in columns.items()])


def conforms(series: "pd.Series", field: "pa.Field") -> bool:
    """Whether ``series`` holds ``field``'s type: Arrow infers the values' type (nulls allowed), which must
    be the field's, or an integer type for a float field, or floats that cast to integers without loss."""
    import numpy as np
    import pyarrow as pa

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


def _template_groups(frame: "pd.DataFrame", template: str | None) -> list[tuple[str | None, "pd.DataFrame", bool]]:
    """(template or None for rows without one, its rows, whether messages name the template) to check."""
    import pandas as pd

    if template is not None:
        return [(template, frame, False)]
    if "template" not in frame.columns:
        return [(None, frame, False)]
    names = frame["template"].astype(object).where(frame["template"].notna(), "")
    return [(str(name) or None, frame[names == name], True) for name in pd.unique(names)]


def check_frame(frame: "pd.DataFrame", required: tuple[str, ...] = (), template: str | None = None,
                strict: bool = False) -> list[str]:
    """Problems of a results frame against the declared schema (empty list: it conforms).

    Rows are checked against the schema of their ``template`` column
    (:func:`schemas`; a frame without that column, and rows with a null
    template, against the agent-episode columns :func:`agent_episode_columns`), or all
    against ``template`` when given;
    a frame mixing templates (several run directories) is checked per
    template, and its messages name the template.  Documented columns must have
    their dtype; ``required`` columns must be present; ``flag_*`` columns must
    be boolean.  Other columns are allowed unless ``strict``: then a column
    holding values that its template does not document is a problem, and so
    are rows of an undocumented template.
    """
    import pyarrow as pa

    known = schemas()
    problems = [f"missing column {name!r}" for name in required if name not in frame.columns]
    for name, rows, tagged in _template_groups(frame, template):
        schema = agent_episode_columns() if name is None else known.get(name)
        where = (f" ({name} rows)" if name else " (rows without a template)") if tagged else ""
        if schema is None:
            if strict:
                problems.append(f"template {name!r}: {len(rows)} row(s) of a template whose columns are not "
                                f"documented (documented: {', '.join(known)})")
            schema = SHARED
        fields = arrow_schema(schema)
        for column in rows.columns:
            series = rows[column]
            if column in schema:
                dtype = schema[column][0]
                if not conforms(series, fields.field(column)):
                    problems.append(f"column {column!r}{where}: expected {dtype}, got {series.dtype}")
            elif column.startswith("flag_"):
                if not conforms(series, pa.field(column, pa.bool_())):
                    problems.append(f"column {column!r}{where}: flag columns must be bool, got {series.dtype}")
            elif strict and name in known and series.notna().any():
                problems.append(f"column {column!r}{where}: not documented for template {name!r}")
    return problems


def frame_schema(frame: "pd.DataFrame") -> "pa.Schema":
    """The ``pyarrow.Schema`` of a results frame, from the declarations of its rows' templates: a column
    declared with one dtype by every template present has that type (all-null included); one declared with
    different dtypes by two templates (``context``: a bool in one, a name in another) is a string; a
    ``flag_*`` column is bool; any other column gets the type Arrow infers from its values."""
    import pyarrow as pa

    known = schemas()
    declared = []
    for name, _, _ in _template_groups(frame, None):
        declared.append(agent_episode_columns() if name is None else known.get(name, SHARED))
    fields = []
    for column in frame.columns:
        dtypes = {cols[column][0] for cols in declared if column in cols}
        if len(dtypes) == 1:
            dtype = dtypes.pop()
            meaning = next(cols[column][1] for cols in declared if column in cols)
            fields.append(pa.field(column, arrow_type(dtype), metadata={"meaning": meaning}))
        elif dtypes:
            fields.append(pa.field(column, pa.string()))
        elif column.startswith("flag_"):
            fields.append(pa.field(column, pa.bool_()))
        else:
            values = frame[column].dropna()
            try:
                inferred = pa.array(values, from_pandas=True).type if len(values) else pa.null()
            except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types: kept as text
                inferred = pa.string()
            fields.append(pa.field(column, inferred))
    return pa.schema(fields)


def to_table(frame: "pd.DataFrame") -> "pa.Table":
    """``frame`` as an Arrow table of :func:`frame_schema` (text columns hold text: a value of another type,
    e.g. one template's bool beside another's condition name, becomes its ``str``)."""
    import pyarrow as pa

    schema = frame_schema(frame)
    frame = frame.copy()
    for field in schema:
        if pa.types.is_string(field.type):
            frame[field.name] = frame[field.name].map(_text).astype(object)
            frame[field.name] = frame[field.name].where(frame[field.name].notna(), None)
    return pa.Table.from_pandas(frame, schema=schema, preserve_index=False)


def _text(value: Any) -> Any:
    """A value of a text column as text (null and NaN stay null)."""
    return value if value is None or isinstance(value, str) or isinstance(value, float) and value != value \
        else str(value)
