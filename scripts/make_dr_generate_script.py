"""Write the scripted model's script for ``harness dr-generate tasks/drcik/generate-sample.yaml``.

The pipeline is run in-process with an *oracle* in place of the models: a small rule-based author that
answers each Appendix L prompt from the values it was filled with (profiles, a rewrite that swaps the
entity names, events split from the context, a linear chain with exactly ``hops`` new contexts, five
distractors per subtype with off-window dates outside the window, documents listing what their metadata
provides).  Every request is recorded and becomes a match rule of the script whose ``contains`` is the
shortest window of the prompt that no other prompt has; every judge answers ``correct`` through one rule
per judge prompt.  Re-run it when a prompt, the sample or the pipeline's inputs change::

    python scripts/make_dr_generate_script.py   # -> tests/fixtures/scripts/dr_generate/sample.yaml
"""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime, timedelta
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "fixtures" / "scripts" / "dr_generate" / "sample.yaml"
SPEC = REPO / "tasks" / "drcik" / "generate-sample.yaml"

ENTITIES = {"caf_pump_flow": ("pumping station", "water outflow", "water utility"),
            "caf_pump_power": ("pumping station", "electricity consumption", "water utility"),
            "caf_solar_ghi": ("research station", "global horizontal irradiance", None),
            "caf_store_sales": ("grocery store", "daily items sold", None)}
PROFILE_NAMES = {"pumping station": ["Kestrel Ridge Pumping Station", "Alder Creek Pumping Station",
                                     "Marlow Point Pumping Station"],
                 "water utility": ["Harrowgate Water Cooperative"],
                 "research station": ["Quill Basin Field Station", "Sable Flats Field Station"],
                 "grocery store": ["Fennel & Rye Grocery", "Brightwater Corner Market"]}
#: real-looking names in the CAF contexts and the entity each stands for
MENTIONS = {"The Riverside pumping station": "pumping station", "the Eastvale municipal water utility": "water utility",
            "The Hillcrest booster pumping station": "pumping station", "the Northgate water board": "water utility",
            "The Dry Lake research station": "research station", "A neighbourhood grocery store": "grocery store",
            "the station": None, "The store": None}
TIMESTAMP = "%Y-%m-%d %H:%M:%S"
DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2}:\d{2})?")


def fenced(text: str, label: str) -> str:
    return text.split(f"{label}\n```\n", 1)[1].split("\n```", 1)[0]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip()) if s.strip()]


def stamp(text: str) -> str:
    return text if len(text) > 10 else text + " 00:00:00"


class Oracle:
    """Answers each generator prompt from its values (see the module docstring)."""

    def __init__(self, hops: int, per_subtype: int):
        self.hops, self.per_subtype = hops, per_subtype

    def answer(self, name: str, v: dict) -> dict:
        return getattr(self, name)(v)

    def entity_extraction(self, v):
        entities = {}
        for tid, (entity, variable, parent) in ENTITIES.items():
            e = entities.setdefault(entity, {"entity_name": entity, "time_series_variable": [], "source_tasks": [],
                                             "source_tasks_as_primary_entity": []})
            e["time_series_variable"].append(variable)
            e["source_tasks"].append(tid)
            e["source_tasks_as_primary_entity"].append(tid)
            if parent:
                p = entities.setdefault(parent, {"entity_name": parent, "time_series_variable": [], "source_tasks": [],
                                                 "source_tasks_as_primary_entity": []})
                p["source_tasks"].append(tid)
        return {"entities": list(entities.values()),
                "contain_relations": [{"parent_entity": "water utility", "child_entity": "pumping station",
                                       "evidence": "a pumping station is part of a water utility"}]}

    def profile_generation(self, v):
        names = PROFILE_NAMES[v["entity_name"]][:int(v["k_profiles"])]
        return {"entity_name": v["entity_name"],
                "profiles": [{"profile_id": str(i), "name": n,
                              "details": {"category": v["entity_name"], "region": "Westmarch Province",
                                          "established": str(1961 + 7 * i)}} for i, n in enumerate(names, 1)]}

    def profile_assignment(self, v):
        profile = json.loads(v["primary_entity_profile"])
        ancestors = json.loads(v["ancestor_chain_profiles"])
        text = v["original_context"]
        for mention, entity in MENTIONS.items():
            if entity is None:
                replacement = f"the {profile['details']['category']}" if mention[0].islower() else \
                    f"The {profile['details']['category']}"
            elif entity == v["primary_entity_name"]:
                replacement = f"{profile['name']} ({entity})"
            else:
                replacement = next((a["name"] for a in ancestors if a["entity_name"] == entity), mention)
            text = text.replace(mention, replacement, 1) if entity is not None else text
        background = text.split("\n\n", 1)[0]
        return {"source_task_id": v["source_task_id"], "rewritten_context": text,
                "background_rewritten_context": background,
                "applied_profiles": {"primary_entity": {"entity_name": v["primary_entity_name"],
                                                        "profile_id": profile["profile_id"]},
                                     "ancestor_entities": [{"entity_name": a["entity_name"],
                                                            "profile_id": a["profile_id"]} for a in ancestors]}}

    def evidence_decomposition(self, v):
        parts = v["context"].split("\n\n")
        events = [{"event_id": "E1", "event": parts[0], "time_start": None, "time_end": None}]
        graph, context = [], []
        scenario = sentences(parts[1]) if len(parts) > 1 else []
        if scenario:
            cause, effect = scenario[0], " ".join(scenario[1:]) or scenario[0]
            dates = [stamp(d) for d in DATE.findall(parts[1])]
            events.append({"event_id": "E2", "event": cause, "time_start": dates[0] if dates else None,
                           "time_end": dates[0] if dates else None})
            if len(scenario) > 1:
                events.append({"event_id": "E3", "event": effect, "time_start": dates[0] if dates else None,
                               "time_end": dates[-1] if dates else None})
                graph.append({"cause_event_id": "E2", "effect_event_id": "E3", "relation": "cause"})
                context.append(f"{cause} {effect}")
        for extra in parts[2:]:
            events.append({"event_id": f"E{len(events) + 1}", "event": extra, "time_start": None, "time_end": None})
        return {"extracted_events": events, "causal_graph": graph, "causal_context": context}

    def chain_expansion(self, v):
        item = json.loads(v["context"])
        originals = item["events"]
        contexts = []
        new_texts = [f"Reasoning step {i}: the consequence of the preceding condition carries forward to the "
                     f"next observation of the series." for i in range(1, self.hops + 1)]
        # interleave: original, new, ..., remaining news at the end
        slots = []
        for k, event in enumerate(originals):
            slots.append(("original", event))
            if k < len(new_texts):
                slots.append(("new", new_texts[k]))
        slots += [("new", t) for t in new_texts[len(originals):]]
        counts = {"new": 0, "original_refactored": 0}
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
                "detail_coverage": [{"detail_id": f"D{e['event_id'][1:]}", "covered_by_context_ids": [c["context_id"]
                                     for c in contexts if c.get("source_context_id") == e["event_id"]],
                                     "covered_by_edge_ids": []} for e in originals]}

    def source_metadata(self, v):
        return {"name": "Operations note", "type": "internal memo", "issuer": "Operations desk",
                "provides": sentences(v["context"].replace("\n", " ")), "notes": "Covers only the facts listed.",
                "source_content_length": "300-500 words"}

    def distractor_generic(self, v):
        kind, n = v["distractor_type"], int(v["num_distractors"])
        out = []
        for i in range(1, n + 1):
            if kind == "off-window":
                start = datetime.strptime(v["supplemental_context_block"].split(": ", 1)[1].split(" to ")[0], TIMESTAMP)
                when = (start - timedelta(days=370 + 30 * i)).strftime("%Y-%m-%d")
                provides = [f"On {when} a comparable episode affected the same series for a few hours.",
                            "Operations returned to normal the following day."]
            elif kind == "off-entity":
                provides = [f"A similar entity of the same type reported event {i} with the opposite outcome."]
            elif kind == "off-variable":
                provides = [f"Variant {i}: the episode changed a different variable of the entity, not the target."]
            else:
                provides = [f"Note {i}: routine facts about the entity with no bearing on the target variable."]
            out.append({"provides": provides, "distractor_type": kind, "reason": f"{kind} distractor {i}"})
        return {"distractors": out}

    def counterfactual_spec(self, v):
        return {"reasoning": "The history rises and falls daily; call it flat.", "scope": "global",
                "feature_type": "periodicity", "gt_history_description": "A clear daily cycle.",
                "gt_future_pattern": "The daily cycle continues.",
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


def record_requests() -> list[tuple[str, str]]:
    """Run the pipeline on the sample with the oracle; ``(rendered prompt, answer text)`` per generator request."""
    sys.path.insert(0, str(REPO))
    from tsagent_plugins.tasks.drcik.generation import caf, engine as eng, prompts
    from tsagent_plugins.tasks.drcik.generation.pipeline import Pipeline
    from tsagent_plugins.tasks.drcik.generation.spec import load_spec
    import tempfile

    spec = load_spec(SPEC)
    tasks = caf.read_folder(spec.path(SPEC, spec.input))
    oracle = Oracle(spec.hops, spec.distractors_per_subtype)
    seen: list[tuple[str, str]] = []

    def ask(self, prompt_name, values, schema, role=None):
        text = json.dumps(oracle.answer(prompt_name, values), ensure_ascii=False)
        seen.append((prompts.load(prompt_name).render(**values), text))
        return eng.parse_json(text, schema)

    eng.Attempt.ask = ask
    eng.Engine._judge = lambda self, part, calls, judged: None
    with tempfile.TemporaryDirectory() as tmp:
        engine = eng.Engine(Path(tmp), {}, rounds=1, jobs=1)
        states = Pipeline(tasks, engine, spec.hops, spec.distractors_per_subtype, spec.window_shift_weeks).run()
        bad = {tid: (st.missing, st.flags) for tid, st in states.items() if st.missing or st.flags}
        if bad:
            raise SystemExit(f"the oracle's answers do not pass the pipeline's checks: {bad}")
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


def main() -> None:
    requests = record_requests()
    texts = [r for r, _ in requests]
    rules = []
    for judge, phrase in (("judge_entity", "Primary Entity Extraction Slice For This Task"),
                          ("judge_evidence", "Ground Truth Evidences (events) Extraction Result"),
                          ("judge_chain", "Expanded Output To Validate"),
                          ("judge_supporting", "Supporting Documents To Validate"),
                          ("judge_distractor", "Distractor Documents To Validate")):
        verdict = {"judge": "correct", "confidence": "high", "summary": f"{judge}: usable as generated",
                   "issue_types": [], "findings": [], "correction_hint": ""}
        rules.append({"when": {"contains": phrase}, "reply": {"text": json.dumps(verdict)}})
    for i, (prompt, answer) in enumerate(requests):
        others = texts[:i] + texts[i + 1:]
        if prompt in others:  # an identical request elsewhere gets the same answer: one rule serves both
            if any(r["when"]["contains"] in prompt for r in rules[5:]):
                continue
        rules.append({"when": {"contains": unique_window(prompt, [o for o in others if o != prompt])},
                      "reply": {"text": answer}})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    header = ("# Scripted answers for\n"
              "# `harness dr-generate tasks/drcik/generate-sample.yaml --model-backend scripted`.\n"
              "# Written by scripts/make_dr_generate_script.py (do not edit by hand): one match rule per generator\n"
              "# request of the sample (a window of its prompt no other prompt has) and one per judge prompt.\n")
    body = yaml.safe_dump({"model": "scripted-model", "match": rules, "final": {"text": "not scripted"}},
                          sort_keys=False, allow_unicode=True, width=100)
    OUT.write_text(header + body, encoding="utf-8")
    print(f"{OUT}: {len(rules)} rules for {len(requests)} generator requests")


if __name__ == "__main__":
    main()
