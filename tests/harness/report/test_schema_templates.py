"""The results schema is template-aware and documents every column a run writes.

TraceBench rows and Dr-CiK rows (both ``harness run``) share the row-key
columns and then differ; ``context`` is a bool in one and a condition name in
the other.  Completeness is checked two ways: against a real Dr-CiK
forecasting run (statistical forecasters and the scripted Direct
Prompt, which adds token columns, profile and model), and against every
source of TraceBench columns (template parameters, score metrics, proxy usage,
metric extractors).  Real TraceBench run directories (euclidean-1nn and Claude
Code) are checked in tests/e2e/test_report_scripted_runs.py.
"""

from __future__ import annotations


import pandas as pd
import pytest
from tests.support.report_runs import make_main_run

from harness.proxy.accounting import EpisodeUsage
from harness.report import schema
from harness.report.schema import SCHEMAS, check_frame, describe
from tsagent_plugins.metrics import all_extractors
from tsagent_plugins.tasks.drcik.forecast.experiment import info_columns
from harness.config import RunSettings
from harness.experiment import Unit
from harness.run import execute, load_task
from harness.store import RunStore
from tsagent_plugins.tasks.tracebench.template import TracebenchParams
from tests.support.paths import REPO

TRACEBENCH_SCHEMA = SCHEMAS["tracebench"]
DRCIK_SCHEMA = SCHEMAS["drcik"]


@pytest.fixture(scope="module")
def drcik_run(tmp_path_factory) -> pd.DataFrame:
    """A real Dr-CiK run: llm-dp (scripted model) and naive, three conditions, the bundled sample."""
    task = load_task(REPO / "tasks" / "drcik" / "sample-llm-dp-scripted.yaml", {"samples": 5})
    store = RunStore.create(tmp_path_factory.mktemp("drcik") / "run")
    execute([Unit(task, None, None)], store, RunSettings())
    return pd.read_parquet(store.root / "results.parquet")


@pytest.fixture(scope="module")
def tracebench_rows(tmp_path_factory) -> pd.DataFrame:
    return pd.read_parquet(make_main_run(tmp_path_factory.mktemp("tb")) / "results.parquet")


def test_a_real_forecast_run_is_fully_documented(drcik_run):
    assert set(drcik_run["template"]) == {"drcik"}
    assert set(drcik_run["context"]) == {"no-context", "background", "supporting-evidence"}
    assert set(drcik_run["forecaster"]) == {"llm-dp", "naive"}
    assert {"prompt_tokens", "n_requests", "invalid_samples", "profile", "model"} <= set(drcik_run.columns)
    assert set(drcik_run.columns) <= set(DRCIK_SCHEMA) | {"flag_untrained"}
    assert check_frame(drcik_run, strict=True) == []
    # without a template, rows are checked against the agent-episode columns, which the forecast rows fit
    assert check_frame(drcik_run.drop(columns="template")) == []
    # read as TraceBench rows, the condition names are not the bool TraceBench documents
    assert "column 'context': expected bool, got str" in check_frame(drcik_run, template="tracebench")


def test_every_forecast_info_column_is_documented():
    usage = {k: 1 for k in ("prompt_tokens", "cached_tokens", "completion_tokens", "reasoning_tokens",
                            "total_tokens", "cost_usd", "n_requests")}
    columns = info_columns({"flag_untrained": True, "weights": "amazon/chronos-bolt-small", "usage": usage,
                            "invalid": 2})
    assert set(columns) - {"flag_untrained"} <= set(DRCIK_SCHEMA)


def test_every_tracebench_column_source_is_documented():
    params = set(TracebenchParams.model_fields)
    scores = {"accuracy", "shortlist", "n_test", "n_invalid", "heldout_accuracy", "heldout_shortlist", "heldout_n",
              "heldout_n_invalid"}
    usage = set(EpisodeUsage("e").to_dict()) - {"episode_id", "errors"} | {"proxy_errors"}
    metrics = {c for e in all_extractors() for c in e.columns}
    core = {"run_id", "episode", "task", "template", "profile", "agent", "model", "sandbox", "status", "error_kind",
            "error", "exit_code", "agent_seconds", "episode_seconds", "infra_retries"}
    missing = (params | scores | usage | metrics | core) - set(TRACEBENCH_SCHEMA)
    assert missing == set()
    assert "pool_per_class" in params  # a parameter the schema used to leave out


def test_mixed_templates_are_checked_per_template(tracebench_rows, drcik_run):
    mixed = pd.concat([tracebench_rows, drcik_run], ignore_index=True)
    assert mixed["context"].dtype == object  # bools and condition names in one column
    assert check_frame(mixed, strict=True) == []
    broken = mixed.copy()
    broken["scrps"] = broken["scrps"].astype(object)
    broken.loc[broken["template"] == "drcik", "scrps"] = "low"
    broken.loc[broken["template"] == "tracebench", "context"] = "yes"
    assert check_frame(broken) == ["column 'context' (tracebench rows): expected bool, got object",
                                   "column 'scrps' (drcik rows): expected float, got object"]


def test_null_template_rows_are_checked_against_the_agent_episode_columns(tracebench_rows):
    rows = tracebench_rows.head(3).copy()
    rows["template"] = None
    assert check_frame(rows, strict=True) == []
    rows["context"] = "no-context"  # a template's column: not checked without the template
    assert check_frame(rows) == []
    rows["agent_seconds"] = "slow"
    assert check_frame(rows) == ["column 'agent_seconds' (rows without a template): expected float, got str"]
    assert "column 'context': expected bool, got str" in check_frame(rows, template="tracebench")


def test_strict_names_undocumented_columns_and_templates(drcik_run):
    rows = drcik_run.head(2).assign(mystery=[1, 2], flag_untrained=[False, True], unused=[None, None])
    assert check_frame(rows) == []  # other columns are allowed by default
    assert check_frame(rows, strict=True) == ["column 'mystery' (drcik rows): not documented for template 'drcik'"]
    other = rows.assign(template="my-template")
    assert check_frame(other, strict=True) == [
        ("template 'my-template': 2 row(s) of a template whose columns are not documented "
         "(documented: drcik, drcik-audit, tracebench)")]
    assert check_frame(other.assign(run_id=[1, 2])) == ["column 'run_id' (my-template rows): expected str, got int64"]


def test_int_columns_of_concatenated_runs_conform():
    # a run whose episodes have no trajectory writes all-null metric columns (object); with another run's
    # integers the concatenated column is object holding ints and None
    frame = pd.concat([pd.DataFrame({"python_calls": [3, 4]}), pd.DataFrame({"python_calls": [None, None]})],
                      ignore_index=True)
    assert frame["python_calls"].dtype == object
    assert check_frame(frame) == []
    assert check_frame(pd.DataFrame({"python_calls": [3, 1.5, None]}, dtype=object)) == [
        "column 'python_calls': expected int, got object"]
    assert check_frame(pd.DataFrame({"cost_usd": [0.5, True]}, dtype=object)) == [
        "column 'cost_usd': expected float, got object"]


def test_describe_per_template():
    tracebench = {r["name"]: r for r in describe("tracebench")}
    assert set(tracebench) == set(TRACEBENCH_SCHEMA) and set(schema.COLUMNS) < set(TRACEBENCH_SCHEMA)
    drcik = {r["name"]: r for r in describe("drcik")}
    assert set(drcik) == set(DRCIK_SCHEMA)
    assert drcik["context"]["dtype"] == "str" and tracebench["context"]["dtype"] == "bool"
    everything = describe()
    audit = {r["name"]: r for r in describe("drcik-audit")}  # the Dr-CiK agent audit's episodes
    assert set(audit) == set(SCHEMAS["drcik-audit"]) and {"plan_written", "export_unchanged"} <= set(audit)
    assert {r["template"] for r in everything} == set(SCHEMAS) == {"tracebench", "drcik", "drcik-audit"}
    assert len(everything) == len(TRACEBENCH_SCHEMA) + len(DRCIK_SCHEMA) + len(SCHEMAS["drcik-audit"])
    with pytest.raises(KeyError, match="no documented schema for template 'nope'"):
        describe("nope")
