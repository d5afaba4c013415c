"""Judging a research run (lexical judge) and the DR report: Table 3, Figures 7 and 16, Figure 4 statistics,
Table 2 with DR columns."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from _drcik_research_runs import GHOST, write_episode
from harness.cli.report import report as report_cmd
from plugins.judges.lexical import LexicalJudge
from plugins.tasks.drcik import dr_report
from plugins.tasks.drcik.dr_cli import dr_score
from plugins.tasks.drcik.dr_scoring import read_scores, score_run, write_scores
from plugins.tasks.drcik.loader import load_tasks


@pytest.fixture(scope="module")
def tasks():
    return {t.benchmark_id: t for t in load_tasks()}


@pytest.fixture
def run(tmp_path, tasks):
    run = tmp_path / "research"
    all_tasks = list(tasks.values())
    t42, t201, t163 = tasks["task_42"], tasks["task_201"], tasks["task_163"]
    ev = {b: [e.text for e in t.evidence] for b, t in tasks.items()}
    # agent "alpha": restates E1 (excluded) and E2 of task_42, cites 2 supporting + a timeseries distractor
    ts42 = next(d.document_id for d in t42.documents if d.subtype == "timeseries")
    write_episode(run, "alpha", all_tasks, "task_42", [(ev["task_42"][0], [t42.supporting_ids[0]]),
                                                       (ev["task_42"][1], [t42.supporting_ids[1], ts42]),
                                                       ("unrelated", [GHOST])])
    write_episode(run, "alpha", all_tasks, "task_201", [(ev["task_201"][2], [t201.supporting_ids[0]]),
                                                        ("cross", [t163.supporting_ids[0]])])
    write_episode(run, "alpha", all_tasks, "task_163", [("nothing cited", [])])
    # agent "beta": on task_42 the matching claim comes after K_t = 4 + 5 = 9 other claims
    filler = [(f"filler {i}", []) for i in range(9)]
    write_episode(run, "beta", all_tasks, "task_42", filler + [(ev["task_42"][1], [t42.supporting_ids[0]])])
    return run


def test_lexical_rows_values(run):
    rows = {(r["agent"], r["benchmark_id"]): r for r in score_run(run, LexicalJudge())}
    a42 = rows[("alpha", "task_42")]
    assert (a42["n_evidence"], a42["matched"], a42["k_t"], a42["judged"]) == (4, 1, 9, 3)
    assert a42["evidence_recall"] == pytest.approx(1 / 4)
    assert a42["supporting_recall"] == pytest.approx(2 / 13)
    assert a42["distractor_avoidance"] == pytest.approx(1 - 1 / 3)
    assert (a42["in_task_timeseries"], a42["universe_timeseries"], a42["hallucinated"]) == (1, 5, 1)
    assert a42["judge"] == "lexical" and a42["judge_version"] == "lexical-v1" and a42["judge_kind"] == "lexical"
    assert [v["item"] for v in a42["verdicts"]] == ["E2", "E3", "E4", "E5"]
    a201 = rows[("alpha", "task_201")]
    assert (a201["matched"], a201["cross_task"], a201["distractor_avoidance"]) == (1, 1, 0.5)
    a163 = rows[("alpha", "task_163")]
    assert a163["distractor_avoidance"] is None and a163["matched"] == 0 and a163["n_evidence"] == 2
    b42 = rows[("beta", "task_42")]
    assert b42["matched"] == 0 and b42["judged"] == 9          # the restated item is the 10th claim


def test_table3_figures_and_report(run, tmp_path):
    rows = score_run(run, LexicalJudge())
    write_scores(run, rows)
    write_scores(run, rows)                                     # re-scoring replaces that judge's rows
    assert len(read_scores(run)) == 4
    t3 = dr_report.table3([r for r in rows])
    alpha = next(d for d in t3.data if d["agent"] == "alpha")
    assert alpha["evidence_recall_pooled"] == pytest.approx(2 / (4 + 4 + 2))
    assert alpha["evidence_recall_mean"] == pytest.approx((1 / 4 + 1 / 4 + 0) / 3)
    assert alpha["hallucinated"] == 1 and alpha["avoidance_tasks"] == 2
    assert "lexical@lexical-v1 (lexical)" in t3.title
    assert any("R_e" in n for n in t3.notes) and any("offline stand-in" in n for n in t3.notes)
    f16 = {d["agent"]: d for d in dr_report.figure16_table(rows).data}
    assert f16["alpha"]["in_task_timeseries"] == 1 and f16["alpha"]["cross_task"] == 1
    assert f16["alpha"]["share_timeseries"] == pytest.approx(1 / 15)   # 1 of 3 tasks × 5 timeseries distractors
    assert f16["beta"]["share_timeseries"] == 0.0
    f7 = dr_report.figure7_table(rows)
    assert {(d["agent"], d["reasoning_hops"]): d["evidence_recall"] for d in f7.data} == \
        {("alpha", 4): pytest.approx(0.2), ("beta", 4): 0.0}
    paths = dr_report.write_figures(rows, tmp_path / "figs")
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths.values())
    result = CliRunner().invoke(report_cmd, [str(run), "--format", "markdown", "--out", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "rep" / "report.md").read_text() if (tmp_path / "rep" / "report.md").exists() else result.output
    assert "Dr-CiK Table 3" in text and "Figure 16" in text


def test_dr_score_cli_prints_table3(run):
    result = CliRunner().invoke(dr_score, [str(run), "--judge", "lexical"])
    assert result.exit_code == 0, result.output
    assert "Table 3" in result.output and "alpha" in result.output
    assert {r["judge_label"] for r in read_scores(run)} == {"lexical@lexical-v1 (lexical)"}


def forecast_rows(n_tasks, rng):
    rows = []
    for f in ("llm-dp", "naive"):
        for a in ("alpha", "beta"):
            for t in range(n_tasks):
                base = 1.0 + ((t * 7) % 5) / 10 + (f == "naive")
                rows.append({"forecaster": f, "context": "no-context", "benchmark_id": f"t{t}", "status": "ok",
                             "scrps": base, "smae": base, "dr_agent": None})
                raw = base - 0.1 * t / n_tasks
                rows.append({"forecaster": f, "context": "dr-evidence", "benchmark_id": f"t{t}", "status": "ok",
                             "scrps": raw, "smae": raw + 0.2, "dr_agent": a})
                rows.append({"forecaster": f, "context": "verified-dr", "benchmark_id": f"t{t}", "status": "ok",
                             "scrps": raw, "smae": raw + 0.1 - 0.01 * t, "dr_agent": a,
                             "context_status": "verified_empty" if t == 0 else "ok"})
    return pd.DataFrame(rows).drop_duplicates(["forecaster", "context", "benchmark_id", "dr_agent"])


def test_figure4_statistics_against_scipy():
    from scipy import stats

    rng = np.random.default_rng(0)
    rows = forecast_rows(6, rng)
    dr_rows = [{"agent": a, "benchmark_id": f"t{t}", "evidence_recall": t / 6, "judge_label": "lexical@v"}
               for a in ("alpha", "beta") for t in range(6)]
    table = dr_report.figure4_stats(rows, dr_rows)
    wil = table.data[0]
    raw = rows[rows["context"] == "dr-evidence"].sort_values(["forecaster", "dr_agent", "benchmark_id"])["smae"]
    ver = rows[rows["context"] == "verified-dr"].sort_values(["forecaster", "dr_agent", "benchmark_id"])["smae"]
    expected = stats.wilcoxon(raw.to_numpy(), ver.to_numpy(), alternative="greater")
    assert wil["n"] == 24 and wil["p"] == pytest.approx(expected.pvalue)
    sp = {d["forecaster"]: d for d in table.data[1:]}
    assert sp["llm-dp"]["n"] == 12 and sp["llm-dp"]["rho"] == pytest.approx(1.0)   # gain grows with t, as recall
    small = dr_report.figure4_stats(forecast_rows(2, rng), dr_rows)
    assert small.rows[0][-1] == "n < 10" and all(r[-1] == "n < 10" for r in small.rows[1:])


def test_table2_with_dr_columns_marks_the_best_and_counts_verified_empty():
    rows = forecast_rows(3, np.random.default_rng(1))
    table = dr_report.table2_dr(rows)
    assert table.header == ["Forecaster", "no-context", "dr-evidence (alpha)", "verified-dr (alpha)",
                            "dr-evidence (beta)", "verified-dr (beta)"]
    best = [d for d in table.data if d["best"]]
    assert {d["forecaster"] for d in best} == {"llm-dp", "naive"}
    assert all(d["column"].startswith(("dr-evidence", "verified-dr")) for d in best)
    assert sum(cell.endswith("*") for row in table.rows for cell in row[1:]) == len(best)
    assert any("verified_empty: 2 task(s)" in n for n in table.notes)


def test_end_to_end_research_runs_to_forecasts_to_report(tmp_path, tasks):
    """Two DR agents' research runs -> `harness forecast --dr-evidence RUN` each -> `harness report`."""
    from plugins.tasks.drcik.cli import forecast
    from plugins.tasks.drcik.report import build_section

    all_tasks = list(tasks.values())
    research = {}
    for agent in ("alpha", "beta"):
        run = tmp_path / f"research-{agent}"
        for task in all_tasks:
            sup = task.supporting_ids
            items = [(task.evidence[1].text, [sup[0]])] if agent == "alpha" else [("off topic", [task.distractor_ids[0]])]
            write_episode(run, agent, all_tasks, task.benchmark_id, items, report=f"# {agent} report\n")
        assert CliRunner().invoke(dr_score, [str(run)]).exit_code == 0
        research[agent] = run
    frames = []
    for agent, run in research.items():
        out = tmp_path / f"forecast-{agent}"
        result = CliRunner().invoke(forecast, ["--tasks", "sample", "--forecaster", "naive", "--context", "no-context",
                                               "--context", "dr-evidence", "--context", "verified-dr",
                                               "--samples", "4", "--dr-evidence", str(run), "--out", str(out)])
        assert result.exit_code == 0, result.output
        frame = pd.read_parquet(out / "results.parquet").assign(run_dir=str(out))
        dr = frame[frame["context"] != "no-context"]
        assert set(dr["dr_agent"]) == {agent} and set(dr["dr_run"]) == {run.name}
        assert dr["episode"].str.endswith("/" + agent).all()
        frames.append(frame)
    rows = pd.concat(frames, ignore_index=True)
    section = build_section(rows)
    t2 = section.tables[0]
    assert t2.header == ["Forecaster", "no-context", "dr-evidence (alpha)", "verified-dr (alpha)",
                         "dr-evidence (beta)", "verified-dr (beta)"]
    # beta cites only distractors: verified-dr is empty on every task, and the report says so
    assert any("verified_empty: 3 task(s)" in n and "(beta)" in n for n in t2.notes)
    keys = [t.key for t in section.tables]
    assert "drcik-table2-origin" in keys and "drcik-figure4-lexical" in keys
    fig4 = next(t for t in section.tables if t.key == "drcik-figure4-lexical")
    assert fig4.rows[0][2] == "6" and fig4.rows[0][-1] == "n < 10"     # naive × 2 agents × 3 tasks


def test_shipped_dr_forecast_spec_needs_the_research_run():
    from pathlib import Path

    from plugins.tasks.drcik.cli import forecast
    from plugins.tasks.drcik.spec import load_spec

    spec_file = Path(__file__).parents[1] / "tasks" / "drcik" / "sample-dr-forecast.yaml"
    spec = load_spec(spec_file)
    assert list(spec.contexts) == ["no-context", "supporting-evidence", "dr-evidence", "dr-report", "verified-dr"]
    result = CliRunner().invoke(forecast, ["--spec", str(spec_file), "--forecaster", "naive"])
    assert result.exit_code != 0 and "dr_evidence" in str(result.exception or result.output)
