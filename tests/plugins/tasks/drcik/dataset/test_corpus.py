"""The shared corpus as agents see it: salted ids, shuffled order, no role anywhere visible."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy.stats import spearmanr

from tsagent_plugins.tasks.drcik.dataset.corpus import Corpus, CorpusError
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks


@pytest.fixture(scope="module")
def tasks():
    return load_tasks()


@pytest.fixture(scope="module")
def corpus(tasks):
    return Corpus(tasks)


def test_shared_corpus_holds_every_document(corpus, tasks):
    assert len(corpus) == 115 == sum(len(t.documents) for t in tasks)


def test_same_salt_same_view_other_salt_other_view(corpus):
    a, b, c = corpus.for_sandbox("s1"), corpus.for_sandbox("s1"), corpus.for_sandbox("s2")
    assert [d.id for d in a.visible] == [d.id for d in b.visible]
    assert not set(d.id for d in a.visible) & set(d.id for d in c.visible)
    assert len({corpus.for_sandbox().visible_id("doc_1548") for _ in range(5)}) == 5


def test_visible_ids_reveal_nothing_of_release_ids(corpus):
    view = corpus.for_sandbox("salt")
    for doc in view.visible:
        assert re.fullmatch(r"doc_[0-9a-f]{12}", doc.id)
    release = set(corpus.documents)
    assert not release & {d.id for d in view.visible}


def test_export_ids_maps_back(corpus):
    view = corpus.for_sandbox("salt")
    release_ids = ["doc_1548", "doc_7419", "doc_6098"]
    visible = [view.visible_id(r) for r in release_ids]
    assert view.export_ids(visible) == release_ids
    assert view.export_ids([f" {visible[0]}.md "]) == ["doc_1548"]
    assert view.export_ids(["doc_1548", "doc_deadbeef0000"]) == [None, None]   # release ids are not valid


def test_nothing_visible_names_a_role(corpus, tmp_path):
    view = corpus.for_sandbox("salt")
    paths = view.write(tmp_path / "docs")
    assert len(paths) == 115
    names = " ".join(p.name for p in paths)
    for word in ("support", "distract", "noisy", "confounder", "profile", "temporal", "timeseries"):
        assert word not in names
    assert set(vars(view.visible[0])) == {"id", "content"}
    assert {p.read_text() for p in paths} == {d.content for d in corpus.documents.values()}


def _roles_in(order, corpus, view):
    back = view.export_ids(order)
    return np.array([corpus.documents[r].role == "supporting" for r in back], dtype=float)


def test_sorted_ids_and_listing_order_carry_no_role(corpus):
    """Over many salts, role is uncorrelated with the position in sorted-id order and in
    listing order, and supporting documents are not listed first (release order: they are)."""
    rhos_sorted, rhos_listed, first_share = [], [], []
    base_rate = np.mean([d.role == "supporting" for d in corpus.documents.values()])
    for k in range(200):
        view = corpus.for_sandbox(f"run-{k}")
        listed = [d.id for d in view.visible]
        for order, out in ((sorted(listed), rhos_sorted), (listed, rhos_listed)):
            roles = _roles_in(order, corpus, view)
            out.append(spearmanr(np.arange(len(roles)), roles).statistic)
        first_share.append(_roles_in(listed[:20], corpus, view).mean())
    # release order: the correlation is strongly negative (supporting first)
    release_roles = np.array([d.role == "supporting" for d in corpus.documents.values()], dtype=float)
    assert spearmanr(np.arange(len(release_roles)), release_roles).statistic < -0.2
    for rhos in (rhos_sorted, rhos_listed):
        assert abs(np.mean(rhos)) < 0.03          # sd of one rho ~ 0.094; of the mean of 200 ~ 0.007
        assert np.std(rhos) < 0.15
    assert abs(np.mean(first_share) - base_rate) < 0.03


def test_conflicting_document_rejected(tasks):
    import dataclasses

    clone = dataclasses.replace(tasks[0], benchmark_id="other", documents=[
        dataclasses.replace(tasks[0].documents[0], content="different text", task_id="other")])
    with pytest.raises(CorpusError, match="differs between tasks"):
        Corpus([tasks[0], clone])
    with pytest.raises(CorpusError, match="empty"):
        Corpus([dataclasses.replace(tasks[0], documents=[])])
