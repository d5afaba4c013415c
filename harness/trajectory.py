"""The normalized trajectory: ATIF, the Agent Trajectory Interchange Format (v1.6+).

Every agent adapter converts its CLI's native log into one ATIF document per
episode (``trajectory.json``); the metric extractors
read it.  The models follow Harbor's ATIF specification:

* root: ``schema_version`` ("ATIF-v1.0" ... "ATIF-v1.7"; the harness writes
  :data:`SCHEMA_VERSION`), ``session_id``, ``agent {name, version, model_name,
  tool_definitions, extra}``, ``steps[]``, ``notes``, ``final_metrics``, ``extra``;
* step: ``step_id`` (1, 2, 3, ... in order), ``timestamp`` (ISO 8601),
  ``source`` (``system`` | ``user`` | ``agent``), ``message`` (a string, or a
  list of content parts since v1.6), ``reasoning_content``, ``tool_calls[]``,
  ``observation {results[]}``, ``metrics``, ``is_copied_context`` (v1.5),
  ``llm_call_count`` (v1.7), ``extra``.  ``model_name``, ``reasoning_effort``,
  ``reasoning_content``, ``tool_calls`` and ``metrics`` belong to agent steps only, and an agent step
  with ``llm_call_count`` 0 (a tool the agent's code dispatched, no model call) has no ``metrics`` and
  no ``reasoning_content``;
* tool call: ``tool_call_id``, ``function_name``, ``arguments`` (a JSON object);
* observation result: ``source_call_id`` (the tool call it answers, or null),
  ``content`` (string or content parts), ``subagent_trajectory_ref``, ``extra``
  (v1.7; the harness reads ``extra.is_error`` to tell a failed tool call);
* content part (v1.6): ``{"type": "text", "text"}`` or ``{"type": "image",
  "source": {"media_type", "path"}}``;
* metrics: ``prompt_tokens`` (cached included), ``completion_tokens``
  (reasoning included), ``cached_tokens``, ``cost_usd``, token ids, logprobs, ``extra``.

Unknown fields are errors (the specification forbids them); custom data goes
into the ``extra`` objects.  :func:`validate_trajectory` turns every problem into
a :class:`TrajectoryError` naming the file and the field path.

The models (pydantic) are in :mod:`harness.trajectory_models`, imported when a trajectory is first
validated: reading trajectories leniently, and loading the plugins that do, needs no pydantic.
:func:`exchanges` pairs each tool call with its result in trajectory order; it reads plain dicts leniently
so the metric extractors also work on a trajectory that would not validate.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from harness.trajectory_base import SCHEMA_VERSION, SUPPORTED_VERSIONS, parse_timestamp  # noqa: F401 - API

if TYPE_CHECKING:
    from harness.trajectory_models import Trajectory


class TrajectoryError(ValueError):
    """A trajectory is malformed.  ``str()`` names the file and each field path."""

    def __init__(self, file: Path | str | None, problems: list[str]):
        self.file = str(file) if file is not None else "<trajectory>"
        self.problems = problems
        super().__init__(f"{self.file}: " + "; ".join(problems))


def validate_trajectory(data: Any, file: Path | str | None = None) -> Trajectory:
    """Validate an ATIF document; :class:`TrajectoryError` names ``file`` and every bad field."""
    from pydantic import ValidationError

    from harness.config import format_validation_error
    from harness.trajectory_models import Trajectory

    if not isinstance(data, dict):
        raise TrajectoryError(file, [f"<root>: expected a JSON object, got {type(data).__name__}"])
    try:
        return Trajectory.model_validate(data)
    except ValidationError as exc:
        raise TrajectoryError(file, format_validation_error(exc)) from None


def load_trajectory(path: Path | str) -> Trajectory:
    """Read and validate ``trajectory.json``."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TrajectoryError(path, [f"cannot read file: {exc.strerror or exc}"]) from None
    except ValueError as exc:
        raise TrajectoryError(path, [f"not valid JSON: {exc}"]) from None
    return validate_trajectory(data, path)


def to_dict(trajectory: Trajectory) -> dict[str, Any]:
    """The JSON form (fields left unset are omitted)."""
    return trajectory.model_dump(mode="json", exclude_none=True)


def save_trajectory(trajectory: Trajectory | dict, path: Path | str) -> Path:
    """Validate (when given a dict) and write atomically; returns the path."""
    from harness.trajectory_models import Trajectory

    path = Path(path)
    model = trajectory if isinstance(trajectory, Trajectory) else validate_trajectory(trajectory, path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(to_dict(model), indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


# -- lenient readers used by the metric extractors ----------------------------------------


def content_text(content: Any) -> str:
    """The text of a message or observation content: a string, or the text parts joined by newlines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content
                         if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str))
    return ""


def content_images(content: Any) -> list[str]:
    """Paths (or URLs) of the image parts of a content value."""
    if not isinstance(content, list):
        return []
    return [p["source"]["path"] for p in content
            if isinstance(p, dict) and p.get("type") == "image" and isinstance(p.get("source"), dict)
            and isinstance(p["source"].get("path"), str)]


@dataclass
class Exchange:
    """One tool call and its result, in trajectory order.

    ``arguments`` is the call's JSON object (or ``None`` when it is not one:
    a malformed call); ``result`` is the observation result dict (``None`` when
    the trajectory has no result for the call); ``step_index`` is the 0-based
    position of the agent step that made the call.
    """

    step_index: int
    timestamp: str | None
    call_id: str | None
    function_name: str
    arguments: dict[str, Any] | None
    raw_arguments: Any
    result: dict[str, Any] | None

    @property
    def output(self) -> str:
        """The result's text (empty when there is none)."""
        return content_text(self.result.get("content")) if self.result else ""

    @property
    def output_images(self) -> list[str]:
        return content_images(self.result.get("content")) if self.result else []


def tool_arguments(raw: Any) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    return None


def steps(trajectory: dict | None) -> list[dict]:
    """The step dicts of a trajectory dict (empty when absent or malformed)."""
    if not isinstance(trajectory, dict) or not isinstance(trajectory.get("steps"), list):
        return []
    return [s for s in trajectory["steps"] if isinstance(s, dict)]


def exchanges(trajectory: dict | None) -> Iterator[Exchange]:
    """Every tool call of the agent steps, paired with its result, in trajectory order.

    A result is matched by ``source_call_id`` anywhere in the trajectory; a
    result without one is paired with the unanswered call of the same step
    at the same position.  Results that answer no call are yielded as an
    exchange with ``function_name`` ``""`` (output of an action without a
    tool call), so their text still counts as tool output.
    """
    all_steps = steps(trajectory)
    by_id: dict[str, dict] = {}
    for step in all_steps:
        for result in _results(step):
            cid = result.get("source_call_id")
            if isinstance(cid, str) and cid not in by_id:
                by_id[cid] = result
    call_ids = {c.get("tool_call_id") for s in all_steps if isinstance(s.get("tool_calls"), list)
                for c in s["tool_calls"] if isinstance(c, dict)}
    used: set[int] = set()
    for index, step in enumerate(all_steps):
        calls = step.get("tool_calls") if step.get("source") == "agent" else None
        calls = [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
        unmatched = [r for r in _results(step) if not isinstance(r.get("source_call_id"), str)]
        for call in calls:
            cid = call.get("tool_call_id")
            result = by_id.get(cid) if isinstance(cid, str) else None
            if result is None and unmatched:
                result = unmatched.pop(0)
            if result is not None:
                used.add(id(result))
            raw = call.get("arguments")
            name = call.get("function_name")
            yield Exchange(index, step.get("timestamp"), cid if isinstance(cid, str) else None,
                           name if isinstance(name, str) else "", tool_arguments(raw), raw, result)
        for result in _results(step):
            if id(result) in used:
                continue
            cid = result.get("source_call_id")
            if isinstance(cid, str) and by_id.get(cid) is result and cid in call_ids:
                continue  # yielded with its call (which may come later in the list)
            used.add(id(result))
            yield Exchange(index, step.get("timestamp"), None, "", {}, {}, result)


def _results(step: dict) -> list[dict]:
    obs = step.get("observation")
    if not isinstance(obs, dict) or not isinstance(obs.get("results"), list):
        return []
    return [r for r in obs["results"] if isinstance(r, dict)]

