"""The rule-based oracles behind ``harness dr-offline-scripts`` (:mod:`.offline`): answers to the Appendix L
prompts of the generation (:class:`Oracle`) and of the quality-control passes (:func:`level`,
:func:`cloze_answer`) computed from the values each prompt is filled with (rules in :mod:`.offline`'s
docstring).  Stand-ins for a model, so the chain can run offline; the numbers they give test the pipeline."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timedelta

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
