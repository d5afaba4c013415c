"""``harness report --paper`` for Dr-CiK: the values and findings the paper's text states, beside each reproduced
table (issue 38.5).  The text copy is not in the repository (scripts/make_drcik_paper_values.py checks every quote
against it when it writes the data file), so the data file is checked here on its own: each value sits in its
quoted sentence, values parse, and the paper's own counts add up."""

from __future__ import annotations

import json
import re
import shutil
from fnmatch import fnmatchcase

import pytest
from click.testing import CliRunner

from harness.cli.report import report as report_cmd
from harness.report import build_report
from harness.reporting import Section, Table
from tests.support.drcik_research_runs import write_episode
from tests.support.paths import REPO
from tests.support.report_runs import check_exports
from tsagent_plugins.judges.lexical import LexicalJudge
from tsagent_plugins.tasks.drcik.dataset.loader import SAMPLE_DIR, load_tasks
from tsagent_plugins.tasks.drcik.report.paper import entry_for, paper_table, paper_values, plain, with_paper
from tsagent_plugins.tasks.drcik.research.scoring import score_run, write_scores

WORDS = {"half": 0.5, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
CAPTIONED = {"Table 2", "Table 5", "Table 6", "Table 7", "Table 8", "Table 9", "Table 10", "Table 11", "Table 13",
             "Table 14", "Table 15", "Table 16", "Table 17"}


def numbers(value: str) -> list[float]:
    """The numbers a stated value holds ("88–92%" -> [88, 92], "908/908" -> [908, 908], "five" -> [5])."""
    found = [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", value)]
    return found or [WORDS[w] for w in re.findall(r"[a-z]+", value) if w in WORDS]


def stated(paper: str) -> dict[tuple[str, str], float]:
    """(row, metric) -> the first number of each value row of the entry ``paper``."""
    entry = next(e for e in paper_values()["entries"] if e["paper"] == paper)
    return {(r["row"], r["metric"]): numbers(plain(r["value"]))[0] for r in entry["rows"] if r["kind"] == "value"}


def report_keys() -> set[str]:
    """Every table and figure key the Dr-CiK plugin writes (a per-judge key with ``lexical`` as its judge)."""
    keys = set()
    for path in (REPO / "plugins" / "tasks" / "drcik").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        keys |= set(re.findall(r'"(drcik-(?:table|figure)[0-9a-z-]*)"', text))
        keys |= {f"{k}-lexical" for k in re.findall(r'f"(drcik-(?:table|figure)[0-9a-z]*)-\{', text)}
    return keys


def test_every_quote_holds_its_value_and_every_value_parses():
    data = paper_values()
    assert "no page numbers" in data["pages"] and "002_e814895bd5b3896f.txt" in data["source"]
    rows = [(e, r) for e in data["entries"] for r in e["rows"]]
    assert len(data["entries"]) == 22 and len(rows) == 98
    for entry, row in rows:
        where = f"{entry['paper']}: {row['row']} / {row['metric']}"
        assert row["kind"] in ("value", "finding"), where
        assert plain(row["value"]) in plain(row["quote"]), where              # the value is in its sentence
        assert row["quote"].endswith(".") and len(row["quote"]) > len(row["value"]), where   # a whole sentence
        assert row["line"] > 0 and re.match(r"^([0-9]+|[A-L])(\.[0-9]+)* [A-Z]", row["section"]), where
        if row["kind"] == "value":
            assert numbers(plain(row["value"])), where                      # every value parses to numbers
    assert {e["paper"] for e in data["entries"] if e["caption"]} == CAPTIONED
    for entry in data["entries"]:
        assert entry["section"] and entry["keys"], entry["paper"]
        if entry["caption"]:
            assert entry["caption"].startswith(f"{entry['paper']}: ") and entry["caption_line"] > 0
        else:
            assert entry["caption_line"] is None and entry["paper"] in ("Table 3",) + tuple(
                f"Figure {n}" for n in (3, 4, 5, 6, 7, 8, 11, 16))


def test_every_key_pattern_names_a_table_or_figure_the_plugin_writes():
    keys = report_keys()
    assert {"drcik-table2", "drcik-table3-lexical", "drcik-figure5", "drcik-table8"} <= keys
    for entry in paper_values()["entries"]:
        for pattern in entry["keys"]:
            assert any(fnmatchcase(k, pattern) for k in keys), pattern
    assert entry_for("drcik-table2-common") is None and entry_for("drcik-table8-repair") is None
    assert entry_for("drcik-table3-llm-judge")["paper"] == "Table 3"
    assert entry_for("drcik-figure4-lexical") is None          # the figure: its statistics table has the entry


def test_the_papers_numbers_as_stated_and_their_arithmetic():
    t3 = stated("Table 3")
    assert t3[("Codex", "Evidence recall")] == 27.9 and t3[("Codex", "Distractor avoidance")] == 42.3
    t8 = stated("Table 8")
    assert [t8[("initial", m)] for m in ("Blanks", "Tasks", "Correct", "Partial", "Wrong", "Mean score")] == \
        [908, 96, 769, 131, 8, 0.9372]
    assert 769 + 131 + 8 == t8[("initial", "Blanks")] and 131 + 8 == t8[("after repair", "Incorrect blanks repaired")]
    assert t8[("after repair", "Documents edited")] == 148
    t9 = stated("Table 9")
    assert t9[("total", "Distractors")] / t9[("total", "Tasks")] == 25      # 25 distractors per task, as the sample
    fig3 = stated("Figure 3")
    assert fig3[("CiK and GIFT-CTX", "Tasks")] + fig3[("Expert-curated", "Tasks")] == fig3[("All", "Tasks")] == 279
    t14, t16 = stated("Table 14"), stated("Table 16")
    assert (t14[("Codex", "Evidence recall, CAF-sourced")], t14[("Codex", "Evidence recall, expert-curated")]) == \
        (38.5, 21.0)
    assert (t16[("Codex", "Evidence recall, retrospective")], t16[("Codex", "Evidence recall, prospective")]) == \
        (25.98, 15.85)
    assert stated("Table 11")[("New judges", "Agreement with the default judge")] == 88
    assert numbers(next(r["value"] for e in paper_values()["entries"] if e["paper"] == "Table 11"
                        for r in e["rows"] if r["row"] == "New judges")) == [88, 92]
    assert stated("Figure 16")[("Codex", "Counterfactual history (share of the unique distractors cited)")] == 78
    assert plain("{\\color[rgb]{0,0,0}78\\%} and $5\\%$, 2$\\times$, (sCRPS↓\\downarrow)") == "78% and 5%, 2×, (sCRPS↓)"


def test_findings_are_the_papers_words_in_a_section_of_their_own():
    t2 = [r for e in paper_values()["entries"] if e["paper"] == "Table 2" for r in e["rows"]]
    codex = next(r for r in t2 if r["row"] == "Codex")
    assert codex["kind"] == "finding" and codex["line"] == 81 and codex["value"].startswith(
        "Codex is the only DR agent that significantly improves over forecasting without context")
    section = Section([Table("drcik-table2", "T2", ["a"]), Table("drcik-table2-common", "common", ["a"])], ["m"],
                      {"drcik-figure5": object(), "drcik-figure4-lexical": object()})
    out = with_paper(section)
    assert [t.key for t in out.tables] == ["drcik-table2", "drcik-table2-paper", "drcik-table2-common",
                                           "drcik-figure5-paper"]
    paper = out.tables[1]
    assert paper.header == ["Row", "Metric", "Paper", "Source"]
    assert paper.title.startswith("Paper values: Dr-CiK Table 2. End-to-end forecasting performance (sCRPS↓) ")
    titles = [paper.rows[i][0] for i in sorted(paper.sections)]
    assert titles == ["Values stated in the text", "Findings stated in the text (the paper's claims, not values)"]
    assert paper.rows[1] == ["All", "Tasks", "279", "§5.2, line 79"]
    assert ["Codex", "vs No Context", codex["value"], "§5.2, line 81"] in paper.rows
    assert any("section 5.2 Level 1: End-to-End Results" in n and "no page numbers" in n for n in paper.notes)
    assert out.messages == ["m", "--paper: no values stated in the Dr-CiK paper's text for drcik-table2-common: its "
                                 "text copy (shared/seeds/002_e814895bd5b3896f.txt) carries captions but not table "
                                 "bodies"]
    assert [t.key for t in with_paper(section, figures=False).tables][-1] == "drcik-table2-common"
    companions = {e["paper"]: paper_table(e, "k") for e in paper_values()["entries"]}
    assert all(t.unexplained() == [] for t in companions.values())     # no en dash taken for a missing value
    assert ["New judges", "Agreement with the default judge", "88-92%", "§D.2, line 191"] in companions["Table 11"].rows


@pytest.fixture
def research_run(tmp_path):
    tasks = {t.benchmark_id: t for t in load_tasks()}
    run = tmp_path / "research"
    for agent in ("codex", "retrieval"):
        for bid, t in tasks.items():
            write_episode(run, agent, list(tasks.values()), bid,
                          [(t.evidence[1].text, [t.supporting_ids[0]])] if agent == "codex" else [("nothing", [])])
    write_scores(run, score_run(run, LexicalJudge()))
    return run


def test_report_paper_on_a_research_run(research_run, tmp_path):
    out = tmp_path / "report"
    result = CliRunner().invoke(report_cmd, [str(research_run), "--paper", "--format", "json", "--out", str(out),
                                             "--no-figures"])
    assert result.exit_code == 0, result.output
    document = json.loads((out / "report.json").read_text())
    keys = [t["key"] for t in document["tables"]]
    for key in ("drcik-table3-lexical", "drcik-figure7-lexical", "drcik-figure16"):
        assert keys[keys.index(key) + 1] == f"{key}-paper", keys
    assert "drcik-figure6-paper" not in keys                     # a figure-only entry, and no figures drawn
    tables = {t["key"]: t for t in document["tables"]}
    t3 = tables["drcik-table3-lexical-paper"]
    assert t3["rows"][1:5] == [["Codex", "Evidence recall", "27.9%", "§5.3, line 87"],
                               ["Codex", "Distractor avoidance", "42.3%", "§5.3, line 87"],
                               ["Most DR agents", "Evidence recall", "less than 5%", "§1, line 13"],
                               ["Most DR agents", "Citations that point to distractors", "more than 70%",
                                "§1, line 13"]]
    assert t3["data"][0]["quote"].startswith("Table 3 shows large variation in evidence recall, with only Codex")
    assert ["Codex", "Counterfactual history (share of the unique distractors cited)", "78%",
            "§I.2, line 293"] in tables["drcik-figure16-paper"]["rows"]
    assert "--paper: no values stated in the Dr-CiK paper's text for drcik-not-shown" in result.output
    with_figures = build_report([research_run], paper=True)
    assert "drcik-figure6-paper" in [t.key for t in with_figures.tables]
    with_figures.write(tmp_path / "all", "markdown")
    check_exports(with_figures, tmp_path / "all")   # exported well formed, every missing value saying why
    assert "| Codex | Evidence recall | 27.9% | §5.3, line 87 |" in (tmp_path / "all" / "report.md").read_text()
    plain_report = build_report([research_run], with_figures=False)
    assert not any(t.key.endswith("-paper") for t in plain_report.tables)
    assert not any("--paper" in m for m in plain_report.messages)


def test_report_paper_on_the_sample_release_and_a_generated_set(tmp_path):
    built = build_report([SAMPLE_DIR], with_figures=False, paper=True)
    assert [t.key for t in built.tables] == ["drcik-table5", "drcik-table5-paper", "drcik-table6",
                                             "drcik-table6-paper", "drcik-figure3", "drcik-figure3-paper"]
    assert built.table("drcik-table5-paper").rows[1:] == [["Expert-curated", "Tasks", "80", "§A.1.1, line 121"],
                                                          ["Expert-curated", "Domains", "five", "§A.1.1, line 121"]]
    fig3 = built.table("drcik-figure3-paper")
    assert fig3.title == "Paper values: Dr-CiK Figure 3 (no caption in the text copy)"
    assert fig3.rows[1:4] == [["All", "Tasks", "279", "§1, line 12"],
                              ["CiK and GIFT-CTX", "Tasks", "199", "§4.3, line 63"],
                              ["Expert-curated", "Tasks", "80", "§4.3, line 63"]]
    assert not any(t.key.endswith("-paper") for t in build_report([SAMPLE_DIR], with_figures=False).tables)
    # a dr-generate output: its audits' tables (8, 9) get the paper's counts too
    gen = tmp_path / "gen"
    shutil.copytree(SAMPLE_DIR, gen)
    (gen / "generation" / "qc_cloze").mkdir(parents=True)
    (gen / "generation" / "qc").mkdir()
    row = {"blanks": 2, "tasks": 1, "correct": 2, "partial": 0, "wrong": 0, "mean_score": 1.0}
    (gen / "generation" / "qc_cloze" / "round_1.json").write_text(json.dumps(
        {"round": 1, "repair": False, "asked": 2, "blanks": [], "table": row}))
    (gen / "generation" / "qc" / "distractors.json").write_text(json.dumps({"table": [
        {"subtype": "total", "distractors": 2, "rejectable_by_rule": 2, "explicitly_rejectable": 2}]}))
    result = CliRunner().invoke(report_cmd, [str(gen), "--paper", "--format", "json", "--out", str(tmp_path / "r"),
                                             "--no-figures"])
    assert result.exit_code == 0, result.output
    tables = {t["key"]: t for t in json.loads((tmp_path / "r" / "report.json").read_text())["tables"]}
    keys = list(tables)
    assert keys[:4] == ["drcik-table8", "drcik-table8-paper", "drcik-table9", "drcik-table9-paper"]
    assert tables["drcik-table8-paper"]["rows"][1:4] == [["initial", "Blanks", "908", "§D.1, line 147"],
                                                         ["initial", "Tasks", "96", "§D.1, line 147"],
                                                         ["initial", "Correct", "769", "§D.1, line 147"]]
    assert ["final", "Correct", "908/908", "§D.1, line 147"] in tables["drcik-table8-paper"]["rows"]
    assert ["total", "Explicitly rejectable", "all 6,975", "§4.1, line 49"] in tables["drcik-table9-paper"]["rows"]
    assert {"drcik-table5-paper", "drcik-figure3-paper"} <= set(keys)
