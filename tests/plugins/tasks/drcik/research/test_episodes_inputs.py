"""A research episode's corpus kept by reference (harness.inputs): after the episode the unchanged corpus files
leave the run folder, each is rebuilt byte for byte from the loaded tasks, the salt and the common size, an
edited one stays as the agent left it, and a changed task folder is named when a rebuild is asked for."""

import json

import pytest

from harness.inputs import BY_REFERENCE, EDITED, InputMismatch, read, record, release, resolve
from tsagent_plugins.tasks.drcik.dataset.corpus import Corpus
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks
from tsagent_plugins.tasks.drcik.research.episodes import CORPUS_DIR, KEY_FILE, corpus_digest
from tsagent_plugins.tasks.drcik.spec import DrcikParams
from tsagent_plugins.tasks.drcik.template import DrcikTemplate


@pytest.fixture
def episode(tmp_path):
    """(template, params, episode folder, {corpus rel path: bytes as written}) of a materialized research episode."""
    template = DrcikTemplate()
    params = DrcikParams(episode_kind="research", tasks="sample")
    root = tmp_path / "run" / "episodes" / "research_task_42-abc"
    template.materialize(params, "task_42", root / "workspace", root / "key")
    written = {f"workspace/{CORPUS_DIR}/{p.name}": p.read_bytes() for p in (root / "workspace" / CORPUS_DIR).iterdir()}
    return template, params, root, written


def test_every_corpus_file_is_referenced_with_its_release_id_salt_size_and_the_corpus_digest(episode):
    template, params, root, written = episode
    refs = template.input_references(params, "task_42", root)
    key = json.loads((root / "key" / KEY_FILE).read_text())
    assert sorted(refs) == sorted(written) and len(refs) == len(key["ids"])
    corpus = Corpus(template.tasks(params).values())
    for rel, ref in refs.items():
        assert ref["document"] == key["ids"][rel.split("/")[-1][:-3]]
        assert ref["salt"] == key["salt"] and ref["size"] == len(written[rel])
        assert ref["corpus"] == corpus_digest(corpus) and ref["source"].startswith("Dr-CiK tasks sample (")
    # keep_corpus: every file stays as it is
    assert template.input_references(params.model_copy(update={"keep_corpus": True}), "task_42", root) == {}


def test_released_corpus_rebuilds_byte_for_byte_and_an_edited_document_stays(episode, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    template, params, root, written = episode
    record(template, params, "task_42", root)
    edited, *others = sorted(written)
    (root / edited).chmod(0o644)
    (root / edited).write_text("the agent's own notes\n")
    counts = release(root)
    states = {rel: entry["state"] for rel, entry in read(root)["files"].items()}
    assert states[edited] == EDITED and {states[rel] for rel in others} == {BY_REFERENCE}
    assert counts == {"by_reference": len(others), "edited": 1}
    assert sorted(p.name for p in (root / "workspace" / CORPUS_DIR).iterdir()) == [edited.split("/")[-1]]
    for rel in others[:5]:
        assert resolve(root, rel, template, params, "task_42").read_bytes() == written[rel]
    assert (root / edited).read_text() == "the agent's own notes\n"
    # a fresh template (another process): the same bytes, rebuilt from the task folder again
    fresh = DrcikTemplate()
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache2"))
    assert resolve(root, others[-1], fresh, params, "task_42").read_bytes() == written[others[-1]]


def test_a_changed_task_folder_is_named_when_a_document_is_rebuilt(episode, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    template, params, root, written = episode
    record(template, params, "task_42", root)
    release(root)
    tasks = load_tasks(params.tasks_path)
    doc = tasks[0].documents[0]
    object.__setattr__(doc, "content", doc.content + " (revised)")
    changed = DrcikTemplate()
    changed._tasks[str(params.tasks_path)] = {t.benchmark_id: t for t in tasks}
    with pytest.raises(InputMismatch) as caught:
        resolve(root, sorted(written)[0], changed, params, "task_42")
    message = str(caught.value)
    assert str(tmp_path / "run") in message and "research_task_42-abc" in message
    assert "Dr-CiK tasks sample" in message and "the task folder changed since the run" in message
