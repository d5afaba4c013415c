"""Research episodes (Dr-CiK Appendix G "Common interface"): the workspace a DR agent sees leaks
no document role, subtype or owning task; the agent's outputs are read back bounded and
never raise; the release's deep_research.jsonl row and metadata.json are valid."""

import json
import os
import re
import statistics

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tsagent_plugins.tasks.drcik.dataset.loader import SAMPLE_DIR, SUBTYPE_PAPER_NAMES, load_tasks
from tsagent_plugins.tasks.drcik.research.episodes import (CORPUS_DIR, KEY_FILE, RESEARCH_INSTRUCTION, materialize_research,
                                          score_research)
from tsagent_plugins.tasks.drcik.research import outputs as out
from tests.support.paths import TESTS

TEMPLATES = TESTS / "fixtures" / "drcik" / "submission_templates"
TASKS = load_tasks(SAMPLE_DIR)
ROLE_WORDS = ["supporting", "distractor", *SUBTYPE_PAPER_NAMES, *SUBTYPE_PAPER_NAMES.values(), "role", "subtype"]


def make(tmp_path, task="task_42", salt=None):
    ws, key = tmp_path / "workspace", tmp_path / "key"
    materialized = materialize_research(TASKS, task, ws, key, salt=salt)
    return materialized, ws, key, json.loads((key / KEY_FILE).read_text())


def roles(key, ids):
    return [key["documents"][key["ids"][i]]["role"] for i in ids]


def test_prompt_is_the_direct_prompt_plus_the_research_instruction_verbatim(tmp_path):
    materialized, ws, _, _ = make(tmp_path)
    prompt = (ws / "task.md").read_text()
    assert prompt == materialized.prompt
    assert RESEARCH_INSTRUCTION == ("Search the local environment and gather the most relevant documents and "
                                    "evidence snippets that would help forecast the target time-series values, "
                                    "while avoiding irrelevant or distracting information.")
    assert RESEARCH_INSTRUCTION in prompt
    assert prompt.startswith("I have a time series forecasting task for you.")
    task = TASKS[0]
    assert task.target_description in prompt
    assert f"predict the value at the following {len(task.future_index)} timestamps" in prompt
    assert "<forecast>" in prompt and "report.md" in prompt and "evidence.json" in prompt
    history = (ws / "history.csv").read_text().splitlines()
    assert history[0] == "timestamp,value" and len(history) == len(task.history) + 1


def test_corpus_pools_every_task_and_changes_nothing_but_trailing_padding(tmp_path):
    _, ws, _, key = make(tmp_path)
    files = sorted((ws / CORPUS_DIR).iterdir())
    assert len(files) == sum(len(t.documents) for t in TASKS) == 115
    contents = {d.document_id: d.content for t in TASKS for d in t.documents}
    for path in files:
        assert re.fullmatch(r"doc_[0-9a-f]{12}\.md", path.name)
        assert path.read_text().rstrip() == contents[key["ids"][path.name[:-3]]].rstrip()
    owners = {key["documents"][r]["task"] for r in key["ids"].values()}
    assert owners == {"task_42", "task_163", "task_201"}


def test_nothing_in_the_sandbox_names_a_role_subtype_or_owning_task(tmp_path):
    materialized, ws, _, key = make(tmp_path)
    assert sorted(p.name for p in ws.iterdir()) == sorted([CORPUS_DIR, "task.md", "history.csv"])
    release_ids = {d.document_id for t in TASKS for d in t.documents}
    # what we write besides the documents: the prompt, the history, the task_info the adapter gets
    # (the paper's research instruction, the same for every task, says "irrelevant or distracting")
    ours = ((ws / "task.md").read_text().replace(RESEARCH_INSTRUCTION, "") + (ws / "history.csv").read_text()
            + json.dumps(materialized.task_info))
    for word in ROLE_WORDS:
        assert not re.search(rf"\b{re.escape(word)}\b", ours, re.I), word
    assert not re.search(r"task_\d+", ours)
    # no release id or task id anywhere, documents included (names and contents)
    for path in (ws / CORPUS_DIR).iterdir():
        text = path.read_text()
        assert not re.search(r"\btask_\d+\b", text)
        # a salted 12-hex name may begin with a release id's digits by chance (doc_7380… vs doc_7380): not a leak
        assert re.fullmatch(r"doc_[0-9a-f]{12}", path.stem) and path.stem not in release_ids
        assert not re.search(r"\bdoc_\d+\b", text)


def test_ids_are_salted_per_episode(tmp_path):
    _, _, _, a = make(tmp_path / "a")
    _, _, _, b = make(tmp_path / "b")
    assert set(a["ids"].values()) == set(b["ids"].values())
    assert not set(a["ids"]) & set(b["ids"])  # fresh salt: no id in common
    _, _, _, c = make(tmp_path / "c", salt="fixed")
    _, _, _, d = make(tmp_path / "d", salt="fixed")
    assert c["ids"] == d["ids"]


def test_sorting_by_id_name_size_mtime_or_directory_order_says_nothing_about_role(tmp_path):
    first_half_share = []
    listing_share = []
    for k in range(24):
        _, ws, _, key = make(tmp_path / str(k), salt=f"salt-{k}")
        folder = ws / CORPUS_DIR
        stats = [p.stat() for p in folder.iterdir()]
        assert len({s.st_size for s in stats}) == 1  # one size for every document
        assert len({s.st_mtime for s in stats}) == 1  # one modification time
        assert all(s.st_mode & 0o222 == 0 for s in stats)  # read-only
        by_id = sorted(key["ids"])  # = sorted file names
        r = roles(key, by_id)
        n_sup = r.count("supporting")
        first_half_share.append(r[: len(r) // 2].count("supporting") / n_sup)
        listed = [name[:-3] for name in os.listdir(folder)]
        lr = roles(key, listed)
        listing_share.append(lr[: len(lr) // 2].count("supporting") / n_sup)
    # under a role-blind order about half of the supporting documents fall in the first half
    assert 0.4 < statistics.mean(first_half_share) < 0.6
    assert 0.4 < statistics.mean(listing_share) < 0.6
    assert max(first_half_share) - min(first_half_share) > 0.2  # the order changes with the salt


# -- outputs ---------------------------------------------------------------------------------
def write_evidence(ws, value):
    (ws / "evidence.json").write_text(value if isinstance(value, str) else json.dumps(value))


def visible_of(key, release_id):
    return next(v for v, r in key["ids"].items() if r == release_id)


def test_unknown_and_other_task_ids(tmp_path):
    _, ws, key_dir, key = make(tmp_path)
    own = key["supporting"][0]
    other = next(d.document_id for d in TASKS[1].documents)
    (ws / "report.md").write_text("# Report\n")
    write_evidence(ws, [
        {"claim": "first", "cited_document_ids": [visible_of(key, own), "doc_ffffffffffff", visible_of(key, own)]},
        {"claim": "second", "cited_document_ids": [f"corpus/{visible_of(key, other)}.md"]},
        {"claim": "third", "cited_document_ids": ["made-up"]},
    ])
    score = score_research(ws, key_dir)
    row = json.loads((key_dir / out.DEEP_RESEARCH_FILE).read_text())
    assert row == {"benchmark_id": "task_42", "cited_document_ids": [own, other],
                   "evidence": ["first", "second", "third"]}  # item kept when its ids are all dropped
    assert score.metrics["hallucinated_ids"] == 2
    assert score.metrics["cross_task_citations"] == 1
    assert score.metrics["cited_documents"] == 2 and score.metrics["evidence_items"] == 3
    assert score.metrics["evidence_ok"] and score.metrics["output_reason"] is None
    assert out.validate_deep_research_row(row, key["documents"]) == []
    assert out.validate_metadata(json.loads((key_dir / out.METADATA_FILE).read_text())) == []
    assert score.details[0]["dropped"] == ["doc_ffffffffffff"]


def test_empty_evidence_list(tmp_path):
    _, ws, key_dir, _ = make(tmp_path)
    (ws / "report.md").write_text("nothing found")
    write_evidence(ws, [])
    score = score_research(ws, key_dir)
    row = json.loads((key_dir / out.DEEP_RESEARCH_FILE).read_text())
    assert row == {"benchmark_id": "task_42", "cited_document_ids": [], "evidence": []}
    assert score.metrics["evidence_items"] == 0 and not score.metrics["evidence_ok"]
    assert "empty evidence list" in score.metrics["output_reason"]


HOSTILE = {
    "not json": ("{claim: 1", "not valid JSON"),
    "deep": ("[" * 50000 + "]" * 50000, "not valid JSON"),
    "nested": ('[{"claim": "x", "cited_document_ids": ' + "[" * 40 + "]" * 40 + "}]", "nested deeper"),
    "scalar": ("42", "expected a list"),
    "items": (json.dumps(["a", {"claim": ""}, {"claim": 3}, {"claim": "ok", "cited_document_ids": {"a": 1}}]),
              "not an object"),
    "binary": (b"\xff\xfe\x00\x00garbage", "not UTF-8"),
    "huge": ("[" + ",".join(['{"claim": "x"}'] * 80000) + "]", "larger than"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_malformed_or_hostile_evidence_is_a_reason_not_an_exception(tmp_path, case):
    _, ws, key_dir, key = make(tmp_path, salt="s")
    content, reason = HOSTILE[case]
    path = ws / "evidence.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    score = score_research(ws, key_dir)  # report.md missing too
    assert reason in score.metrics["output_reason"]
    assert "report.md: missing" in score.metrics["output_reason"]
    row = json.loads((key_dir / out.DEEP_RESEARCH_FILE).read_text())
    assert out.validate_deep_research_row(row, key["documents"]) == []
    if case == "items":
        assert row["evidence"] == ["ok"] and row["cited_document_ids"] == []


def test_symlink_and_directory_are_refused(tmp_path):
    _, ws, key_dir, _ = make(tmp_path, salt="s")
    (ws / "evidence.json").symlink_to("/etc/passwd")
    (ws / "report.md").mkdir()
    score = score_research(ws, key_dir)
    assert "evidence.json: not a regular file" in score.metrics["output_reason"]
    assert "report.md: not a regular file" in score.metrics["output_reason"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(
                        st.sampled_from(["claim", "cited_document_ids", "evidence", "x"]), c, max_size=3),
                    max_leaves=30))
def test_reading_any_json_never_raises(tmp_path, value):
    path = tmp_path / "evidence.json"
    path.write_text(json.dumps(value))
    items, reasons = out.read_evidence(path)
    resolved = out.resolve(items, {"doc_aaaaaaaaaaaa": "doc_1"}, {"doc_1": {"task": "t", "role": "supporting"}}, "t")
    row = out.deep_research_row("t", resolved)
    assert out.validate_deep_research_row(row) == []
    assert all(isinstance(r, str) for r in reasons)


def test_the_release_templates_pass_our_validators():
    row = json.loads((TEMPLATES / "deep_research.jsonl").read_text().splitlines()[0])
    assert out.validate_deep_research_row(row) == []
    meta = json.loads((TEMPLATES / "metadata.json").read_text())
    assert out.validate_metadata(meta) == []
    assert set(meta) == set(out.METADATA_FIELDS)


def test_validators_catch_broken_rows():
    assert out.validate_deep_research_row({"benchmark_id": "t", "cited_document_ids": ["a", "a"], "evidence": []}) \
        == ["cited_document_ids: duplicates"]
    assert "row keys" in out.validate_deep_research_row({"benchmark_id": "t", "evidence": []})[0]
    assert out.validate_deep_research_row({"benchmark_id": "t", "cited_document_ids": ["x"], "evidence": [1]},
                                          {"y": {}}) == ["cited_document_ids: not in the corpus: ['x']",
                                                         "evidence: not a list of strings"]
    assert out.validate_metadata({"method": ""}) [0] == "metadata.organization: missing"


def test_collect_run_merges_episode_rows(tmp_path):
    for k, task in enumerate(["task_42", "task_201"]):
        _, ws, key_dir, _ = make(tmp_path / "episodes" / task, task=task)
        write_evidence(ws, [{"claim": f"c{k}", "cited_document_ids": []}])
        score_research(ws, key_dir)
    jsonl, meta = out.collect_run(tmp_path, tmp_path / "submission", out.make_metadata(method="m", base_model="b"))
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert sorted(r["benchmark_id"] for r in rows) == ["task_201", "task_42"]
    assert json.loads(meta.read_text())["method"] == "m"
