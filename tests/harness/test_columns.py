"""One results row, built from its owners' declared columns: collisions refused naming both owners, row.json
written once, results.parquet typed by the declarations (an all-null column keeps its declared type)."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import BaseModel

import harness.episode as episode_module
from harness.columns import CORE, USAGE, ColumnCollision, Part, RowBuilder, assemble, frame_schema
from harness.config import AgentProfile, RunSettings
from harness.contracts import AgentTaskTemplate, EpisodeScore, Materialized, MetricExtractor
from tests.support.sandbox import IdleAgent
from harness.episode import EpisodePlan, run_episode, run_harness_episode
from harness.sandbox.none import NoneBackend
from harness.store import ResultsError, RunStore, write_json


class Params(BaseModel):
    seed: int = 0


class Counting(AgentTaskTemplate):
    name = "counting"
    params_model = Params
    result_columns = {"seed": ("int", "seed"), "score": ("float", "the score")}

    def materialize(self, params, episode, workspace, key_dir):
        return Materialized(prompt="count")

    def score(self, params, episode, workspace, key_dir, run_submission):
        return EpisodeScore(metrics={"score": 1.0})



class Steps(MetricExtractor):
    name = "steps"
    columns = {"steps": ("int", "agent steps")}

    def extract(self, artifacts):
        return {"steps": None}


def plan_for(template, store, extractors=()):
    return EpisodePlan("ep-0", "t", template, Params(), "0", AgentProfile(name="idle", agent="idle"), IdleAgent(),
                       NoneBackend(), RunSettings(sandbox="none"), store.run_id, list(extractors))


def test_a_template_column_named_status_is_refused_naming_both_owners(tmp_path):
    class Shadowing(Counting):
        name = "shadowing"
        result_columns = {**Counting.result_columns, "status": ("str", "my own status")}

    store = RunStore.create(tmp_path / "run")
    with pytest.raises(ColumnCollision, match="'status' is declared by both the harness and template 'shadowing'"):
        run_episode(plan_for(Shadowing(), store), store.episode("ep-0"), lambda: None)

    class Undeclared(Counting):  # a score metric named like a core column, not declared: refused too
        name = "undeclared"

        def score(self, *args):
            return EpisodeScore(metrics={"score": 1.0, "status": "great"})

    with pytest.raises(ColumnCollision, match="template 'undeclared' gives results column 'status', which the "
                                              "harness declares"):
        run_episode(plan_for(Undeclared(), store), store.episode("ep-1"), lambda: None)


def test_an_extractor_column_named_like_another_owners_is_refused():
    class Clash(MetricExtractor):
        name = "clash"
        columns = {"score": ("float", "mine")}

        def extract(self, artifacts):
            return {}

    from harness.columns import row_parts

    with pytest.raises(ColumnCollision, match="'score' is declared by both template 'counting' and metric "
                                              "extractor 'clash'"):
        assemble(row_parts(Counting(), [Clash()]))


def test_the_proxy_usage_replaces_an_extractors_estimate():
    estimate = Part("metric extractor 'usage'", {"prompt_tokens": USAGE["prompt_tokens"]})
    proxy = Part("the model proxy", USAGE, measured=True)
    builder = RowBuilder([Part("the harness", CORE), estimate, proxy])
    builder.add(estimate, {"prompt_tokens": 10}).add(proxy, {"prompt_tokens": 12})
    assert builder.row == {"prompt_tokens": 12}
    assert assemble([estimate, proxy])["prompt_tokens"] == USAGE["prompt_tokens"]


def test_row_json_is_written_once_with_its_retry_count(tmp_path, monkeypatch):
    store = RunStore.create(tmp_path / "run")
    written = []
    monkeypatch.setattr(episode_module, "write_json",
                        lambda path, data: (written.append(path.name), write_json(path, data)))
    row = run_episode(plan_for(Counting(), store, [Steps()]), store.episode("ep-0"), lambda: None, attempt=2)
    assert written.count("row.json") == 1
    assert json.loads(store.episode("ep-0").row.read_text()) == row
    assert list(row)[:6] == ["run_id", "episode", "episode_id", "task", "template", "seed"]
    assert row["infra_retries"] == 2 and row["score"] == 1.0 and row["steps"] is None and row["status"] == "ok"
    assert list(row)[-1] == "infra_retries"


def test_an_in_harness_template_failure_fills_its_status(tmp_path):
    class Raising(Counting):
        name = "raising"
        agent_episode_columns = False
        result_columns = {"status": ("str", "ok | failed")}

        def run_in_harness(self, params, episode, folder, profile):
            raise RuntimeError("bug")

    store = RunStore.create(tmp_path / "run")
    plan = plan_for(Raising(), store)
    plan.in_harness = True
    row = run_harness_episode(plan, store.episode("ep-0"))
    assert row["status"] == "failed" and row["error_kind"] == "scoring_failed" and row["infra_retries"] == 0


def test_an_all_null_column_keeps_its_declared_type(tmp_path):
    store = RunStore.create(tmp_path / "run")
    for i in range(2):  # no trajectory: the trajectory metrics are all null; the exit code of a killed agent too
        paths = store.episode(f"e{i}").create()
        write_json(paths.row, {"run_id": store.run_id, "episode": f"e{i}", "template": "tracebench",
                               "status": "ok", "exit_code": None, "python_calls": None, "accuracy": None,
                               "context": None, "usage_source": None})
    path = store.write_results()
    schema = pq.read_schema(path)
    assert schema.field("exit_code").type == pa.int64() and schema.field("python_calls").type == pa.int64()
    assert schema.field("accuracy").type == pa.float64() and schema.field("context").type == pa.bool_()
    assert schema.field("usage_source").type == pa.string()
    assert schema.field("accuracy").metadata == {b"meaning": b"top-1 accuracy on the episode batch"}


def test_a_column_two_templates_type_differently_is_text(tmp_path):
    frame = pd.DataFrame({"template": ["tracebench", "drcik"], "context": [True, "background"],
                          "seed": [1, None], "mystery": [None, None]})
    schema = frame_schema(frame)
    assert schema.field("context").type == pa.string() and schema.field("seed").type == pa.int64()
    assert schema.field("mystery").type == pa.null()


def test_rows_that_do_not_fit_their_declarations_are_refused_naming_the_file(tmp_path):
    store = RunStore.create(tmp_path / "run")
    paths = store.episode("e0").create()
    write_json(paths.row, {"run_id": store.run_id, "episode": "e0", "template": "tracebench", "accuracy": "high"})
    with pytest.raises(ResultsError, match=r"results.parquet: .*column 'accuracy'.*expected float"):
        store.write_results()
    assert paths.row.exists() and not (store.root / "results.parquet").exists()


def test_a_template_with_both_modes_leaves_the_harness_its_columns_in_agent_episodes():
    from harness.columns import row_parts

    class Both(Counting):
        name = "both"
        agent_episode_columns = False  # its in-harness rows declare status and profile, filled by itself
        result_columns = {**Counting.result_columns, "status": ("str", "ok | failed"), "profile": ("str", "p")}

    harness_part, own = row_parts(Both(), [], in_harness=True)
    assert "status" in own.columns and "status" not in harness_part.columns
    harness_part, own, proxy = row_parts(Both(), [], in_harness=False)
    assert "status" not in own.columns and "profile" not in own.columns and "score" in own.columns
    assert assemble([harness_part, own, proxy])["status"] == CORE["status"]
