"""``harness dr-audit``, ``harness dr-calibrate`` and ``harness report GEN_DIR`` end to end on the scripted model:
Tables 8 and 9 and the Figure 11 table equal the hand counts of the fixture."""

from __future__ import annotations

import csv
import json

import yaml
from click.testing import CliRunner

from harness.cli import cli
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
    assert t9 == {"temporal": ["1", "1", "0", "1", "0", "0"], "timeseries": ["1", "0", "0", "0", "1", "0"],
                  "total": ["2", "1", "0", "1", "1", "0"]}
    assert read_csv(tables / "drcik-figure11.csv")[1] == ["evidence", "1", "1", "0", "0", "1", "no"]
    assert (tables / "drcik-figure11.tex").is_file() and "Table 8" in (out / "report" / "report.md").read_text()
