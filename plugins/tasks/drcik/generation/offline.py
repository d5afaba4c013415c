# Over 300 lines: the two oracles (generation, quality control) and the one recording loop they share.
"""Offline scripts for the whole Dr-CiK chain on anyone's CAF tasks: ``harness dr-offline-scripts``.

::

    harness dr-offline-scripts SPEC --out DIR

writes, for the CAF tasks of the generation spec ``SPEC``, the scripted model's answers of every model
call of the chain (``docs/drcik-own-data.md`` shows it end to end)::

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

The generation oracle (:class:`Oracle`), from the values each Appendix L prompt is filled with:

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

import hashlib
import json
import re
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable

import click
import yaml

from tsagent_plugins.tasks.drcik.generation.anonymity import COMMON
from tsagent_plugins.tasks.drcik.generation.window import DATE as ISO_DATE

PLACES = ("Kestrel Ridge", "Alder Creek", "Marlow Point", "Quill Basin", "Sable Flats", "Harrowgate",
          "Fennel Brook", "Brightwater", "Larkspur Hollow", "Corran Vale", "Wrenfield", "Ashby Moor")
TIMESTAMP = "%Y-%m-%d %H:%M:%S"
#: head nouns ending an entity type (the oracle's cue; any other type is its first two words)
HEADS = frozenset("station substation plant mill store shop market farm site district utility company board "
                  "factory warehouse hospital school building park port airport mine reservoir network".split())
NAME_RUN = re.compile(r"\b[A-Z][a-z][\w'-]*(?:\s+[A-Z][a-z][\w'-]*)*")
JUDGE_PHRASES = {"judge_entity": "Primary Entity Extraction Slice For This Task",
                 "judge_evidence": "Ground Truth Evidences (events) Extraction Result",
                 "judge_chain": "Expanded Output To Validate",
                 "judge_supporting": "Supporting Documents To Validate",
                 "judge_distractor": "Distractor Documents To Validate"}
DISTRACTOR_CHECK = "Decide whether the document contains an explicit cue"


def _stable(text: str, n: int) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16) % n


def proper_names(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, name)`` of every run of capitalised words of ``text``, leading common words dropped."""
    out = []
    for m in NAME_RUN.finditer(text):
        words, start = m.group(0).split(), m.start()
        while words and words[0].lower() in COMMON:
            start = m.start() + m.group(0).index(words[1]) if len(words) > 1 else m.end()
            words = words[1:]
        if words and not all(w.lower() in COMMON for w in words):
            out.append((start, m.end(), " ".join(words)))
    return out


def _sentence_start(text: str, at: int) -> bool:
    """A word at ``at`` opens a sentence (a lone capitalised word there may be an ordinary word)."""
    before = text[:at].rstrip(" ")
    return not before or before[-1] in ".!?:\n"


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip()) if s.strip()]


def dated(text: str) -> tuple[str | None, str | None]:
    """``(time_start, time_end)``: the first and last date the text names, or None."""
    from tsagent_plugins.tasks.drcik.generation.window import dates_in

    dates = sorted(dates_in(text))
    return (dates[0].strftime(TIMESTAMP), dates[-1].strftime(TIMESTAMP)) if dates else (None, None)


class Oracle:
    """Answers each generator prompt of the pipeline from its values (module docstring)."""

    def __init__(self, hops: int, per_subtype: int):
        self.hops, self.per_subtype = hops, per_subtype
        self.profile_names: list[str] = []

    def answer(self, name: str, v: dict) -> dict:
        return getattr(self, name)(v)

    @staticmethod
    def entity_type(background: str) -> str:
        """The lowercase words after the first proper name (or after the opening article) up to the first head
        noun of :data:`HEADS` (else the first two): "The Riverside *pumping station*, ..."."""
        names = proper_names(background)
        start = names[0][1] if names else (re.match(r"\s*(?:an?|the)\s", background, re.IGNORECASE) or
                                           re.match("", background)).end()
        words = []
        for w in re.match(r"\s*((?:[a-z][a-z-]*\s*){0,4})", background[start:]).group(1).split():
            if w in COMMON:
                break
            words.append(w)
            if w in HEADS:
                return " ".join(words)
        return " ".join(words[:2]) or "site"

    def entity_extraction(self, v):
        entities: dict[str, dict] = {}
        for m in re.finditer(r"^\[([A-Za-z0-9_-]+)\] (.*)$", v["background_corpus"], re.MULTILINE):
            entity = self.entity_type(m.group(2))
            e = entities.setdefault(entity, {"entity_name": entity, "time_series_variable": [], "source_tasks": [],
                                             "source_tasks_as_primary_entity": []})
            e["time_series_variable"].append("target series")
            e["source_tasks"].append(m.group(1))
            e["source_tasks_as_primary_entity"].append(m.group(1))
        return {"entities": list(entities.values()), "contain_relations": []}

    def profile_generation(self, v):
        entity, k = v["entity_name"], int(v["k_profiles"])
        first = _stable(entity, len(PLACES))
        names = [f"{PLACES[(first + i) % len(PLACES)]} {entity.title()}" for i in range(k)]
        self.profile_names += names
        return {"entity_name": entity,
                "profiles": [{"profile_id": str(i), "name": n,
                              "details": {"category": entity, "region": "Westmarch Province",
                                          "established": str(1961 + 7 * i)}} for i, n in enumerate(names, 1)]}

    def profile_assignment(self, v):
        profile, entity = json.loads(v["primary_entity_profile"]), v["primary_entity_name"]
        text, named = v["original_context"], False
        for start, end, name in reversed(proper_names(text)):
            rest = text[end:]
            if re.match(rf"\s+{re.escape(entity)}\b", rest):
                text = text[:start] + profile["name"] + rest[len(re.match(rf"\s+{re.escape(entity)}", rest)[0]):]
                named = True
            elif name not in profile["name"] and not (" " not in name and _sentence_start(text, start)):
                text = text[:start] + PLACES[_stable(name, len(PLACES))].split()[0] + "vale" + text[end:]
        if profile["name"] not in text:
            text = f"{profile['name']}: {text}"
        return {"source_task_id": v["source_task_id"], "rewritten_context": text,
                "background_rewritten_context": text.split("\n\n", 1)[0],
                "applied_profiles": {"primary_entity": {"entity_name": entity, "profile_id": profile["profile_id"]},
                                     "ancestor_entities": []}}

    def evidence_decomposition(self, v):
        parts = v["context"].split("\n\n")
        texts = [parts[0]]
        scenario = sentences(parts[1]) if len(parts) > 1 else []
        if scenario:
            texts.append(scenario[0])
            if len(scenario) > 1:
                texts.append(" ".join(scenario[1:]))
        texts += parts[2:]
        events = [{"event_id": f"E{i}", "event": t, "time_start": dated(t)[0], "time_end": dated(t)[1]}
                  for i, t in enumerate(texts, 1)]
        graph = [{"cause_event_id": "E2", "effect_event_id": "E3", "relation": "cause"}] if len(scenario) > 1 else []
        return {"extracted_events": events, "causal_graph": graph,
                "causal_context": [f"{texts[1]} {texts[2]}"] if graph else []}

    def chain_expansion(self, v):
        originals = json.loads(v["context"])["events"]
        new_texts = [f"Reasoning step {i}: the consequence of the preceding condition carries forward to the "
                     f"next observation of the series." for i in range(1, self.hops + 1)]
        slots = []
        for k, event in enumerate(originals):
            slots.append(("original", event))
            if k < len(new_texts):
                slots.append(("new", new_texts[k]))
        slots += [("new", t) for t in new_texts[len(originals):]]
        counts, contexts = {"new": 0, "original_refactored": 0}, []
        for i, (kind, payload) in enumerate(slots, 1):
            origin = "new" if kind == "new" else "original_refactored"
            counts[origin] += 1
            ctx = {"context_id": f"R{i}", "context": payload if kind == "new" else payload["event"], "origin": origin,
                   "type_count": f"{origin}_{counts[origin]}", "contains_source_grounded_details": kind != "new",
                   "grounded_detail_ids": [f"D{payload['event_id'][1:]}"] if kind != "new" else []}
            if kind != "new":
                ctx["source_context_id"] = payload["event_id"]
            contexts.append(ctx)
        edges = [{"source_context_id": f"R{i}", "target_context_id": f"R{i + 1}",
                  "relational_context": f"What R{i} establishes is the condition under which R{i + 1} holds.",
                  "relation": "cause", "contains_source_grounded_details": False, "grounded_detail_ids": []}
                 for i in range(1, len(contexts))]
        return {"source_detail_inventory": [{"detail_id": f"D{e['event_id'][1:]}", "detail": e["event"]}
                                            for e in originals],
                "contexts": contexts, "relation_graph": edges,
                "detail_coverage": [{"detail_id": f"D{e['event_id'][1:]}", "covered_by_context_ids": [
                    c["context_id"] for c in contexts if c.get("source_context_id") == e["event_id"]],
                    "covered_by_edge_ids": []} for e in originals]}

    def source_metadata(self, v):
        return {"name": "Operations note", "type": "internal memo", "issuer": "Operations desk",
                "provides": sentences(v["context"].replace("\n", " ")), "notes": "Covers only the facts listed.",
                "source_content_length": "300-500 words"}

    def _profile_in(self, text: str) -> str:
        return next((n for n in self.profile_names if n in text), "the entity")

    def distractor_generic(self, v):
        kind, n, who = v["distractor_type"], int(v["num_distractors"]), self._profile_in(v["context"])
        out = []
        for i in range(1, n + 1):
            if kind == "off-window":
                start = datetime.strptime(v["supplemental_context_block"].split(": ", 1)[1].split(" to ")[0], TIMESTAMP)
                when = (start - timedelta(days=370 + 30 * i)).strftime("%Y-%m-%d")
                provides = [f"On {when} a comparable episode affected {who} for a few hours.",
                            "Operations returned to normal the following day."]
            elif kind == "off-entity":
                provides = [f"A similar entity of the same type reported event {i} with the opposite outcome."]
            elif kind == "off-variable":
                provides = [f"Variant {i}: the episode changed a different variable of {who}, not the target."]
            else:
                provides = [f"Note {i}: routine facts about {who} with no bearing on the target variable."]
            out.append({"provides": provides, "distractor_type": kind, "reason": f"{kind} distractor {i}"})
        return {"distractors": out}

    def counterfactual_spec(self, v):
        return {"reasoning": "The history rises and falls; call it flat.", "scope": "global",
                "feature_type": "periodicity", "gt_history_description": "A clear cycle.",
                "gt_future_pattern": "The cycle continues.",
                "distractor_history_description": "The series tends to hover around one level without a cycle.",
                "distractor_future_pattern": "Under this pattern the coming period stays near that level."}

    def counterfactual_item(self, v):
        return {"distractors": [{"provides": [v["distractor_history_description"], v["distractor_future_pattern"]],
                                 "distractor_type": "timeseries", "reason": "misstates the periodicity",
                                 "time_series_scope": v["scope"], "time_series_feature_type": v["feature_type"]}]}

    def meta2doc(self, v):
        meta = json.loads(v["source_metadata"])
        head = f"# {meta.get('name', 'Document')}\n**Issuer:** {meta.get('issuer', 'Operations desk')}\n\n"
        return {"content": head + "\n\n".join(meta["provides"])}


# -- the quality-control oracle ---------------------------------------------------------------------
SPECIALIST = ("irradiance", "kilowatt", "bearing", "pressure", "cubic metre", "reservoir", "megawatt", "voltage")
ESTIMATED = re.compile(r"\b(about|around|roughly|forecast|expected|planned|scheduled|likely|could)\b", re.I)
RECURRING = re.compile(r"\b(daily|weekly|weekends?|weekdays?|every (hour|day)|each (hour|day)|over the day|"
                       r"at night|noon|seasonal)\b", re.I)
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def level(dimension: str, text: str) -> str:
    if dimension == "certainty":
        return "likely" if ESTIMATED.search(text) else "certain"
    if dimension == "domain_knowledge":
        return "specialist" if any(term in text.lower() for term in SPECIALIST) else "general"
    if dimension == "explicitness":
        return "explicit" if NUMBER.search(text) else "implied"
    return "variable" if ISO_DATE.search(text) else "predictable" if RECURRING.search(text) else "straightforward"


def cloze_answer(truth: str, kind: str, documents: str) -> str:
    if truth in documents:
        return truth
    if kind == "number":
        found = [float(n) for n in NUMBER.findall(documents)]
        return str(min(found, key=lambda n: abs(n - float(truth.replace(",", ""))))) if found else ""
    if kind == "name":
        return " ".join(w for w in truth.split() if w in documents)
    return ""


# -- the recording loop both share ------------------------------------------------------------------
def record(run: Callable[[Any], None], answer: Callable[[str, dict], dict],
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
    from tsagent_plugins.tasks.drcik.loader import load_tasks

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
    from click.testing import CliRunner

    from harness import plugins
    from harness.cli import cli

    out = Path(out)
    rules, n = generation_rules(spec_file)
    write_script(out / "generate.yaml", rules, f"Scripted answers for `harness dr-generate {spec_file}`.\n"
                 f"Written by `harness dr-offline-scripts` (do not edit by hand): {len(rules)} rules for {n} "
                 "generator requests and the judges.")
    plugins.plugins().commands(cli)
    with tempfile.TemporaryDirectory() as tmp:
        gen = Path(tmp) / "gen"
        result = CliRunner().invoke(cli, ["dr-generate", str(spec_file), "--out", str(gen), "--model-backend",
                                          "scripted", "--script", str(out / "generate.yaml"), "--jobs", "2"])
        if result.exit_code != 0:
            raise click.ClickException(f"dr-generate with the new script failed: {result.output}{result.exception}")
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

    See docs/drcik-own-data.md for the chain they answer."""
    made = make_all(spec_file, out)
    click.echo(f"{out}: generate.yaml ({made['generate']} rules), audit.yaml ({made['audit']} rules), llm-dp.yaml "
               f"({made['forecast']} tasks), reviews.jsonl ({made['reviews']} records) for {len(made['tasks'])} "
               "task(s)")
