"""Research episodes as an episode kind of the ``drcik`` template, and the staged experiment
``tasks/experiments/drcik-research-sample.yaml``: research (sample tasks × the retrieval agent, in a
local sandbox, scripted model) then forecasting with ``evidence_from: research``.  The forecasting
stage reads exactly what :func:`tsagent_plugins.tasks.drcik.research.episodes.score_research` wrote."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from harness.contracts import EpisodeScore
from harness.experiment import episode_id
from harness.run import load_task
from harness.sandbox import choose_backend
from tsagent_plugins.tasks.drcik.research import outputs as out
from tsagent_plugins.tasks.drcik.research.episodes import KEY_FILE
from tsagent_plugins.tasks.drcik.research.submissions import finish_research
from tsagent_plugins.tasks.drcik.research.as_context import research_claims
from tsagent_plugins.tasks.drcik.template import DrcikTemplate
from tests.support.paths import REPO

EXPERIMENT = REPO / "tasks" / "experiments" / "drcik-research-sample.yaml"
SCRIPT = REPO / "examples" / "scripts" / "retrieval-drcik.yaml"
PROFILE = "retrieval-bm25-gemini-3-flash"
TASK_IDS = ["task_42", "task_201", "task_163"]


def _local_sandbox() -> str | None:
    try:
        return choose_backend("auto", needs_image=False).name
    except Exception:  # noqa: BLE001
        return None


needs_sandbox = pytest.mark.skipif(_local_sandbox() not in ("bubblewrap", "unshare"),
                                   reason="no isolating local sandbox (bubblewrap or unshare) here")


# -- the template's research kind ----------------------------------------------------------------
def test_research_episodes_ids_and_labels():
    task = load_task(REPO / "tasks" / "drcik" / "research-sample.yaml")
    template, params = task.template, task.params
    assert template.episodes(params) == TASK_IDS and template.needs_agent_profile(params)
    assert template.episode_label("research-sample", params, "task_42") == "research_task_42"
    # choosing episodes, forecasting fields or keep_corpus never changes an episode's id; metadata does
    base = episode_id("r", template, params, "task_42", None)
    same = params.model_copy(update={"episodes": ["task_42"], "samples": 100, "contexts": ["dr-evidence"],
                                     "keep_corpus": True})
    assert template.episodes(same) == ["task_42"] and episode_id("r", template, same, "task_42", None) == base
    other = params.model_copy(update={"metadata": {"method": "x"}})
    assert episode_id("r", template, other, "task_42", None) != base
    # a forecasting episode's id ignores the research-only fields and the task selection
    fc = load_task(REPO / "tasks" / "drcik" / "sample-statistical.yaml")
    fid = episode_id("s", fc.template, fc.params, "naive/no-context/task_42", None)
    narrowed = fc.params.model_copy(update={"episodes": ["task_42"], "metadata": {"method": "x"}})
    assert fc.template.episodes(narrowed) == [f"{f}/{c}/task_42" for f in ("naive", "ses", "ets", "arima", "sarima")
                                              for c in ("no-context", "supporting-evidence")]
    assert episode_id("s", fc.template, narrowed, "naive/no-context/task_42", None) == fid


def _episode(run: Path, name: str, task_id: str, evidence, scored: bool, row_task: bool = True,
             salt: str = "s") -> dict:
    """One research episode folder as the run loop writes it (materialize, agent output, score, row)."""
    template = DrcikTemplate()
    params = load_task(REPO / "tasks" / "drcik" / "research-sample.yaml").params
    folder = run / "episodes" / name
    ws, key_dir = folder / "workspace", folder / "key"
    template.materialize(params, task_id, ws, key_dir)
    key = json.loads((key_dir / KEY_FILE).read_text())
    visible = {release: vis for vis, release in key["ids"].items()}
    if callable(evidence):
        evidence = evidence(visible, key)
    (ws / "evidence.json").write_text(evidence if isinstance(evidence, str) else json.dumps(evidence))
    (ws / "report.md").write_text("# report\n")
    row = {"episode": name, "profile": "dr", "template": "drcik"}
    if scored:
        score = template.score(params, task_id, ws, key_dir, None)
        assert isinstance(score, EpisodeScore)
        (folder / "score.json").write_text(json.dumps({"metrics": score.metrics, "details": score.details,
                                                       "warnings": score.warnings}))
        row.update(score.metrics)
    elif row_task:
        row["benchmark_id"] = task_id
    (folder / "row.json").write_text(json.dumps(row))
    return key


def test_forecasting_reads_what_score_research_wrote(tmp_path):
    """Scored episode: full claims (score.json details clip them to 200 characters) with the resolved
    release ids, the hallucinated id dropped.  Unscored: workspace ids mapped with the key.  Hostile
    output: read with the bounded reader, never raised."""
    long_claim = "Demand rises in the forecast window. " * 10  # 370 characters

    def cites(visible, key):
        supporting = key["supporting"][0]
        other = next(r for r, d in key["documents"].items() if d["task"] != key["benchmark_id"])
        return [{"claim": long_claim, "cited_document_ids": [visible[supporting] + ".md", "doc_ffffffffffff"]},
                {"claim": "second", "cited_document_ids": [f"corpus/{visible[other]}"]}]

    key42 = _episode(tmp_path, "a", "task_42", cites, scored=True)
    score = json.loads((tmp_path / "episodes" / "a" / "score.json").read_text())
    assert score["metrics"]["benchmark_id"] == "task_42" and score["metrics"]["episode_kind"] == "research"
    assert score["metrics"]["hallucinated_ids"] == 1 and score["metrics"]["cross_task_citations"] == 1
    assert len(score["details"][0]["claim"]) == 200  # what the details keep
    key201 = _episode(tmp_path, "b", "task_201", cites, scored=False)
    _episode(tmp_path, "c", "task_163", '{"evidence": [' * 40 + "]" * 40, scored=False)

    claims = {k: list(v.claims) for k, v in DrcikTemplate().research_evidence(str(tmp_path), "dr").items()}
    assert sorted(claims) == ["task_163", "task_201", "task_42"]
    other42 = next(r for r, d in key42["documents"].items() if d["task"] != "task_42")
    assert [(c.claim, c.cited_document_ids) for c in claims["task_42"]] == [
        (long_claim.strip(), (key42["supporting"][0],)), ("second", (other42,))]
    exported = json.loads((tmp_path / "episodes" / "a" / "key" / out.DEEP_RESEARCH_FILE).read_text())
    assert [c.claim for c in claims["task_42"]] == exported["evidence"]
    other201 = next(r for r, d in key201["documents"].items() if d["task"] != "task_201")
    assert [c.cited_document_ids for c in claims["task_201"]] == [(key201["supporting"][0],), (other201,)]
    assert claims["task_163"] == []  # nested too deep: a reason, no claims
    assert research_claims(tmp_path / "nowhere") is None


def test_failed_research_episode_writes_no_submission_row(tmp_path):
    """An agent that crashed on task_201 (its scoring still wrote an empty row into its key folder): the merged
    deep_research.jsonl holds only the two finished tasks, and the failure is counted and named."""
    def cites(visible, key):
        return [{"claim": "a claim", "cited_document_ids": [visible[key["supporting"][0]]]}]

    for name, task_id in (("a", "task_42"), ("b", "task_201"), ("c", "task_163")):
        _episode(tmp_path, name, task_id, cites if task_id != "task_201" else [], scored=True)
    empty = json.loads((tmp_path / "episodes" / "b" / "key" / out.DEEP_RESEARCH_FILE).read_text())
    assert empty["evidence"] == []   # what scoring a crashed agent's empty workspace writes
    rows = [{**json.loads((tmp_path / "episodes" / n / "row.json").read_text()), "status": s}
            for n, s in (("a", "ok"), ("b", "failed"), ("c", "ok"))]
    params = load_task(REPO / "tasks" / "drcik" / "research-sample.yaml").params
    summary = finish_research(DrcikTemplate().tasks(params), rows, tmp_path, metadata=params.metadata, judge=params.judge)
    merged = tmp_path / "submissions" / "deep_research__dr" / out.DEEP_RESEARCH_FILE
    lines = [json.loads(x) for x in merged.read_text().splitlines()]
    assert [r["benchmark_id"] for r in lines] == ["task_163", "task_42"]
    assert all(r["evidence"] == ["a claim"] for r in lines)
    assert summary["submissions"]["deep_research__dr"] == {"ok": True, "errors": [], "rows": 2,
                                                           "failed": ["task_201"]}
    assert summary["messages"][0] == ("submission deep_research__dr: valid (2 task(s)); 1 failed episode(s) left "
                                      "out (no submission row): task_201")
    # the forecasting side reads no evidence from the failed episode (not an empty list: "no DR evidence")
    assert list(DrcikTemplate().research_evidence(str(tmp_path), "dr")["task_201"].claims) == []   # row: no status
    (tmp_path / "episodes" / "b" / "row.json").write_text(json.dumps(rows[1]))                     # status failed
    assert sorted(DrcikTemplate().research_evidence(str(tmp_path), "dr")) == ["task_163", "task_42"]
    # every episode failed: no file at all, and the message says why
    (tmp_path / "x").mkdir()
    summary = finish_research(DrcikTemplate().tasks(params), [{**r, "status": "failed"} for r in rows], tmp_path / "x",
                              metadata=params.metadata, judge=params.judge)
    assert not (tmp_path / "x" / "submissions").exists() and summary["submissions"] == {}
    assert summary["messages"][0] == ("submission deep_research__dr: not written: every episode failed "
                                      "(task_163, task_201, task_42)")


# -- the staged experiment, end to end ------------------------------------------------------------
@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    root = tmp_path_factory.mktemp("staged") / "run"
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--experiment", str(EXPERIMENT),
                           "--model-backend", "scripted", "--script", str(SCRIPT), "--out", str(root)],
                          capture_output=True, text=True, timeout=900, cwd=REPO)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    return root, proc.stdout + proc.stderr


@needs_sandbox
@pytest.mark.slow
def test_research_stage_rows_and_exports(staged):
    root, output = staged
    rows = pd.read_parquet(root / "research" / "results.parquet")
    assert sorted(rows["benchmark_id"]) == sorted(TASK_IDS) and len(rows) == 3
    assert set(rows["template"]) == {"drcik"} and set(rows["episode_kind"]) == {"research"}
    assert set(rows["profile"]) == {PROFILE} and set(rows["sandbox"]) <= {"bubblewrap", "unshare"}
    assert set(rows["status"]) == {"ok"} and rows["output_reason"].isna().all()
    # the script cites three ids of the search result and one made-up id (dropped, counted)
    assert set(rows["evidence_items"]) == {2} and set(rows["cited_documents"]) == {3}
    assert set(rows["hallucinated_ids"]) == {1}
    merged = root / "research" / "submissions" / f"deep_research__{PROFILE}"
    lines = [json.loads(x) for x in (merged / out.DEEP_RESEARCH_FILE).read_text().splitlines()]
    assert [r["benchmark_id"] for r in lines] == sorted(TASK_IDS)
    assert out.validate_metadata(json.loads((merged / out.METADATA_FILE).read_text())) == []
    for line, episode in zip(lines, sorted(rows.itertuples(), key=lambda r: r.benchmark_id)):
        folder = root / "research" / "episodes" / episode.episode
        key = json.loads((folder / "key" / KEY_FILE).read_text())
        assert out.validate_deep_research_row(line, key["documents"]) == []
        assert line == json.loads((folder / "key" / out.DEEP_RESEARCH_FILE).read_text())
        assert (folder / "trajectory.json").is_file()
    finished = json.loads((root / "research" / "run.json").read_text())["finished"]["research-sample"]
    assert finished["submissions"][f"deep_research__{PROFILE}"] == {"ok": True, "errors": [], "rows": 3}
    assert f"submission deep_research__{PROFILE}: valid (3 task(s))" in output


@needs_sandbox
@pytest.mark.slow
def test_forecast_stage_rows_name_the_research_run_and_agent(staged):
    root, _ = staged
    research = pd.read_parquet(root / "research" / "results.parquet").set_index("benchmark_id")
    rows = pd.read_parquet(root / "forecast" / "results.parquet")
    assert len(rows) == 2 * 2 * 3 and rows["episode_id"].is_unique
    assert set(rows["forecaster"]) == {"naive", "arima"} and set(rows["context"]) == {"dr-evidence", "verified-dr"}
    assert set(rows["evidence_run"]) == {str((root / "research").resolve())}
    assert set(rows["evidence_agent"]) == {PROFILE} and set(rows["status"]) == {"ok"}
    # the evidence each forecast got is the research episode's, as score_research wrote it
    for task_id, row in research.iterrows():
        folder = root / "research" / "episodes" / row["episode"]
        key = json.loads((folder / "key" / KEY_FILE).read_text())
        details = json.loads((folder / "score.json").read_text())["details"]
        verified = sum(bool(d["resolved"]) and set(d["resolved"]) <= set(key["supporting"]) for d in details)
        mine = rows[rows["benchmark_id"] == task_id].set_index(["forecaster", "context"])
        assert set(mine.xs("dr-evidence", level="context")["context_items"]) == {row["evidence_items"]}
        assert set(mine.xs("verified-dr", level="context")["context_items"]) == {verified}
    submissions = sorted(p.name for p in (root / "forecast" / "submissions").iterdir())
    assert submissions == sorted(f"{f}__{c}__{PROFILE}" for f in ("naive", "arima")
                                 for c in ("dr-evidence", "verified-dr"))
