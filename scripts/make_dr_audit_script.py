"""Write the scripted model's script for the quality control of the sample generation.

``harness dr-generate tasks/drcik/generate-sample.yaml --model-backend scripted`` makes the sample; this
script answers what ``harness dr-audit`` and ``harness dr-calibrate`` then ask about it, so the whole chain
runs offline with shipped files only::

    python scripts/make_dr_audit_script.py
    # -> tests/fixtures/scripts/dr_generate/audit.yaml          (the scripted model's answers)
    #    tests/fixtures/scripts/dr_generate/sample-reviews.jsonl (illustrative review records)

The sample is generated (scripted, into a temporary folder) and each audit pass is run in-process with a
small rule-based *oracle* in place of the model; every request is recorded and becomes a match rule whose
``contains`` is the shortest window of the prompt no other prompt has (as
``scripts/make_dr_generate_script.py`` does for the generation).  The oracle:

* difficulty (L.3): labels each step from its words: certainty ``likely`` for estimated or forecast values
  ("about", "forecast", "expected", "planned", ...), else ``certain``; domain knowledge ``specialist`` for a
  technical quantity (:data:`SPECIALIST`), else ``general``; explicitness ``explicit`` when the step states a
  number or date, else ``implied``; temporal complexity ``variable`` for a dated episode, ``predictable`` for a
  recurring pattern (daily, weekends, ...), else ``straightforward``;
* cloze (D.1): fills a blank with its true value when the supporting documents contain it verbatim, else
  the document number closest to it (numbers), the words of it the documents contain (names), or nothing;
* distractor check (D.1): ``unsure`` for any distractor the rule passes leave (one rule on the prompt);
* judges re-asked by ``dr-calibrate`` (D.2): ``correct``, as they answered during the generation.

The review records are illustrative, not a human review: three reviewers on the evidence and chain units
of two tasks, one unit of each rejected by the majority, so Figure 11 shows a judge more permissive than
the reviewers.  Re-run this script when a prompt, the sample or the generation script changes.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
FOLDER = REPO / "tests" / "fixtures" / "scripts" / "dr_generate"
OUT, REVIEWS = FOLDER / "audit.yaml", FOLDER / "sample-reviews.jsonl"
SPEC = REPO / "tasks" / "drcik" / "generate-sample.yaml"
SPECIALIST = ("irradiance", "kilowatt", "bearing", "pressure", "cubic metre", "reservoir")
ESTIMATED = re.compile(r"\b(about|around|roughly|forecast|expected|planned|scheduled|likely|could)\b", re.I)
RECURRING = re.compile(r"\b(daily|weekly|weekends?|weekdays?|every (hour|day)|each (hour|day)|over the day|"
                       r"at night|noon|seasonal)\b", re.I)
DATED = re.compile(r"\d{4}-\d{2}-\d{2}")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
#: (stage, unit, [verdicts of r1, r2, r3]) of the illustrative review records
REVIEWED = [("evidence", "caf_pump_flow", ["acceptable", "acceptable", "not_acceptable"]),
            ("evidence", "caf_solar_ghi", ["not_acceptable", "not_acceptable", "acceptable"]),
            ("chain", "caf_pump_flow", ["acceptable", "acceptable", "acceptable"]),
            ("chain", "caf_solar_ghi", ["acceptable", "not_acceptable", "not_acceptable"])]


def level(dimension: str, text: str) -> str:
    if dimension == "certainty":
        return "likely" if ESTIMATED.search(text) else "certain"
    if dimension == "domain_knowledge":
        return "specialist" if any(term in text.lower() for term in SPECIALIST) else "general"
    if dimension == "explicitness":
        return "explicit" if NUMBER.search(text) else "implied"
    return "variable" if DATED.search(text) else "predictable" if RECURRING.search(text) else "straightforward"


def cloze_answer(truth: str, kind: str, documents: str) -> str:
    if truth in documents:
        return truth
    if kind == "number":
        found = [float(n) for n in NUMBER.findall(documents)]
        return str(min(found, key=lambda n: abs(n - float(truth.replace(",", ""))))) if found else ""
    if kind == "name":
        return " ".join(w for w in truth.split() if w in documents)
    return ""


def record_requests(root: Path) -> list[tuple[str, str]]:
    """Run the audit passes on the generation ``root`` with the oracle; ``(prompt, answer text)`` per request."""
    from tsagent_plugins.tasks.drcik.generation import engine as eng, prompts
    from tsagent_plugins.tasks.drcik.quality import cloze, difficulty_labels, distractor_audit
    from tsagent_plugins.tasks.drcik.quality.common import task_files

    seen: list[tuple[str, str]] = []
    truths: dict[str, tuple[str, str]] = {}

    def ask(self, name, values, schema, role=None):
        if name == "audit_cloze":
            wanted = re.findall(r"\[(BLANK_\d+)\]", values["masked_evidence"])
            answer = {"answers": [{"blank": b, "answer": cloze_answer(*truths[values["masked_evidence"] + b],
                                                                      values["documents"])} for b in wanted]}
        else:
            raise SystemExit(f"no oracle for prompt {name} (a distractor left to the LLM check is answered by "
                             "the script's rule on audit_distractor)")
        text = json.dumps(answer, ensure_ascii=False)
        seen.append((prompts.load(name).render(**values), text))
        return eng.parse_json(text, schema)

    def ask_input(self, name, input_text, schema, role=None):
        data = json.loads(input_text)
        dimension = name.removeprefix("difficulty_")
        text = json.dumps({"steps": [{"step_id": s["step_id"], "level": level(dimension, s["text"]).capitalize()}
                                     for s in data["steps"]]})
        seen.append((prompts.load(name).with_input(input_text), text))
        return eng.parse_json(text, schema)

    for _, raw in task_files(root):
        blanks = cloze.blanks_of(raw)
        for b in blanks:
            truths[cloze.masked(raw, blanks) + b["blank"]] = (b["truth"], b["kind"])
    eng.Attempt.ask, eng.Attempt.ask_input = ask, ask_input
    engine = eng.Engine(root, {}, rounds=1, jobs=1)
    difficulty_labels.label(root, engine)
    distractor_audit.audit(root, engine)
    cloze.audit(root, engine)
    return seen


def generate(folder: Path) -> Path:
    from click.testing import CliRunner

    from harness import plugins
    from harness.cli import cli

    plugins.plugins().commands(cli)
    out = folder / "gen"
    result = CliRunner().invoke(cli, ["dr-generate", str(SPEC), "--out", str(out), "--model-backend", "scripted"])
    if result.exit_code != 0:
        raise SystemExit(f"dr-generate failed: {result.output}")
    return out


def main() -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    from make_dr_generate_script import unique_window

    with tempfile.TemporaryDirectory() as tmp:
        requests = record_requests(generate(Path(tmp)))
    texts = [r for r, _ in requests]
    unsure = {"rejectable": "unsure", "cue": "no cue the test-time inputs contradict"}
    rules = [{"when": {"contains": "Decide whether the document contains an explicit cue"},
              "reply": {"text": json.dumps(unsure)}}]
    for judge, phrase in (("judge_evidence", "Ground Truth Evidences (events) Extraction Result"),
                          ("judge_chain", "Expanded Output To Validate"),
                          ("judge_supporting", "Supporting Documents To Validate"),
                          ("judge_distractor", "Distractor Documents To Validate")):
        verdict = {"judge": "correct", "confidence": "high", "summary": f"{judge}: usable as generated",
                   "issue_types": [], "findings": [], "correction_hint": ""}
        rules.append({"when": {"contains": phrase}, "reply": {"text": json.dumps(verdict)}})
    for i, (prompt, answer) in enumerate(requests):
        others = [o for j, o in enumerate(texts) if j != i and o != prompt]
        rules.append({"when": {"contains": unique_window(prompt, others)}, "reply": {"text": answer}})
    header = ("# Scripted answers for `harness dr-audit` and `harness dr-calibrate` on the sample generation\n"
              "# (`harness dr-generate tasks/drcik/generate-sample.yaml --model-backend scripted`).\n"
              "# Written by scripts/make_dr_audit_script.py (do not edit by hand): one match rule per audit request\n"
              "# of the sample, one for the distractor check and one per judge prompt.\n")
    body = yaml.safe_dump({"model": "scripted-model", "match": rules, "final": {"text": "not scripted"}},
                          sort_keys=False, allow_unicode=True, width=100)
    OUT.write_text(header + body, encoding="utf-8")
    records = [{"task": unit, "stage": stage, "unit": unit, "reviewer": f"r{k + 1}", "verdict": verdict,
                "note": "" if verdict == "acceptable" else "illustrative record", "entry": None}
               for stage, unit, verdicts in REVIEWED for k, verdict in enumerate(verdicts)]
    REVIEWS.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    print(f"{OUT}: {len(rules)} rules for {len(requests)} audit requests; {REVIEWS}: {len(records)} records")


if __name__ == "__main__":
    main()
