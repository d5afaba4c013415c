"""TraceBench scoring: top-1 accuracy, shortlist 1/m, and every kind of invalid output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.contracts import CallResult
from tsagent_plugins.tasks.tracebench.files import file_key
from tsagent_plugins.tasks.tracebench.scoring import (check_prediction, fold, score_episode, score_labels,
                                                      submission_problem)

LABELS = ["coefficient of restitution", "mass", "drag coefficient", "gravity acceleration", "no parameter change"]
TRUTH = {"aaaaaaaaaaaa.parquet": "mass", "bbbbbbbbbbbb.parquet": "no parameter change",
         "cccccccccccc.parquet": "gravity acceleration", "dddddddddddd.parquet": "mass"}


def make_key(submission="direct", heldout=None, labels=LABELS, truth=TRUTH, mapping=None):
    def entries(d, prefix):
        return {f: {"sample_id": f"{prefix}{i}", "label": lab, "class_label": (mapping or {}).get(lab, lab)}
                for i, (f, lab) in enumerate(sorted(d.items()))}
    return {"submission": submission, "labels": labels, "test": entries(truth, "t"),
            "heldout": entries(heldout or {}, "h"), "support": {}}


def score_results(tmp_path: Path, content, key=None, raw=False):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    if content is not None:
        (ws / "results.json").write_text(content if raw else json.dumps(content))
    return score_episode(ws, tmp_path / "key", key or make_key(), runner_not_called)


def runner_not_called(module, function, inputs):
    raise AssertionError("direct answers must not run a submission")


def by_file(score):
    return {d["file"]: d for d in score.details}


# -- label checks ---------------------------------------------------------------------------------

def test_fold_trims_and_casefolds():
    assert fold("  Gravity ACCELERATION\n") == "gravity acceleration"
    assert fold("MASSE") == fold("masse")


@pytest.mark.parametrize("value, labels", [
    (["mass"], ["mass"]),
    ([" Mass ", "GRAVITY acceleration"], ["mass", "gravity acceleration"]),
    (["No Parameter Change"], ["no parameter change"]),
])
def test_check_prediction_maps_to_allowed_spelling(value, labels):
    pred = check_prediction(value, LABELS)
    assert pred.labels == labels and pred.reason is None and pred.note is None


def test_bare_string_is_a_one_item_list_with_a_note():
    pred = check_prediction("  MASS", LABELS)
    assert pred.labels == ["mass"] and pred.reason is None
    assert "bare string" in pred.note


@pytest.mark.parametrize("value, reason", [
    ([], "empty list of labels"),
    ([True], "item 1 is a boolean, expected a label string"),
    ({"label": "mass"}, "expected a list of label strings, got an object"),
    (3, "expected a list of label strings, got a number"),
    (None, "expected a list of label strings, got null"),
    (["mass", 2], "item 2 is a number, expected a label string"),
    ([["mass"]], "item 1 is a list, expected a label string"),
    (["mass", "friction"], "label 'friction' is not one of the allowed labels"),
    (["label_1"], "label 'label_1' is not one of the allowed labels"),
    (["mass", " MASS "], "duplicate label ' MASS '"),
    ("", "label '' is not one of the allowed labels"),
])
def test_invalid_predictions_have_reasons(value, reason):
    pred = check_prediction(value, LABELS)
    assert pred.labels is None
    assert pred.reason == reason


@pytest.mark.parametrize("labels, truth, correct, shortlist", [
    (["mass"], "mass", True, 1.0),
    (["mass", "gravity acceleration"], "mass", True, 0.5),
    (["gravity acceleration", "mass"], "mass", False, 0.5),
    (["drag coefficient", "gravity acceleration", "mass"], "mass", False, 1 / 3),
    (LABELS, "no parameter change", False, 0.2),
    (["gravity acceleration"], "mass", False, 0.0),
    (None, "mass", False, 0.0),
])
def test_top1_and_shortlist(labels, truth, correct, shortlist):
    got_correct, got_shortlist = score_labels(labels, truth)
    assert got_correct is correct
    assert got_shortlist == pytest.approx(shortlist, abs=1e-15)


@pytest.mark.parametrize("key, stem", [
    ("abc123", "abc123"), ("abc123.parquet", "abc123"), ("test_samples/abc123.parquet", "abc123"),
    ("./test_samples/abc123", "abc123"), ("  abc123.parquet ", "abc123"),
])
def test_file_key_variants(key, stem):
    assert file_key(key) == stem


# -- results.json --------------------------------------------------------------------------------

def test_perfect_direct_answer(tmp_path):
    score = score_results(tmp_path, {f: [lab] for f, lab in TRUTH.items()})
    assert score.metrics == {"accuracy": 1.0, "shortlist": 1.0, "n_test": 4, "n_invalid": 0}
    assert score.warnings == []
    assert all(d["reason"] is None and d["correct"] for d in score.details)


def test_mixed_answers_values(tmp_path):
    answers = {
        "aaaaaaaaaaaa": ["MASS", "gravity acceleration"],        # top-1 right, shortlist 1/2
        "test_samples/bbbbbbbbbbbb.parquet": ["mass"],            # wrong
        "cccccccccccc.parquet": [" gravity acceleration "],       # right (whitespace)
        "dddddddddddd.parquet": ["drag coefficient", "mass", "gravity acceleration"],  # wrong, 1/3
    }
    score = score_results(tmp_path, answers)
    assert score.metrics["accuracy"] == pytest.approx(0.5)
    assert score.metrics["shortlist"] == pytest.approx((0.5 + 0 + 1 + 1 / 3) / 4)
    assert score.metrics["n_invalid"] == 0
    d = by_file(score)
    assert d["aaaaaaaaaaaa.parquet"]["predicted"] == ["mass", "gravity acceleration"]
    assert d["aaaaaaaaaaaa.parquet"]["shortlist"] == 0.5
    assert d["bbbbbbbbbbbb.parquet"]["true_label"] == "no parameter change"
    assert d["bbbbbbbbbbbb.parquet"]["sample_id"] == "t1"
    assert d["dddddddddddd.parquet"]["shortlist"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("content, raw, reason", [
    (None, False, "results.json not found in the workspace"),
    ("{not json", True, "results.json is not valid JSON"),
    ("", True, "results.json is not valid JSON"),
    ([["mass"]], False, "results.json holds a list, expected an object"),
    ("mass", False, "results.json holds a string, expected an object"),
    (b"\xff\xfe{}", True, "results.json is not UTF-8 text"),
])
def test_unusable_results_file_makes_every_sample_wrong(tmp_path, content, raw, reason):
    ws = tmp_path / "ws"
    ws.mkdir()
    if isinstance(content, bytes):
        (ws / "results.json").write_bytes(content)
        score = score_episode(ws, tmp_path, make_key(), runner_not_called)
    else:
        score = score_results(tmp_path, content, raw=raw)
    assert score.metrics == {"accuracy": 0.0, "shortlist": 0.0, "n_test": 4, "n_invalid": 4}
    assert all(d["reason"].startswith(reason) for d in score.details)


def test_symlinked_results_file_is_not_read(tmp_path):
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({f: [lab] for f, lab in TRUTH.items()}))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "results.json").symlink_to(target)
    score = score_episode(ws, tmp_path, make_key(), runner_not_called)
    assert score.metrics["accuracy"] == 0.0 and score.metrics["n_invalid"] == 4
    assert "symbolic link" in score.details[0]["reason"]


def test_per_entry_problems_are_recorded_per_sample(tmp_path):
    answers = {
        "aaaaaaaaaaaa.parquet": "mass",                    # bare string: accepted
        "bbbbbbbbbbbb.parquet": [],                         # empty
        "cccccccccccc.parquet": ["gravity acceleration", "gravity acceleration"],  # duplicate
        # dddddddddddd missing
        "zzzzzzzzzzzz.parquet": ["mass"],                   # unknown file: ignored with a warning
        "test_samples/yyyy": ["mass"],
    }
    score = score_results(tmp_path, answers)
    d = by_file(score)
    assert d["aaaaaaaaaaaa.parquet"]["correct"] and d["aaaaaaaaaaaa.parquet"]["reason"] is None
    assert "bare string" in d["aaaaaaaaaaaa.parquet"]["note"]
    assert d["bbbbbbbbbbbb.parquet"]["reason"] == "empty list of labels"
    assert d["cccccccccccc.parquet"]["reason"] == "duplicate label 'gravity acceleration'"
    assert d["cccccccccccc.parquet"]["predicted"] == ["gravity acceleration", "gravity acceleration"]
    assert d["dddddddddddd.parquet"]["reason"] == "no entry for this file in results.json"
    assert score.metrics == {"accuracy": 0.25, "shortlist": 0.25, "n_test": 4, "n_invalid": 3}
    assert len(score.warnings) == 1
    assert "ignored 2 key(s)" in score.warnings[0]
    assert "'zzzzzzzzzzzz.parquet'" in score.warnings[0] and "'test_samples/yyyy'" in score.warnings[0]


def test_unknown_label_makes_the_sample_wrong_even_after_a_right_first_label(tmp_path):
    answers = {f: [lab] for f, lab in TRUTH.items()}
    answers["aaaaaaaaaaaa.parquet"] = ["mass", "friction"]
    d = by_file(score_results(tmp_path, answers))["aaaaaaaaaaaa.parquet"]
    assert (d["correct"], d["shortlist"]) == (False, 0.0)
    assert d["reason"] == "label 'friction' is not one of the allowed labels"


def test_same_file_under_two_keys(tmp_path):
    agree = {f: [lab] for f, lab in TRUTH.items()} | {"aaaaaaaaaaaa": ["mass"]}
    assert score_results(tmp_path, agree).metrics["accuracy"] == 1.0
    body = ", ".join(f'"{f}": ["{lab}"]' for f, lab in TRUTH.items())
    disagree = "{" + body + ', "aaaaaaaaaaaa": ["drag coefficient"]}'
    d = by_file(score_results(tmp_path, disagree, raw=True))["aaaaaaaaaaaa.parquet"]
    assert not d["correct"] and "2 entries for this file disagree" in d["reason"]
    repeated = "{" + body + ', "aaaaaaaaaaaa.parquet": ["gravity acceleration"]}'   # a repeated JSON key
    d = by_file(score_results(tmp_path, repeated, raw=True))["aaaaaaaaaaaa.parquet"]
    assert not d["correct"] and "disagree" in d["reason"]


def test_no_context_labels_are_compared_in_shown_space(tmp_path):
    shown = [f"label_{i}" for i in range(5)]
    mapping = dict(zip(shown, LABELS))
    truth = {"aaaaaaaaaaaa.parquet": "label_1", "bbbbbbbbbbbb.parquet": "label_4"}
    key = make_key(labels=shown, truth=truth, mapping=mapping)
    score = score_results(tmp_path, {"aaaaaaaaaaaa": ["LABEL_1"], "bbbbbbbbbbbb": ["no parameter change"]}, key=key)
    d = by_file(score)
    assert d["aaaaaaaaaaaa.parquet"]["correct"] and d["aaaaaaaaaaaa.parquet"]["class_label"] == "mass"
    assert d["bbbbbbbbbbbb.parquet"]["reason"] == "label 'no parameter change' is not one of the allowed labels"
    assert score.metrics["accuracy"] == 0.5


# -- programmatic --------------------------------------------------------------------------------

HELDOUT = {f"h{i:011d}.parquet": LABELS[i % 5] for i in range(10)}


class FakeRunner:
    """Answers per input file name from ``answers`` (a CallResult or a value)."""

    def __init__(self, answers, drop_last=False):
        self.answers, self.calls, self.drop_last = answers, [], drop_last

    def __call__(self, module, function, inputs):
        self.calls.append((Path(module), function, [Path(p) for p in inputs]))
        out = []
        for p in inputs:
            a = self.answers[Path(p).name]
            out.append(a if isinstance(a, CallResult) else CallResult(value=a))
        return out[:-1] if self.drop_last else out


def prog_workspace(tmp_path, rule=True):
    ws = tmp_path / "ws"
    ws.mkdir()
    if rule:
        (ws / "rule.py").write_text("def predict(df):\n    return ['mass']\n")
    return ws


def test_programmatic_scores_test_and_heldout_from_the_key_dir(tmp_path):
    ws = prog_workspace(tmp_path)
    answers = {f: [lab] for f, lab in TRUTH.items()} | {f: [lab, "mass"] if lab != "mass" else ["mass"]
                                                         for f, lab in HELDOUT.items()}
    answers["dddddddddddd.parquet"] = ["drag coefficient"]
    for f in list(HELDOUT)[:4]:
        answers[f] = ["drag coefficient"] if HELDOUT[f] != "drag coefficient" else ["mass"]
    runner = FakeRunner(answers)
    key_dir = tmp_path / "key"
    score = score_episode(ws, key_dir, make_key("programmatic", HELDOUT), runner)
    assert [(m, fn) for m, fn, _ in runner.calls] == [(ws / "rule.py", "predict")] * 2
    assert runner.calls[0][2] == [key_dir / "test_samples" / f for f in sorted(TRUTH)]
    assert runner.calls[1][2] == [key_dir / "heldout_samples" / f for f in sorted(HELDOUT)]
    m = score.metrics
    assert (m["accuracy"], m["shortlist"], m["n_test"], m["n_invalid"]) == (0.75, 0.75, 4, 0)
    # held-out: 4 wrong; of the 6 right, 1 is "mass" alone (1.0) and 5 are [label, "mass"] (0.5)
    right = sorted(HELDOUT)[4:]
    expected_shortlist = sum(1.0 if HELDOUT[f] == "mass" else 0.5 for f in right) / 10
    assert m["heldout_accuracy"] == pytest.approx(0.6)
    assert m["heldout_shortlist"] == pytest.approx(expected_shortlist)
    assert (m["heldout_n"], m["heldout_n_invalid"]) == (10, 0)
    assert {d["split"] for d in score.details} == {"test", "heldout"}


def test_programmatic_failures_per_sample(tmp_path):
    ws = prog_workspace(tmp_path)
    files = sorted(TRUTH)
    answers = {
        files[0]: CallResult(error="timeout after 30s"),
        files[1]: {"label": "mass"},
        files[2]: ["gravity acceleration", "spin"],
        files[3]: "mass",
    } | {f: ["mass"] for f in HELDOUT}
    score = score_episode(ws, tmp_path / "key", make_key("programmatic", HELDOUT), FakeRunner(answers))
    d = by_file(score)
    assert d[files[0]]["reason"] == "predict(df) failed: timeout after 30s"
    assert d[files[1]]["reason"] == "predict(df) returned an invalid prediction: expected a list of label strings, got an object"
    assert d[files[2]]["reason"].endswith("label 'spin' is not one of the allowed labels")
    assert d[files[3]]["correct"] and d[files[3]]["note"]
    assert score.metrics["n_invalid"] == 3 and score.metrics["accuracy"] == 0.25
    assert score.metrics["heldout_accuracy"] == pytest.approx(0.2)  # 2 of 10 held-out are "mass"


def test_programmatic_missing_rule_never_calls_the_runner(tmp_path):
    ws = prog_workspace(tmp_path, rule=False)
    score = score_episode(ws, tmp_path / "key", make_key("programmatic", HELDOUT), runner_not_called)
    m = score.metrics
    assert (m["accuracy"], m["n_invalid"], m["heldout_accuracy"], m["heldout_n_invalid"]) == (0.0, 4, 0.0, 10)
    assert all(d["reason"] == "rule.py not found in the workspace" for d in score.details)


def test_programmatic_symlinked_rule_is_not_run(tmp_path):
    ws = prog_workspace(tmp_path, rule=False)
    (tmp_path / "real.py").write_text("def predict(df): return ['mass']\n")
    (ws / "rule.py").symlink_to(tmp_path / "real.py")
    score = score_episode(ws, tmp_path / "key", make_key("programmatic", HELDOUT), runner_not_called)
    assert score.metrics["n_invalid"] == 4 and "symbolic link" in score.details[0]["reason"]


def test_programmatic_short_runner_answer(tmp_path):
    ws = prog_workspace(tmp_path)
    answers = {f: [lab] for f, lab in (TRUTH | HELDOUT).items()}
    score = score_episode(ws, tmp_path / "key", make_key("programmatic", HELDOUT), FakeRunner(answers, drop_last=True))
    assert score.metrics["accuracy"] == 0.75 and score.metrics["heldout_accuracy"] == 0.9
    last = by_file(score)[sorted(TRUTH)[-1]]
    assert last["reason"] == "the submission runner returned no result for this sample"


def test_programmatic_without_heldout_has_undefined_heldout_accuracy(tmp_path):
    ws = prog_workspace(tmp_path)
    score = score_episode(ws, tmp_path / "key", make_key("programmatic"), FakeRunner({f: [lab] for f, lab in TRUTH.items()}))
    assert score.metrics["accuracy"] == 1.0
    assert score.metrics["heldout_accuracy"] is None and score.metrics["heldout_n"] == 0


@pytest.mark.parametrize("value, labels, note, reason", [
    (["mass", "drag"], ["mass", "drag"], None, None),
    ([" MASS "], ["mass"], None, None),
    ("mass", ["mass"], "a bare string was read as a one-item list", None),
    ([], None, None, "empty list of labels"),
    ([1], None, None, "item 1 is a number, expected a label string"),
    (["mass", "wind"], None, None, "label 'wind' is not one of the allowed labels"),
    (["mass", "MASS"], None, None, "duplicate label 'MASS'"),
    ({"mass": 1}, None, None, "expected a list of label strings, got an object"),
    (None, None, None, "expected a list of label strings, got null"),
    (3.5, None, None, "expected a list of label strings, got a number"),
])
def test_leniency_table(value, labels, note, reason):
    """One row of the leniency table in the scoring module docstring."""
    pred = check_prediction(value, ["mass", "drag"])
    assert (pred.labels, pred.note, pred.reason) == (labels, note, reason)


def test_leniency_table_results_json_rows(tmp_path):
    """results.json rows: key spellings, unknown keys, agreeing duplicates, byte-order mark."""
    files = sorted(TRUTH)
    body = (f'{{"{files[0][:-8]}": ["mass"], "test_samples/{files[1]}": ["no parameter change"], '
            f'"{files[2]}": ["gravity acceleration"], "{files[2]}": ["gravity acceleration"], '
            f'"{files[3]}": ["mass"], "zzz.parquet": ["mass"]}}')
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "results.json").write_bytes(b"\xef\xbb\xbf" + body.encode())
    score = score_episode(ws, tmp_path, make_key(), runner_not_called)
    assert score.metrics["accuracy"] == 1.0
    assert score.warnings == ["results.json: ignored 1 key(s) that name no file in test_samples/: 'zzz.parquet'"]


@pytest.mark.parametrize("bad, reason", [
    ("[" * 900 + "]" * 900, "the value is nested deeper than 16 levels"),
    ("NaN", "the value is not valid JSON: NaN is not allowed in JSON"),
    ('["' + "m" * 10_001 + '"]', "the value has a string longer than 10000 characters"),
    ("[" + ", ".join(["1"] * 200_001) + "]", "the value has more than 200000 JSON values"),
])
def test_one_value_over_a_bound_costs_only_its_own_sample(tmp_path, bad, reason):
    """A well-formed results.json whose one entry breaks a bound: that sample wrong with the bound named,
    the three correct ones stay correct (the module docstring's promise)."""
    files = sorted(TRUTH)
    members = [f'"{f}": {json.dumps([TRUTH[f]])}' for f in files[1:]]
    body = "{" + f'"{files[0]}": {bad}, ' + ", ".join(members) + "}"
    score = score_results(tmp_path, body, raw=True)
    d = by_file(score)
    assert d[files[0]]["reason"] == reason and not d[files[0]]["correct"]
    assert all(d[f]["correct"] and d[f]["reason"] is None for f in files[1:])
    assert score.metrics == {"accuracy": 0.75, "shortlist": 0.75, "n_test": 4, "n_invalid": 1}


@pytest.mark.parametrize("text", ['{"a": [1, }', '{"a": [1]] }', '{"a" [1]}', '{"a": [1], "b"}', '[{"a": 1}]',
                                  '{"a": "\\"}', '{"a": 1} {"b": 2}'])
def test_a_malformed_file_still_makes_every_sample_wrong(tmp_path, text):
    score = score_results(tmp_path, text, raw=True)
    assert score.metrics["n_invalid"] == 4
    assert all(d["reason"].startswith("results.json") for d in score.details)


def test_split_members_reads_strings_and_escapes():
    from tsagent_plugins.tasks.tracebench.scoring import split_members

    assert split_members('{"a,b": ["x]", "y\\"}"], "c": {"d": [[1]]}}') == [
        ('"a,b"', ' ["x]", "y\\"}"]', 1), (' "c"', ' {"d": [[1]]}', 3)]
    assert split_members("{}") == [] and split_members("[]") is None


# -- what counts as a submission (the agent kit's check) ------------------------------------------

def test_no_results_file_is_no_submission(tmp_path):
    assert submission_problem(score_results(tmp_path, None)) == (
        "every one of the 4 test predictions is invalid (the first: results.json not found in the workspace)")


def test_only_labels_outside_the_allowed_ones_is_no_submission(tmp_path):
    score = score_results(tmp_path, {f: ["the butler did it"] for f in TRUTH})
    assert score.metrics["accuracy"] == 0.0 and score.metrics["n_invalid"] == 4
    assert submission_problem(score).startswith("every one of the 4 test predictions is invalid (the first: ")


def test_one_valid_label_among_invalid_ones_is_a_submission(tmp_path):
    answers = {f: ["the butler did it"] for f in TRUTH} | {"aaaaaaaaaaaa.parquet": ["gravity acceleration"]}
    score = score_results(tmp_path, answers)
    assert score.metrics["accuracy"] == 0.0 and score.metrics["n_invalid"] == 3
    assert submission_problem(score) is None
