"""Offline scripts for the whole Dr-CiK chain on anyone's CAF tasks: ``harness dr-offline-scripts``.

::

    harness dr-offline-scripts SPEC --out DIR

writes, for the CAF tasks of the generation spec ``SPEC``, the scripted model's answers of every model
call of the chain (``docs/benchmarks/drcik-own-data.md`` shows it end to end)::

    DIR/generate.yaml   harness dr-generate SPEC --model-backend scripted --script DIR/generate.yaml
    DIR/audit.yaml      harness dr-audit / dr-calibrate GEN --model-backend scripted --script DIR/audit.yaml
    DIR/reviews.jsonl   illustrative review records for dr-calibrate --reviews (not a human review)
    DIR/llm-dp.yaml     the llm-dp forecaster on the generated tasks (a seasonal-naive <forecast> block each)

It runs the pipeline (and then each audit pass) in-process with a small rule-based *oracle* in place of the
models; every request is recorded and becomes a match rule of the scripted backend whose ``contains`` is
the shortest window of the prompt that no other prompt has (:func:`script_rules`); every judge answers
``correct`` through one rule per judge prompt.  The scripts answer the requests of *these* tasks under
*this* spec and these prompts: re-make them when any of them changes (a request no rule matches gets a
non-JSON final answer, every round of its unit fails, and ``dr-generate`` fails loudly).

The generation oracle (:class:`.oracle.Oracle`), from the values each Appendix L prompt is filled with:

* entities: per task, the lowercase words after the first proper name of its background (or after its
  opening article) up to a head noun ("The Riverside *pumping station*, ..."); tasks of one type share
  the entity; no containment;
* profiles: synthetic place names (:data:`PLACES`) + the entity type, a stable choice per entity;
* the rewrite: every proper name (capitalised words outside :data:`.anonymity.COMMON`, a lone one opening a
  sentence left alone) replaced: the one followed by the entity type by the profile name, the others by a
  synthetic place (stable per name); the profile name put in front when the text names none;
* events: the background, the scenario's first sentence and its rest, one per further paragraph, each
  dated by the dates its own text names; a linear chain with exactly ``hops`` new contexts; documents
  that list what their metadata provides; five distractors per subtype naming the task's profile, the
  off-window ones dated a year before the window.

The quality-control oracle answers difficulty from each step's words, the cloze blanks with the truth
when the supporting documents contain it verbatim (else the nearest number, the shared words, or
nothing), and ``unsure`` to every distractor check the rules leave (one rule on the prompt).
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any, Callable

import click
import yaml

from tsagent_plugins.tasks.drcik.generation.oracle import DISTRACTOR_CHECK, JUDGE_PHRASES, Oracle, cloze_answer, level

# -- the recording loop both share ------------------------------------------------------------------
def record(run: Callable[[Any], Any], answer: Callable[[str, dict], dict],
           answer_input: Callable[[str, str], dict] | None = None) -> list[tuple[str, str]]:
    """Run ``run(engine)`` with ``answer(prompt name, values)`` (and ``answer_input(prompt name, input)`` for
    the Appendix L.3 instruction prompts) in place of every generator request and every judge accepting;
    ``(rendered prompt, answer text)`` of every request, in order."""
    from tsagent_plugins.tasks.drcik.generation import engine as eng, prompts

    seen: list[tuple[str, str]] = []

    def ask(self, name, values, schema, role=None):
        text = json.dumps(answer(name, values), ensure_ascii=False)
        seen.append((prompts.load(name).render(**values), text))
        return eng.parse_json(text, schema)

    def ask_input(self, name, input_text, schema, role=None):
        text = json.dumps(answer_input(name, input_text), ensure_ascii=False)
        seen.append((prompts.load(name).with_input(input_text), text))
        return eng.parse_json(text, schema)

    saved = eng.Attempt.ask, eng.Attempt.ask_input, eng.Engine._judge
    eng.Attempt.ask, eng.Attempt.ask_input = ask, ask_input
    eng.Engine._judge = lambda self, part, calls, judged: None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run(eng.Engine(Path(tmp), {}, rounds=1, jobs=1))
    finally:
        eng.Attempt.ask, eng.Attempt.ask_input, eng.Engine._judge = saved
    return seen


def unique_window(text: str, others: list[str]) -> str:
    """The shortest window of ``text`` (lengths doubling from 60) found in no other prompt."""
    length = 60
    while length < len(text):
        for start in range(0, len(text) - length + 1, 20):
            window = text[start:start + length]
            if window.strip() == window and not any(window in o for o in others):
                return window
        length *= 2
    return text


def script_rules(requests: list[tuple[str, str]], fixed: list[dict]) -> list[dict]:
    """The ``fixed`` rules (judges, ...), then one rule per distinct recorded request."""
    texts, rules, done = [r for r, _ in requests], list(fixed), set()
    for i, (prompt, answer) in enumerate(requests):
        if prompt in done:  # an identical request elsewhere gets the same answer: one rule serves both
            continue
        done.add(prompt)
        others = [o for j, o in enumerate(texts) if j != i and o != prompt]
        rules.append({"when": {"contains": unique_window(prompt, others)}, "reply": {"text": answer}})
    return rules


def judge_rules(roles: tuple[str, ...]) -> list[dict]:
    """One ``correct`` verdict per judge prompt of ``roles``."""
    return [{"when": {"contains": JUDGE_PHRASES[r]}, "reply": {"text": json.dumps({
        "judge": "correct", "confidence": "high", "summary": f"{r}: usable as generated", "issue_types": [],
        "findings": [], "correction_hint": ""})}} for r in roles]


def write_script(path: Path, rules: list[dict], header: str) -> None:
    body = yaml.safe_dump({"model": "scripted-model", "match": rules, "final": {"text": "not scripted"}},
                          sort_keys=False, allow_unicode=True, width=100)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"# {line}\n" for line in header.splitlines()) + body, encoding="utf-8")


# -- the three scripts ------------------------------------------------------------------------------
def generation_rules(spec_file: Path) -> tuple[list[dict], int]:
    """The rules of ``generate.yaml`` for the spec's tasks and the number of requests they answer; SystemExit
    when the oracle's answers do not pass the pipeline's checks (then the script would not work)."""
    from tsagent_plugins.tasks.drcik.generation import caf
    from tsagent_plugins.tasks.drcik.generation.pipeline import Pipeline
    from tsagent_plugins.tasks.drcik.generation.spec import load_spec

    spec = load_spec(spec_file)
    tasks = caf.read_folder(spec.path(spec_file, spec.input), spec.window_shift_weeks)
    oracle = Oracle(spec.hops, spec.distractors_per_subtype)
    bad: dict[str, Any] = {}

    def run(engine):
        states = Pipeline(tasks, engine, spec.hops, spec.distractors_per_subtype, spec.window_shift_weeks).run()
        bad.update({tid: (st.missing, st.flags) for tid, st in states.items() if st.missing or st.flags})

    requests = record(run, oracle.answer)
    if bad:
        raise click.ClickException(f"the oracle's answers do not pass the pipeline's checks: {bad}")
    return script_rules(requests, judge_rules(tuple(JUDGE_PHRASES))), len(requests)


def audit_rules(gen_dir: Path) -> tuple[list[dict], int]:
    """The rules of ``audit.yaml``: the audit passes of ``dr-audit`` on the generation ``gen_dir``, the
    distractor check and the judges ``dr-calibrate`` re-asks."""
    from tsagent_plugins.tasks.drcik.quality import cloze, difficulty_labels, distractor_audit
    from tsagent_plugins.tasks.drcik.quality.common import task_files

    truths: dict[str, tuple[str, str]] = {}
    for _, raw in task_files(gen_dir):
        blanks = cloze.blanks_of(raw)
        for b in blanks:
            truths[cloze.masked(raw, blanks) + b["blank"]] = (b["truth"], b["kind"])

    def answer(name, values):
        if name != "audit_cloze":
            raise click.ClickException(f"no oracle for prompt {name}")
        wanted = re.findall(r"\[(BLANK_\d+)\]", values["masked_evidence"])
        return {"answers": [{"blank": b, "answer": cloze_answer(*truths[values["masked_evidence"] + b],
                                                                values["documents"])} for b in wanted]}

    def answer_input(name, input_text):
        dimension = name.removeprefix("difficulty_")
        return {"steps": [{"step_id": s["step_id"], "level": level(dimension, s["text"]).capitalize()}
                          for s in json.loads(input_text)["steps"]]}

    requests = record(lambda engine: [step(gen_dir, engine) for step in (
        difficulty_labels.label, distractor_audit.audit, cloze.audit)], answer, answer_input)
    unsure = {"rejectable": "unsure", "cue": "no cue the test-time inputs contradict"}
    fixed = [{"when": {"contains": DISTRACTOR_CHECK}, "reply": {"text": json.dumps(unsure)}}]
    return script_rules(requests, fixed + judge_rules(("judge_evidence", "judge_chain", "judge_supporting",
                                                       "judge_distractor"))), len(requests)


def review_records(task_ids: list[str]) -> list[dict]:
    """Illustrative review records (not a human review): three reviewers on the evidence and chain units of
    the first task and of a later one, one unit of each stage rejected by the majority, so Figure 11 shows a
    judge more permissive than the reviewers."""
    a, b = task_ids[0], task_ids[min(2, len(task_ids) - 1)]
    plan = [("evidence", a, ["acceptable", "acceptable", "not_acceptable"]),
            ("evidence", b, ["not_acceptable", "not_acceptable", "acceptable"]),
            ("chain", a, ["acceptable", "acceptable", "acceptable"]),
            ("chain", b, ["acceptable", "not_acceptable", "not_acceptable"])]
    seen, out = set(), []
    for stage, unit, verdicts in plan:
        if (stage, unit) in seen:
            continue
        seen.add((stage, unit))
        out += [{"task": unit, "stage": stage, "unit": unit, "reviewer": f"r{k + 1}", "verdict": v,
                 "note": "" if v == "acceptable" else "illustrative record", "entry": None}
                for k, v in enumerate(verdicts)]
    return out


def forecast_rules(release: Path) -> list[dict]:
    """One rule per task of the release folder for the llm-dp (Direct Prompt) forecaster: its horizon and
    first future timestamp, answered by a seasonal-naive ``<forecast>`` block (the value one season
    earlier; the last value when the history is shorter than a season)."""
    from tsagent_plugins.forecasters.llm import format_timestamp, format_value
    from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks

    rules = []
    for task in load_tasks(release):
        y, m = task.history.to_numpy(), task.seasonal_period
        stamps = task.future.index
        lines = [f"({format_timestamp(t)}, {format_value(float(y[len(y) - m + k % m] if len(y) >= m else y[-1]))})"
                 for k, t in enumerate(stamps)]
        n = len(stamps)
        rules.append({"when": {"contains": f"following {n} timestamp{'s' if n != 1 else ''}:\n"
                                           f"{format_timestamp(stamps[0])}"},
                      "reply": {"text": "<forecast>\n" + "\n".join(lines) + "\n</forecast>\n"}})
    return rules


def make_all(spec_file: Path, out: Path) -> dict[str, Any]:
    """Write the four files of the module docstring into ``out``; returns what each holds."""
    from contextlib import nullcontext

    from harness import resolve_profile
    from tsagent_plugins.tasks.drcik.generation import caf
    from tsagent_plugins.tasks.drcik.generation.cli import ROLES
    from tsagent_plugins.tasks.drcik.generation.run import generate
    from tsagent_plugins.tasks.drcik.generation.spec import load_spec

    out = Path(out)
    rules, n = generation_rules(spec_file)
    write_script(out / "generate.yaml", rules, f"Scripted answers for `harness dr-generate {spec_file}`.\n"
                 f"Written by `harness dr-offline-scripts` (do not edit by hand): {len(rules)} rules for {n} "
                 "generator requests and the judges.")
    spec = load_spec(spec_file)
    tasks = caf.read_folder(spec.path(spec_file, spec.input), spec.window_shift_weeks)
    profiles = {role: resolve_profile(getattr(spec.models, role)) for role in ROLES}
    with tempfile.TemporaryDirectory() as tmp:
        gen = Path(tmp) / "gen"
        summary = generate(spec, tasks, profiles, gen, "scripted", {"script": str((out / "generate.yaml").resolve())},
                           None, None, 2, progress=nullcontext(lambda *a: None))
        if len(summary["output"]["written"]) != len(tasks):
            raise click.ClickException(f"dr-generate with the new script wrote {summary['output']}")
        audit, m = audit_rules(gen)
        forecasts = forecast_rules(gen)
        ids = sorted(p.stem for p in (gen / "tasks").glob("*.json"))
    write_script(out / "audit.yaml", audit, f"Scripted answers for `harness dr-audit` and `harness dr-calibrate` on "
                 f"the generation of {spec_file}.\nWritten by `harness dr-offline-scripts` (do not edit by hand).")
    write_script(out / "llm-dp.yaml", forecasts, "Scripted answers for llm-dp (Direct Prompt) on the generated tasks:\n"
                 "a seasonal-naive <forecast> block per task. Written by `harness dr-offline-scripts`.")
    reviews = review_records(ids)
    (out / "reviews.jsonl").write_text("".join(json.dumps(r) + "\n" for r in reviews), encoding="utf-8")
    return {"generate": len(rules), "audit": len(audit), "forecast": len(forecasts), "reviews": len(reviews),
            "tasks": ids, "requests": n + m}


@click.command("dr-offline-scripts")
@click.argument("spec_file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="Folder for generate.yaml, audit.yaml, llm-dp.yaml and reviews.jsonl.")
def dr_offline_scripts(spec_file: Path, out: Path) -> None:
    """Write scripted-model answers for the whole Dr-CiK chain on the CAF tasks of SPEC_FILE (offline, no key).

    See docs/benchmarks/drcik-own-data.md for the chain they answer."""
    from tsagent_plugins.tasks.drcik.generation.cli import read_caf_folder
    from tsagent_plugins.tasks.drcik.generation.spec import load_spec

    read_caf_folder(load_spec(spec_file), spec_file)  # every bad CAF file: one error line each, exit 2
    made = make_all(spec_file, out)
    click.echo(f"{out}: generate.yaml ({made['generate']} rules), audit.yaml ({made['audit']} rules), llm-dp.yaml "
               f"({made['forecast']} tasks), reviews.jsonl ({made['reviews']} records) for {len(made['tasks'])} "
               "task(s)")
