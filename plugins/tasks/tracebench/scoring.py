"""Scoring of TraceBench episodes (Section 4.2, Appendix H "Evaluation").

Each sample receives a ranked list of labels.  Top-1 accuracy compares the
first label with the hidden label; the shortlist score gives ``1/m`` when the
hidden label is anywhere in a list of ``m`` labels and 0 otherwise.  Labels are
compared after trimming whitespace and case-folding.

Invalid output is scored, never raised: the affected samples count as wrong
(top-1 0, shortlist 0) and carry a ``reason``.  A prediction is invalid when it
is missing, not a list of strings, empty, names a label outside the allowed
set, or repeats a label.  A bare string is accepted as a one-item list (it
names one label unambiguously); such samples carry a ``note``.

What is accepted (each row is a test: ``tests/plugins/tasks/tracebench/test_scoring.py::test_leniency_table``,
the ``predict()`` shapes in ``tests/harness/test_submission_hostile_returns.py``):

==============================================  ================================================
value for one sample                            result
==============================================  ================================================
list of allowed labels                          scored, in the agent's order
labels differing in case or outer whitespace    scored (compared trimmed and case-folded)
a bare string                                   read as a one-item list, with a ``note``
``predict()`` returns a tuple                   a list (JSON has no tuples)
``predict()`` returns a numpy array / Series    a list (``tolist()`` in the worker)
empty list                                      wrong: "empty list of labels"
an item that is not a string                    wrong: "item N is ..."
a label outside the allowed set                 wrong: the whole prediction is invalid, even
                                                when the true label comes first
the same label twice                            wrong: "duplicate label"
a generator, set, object, number or null        wrong: not a list of label strings
NaN/Infinity, nesting > 16, > 200,000 values    wrong, with the bound named
                                                (:mod:`harness.untrusted`)
==============================================  ================================================

``results.json`` as a whole: a key with or without ``.parquet`` and with or
without a ``test_samples/`` prefix names the file; keys naming no test file
are ignored with a warning; two keys for one file count when their values
agree and are wrong otherwise; a byte-order mark is accepted; more than
10 MiB, invalid UTF-8, invalid JSON, a symbolic link or not an object make
every sample wrong with that reason.  In a file that is otherwise a well-formed
object, a value over a bound (NaN or Infinity, nesting deeper than 16, a string
over 10,000 characters, more than 200,000 values) makes only its own sample
wrong, with the bound named (:func:`split_members`); an object of more than
200,000 members is over the bound as a whole.

Direct answers come from ``results.json`` (an object mapping test file names,
with or without ``.parquet`` and with or without a ``test_samples/`` prefix,
to label lists).  Programmatic submissions are scored by running ``predict``
of ``rule.py`` through the sandboxed :class:`harness.contracts.SubmissionRunner`
on the test files and on the held-out files.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from harness import untrusted
from harness import CallResult, EpisodeScore, SubmissionRunner
from tsagent_plugins.tasks.tracebench.files import file_key

RESULTS_FILE = "results.json"
RULE_FILE = "rule.py"
RULE_FUNCTION = "predict"
MAX_RESULTS_BYTES = 10 * 2**20
#: Bounds of ``results.json`` and of each ``predict()`` return value (size, nesting depth, JSON values).
RESULTS_BOUNDS = untrusted.Bounds(max_bytes=MAX_RESULTS_BYTES, max_depth=16, max_items=200_000, max_string=10_000)
_PREVIEW_CHARS = 300


def fold(label: str) -> str:
    """Comparison form of a label: surrounding whitespace trimmed, case-folded."""
    return label.strip().casefold()


@dataclass
class Prediction:
    """A checked prediction: ``labels`` (allowed labels as shown, in the agent's
    order) when valid, else None with a ``reason``; ``note`` for accepted oddities."""

    labels: list[str] | None
    reason: str | None = None
    note: str | None = None


@dataclass
class SampleScore:
    """One scored sample (a row of ``scores.json`` details).

    ``split``: ``"test"`` or ``"heldout"``; ``true_label``: the hidden label as
    shown to the agent; ``class_label``: the simulator's class label (differs
    from ``true_label`` only without domain context); ``predicted``: the checked
    labels, or a preview of the raw value when invalid.
    """

    split: str
    file: str
    sample_id: str
    true_label: str
    class_label: str
    predicted: Any
    correct: bool
    shortlist: float
    reason: str | None = None
    note: str | None = None


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def preview(value: Any) -> Any:
    """``value`` itself when small and JSON-able, else a truncated text of it."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)[:_PREVIEW_CHARS]
    return value if len(text) <= _PREVIEW_CHARS else text[:_PREVIEW_CHARS] + "..."


def check_prediction(value: Any, allowed: Sequence[str]) -> Prediction:
    """Validate one prediction against the allowed labels (as shown to the agent).

    ``value``: the JSON value given for one sample.  Returns the labels mapped
    to their allowed spelling, or a reason: not a list of strings, empty list,
    a label outside ``allowed``, a duplicate (after trimming/case-folding).
    """
    note = None
    if isinstance(value, str):
        value, note = [value], "a bare string was read as a one-item list"
    if not isinstance(value, list):
        return Prediction(None, f"expected a list of label strings, got {_type_name(value)}")
    if not value:
        return Prediction(None, "empty list of labels")
    canonical = {fold(a): a for a in allowed}
    labels: list[str] = []
    for i, item in enumerate(value, 1):
        if not isinstance(item, str):
            return Prediction(None, f"item {i} is {_type_name(item)}, expected a label string")
        label = canonical.get(fold(item))
        if label is None:
            return Prediction(None, f"label {untrusted.safe_str(repr(item), 80)} is not one of the allowed labels")
        if label in labels:
            return Prediction(None, f"duplicate label {untrusted.safe_str(repr(item), 80)}")
        labels.append(label)
    return Prediction(labels, note=note)


def score_labels(labels: list[str] | None, true_label: str) -> tuple[bool, float]:
    """(top-1 correct, shortlist score 1/m or 0) of a checked prediction; invalid -> (False, 0)."""
    if not labels:
        return False, 0.0
    target = fold(true_label)
    folded = [fold(x) for x in labels]
    return folded[0] == target, (1.0 / len(folded) if target in folded else 0.0)


def _sample(split: str, file: str, truth: dict, pred: Prediction, raw: Any) -> SampleScore:
    correct, shortlist = score_labels(pred.labels, truth["label"])
    return SampleScore(
        split=split, file=file, sample_id=truth["sample_id"], true_label=truth["label"],
        class_label=truth["class_label"], predicted=pred.labels if pred.labels is not None else preview(raw),
        correct=correct, shortlist=shortlist, reason=pred.reason, note=pred.note,
    )


_Pairs = untrusted.Pairs


_STRUCTURE = re.compile(r'["\\{}\[\],:]')


def split_members(text: str) -> list[tuple[str, str, int]] | None:
    """The members of the JSON object ``text`` as ``(key JSON text, value JSON text, value nesting depth)``,
    found without parsing the values (a value thousands of levels deep is measured, not decoded); None when
    ``text`` is not one object whose members are ``key: value`` separated by commas.  Iterative and linear."""
    body = text.strip()
    if not body.startswith("{") or not body.endswith("}"):
        return None
    members: list[tuple[str, str, int]] = []
    depth, deepest, in_string, skip = 0, 0, False, -1
    start, colon = 1, None
    for match in _STRUCTURE.finditer(body):
        pos, char = match.start(), match.group()
        if pos <= skip:
            continue
        if in_string:
            if char == "\\":
                skip = pos + 1
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
            deepest = max(deepest, depth - 1)
        elif char in "}]":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                if pos != len(body) - 1:
                    return None
                if colon is not None:
                    members.append((body[start:colon], body[colon + 1:pos], deepest))
                elif body[start:pos].strip():
                    return None
        elif depth == 1 and char == ":" and colon is None:
            colon = pos
        elif depth == 1 and char == ",":
            if colon is None:
                return None
            members.append((body[start:colon], body[colon + 1:pos], deepest))
            start, colon, deepest = pos + 1, None, 0
    return members if depth == 0 and not in_string else None


def _read_members(text: str) -> tuple[Any, str | None]:
    """``results.json`` text whose whole parse failed: its members (``_Pairs``), each value parsed within
    :data:`RESULTS_BOUNDS` on its own or replaced by a :class:`Prediction` naming the bound; ``(None,
    reason)`` when the text is not a well-formed object after all (the caller keeps the whole-file reason)."""
    members = split_members(text)
    if members is None:
        return None, "not an object"
    if len(members) > RESULTS_BOUNDS.max_items:  # the file itself is over the bound, not one value
        return None, "too many members"
    pairs = _Pairs()
    for key_text, value_text, depth in members:
        try:
            key = json.loads(key_text)
        except ValueError:
            return None, "a key is not a JSON string"
        if not isinstance(key, str):
            return None, "a key is not a JSON string"
        if depth > RESULTS_BOUNDS.max_depth:
            pairs.append((key, Prediction(None, f"the value is nested deeper than {RESULTS_BOUNDS.max_depth} "
                                                "levels")))
            continue
        try:  # syntax first (NaN allowed here): a value that is not JSON at all breaks the whole file
            json.loads(value_text)
        except (ValueError, RecursionError):
            return None, "a value is not JSON"
        read = untrusted.parse_json(value_text, RESULTS_BOUNDS, "the value", pairs=True)
        pairs.append((key, read.value if read.ok else Prediction(None, read.reason)))
    return pairs, None


def read_results(workspace: Path, files: Sequence[str]) -> tuple[dict[str, Any], str | None, list[str]]:
    """Read ``results.json`` and match its keys to the test ``files``.

    Returns ``(entries, problem, warnings)``: ``entries`` maps each matched test
    file name to its raw value (a file given under two keys with different
    values maps to a :class:`Prediction` carrying the reason); ``problem`` is the
    reason when the whole file is unusable (missing, a symbolic link, too large,
    invalid JSON, not an object); ``warnings`` names ignored keys.
    """
    raw = untrusted.read_bytes(workspace / RESULTS_FILE, RESULTS_BOUNDS.max_bytes, RESULTS_FILE, " in the workspace")
    if not raw.ok:
        return {}, raw.reason, []
    read = untrusted.parse_json(raw.value, RESULTS_BOUNDS, RESULTS_FILE, pairs=True)
    if not read.ok:
        try:
            text = raw.value.decode("utf-8-sig")
        except UnicodeDecodeError:
            return {}, read.reason, []
        members, _ = _read_members(text) if len(raw.value) else (None, None)
        if members is None:
            return {}, read.reason, []
        read = untrusted.Read(members)
    data = read.value
    if not isinstance(data, _Pairs):
        kind = _type_name(_plain(data))
        return {}, f"{RESULTS_FILE} holds {kind}, expected an object mapping file names to label lists", []

    by_stem = {file_key(f): f for f in files}
    given: dict[str, list[tuple[str, Any]]] = {}
    unknown: list[str] = []
    for key, value in data:
        file = by_stem.get(file_key(key))
        if file is None:
            unknown.append(key)
        else:
            given.setdefault(file, []).append((key, _plain(value)))
    entries: dict[str, Any] = {}
    for file, pairs in given.items():
        values = [v for _, v in pairs]
        refused = next((v for v in values if isinstance(v, Prediction)), None)
        if refused is not None:
            entries[file] = refused
        elif all(v == values[0] for v in values):
            entries[file] = values[0]
        else:
            keys = ", ".join(repr(k) for k, _ in pairs)
            entries[file] = Prediction(None, f"{len(pairs)} entries for this file disagree (keys {keys})")
    warnings = []
    if unknown:
        shown = ", ".join(repr(k) for k in unknown[:10]) + (" ..." if len(unknown) > 10 else "")
        warnings.append(f"{RESULTS_FILE}: ignored {len(unknown)} key(s) that name no file in test_samples/: {shown}")
    return entries, None, warnings


def _plain(value: Any) -> Any:
    """Undo :class:`_Pairs` inside a value (nested objects become dicts); a :class:`Prediction` (a value
    refused by a bound) is kept."""
    if isinstance(value, _Pairs):
        return {k: _plain(v) for k, v in value}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def score_direct(workspace: Path, key: dict) -> tuple[list[SampleScore], list[str]]:
    """Score ``results.json`` against ``key["test"]`` (file -> truth); returns (samples, warnings)."""
    files = sorted(key["test"])
    entries, problem, warnings = read_results(workspace, files)
    samples = []
    for file in files:
        truth = key["test"][file]
        raw = entries.get(file)
        if problem is not None:
            pred = Prediction(None, problem)
        elif file not in entries:
            pred = Prediction(None, f"no entry for this file in {RESULTS_FILE}")
        elif isinstance(raw, Prediction):
            pred, raw = raw, None
        else:
            pred = check_prediction(raw, key["labels"])
        samples.append(_sample("test", file, truth, pred, raw))
    return samples, warnings


def _score_calls(split: str, files: list[str], truths: dict, results: list[CallResult] | None,
                 problem: str | None, allowed: Sequence[str]) -> list[SampleScore]:
    samples = []
    for i, file in enumerate(files):
        raw = None
        if problem is not None:
            pred = Prediction(None, problem)
        elif results is None or i >= len(results) or not isinstance(results[i], CallResult):
            pred = Prediction(None, "the submission runner returned no result for this sample")
        elif results[i].error is not None:
            pred = Prediction(None, f"{RULE_FUNCTION}(df) failed: {results[i].error}")
        elif (bad := untrusted.check_value(results[i].value, RESULTS_BOUNDS, "the return value")) is not None:
            pred = Prediction(None, f"{RULE_FUNCTION}(df) returned an invalid prediction: {bad}")
        else:
            raw = results[i].value
            pred = check_prediction(raw, allowed)
            if pred.reason:
                pred.reason = f"{RULE_FUNCTION}(df) returned an invalid prediction: {pred.reason}"
        samples.append(_sample(split, file, truths[file], pred, raw))
    return samples


def score_programmatic(workspace: Path, key_dir: Path, key: dict,
                       run_submission: SubmissionRunner) -> tuple[list[SampleScore], list[str]]:
    """Run ``predict`` of ``workspace/rule.py`` on the test and held-out files kept in ``key_dir``.

    The test files are read from the pristine copies in ``key_dir`` (the agent
    could have altered the workspace ones).  Returns (samples, warnings).
    """
    rule = workspace / RULE_FILE
    problem = None
    if rule.is_symlink():
        problem = f"{RULE_FILE} is a symbolic link; it was not run"
    elif not rule.is_file():
        problem = f"{RULE_FILE} not found in the workspace"
    samples: list[SampleScore] = []
    for split, folder in (("test", "test_samples"), ("heldout", "heldout_samples")):
        truths = key[split]
        files = sorted(truths)
        results = None
        if problem is None and files:
            results = run_submission(rule, RULE_FUNCTION, [key_dir / folder / f for f in files])
        samples += _score_calls(split, files, truths, results, problem, key["labels"])
    return samples, []


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(samples: list[SampleScore], heldout: bool) -> dict[str, Any]:
    """Metrics for the results row: accuracy, shortlist, n_test, n_invalid (+ heldout_* when asked)."""
    metrics: dict[str, Any] = {}
    splits = [("test", "")] + ([("heldout", "heldout_")] if heldout else [])
    for split, prefix in splits:
        rows = [s for s in samples if s.split == split]
        metrics[f"{prefix}accuracy"] = _mean([float(s.correct) for s in rows])
        metrics[f"{prefix}shortlist"] = _mean([s.shortlist for s in rows])
        metrics[f"{prefix}n_test" if split == "test" else "heldout_n"] = len(rows)
        metrics[f"{prefix}n_invalid"] = sum(s.reason is not None for s in rows)
    return metrics


def submission_problem(score: EpisodeScore) -> str | None:
    """Why an episode's score shows no valid submission (no test sample scored, or every test prediction
    invalid: no ``results.json``/``rule.py``, unreadable, or labels outside the allowed ones), naming the
    count and the first sample's reason; None when at least one test prediction is a valid label."""
    tests = [d for d in score.details if isinstance(d, dict) and d.get("split") == "test"]
    if not tests:
        n, invalid = score.metrics.get("n_test"), score.metrics.get("n_invalid")
        if isinstance(n, int) and n > 0 and invalid == n:
            return f"every one of the {n} test predictions is invalid"
        return None if isinstance(n, int) and n > 0 else "no test sample was scored"
    invalid = [d for d in tests if d.get("reason")]
    if len(invalid) < len(tests):
        return None
    return f"every one of the {len(tests)} test predictions is invalid (the first: {invalid[0]['reason']})"


def score_episode(workspace: Path, key_dir: Path, key: dict, run_submission: SubmissionRunner) -> EpisodeScore:
    """Score one episode from its answer key (``key.json`` content) and the agent's workspace."""
    if key["submission"] == "direct":
        samples, warnings = score_direct(workspace, key)
    else:
        samples, warnings = score_programmatic(workspace, key_dir, key, run_submission)
    return EpisodeScore(
        metrics=summarize(samples, heldout=key["submission"] == "programmatic"),
        details=[asdict(s) for s in samples],
        warnings=warnings,
    )
