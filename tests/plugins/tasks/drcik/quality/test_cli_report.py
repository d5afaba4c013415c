"""``harness dr-audit``, ``harness dr-calibrate`` and ``harness report GEN_DIR`` end to end on the scripted model:
Tables 8 and 9 and the Figure 11 table equal the hand counts of the fixture."""

from __future__ import annotations

import csv
import json

import yaml
from click.testing import CliRunner

from harness import plugins as registry
from harness.cli import cli
from tests.support.paths import REPO
from tsagent_plugins.tasks.drcik.generation.spec import Models
from tsagent_plugins.tasks.drcik.quality import calibration as cal

from .conftest import doc, task, write_release

DOCS = [doc("s1", "Harbor Pumping Station water flow peaked at 1200 on 2025-01-02."),
        doc("d1", "Harbor Pumping Station water flow fell in 2019, on 2019-05-01.", "distractor", "temporal"),
        doc("d2", "Harbor Pumping Station water flow was 7.0 on 2025-01-01.", "distractor", "timeseries")]
EVIDENCE = {"E1": "Harbor Pumping Station flow peaked at 1200.", "E2": "It stayed high."}


def verdict(judge):
    return json.dumps({"judge": judge, "confidence": "high", "summary": judge, "findings": [],
                       "correction_hint": ""})


def gen_dir(tmp_path):
    out = write_release(tmp_path / "gen", [task("t1", EVIDENCE, DOCS)])
    (out / "generation").mkdir()
    (out / "generation" / "spec.json").write_text(json.dumps({"models": Models().model_dump(), "rounds": 2}))
    # the evidence stage of the generation judged unit t1 (as the engine records it)
    unit = out / "generation" / "step4_evidence_decomposition" / "t1"
    unit.mkdir(parents=True)
    values = {"task_id": "t1", "context": "CTX-t1", "gt_evidence_extraction": "{}"}
    (unit / "attempts.jsonl").write_text(json.dumps({"status": "accepted", "judge": [
        {"prompt": "judge_evidence", "verdict": "correct", "values": values}]}) + "\n")
    for reviewer in ("r1", "r2", "r3"):
        cal.append_review(out / cal.REVIEWS, {"task": "t1", "stage": "evidence", "unit": "t1", "reviewer": reviewer,
                                              "verdict": "not_acceptable" if reviewer != "r3" else "acceptable"})
    return out


def script(tmp_path):
    steps = lambda lv: json.dumps({"steps": [{"step_id": "E1", "level": lv}, {"step_id": "E2", "level": lv}]})
    rules = [{"when": {"contains": phrase}, "reply": {"text": steps(lv)}} for phrase, lv in (
        ("by its certainty", "Certain"), ("as General or Specialist", "Specialist"),
        ("by its explicitness", "Implied"), ("by its temporal complexity", "Variable"))]
    rules += [{"when": {"contains": "[BLANK_1]"}, "reply": {"text": json.dumps({"answers": [
                  {"blank": "BLANK_1", "answer": "Harbor Station"}, {"blank": "BLANK_2", "answer": "1200"}]})}},
              {"when": {"contains": "7.0 on 2025-01-01"}, "reply": {"text": json.dumps({"rejectable": "unsure"})}},
              {"when": {"contains": "CTX-t1"}, "reply": {"text": verdict("correct")}}]
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump({"match": rules}))
    return path


def read_csv(path):
    with open(path, newline="") as fh:
        return [row[1:] for row in csv.reader(fh)]  # the first column is the core's section column


def test_audits_calibration_and_report(tmp_path):
    out, path = gen_dir(tmp_path), script(tmp_path)
    backend = ["--model-backend", "scripted", "--script", str(path)]
    run = CliRunner().invoke(cli, ["dr-audit", str(out), *backend])
    assert run.exit_code == 0, run.output + str(run.exception)
    assert "1/2 explicitly rejectable, 1 ambiguous, 0 failing" in run.output
    assert "cloze round 1: 2 blanks over 1 task(s): 1 correct, 1 partial, 0 wrong, mean 0.9" in run.output
    levels = json.loads((out / "tasks" / "t1.json").read_text())["annotations"]["difficulty"]
    assert levels == {"certainty": "certain", "domain_knowledge": "specialist", "explicitness": "implied",
                      "temporal_complexity": "variable"}
    other = write_release(tmp_path / "bench", [task("t1", {}, [])])
    run = CliRunner().invoke(cli, ["dr-calibrate", str(out), "--check-generation", str(other), *backend])
    assert run.exit_code == 1, run.output
    assert "evidence: 1/1 comparable, 0 agree, 0 judge stricter, 1 judge more permissive" in run.output
    assert "reuses calibration task(s) t1" in run.output
    run = CliRunner().invoke(cli, ["report", str(out), "--no-figures"])
    assert run.exit_code == 0, run.output + str(run.exception)
    tables = out / "report" / "tables"
    assert read_csv(tables / "drcik-table8.csv")[1] == ["initial", "2", "1", "1", "1", "0", "0.9000"]
    assert read_csv(tables / "drcik-table8-repair.csv")[1] == ["t1", "s1", "BLANK_1"]
    t9 = {r[0]: r[1:] for r in read_csv(tables / "drcik-table9.csv")[1:]}
    assert t9 == {"temporal": ["1", "1", "0", "1", "0", "0", "0"], "timeseries": ["1", "0", "0", "0", "1", "0", "0"],
                  "total": ["2", "1", "0", "1", "1", "0", "0"]}
    assert read_csv(tables / "drcik-figure11.csv")[1] == ["evidence", "1", "1", "0", "0", "1", "no"]
    assert (tables / "drcik-figure11.tex").is_file() and "Table 8" in (out / "report" / "report.md").read_text()


def test_figure11_counts_a_stricter_judge_and_a_tie_as_by_hand(tmp_path):
    """Beside the evidence unit (majority rejects, judge accepts: more permissive), a chain unit the majority
    accepts and the judge rejects (stricter) and a chain unit split 1-1 (no majority: not comparable)."""
    out, path = gen_dir(tmp_path), script(tmp_path)
    for uid in ("t1", "t2"):
        values = {"context": f"CHAIN-{uid}", "expanded_output": "{}", "item_kind": "chain", "source_event_ids": "E1"}
        unit = out / "generation" / "step5_chain_expansion" / uid
        unit.mkdir(parents=True)
        (unit / "attempts.jsonl").write_text(json.dumps({"judge": [{"prompt": "judge_chain", "values": values}]}))
    for reviewer, unit, given in (("r1", "t1", "acceptable"), ("r2", "t1", "acceptable"),
                                  ("r1", "t2", "acceptable"), ("r2", "t2", "not_acceptable")):
        cal.append_review(out / cal.REVIEWS, {"task": unit, "stage": "chain", "unit": unit, "reviewer": reviewer,
                                              "verdict": given})
    rules = yaml.safe_load(path.read_text())
    rules["match"] += [{"when": {"contains": "CHAIN-"}, "reply": {"text": verdict("needs_correction")}}]
    path.write_text(yaml.safe_dump(rules))
    run = CliRunner().invoke(cli, ["dr-calibrate", str(out), "--model-backend", "scripted", "--script", str(path)])
    assert run.exit_code == 0, run.output + str(run.exception)
    assert CliRunner().invoke(cli, ["report", str(out), "--no-figures"]).exit_code == 0
    rows = read_csv(out / "report" / "tables" / "drcik-figure11.csv")
    assert rows[1:] == [["evidence", "1", "1", "0", "0", "1", "no"], ["chain", "2", "1", "0", "1", "0", "yes"]]
    tex = (out / "report" / "tables" / "drcik-figure11.tex").read_text()
    assert "chain & 2 & 1 & 0 & 1 & 0 & yes" in tex
    markdown = (out / "report" / "report.md").read_text()
    assert "| chain | 2 | 1 | 0 | 1 | 0 | yes |" in markdown and "7 review records (7 stage-level" in markdown


SHIPPED = REPO / "tests" / "fixtures" / "scripts" / "dr_generate"
#: the blanks of the sample generation, counted by hand from its evidence: the entity, each date (a range of two
#: is one blank: issue 37), each number
SAMPLE_BLANKS = {"caf_pump_flow": ["Alder Creek Pumping Station", "2026-06-10 04:00:00", "2026-06-10 12:00:00",
                                   "700"],
                 "caf_pump_power": ["Quill Basin Booster Pumping Station",
                                    "2026-06-10 12:00:00 to 2026-06-10 17:00:00", "30"],
                 "caf_solar_ghi": ["Marlow Point Research Station", "2025-04-30 00:00:00 until 2025-04-30 15:00:00"],
                 "caf_store_sales": ["Sable Flats Neighbourhood Grocery Store", "2024-03-21 to 2024-03-23"]}


def test_the_shipped_scripts_run_generate_audits_calibrate_and_report(tmp_path):
    """The documented offline chain (docs/benchmarks/drcik.md) with shipped files only: dr-generate (sample script), dr-audit and dr-calibrate
    (audit script, illustrative review records), harness report GEN_DIR; its tables equal the hand counts."""
    registry.plugins()
    out = tmp_path / "gen"
    spec = REPO / "tasks" / "drcik" / "generate-sample.yaml"
    backend = ["--model-backend", "scripted", "--script", str(SHIPPED / "audit.yaml")]
    for args in (["dr-generate", str(spec), "--out", str(out), "--model-backend", "scripted"],
                 ["dr-audit", str(out), *backend],
                 ["dr-calibrate", str(out), "--reviews", str(SHIPPED / "sample-reviews.jsonl"), *backend],
                 ["report", str(out), "--no-figures"]):
        run = CliRunner().invoke(cli, args)
        assert run.exit_code == 0, f"{args[0]}: {run.output[-2000:]} {run.exception}"
    repair = CliRunner().invoke(cli, ["dr-audit", str(out), "--cloze", "--repair", *backend])
    assert repair.exit_code == 0 and "every blank is correct; nothing to re-run" in repair.output, repair.output
    assert not (out / "generation" / "qc_cloze" / "round_2.json").exists()
    tables = out / "report" / "tables"
    truths = {}
    for b in json.loads((out / "generation" / "qc_cloze" / "round_1.json").read_text())["blanks"]:
        truths.setdefault(b["task"], []).append(b["truth"])
    assert truths == SAMPLE_BLANKS
    # every truth is in its task's supporting documents, so the document-reading script fills every blank
    assert read_csv(tables / "drcik-table8.csv")[1] == ["initial", "11", "4", "11", "0", "0", "1.0000"]
    per_subtype = yaml.safe_load(spec.read_text())["distractors_per_subtype"] * len(SAMPLE_BLANKS)
    t9 = {r[0]: r[1:] for r in read_csv(tables / "drcik-table9.csv")[1:]}
    assert set(t9) == {"confounder", "noisy", "profile", "temporal", "timeseries", "total"}
    assert all(t9[s] == [str(per_subtype), str(per_subtype), "0", str(per_subtype), "0", "0", "0"]
               for s in t9 if s != "total")
    # the illustrative records: evidence and chain, on pump_flow (majority accepts) and solar_ghi (rejects);
    # the judges accept every unit, as in the generation
    assert read_csv(tables / "drcik-figure11.csv")[1:] == [["evidence", "2", "2", "1", "0", "1", "no"],
                                                           ["chain", "2", "2", "1", "0", "1", "no"]]
    levels = {p.stem: json.loads(p.read_text())["annotations"]["difficulty"] for p in (out / "tasks").glob("*.json")}
    assert set(levels) == set(SAMPLE_BLANKS) and all(len(v) == 4 for v in levels.values())
    assert read_csv(tables / "drcik-difficulty.csv")[1:4] == [["certainty", "certain", "0"],
                                                              ["certainty", "likely", "4"],
                                                              ["certainty", "uncertain", "0"]]


def test_a_more_permissive_judge_is_a_warning_line_and_fails_only_with_strict(tmp_path):
    """D.2 wants each judge at least as strict as the human majority: the evidence judge accepts the unit the
    majority rejects (2 of 3), so dr-calibrate warns and exits 0, and --strict exits 1; Figure 11 is drawn."""
    out, path = gen_dir(tmp_path), script(tmp_path)
    backend = ["--model-backend", "scripted", "--script", str(path)]
    run = CliRunner().invoke(cli, ["dr-calibrate", str(out), *backend])
    assert run.exit_code == 0, run.output
    assert "warning: evidence: the judge accepts 1 unit(s) the human majority rejects" in run.output
    strict = CliRunner().invoke(cli, ["dr-calibrate", str(out), "--strict", *backend])
    assert strict.exit_code == 1 and "warning: evidence:" in strict.output
    assert CliRunner().invoke(cli, ["report", str(out)]).exit_code == 0
    from harness.reporting import figure_problems
    from tsagent_plugins.tasks.drcik.quality.report import figure11

    assert (out / "report" / "figures" / "drcik-figure11.png").stat().st_size > 5000
    fig = figure11([{"stage": "evidence", "agree": 0, "judge_stricter": 0, "judge_more_permissive": 1},
                    {"stage": "chain", "agree": 1, "judge_stricter": 1, "judge_more_permissive": 0}])
    bars = [p.get_width() for p in fig.axes[0].patches]
    assert bars == [1, 0, 1, 0, 0, 1] and figure_problems(fig) == []  # per segment: chain, evidence (bottom up)
