"""Provenance: the harness's commit read from .git files (checkouts, worktrees, packed refs, detached heads), the
spec hash, the extractor-versions column, and the split of a template's rows by the code versions that made them."""

from __future__ import annotations

import json

import pandas as pd

from harness.config import TaskSpec
from harness.provenance import (UNRECORDED, code_changes, extractor_versions, read_commit, spec_sha256,
                                version_groups, versions_of)

SHA = "0123456789abcdef0123456789abcdef01234567"
OTHER = "89abcdef0123456789abcdef0123456789abcdef"


def test_the_commit_of_a_checkout_with_a_loose_ref(tmp_path):
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text(SHA + "\n")
    assert read_commit(tmp_path) == SHA


def test_a_packed_ref_a_detached_head_and_no_checkout(tmp_path):
    git = tmp_path / ".git"
    git.mkdir()
    (git / "HEAD").write_text("ref: refs/heads/topic\n")
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{OTHER} refs/heads/main\n{SHA} refs/heads/topic\n")
    assert read_commit(tmp_path) == SHA
    (git / "HEAD").write_text(OTHER + "\n")
    assert read_commit(tmp_path) == OTHER
    (git / "HEAD").write_text("ref: refs/heads/gone\n")
    assert read_commit(tmp_path) is None  # a branch with no commit yet
    assert read_commit(tmp_path / "elsewhere") is None


def test_the_commit_of_a_worktree(tmp_path):
    """A worktree's .git is a file naming its git dir, whose commondir holds the refs."""
    common = tmp_path / "main" / ".git"
    (common / "refs" / "heads").mkdir(parents=True)
    (common / "refs" / "heads" / "feature").write_text(SHA + "\n")
    own = common / "worktrees" / "wt"
    own.mkdir(parents=True)
    (own / "HEAD").write_text("ref: refs/heads/feature\n")
    (own / "commondir").write_text("../..\n")
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {own}\n")
    assert read_commit(tree) == SHA


def test_the_spec_hash_is_of_the_spec_as_run_not_its_file():
    spec = TaskSpec(name="t", template="x", params={"a": 1, "b": [1, 2]})
    same = TaskSpec(name="t", template="x", params={"b": [1, 2], "a": 1})
    assert spec_sha256(spec) == spec_sha256(same) and len(spec_sha256(spec)) == 64
    assert spec_sha256(spec) != spec_sha256(TaskSpec(name="t", template="x", params={"a": 2, "b": [1, 2]}))


def test_extractor_versions_are_one_sorted_json_object():
    class E:
        def __init__(self, name, version):
            self.name, self.version = name, version

    value = extractor_versions([E("usage", "2"), E("interaction", "1")])
    assert value == '{"interaction":"1","usage":"2"}' and versions_of(value) == {"interaction": "1", "usage": "2"}
    assert extractor_versions([]) is None and versions_of(None) == {} and versions_of("not json") == {}


def rows(*versions) -> pd.DataFrame:
    return pd.DataFrame([{"episode": f"e{i}", "scorer_version": s,
                          "extractor_versions": None if e is None else json.dumps(e)}
                         for i, (s, e) in enumerate(versions)])


def test_rows_of_one_version_are_not_split():
    frame = rows(("1", {"a": "1", "b": "1"}), ("1", {"a": "1", "b": "1"}))
    ((label, part),) = version_groups(frame)
    assert label is None and len(part) == 2
    assert version_groups(pd.DataFrame({"episode": ["e0"]}))[0][0] is None  # rows from before versions: one group
    # rows written before versions were kept join the rows of the one version there is
    ((label, part),) = version_groups(rows(("1", {"a": "1"}), (None, None), ("1", {"a": "1", "b": "2"})))
    assert label is None and len(part) == 3


def test_rows_are_split_by_what_differs_and_the_label_names_only_that():
    frame = rows(("1", {"a": "1", "b": "1"}), ("2", {"a": "1", "b": "1"}), ("2", {"a": "1", "b": "3"}),
                 (None, None))
    groups = version_groups(frame)
    assert [label for label, _ in groups] == ["scorer 1; extractors b@1", "scorer 2; extractors b@1",
                                              "scorer 2; extractors b@3",
                                              f"scorer {UNRECORDED}; extractors b@{UNRECORDED}"]
    assert [list(part["episode"]) for _, part in groups] == [["e0"], ["e1"], ["e2"], ["e3"]]
    only_extractors = version_groups(rows(("1", {"a": "1"}), ("1", {"a": "2"}), ("1", {"a": "2"})))
    assert [(label, len(part)) for label, part in only_extractors] == [("extractors a@1", 1), ("extractors a@2", 2)]


def _code(commit=SHA, scorer="2", extractors='{"steps":"1"}', version="0.1.0"):
    return {"harness_version": version, "harness_commit": commit, "scorer_version": scorer,
            "extractor_versions": extractors}


def test_kept_rows_made_by_other_code_are_counted_and_the_changes_named():
    now = _code(commit=SHA, scorer="3", extractors='{"steps":"2","tokens":"1"}')
    pairs = [(_code(commit=OTHER, scorer="3", extractors=now["extractor_versions"]), now),  # another commit
             (_code(commit=SHA, scorer="2", extractors='{"steps":"1"}'), now),  # older scorer and extractors
             (_code(commit=OTHER, scorer="1", extractors=now["extractor_versions"]), now),
             (dict(now), now)]  # made by the code about to run
    assert code_changes(pairs) == (3, ["harness commit 89abcde → 0123456", "scorer_version 2, 1 → 3",
                                       "extractor steps 1 → 2", "extractor tokens none → 1"])


def test_what_a_row_does_not_record_is_not_compared():
    now = _code(scorer="3")
    unscored = _code(scorer=None, extractors=None)  # a failed row the template did not score
    old = {"status": "ok"}  # written before versions were kept
    no_git = _code(commit=None, scorer="3")  # not run from a git checkout
    assert code_changes([(unscored, now), (old, now), (no_git, now)]) == (0, [])
    assert code_changes([(_code(version="0.0.9", scorer="3"), now)]) == (1, ["harness version 0.0.9 → 0.1.0"])
    many = [(_code(commit=f"{i}" * 40, scorer="3"), now) for i in range(1, 6)]
    assert code_changes(many) == (5, ["harness commit 1111111, 2222222, 3333333, ... → 0123456"])
