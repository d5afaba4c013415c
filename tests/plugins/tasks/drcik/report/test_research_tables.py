"""Judging a research run (lexical judge) and the DR report: Table 3, Figures 7 and 16, Figure 4 statistics,
Table 2 with DR columns."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tests.support.drcik_research_runs import GHOST, write_episode
from harness.cli.report import report as report_cmd
from tsagent_plugins.judges.lexical import LexicalJudge
from tsagent_plugins.tasks.drcik.report import research_tables
from tsagent_plugins.tasks.drcik.cli import dr_score
from tsagent_plugins.tasks.drcik.research.scoring import read_scores, score_run, write_scores
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks
from tests.support.paths import REPO


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
    # Table 3's reading: 1 of the 3 cited documents is a distractor; the other: 1 of task_42's 25 distractors cited
    assert a42["distractor_avoidance"] == a42["cited_not_distractor"] == pytest.approx(1 - 1 / 3)
    assert a42["n_distractors"] == 25 and a42["distractors_uncited"] == pytest.approx(1 - 1 / 25)
    assert (a42["in_task_timeseries"], a42["universe_timeseries"], a42["hallucinated"]) == (1, 5, 1)
    assert a42["judge"] == "lexical" and a42["judge_version"] == "lexical-v1" and a42["judge_kind"] == "lexical"
    assert [v["item"] for v in a42["verdicts"]] == ["E2", "E3", "E4", "E5"]
    a201 = rows[("alpha", "task_201")]
    assert (a201["matched"], a201["cross_task"], a201["distractor_avoidance"]) == (1, 1, 0.5)
    assert a201["distractors_uncited"] == 1.0                  # the cross-task document is no distractor of task_201
    a163 = rows[("alpha", "task_163")]
    assert a163["distractor_avoidance"] is None and a163["distractors_uncited"] == 1.0   # cites nothing
    assert a163["matched"] == 0 and a163["n_evidence"] == 2
    b42 = rows[("beta", "task_42")]
    assert b42["matched"] == 0 and b42["judged"] == 9          # the restated item is the 10th claim


def test_table3_figures_and_report(run, tmp_path):
    rows = score_run(run, LexicalJudge())
    write_scores(run, rows)
    write_scores(run, rows)                                     # re-scoring replaces that judge's rows
    assert len(read_scores(run)) == 4
    t3 = research_tables.table3([r for r in rows])
    alpha = next(d for d in t3.data if d["agent"] == "alpha")
    assert alpha["evidence_recall_pooled"] == pytest.approx(2 / (4 + 4 + 2))
    assert alpha["evidence_recall_mean"] == pytest.approx((1 / 4 + 1 / 4 + 0) / 3)
    assert alpha["hallucinated"] == 1 and alpha["avoidance_tasks"] == 2 and alpha["uncited_tasks"] == 3
    assert "lexical@lexical-v1 (lexical)" in t3.title
    assert any("R_e" in n for n in t3.notes) and any("offline stand-in" in n for n in t3.notes)
    f16 = {d["agent"]: d for d in research_tables.figure16_table(rows).data}
    assert f16["alpha"]["in_task_timeseries"] == 1 and f16["alpha"]["cross_task"] == 1
    assert f16["alpha"]["share_timeseries"] == pytest.approx(1 / 15)   # 1 of 3 tasks × 5 timeseries distractors
    assert f16["beta"]["share_timeseries"] == 0.0
    f7 = research_tables.figure7_table(rows)
    assert {(d["agent"], d["reasoning_hops"]): d["evidence_recall"] for d in f7.data} == \
        {("alpha", 4): pytest.approx(0.2), ("beta", 4): 0.0}
    assert set(research_tables.dr_figures(rows)) == {"drcik-figure16", "drcik-figure6", "drcik-figure7-lexical"}
    result = CliRunner().invoke(report_cmd, [str(run), "--format", "markdown", "--out", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    pngs = sorted((tmp_path / "rep" / "figures").glob("drcik-*.png"))
    assert [p.name for p in pngs] == ["drcik-figure16.png", "drcik-figure6.png", "drcik-figure7-lexical.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
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
                             "scrps": base, "smae": base, "evidence_agent": None})
                raw = base - 0.1 * t / n_tasks
                rows.append({"forecaster": f, "context": "dr-evidence", "benchmark_id": f"t{t}", "status": "ok",
                             "scrps": raw, "smae": raw + 0.2, "evidence_agent": a})
                rows.append({"forecaster": f, "context": "verified-dr", "benchmark_id": f"t{t}", "status": "ok",
                             "scrps": raw, "smae": raw + 0.1 - 0.01 * t, "evidence_agent": a,
                             "context_status": "verified_empty" if t == 0 else "ok"})
    return pd.DataFrame(rows).drop_duplicates(["forecaster", "context", "benchmark_id", "evidence_agent"])


def test_figure4_statistics_against_scipy():
    from scipy import stats

    rng = np.random.default_rng(0)
    rows = forecast_rows(6, rng)
    dr_rows = [{"agent": a, "benchmark_id": f"t{t}", "evidence_recall": t / 6, "judge_label": "lexical@v"}
               for a in ("alpha", "beta") for t in range(6)]
    table = research_tables.figure4_stats(rows, dr_rows)
    wil = table.data[0]
    raw = rows[rows["context"] == "dr-evidence"].sort_values(["forecaster", "evidence_agent", "benchmark_id"])["smae"]
    ver = rows[rows["context"] == "verified-dr"].sort_values(["forecaster", "evidence_agent", "benchmark_id"])["smae"]
    expected = stats.wilcoxon(raw.to_numpy(), ver.to_numpy(), alternative="greater")
    assert wil["n"] == 24 and wil["p"] == pytest.approx(expected.pvalue)
    sp = {d["forecaster"]: d for d in table.data[1:]}
    assert sp["llm-dp"]["n"] == 12 and sp["llm-dp"]["rho"] == pytest.approx(1.0)   # gain grows with t, as recall
    small = research_tables.figure4_stats(forecast_rows(2, rng), dr_rows)
    assert small.rows[0][-1] == "n < 10" and all(r[-1] == "n < 10" for r in small.rows[1:])


def test_table2_with_dr_columns_marks_the_best_and_counts_verified_empty():
    rows = forecast_rows(3, np.random.default_rng(1))
    table = research_tables.table2_dr(rows)
    assert table.header == ["Forecaster", "DR condition", "no-context", "alpha", "beta", "Fail (per column)"]
    assert [r[:2] for r in table.rows] == [["llm-dp", "dr-evidence"], ["llm-dp", "verified-dr"],
                                           ["naive", "dr-evidence"], ["naive", "verified-dr"]]
    cells = {(d["forecaster"], d["context"], d["agent"]): d for d in table.data}
    base = rows[(rows["forecaster"] == "naive") & (rows["context"] == "no-context")]["scrps"]
    assert cells[("naive", "no-context", None)]["scrps_mean"] == pytest.approx(base.mean())
    assert table.rows[2][2] == table.rows[3][2]                     # the no-context cell repeats per row
    # every DR cell of a forecaster ties (alpha and beta, raw and verified, give one value): no bold; the
    # four tied llm-dp DR cells are the best overall: underlined
    assert not any(d["best_dr"] for d in table.data)
    best = [d for d in table.data if d["best_overall"]]
    assert {(d["forecaster"], d["agent"]) for d in best} == {("llm-dp", "alpha"), ("llm-dp", "beta")} and len(best) == 4
    assert sorted(table.styles) == [(0, 3), (0, 4), (1, 3), (1, 4)] and all(v == {"underline"}
                                                                            for v in table.styles.values())
    assert any("verified_empty: 2 (task, DR agent) pair(s)" in n for n in table.notes)


def _table2_example(no_context, supporting, a, b):
    rows = []
    for t, (nc, se, sa, sb) in enumerate(zip(no_context, supporting, a, b)):
        common = {"forecaster": "llm-dp", "benchmark_id": f"t{t}", "status": "ok"}
        rows += [{**common, "context": "no-context", "scrps": nc}, {**common, "context": "supporting-evidence",
                                                                     "scrps": se},
                 {**common, "context": "dr-evidence", "scrps": sa, "evidence_agent": "A"},
                 {**common, "context": "dr-evidence", "scrps": sb, "evidence_agent": "B"}]
    return research_tables.table2_dr(pd.DataFrame(rows))


def test_table2_marks_bold_best_dr_cell_per_forecaster_and_underlines_the_best_overall(tmp_path):
    """The issue's example: supporting evidence 0.25, agent A 0.45, agent B 0.50 (means over two tasks).
    Bold goes to A (best over the DR contexts), the underline to supporting evidence (best overall)."""
    from harness.report.render import to_html, to_latex, to_markdown

    table = _table2_example([0.7, 0.9], [0.2, 0.3], [0.4, 0.5], [0.45, 0.55])
    assert table.header == ["Forecaster", "DR condition", "no-context", "supporting-evidence", "A", "B",
                            "Fail (per column)"]
    assert table.rows[0][2:] == ["0.800 ± 0.100", "0.250 ± 0.050", "0.450 ± 0.050", "0.500 ± 0.050",
                                 "0 | 0 | 0 | 0"]
    assert table.styles == {(0, 4): {"bold"}, (0, 3): {"underline"}}
    md = to_markdown([table])
    assert "| **0.450 ± 0.050** |" in md and "| <ins>0.250 ± 0.050</ins> |" in md
    tex = to_latex(table)
    assert r"\textbf{0.450 $\pm$ 0.050}" in tex and r"\underline{0.250 $\pm$ 0.050}" in tex
    page = to_html([table])
    assert "<td><b>0.450 ± 0.050</b></td>" in page and "<td><u>0.250 ± 0.050</u></td>" in page


def test_table2_with_dr_columns_counts_failed_forecasts_per_column():
    """DR agent B's research failed on t1 (no DR evidence: the forecast failed) and llm-dp failed once without
    context: each failure is counted in its column, and the means are over the scored tasks only."""
    rows = []
    for t, (nc, a, b) in enumerate([(0.7, 0.4, 0.5), (None, 0.6, None)]):
        common = {"forecaster": "llm-dp", "benchmark_id": f"t{t}"}
        rows += [{**common, "context": "no-context", "scrps": nc, "status": "ok" if nc else "failed"},
                 {**common, "context": "dr-evidence", "scrps": a, "evidence_agent": "A", "status": "ok"},
                 {**common, "context": "dr-evidence", "scrps": b, "evidence_agent": "B",
                  "status": "ok" if b else "failed"}]
    table = research_tables.table2_dr(pd.DataFrame(rows))
    assert table.rows == [["llm-dp", "dr-evidence", "0.700 ± –ᵃ", "0.500 ± 0.100", "0.500 ± –ᵃ", "1 | 0 | 1"]]
    assert table.notes[0] == "–ᵃ a single task: no standard error"
    assert {(d["context"], d["agent"]): d["n"] for d in table.data} == {("no-context", None): 1,
                                                                       ("dr-evidence", "A"): 2, ("dr-evidence", "B"): 1}
    assert any(n.startswith("Fail: tasks without a valid forecast") for n in table.notes)


def test_table2_marks_nothing_when_all_cells_tie():
    table = _table2_example([0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [0.5, 0.5])
    assert table.styles == {} and not any(d["best_dr"] or d["best_overall"] for d in table.data)


def test_report_section_from_research_and_forecast_rows(tmp_path, tasks):
    """Two DR agents in one research run -> forecasting episodes reading each agent's output
    (`harness run --set evidence.run=RUN --set evidence.agent=AGENT`) -> the drcik report section."""
    from harness.cli import cli
    from harness.report import build_report

    all_tasks = list(tasks.values())
    run = tmp_path / "research"
    for agent in ("alpha", "beta"):
        for task in all_tasks:
            sup = task.supporting_ids
            items = [(task.evidence[1].text, [sup[0]])] if agent == "alpha" else [("off topic", [task.distractor_ids[0]])]
            write_episode(run, agent, all_tasks, task.benchmark_id, items, report=f"# {agent} report\n")
    write_scores(run, score_run(run, LexicalJudge()))
    spec = tmp_path / "forecast.yaml"
    spec.write_text("name: f\ntemplate: drcik\nparams: {tasks: sample, forecasters: [naive], samples: 4, "
                    "contexts: [no-context, dr-evidence, verified-dr]}\n")
    for agent in ("alpha", "beta"):
        result = CliRunner().invoke(cli, ["run", "--task", str(spec), "--set", f"evidence.run={run}",
                                          "--set", f"evidence.agent={agent}", "--out", str(tmp_path / agent)])
        assert result.exit_code == 0, result.output
        frame = pd.read_parquet(tmp_path / agent / "results.parquet")
        dr = frame[frame["context"] != "no-context"]
        assert set(dr["evidence_agent"]) == {agent} and set(dr["evidence_run"]) == {str(run)}
    report = build_report([run, tmp_path / "alpha", tmp_path / "beta"], with_figures=True)
    tables = {t.key: t for t in report.tables}
    t2 = tables["drcik-table2-dr"]
    assert t2.header == ["Forecaster", "DR condition", "no-context", "alpha", "beta", "Fail (per column)"]
    # beta cites only distractors: verified-dr is empty on every task, and the report says so
    note = next(n for n in t2.notes if n.startswith("verified_empty"))
    assert "3 (task, DR agent) pair(s)" in note and "(beta)" in note and "(alpha)" not in note
    assert "drcik-table13" in tables and "drcik-table3-lexical" in tables
    t3 = {r[0]: r for r in tables["drcik-table3-lexical"].rows}
    assert t3["alpha"][3] == "30.0%"    # alpha restates E2 on each task: 3 of |E_t| = 4 + 4 + 2 items
    assert t3["beta"][3] == "0.0%"
    fig4 = tables["drcik-figure4-lexical"]
    assert fig4.rows[0][2] == "6" and fig4.rows[0][-1] == "n < 10"     # naive × 2 agents × 3 tasks
    assert set(report.figures) == {"drcik-figure16", "drcik-figure6", "drcik-figure7-lexical", "drcik-figure4-lexical",
                                   "drcik-figure5", "drcik-figure8"}


def test_shipped_dr_forecast_spec_needs_the_research_run(tmp_path):

    from harness.cli import cli
    from harness.run import load_task

    spec_file = REPO / "tasks" / "drcik" / "sample-dr-forecast.yaml"
    task = load_task(spec_file, {})
    assert list(task.params.contexts) == ["no-context", "supporting-evidence", "dr-evidence", "dr-report",
                                          "verified-dr"]
    result = CliRunner().invoke(cli, ["run", "--task", str(spec_file), "--out", str(tmp_path / "x")])
    assert result.exit_code != 0 and "dr_evidence" in str(result.exception or result.output)


def test_figure7_coinciding_points_stay_visible(run):
    """Agents at the same (hops, recall) are shifted apart with distinct markers; the others stay put."""
    from harness.reporting import figure_problems

    rows = score_run(run, LexicalJudge())
    beta = [r for r in rows if r["agent"] == "beta"]
    rows += [{**r, "agent": name} for name in ("gamma", "delta") for r in beta]  # three agents at (4 hops, 0 %)
    fig = research_tables.figure7(rows)
    drawn = {line.get_label(): (tuple(line.get_xdata()), tuple(line.get_ydata()), line.get_marker())
             for line in fig.axes[0].get_lines()}
    assert list(drawn) == ["alpha", "beta", "gamma", "delta"]
    assert drawn["alpha"][:2] == ((4.0,), (pytest.approx(20.0),))  # 2 of 10 items; coincides with no one
    assert [drawn[a][1] for a in ("beta", "gamma", "delta")] == [(0.0,)] * 3
    # hops axis 3.5 to 4.5 (span 1): one step of FIGURE7_STEP per agent already at that point
    assert [drawn[a][0][0] for a in ("beta", "gamma", "delta")] == pytest.approx([4.0, 4.03, 4.06])
    assert research_tables.FIGURE7_STEP == 0.03
    assert len({drawn[a][2] for a in drawn}) == 4
    assert fig.legends and not fig.axes[0].get_legend()  # one legend, outside the axes
    assert figure_problems(fig) == []


def test_failed_research_episodes_are_counted_apart_and_left_out_of_means(run, tmp_path):
    """A crashed episode of alpha (task_163) and an agent whose every episode crashed: Table 3 counts them in
    Failed, and alpha's means are those of its two finished tasks, not of three with a zero."""
    import json

    folder = next(p.parent for p in sorted(run.glob("episodes/*/row.json"))
                  if json.loads(p.read_text()).get("profile") == "alpha"
                  and json.loads((p.parent / "key" / "research_key.json").read_text())["benchmark_id"] == "task_163")
    row = json.loads((folder / "row.json").read_text())
    (folder / "row.json").write_text(json.dumps({**row, "status": "failed",
                                                 "error": "agent_crashed: No module named 'langgraph'"}))
    rows = score_run(run, LexicalJudge())
    assert [(r["agent"], r["benchmark_id"]) for r in rows if r.get("status") == "failed"] == [("alpha", "task_163")]
    t3 = research_tables.table3(rows)
    alpha = next(d for d in t3.data if d["agent"] == "alpha")
    assert (alpha["tasks"], alpha["failed"]) == (2, 1)
    assert alpha["evidence_recall_mean"] == pytest.approx((1 / 4 + 1 / 4) / 2)
    assert alpha["evidence_recall_pooled"] == pytest.approx(2 / (4 + 4))
    assert t3.header[2] == "Failed" and t3.rows[0][2] == "1"
    assert any("No module named 'langgraph' (1x)" in n and "left out of every mean" in n for n in t3.notes)


def test_tables_13_14_and_11_and_every_dr_figure_readable(run):
    """Two origins (task_42 expert-curated, the rest synthetic), two judges: Table 14 per origin with values,
    Table 13 named by its number, Table 11 with each judge's agreement, and figure_problems() empty for every
    Dr-CiK figure."""
    from harness.reporting import figure_problems
    from tsagent_plugins.tasks.drcik.report import figures as figs

    rows = score_run(run, LexicalJudge())
    for r in rows:
        r["origin"] = "expert" if r["benchmark_id"] == "task_42" else "synthetic"
    t14 = research_tables.table3_by_origin(rows)
    assert t14.key == "drcik-table14-lexical" and t14.title.startswith("Dr-CiK Table 14.")
    cells = {(d["agent"], d["origin"]): d for d in t14.data}
    assert cells[("alpha", "expert")]["evidence_recall_pooled"] == pytest.approx(1 / 4)
    assert cells[("alpha", "synthetic")]["evidence_recall_pooled"] == pytest.approx(1 / (4 + 2))
    assert cells[("beta", "expert")]["evidence_recall_pooled"] == 0.0 and ("beta", "synthetic") not in cells
    # a second judge that flips every verdict of beta: agreement 100% on alpha's items, 0% on beta's
    other = [{**r, "judge": "other", "judge_label": "other@v1 (rule)",
              "verdicts": [{**v, "matched": (not v["matched"]) if r["agent"] == "beta" else v["matched"]}
                           for v in r["verdicts"]],
              "matched": r["matched"] if r["agent"] == "alpha" else r["n_evidence"] - r["matched"]} for r in rows]
    for r in other:
        r["evidence_recall"] = r["matched"] / r["n_evidence"]
    t11 = figs.table11(rows + other)
    assert t11.key == "drcik-table11"
    data = {d["judge"]: d for d in t11.data}
    assert data["lexical@lexical-v1 (lexical)"]["agreement"] == 1.0
    assert data["other@v1 (rule)"]["items"] == 4 + 4 + 2 + 4
    assert data["other@v1 (rule)"]["agreement"] == pytest.approx((4 + 4 + 2) / 14)
    assert data["other@v1 (rule)"]["ranking"] == ["beta", "alpha"] and not data["other@v1 (rule)"]["ranking_identical"]
    assert figs.table11(rows) is None
    assert "Table 11 (multi-judge sensitivity)" not in [r[0] for r in figs.not_shown(rows + other, None).rows]
    figures = research_tables.dr_figures(rows)
    assert set(figures) == {"drcik-figure16", "drcik-figure6", "drcik-figure7-lexical"}
    for key, fig in figures.items():
        assert figure_problems(fig) == [], key
    forecasts = forecast_rows(12, np.random.default_rng(2)).assign(context_used=True)
    dr_rows = [{"agent": a, "benchmark_id": f"t{t}", "evidence_recall": t / 12, "judge_label": "lexical@v"}
               for a in ("alpha", "beta") for t in range(12)]
    stats = research_tables.figure4_stats(forecasts, dr_rows)
    more = {"drcik-figure4": figs.figure4(forecasts, dr_rows, stats), "drcik-figure5":
            figs.figure5(forecasts, dr_rows), "drcik-figure8": figs.figure8(forecasts, dr_rows)}
    for key, fig in more.items():
        assert figure_problems(fig) == [], key
    points = figs.figure4_points(forecasts, dr_rows)
    assert len(points) == 2 * 2 * 12 and {p["forecaster"] for p in points} == {"llm-dp", "naive"}
    colours = figs.agent_colours(["beta", "alpha", "beta"])
    assert colours["alpha"] != colours["beta"] and figs.agent_colours(["alpha"])["alpha"] == colours["alpha"]
