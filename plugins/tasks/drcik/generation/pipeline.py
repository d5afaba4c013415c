# Over 300 lines: the eight steps of Dr-CiK Section 4.1 read best side by side, in order.
"""The eight steps of Dr-CiK's generation pipeline (Section 4.1, Figure 2) as stages of :mod:`.engine`.

Phase 1, entity disambiguation: (1) entity extraction over the pooled background corpus, guarded by the
Entity Judge (one verdict per task's slice); (2) profile generation, the minimal set of synthetic
profiles reused across the pool; (3) the window shift of real series (code, :mod:`.window`) and the
profile assignment that rewrites each context.  Phase 2, multi-hop decomposition: (4) evidence
decomposition (Ground-Truth Evidence Judge); (5) reasoning-chain expansion to exactly ``hops`` new
contexts (Reasoning Chain Judge and :func:`.checks.chain_problems`).  Phase 3, documents: (6) source
metadata with the overlapping assignment; (7) distractor metadata, five per subtype; (8) Meta2Doc
rendering, guarded per task by the Supporting Documents Judge and per task × subtype by the Distractor
Documents Judge.

Choices the paper leaves open (each written down once, here):

* profiles per entity type (step 2): one per task whose primary entity has that type, plus one for
  the off-entity distractors ("another entity of the same type"); one per ancestor-only entity type
  (ancestors are shared context, reused by every task under them).  Tasks take their type's profiles
  in task-id order.
* the chain (step 5) expands one item per task: the events other than the background item E1 with
  their causal context (``item_kind`` ``causal_chain``, or ``events`` when the graph is empty; E1 alone
  when there is nothing else).  ``item_specific_rules`` asks to keep every timestamp of the input.
* supporting documents (step 6): one per adjacent pair of chain contexts (the overlapping assignment)
  plus one for the rewritten background (the E1 item).
* the counterfactual-history subtype makes one specification and one item per distractor.
* the evidence role of Appendix K.2: an extracted event that starts at or after the first future
  timestamp describes the forecast window (``prospective``); every other one is ``retrospective``.  Step 4's
  code check holds each event's ``time_start``/``time_end`` to the dates its text names, so the role follows
  the text (:func:`.checks.event_problems`).
* step 3 rewrites the forecasting objective too, with the same prompt and profile (:mod:`.anonymity`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from tsagent_plugins.tasks.drcik.generation import anonymity, checks, schemas as sc
from tsagent_plugins.tasks.drcik.generation.caf import CafTask
from tsagent_plugins.tasks.drcik.generation.engine import Engine, JudgeCall, Stage, Unit, UnitResult, unit_id
from tsagent_plugins.tasks.drcik.generation.window import shift_task

#: release subtype names, in the release's document order; ``timeseries`` is counterfactual history
SUBTYPES = ("confounder", "noisy", "timeseries", "profile", "temporal")
GENERIC = ("confounder", "noisy", "profile", "temporal")
COUNTERFACTUAL_NAME = "counterfactual-history"
#: the one extra Distractor Judge rule for off-entity distractors (Appendix L.2, the note before the prompt)
OFF_ENTITY_RULE = ("- An off-entity distractor may describe the same scenario as the real context for another "
                   "entity of the same type; that swap is what makes it a distractor, not a flaw.")
ITEM_RULES = "- Keep every timestamp of the input, each with the state or event it dates."

#: stage folder names, by step
STAGES = {1: "step1_entity_extraction", 2: "step2_profile_generation", 3: "step3_profile_assignment",
          4: "step4_evidence_decomposition", 5: "step5_chain_expansion", 6: "step6_source_metadata",
          7: "step7_distractor_metadata", 8: "step8_meta2doc"}
JUDGES = {"judge_entity": 1, "judge_evidence": 4, "judge_chain": 5, "judge_supporting": 8, "judge_distractor": 8}


@lru_cache(maxsize=None)
def distractor_types() -> dict[str, dict[str, str]]:
    return yaml.safe_load((Path(__file__).parent / "distractor_types.yaml").read_text(encoding="utf-8"))


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


def series_lines(stamps: list[str], values: list[float]) -> str:
    """Direct-prompt format: one ``(timestamp, value)`` line per point."""
    return "\n".join(f"({t}, {v:g})" for t, v in zip(stamps, values))


@dataclass
class TaskState:
    """What the steps learn about one task."""

    caf: CafTask
    shifted: CafTask
    entity: str | None = None
    variable: str | None = None
    ancestors: list[str] = field(default_factory=list)
    profile: dict | None = None
    other_profile: dict | None = None
    ancestor_profiles: list[dict] = field(default_factory=list)
    rewrite: dict | None = None   # step 3's output, with the rewritten objective as ``target_description``
    real_names: list[str] = field(default_factory=list)
    evidence: dict | None = None
    chain: dict | None = None
    supporting: list[dict] = field(default_factory=list)   # source metadata, background first
    distractors: dict[str, list[dict]] = field(default_factory=dict)  # subtype -> metadata
    documents: dict[str, list[str]] = field(default_factory=dict)     # "supporting" | subtype -> contents
    flags: list[dict] = field(default_factory=list)
    missing: str | None = None  # the first stage that left this task without an output


class Pipeline:
    """Runs the eight steps over ``tasks`` on ``engine`` (its clients: ``generator`` and the five judges).

    ``hops``: new contexts per chain; ``per_subtype``: distractors per subtype; ``shift_weeks``: the
    window shift of real series."""

    def __init__(self, tasks: list[CafTask], engine: Engine, hops: int = 4, per_subtype: int = 5,
                 shift_weeks: int = 156):
        self.engine, self.hops, self.per_subtype = engine, hops, per_subtype
        self.state = {t.task_id: TaskState(t, shift_task(t, shift_weeks)) for t in tasks}
        self.results: dict[str, dict[str, UnitResult]] = {}

    def run(self) -> dict[str, TaskState]:
        for step in (self.step1, self.step2, self.step3, self.step4, self.step5, self.step6, self.step7,
                     self.step8):
            step()
        return self.state

    # -- helpers -----------------------------------------------------------------------------------
    def _run(self, step: int, stage: Stage, units: list[Unit]) -> dict[str, UnitResult]:
        results = self.engine.run(stage, units)
        self.results[stage.name] = results
        return results

    def _live(self) -> list[TaskState]:
        return [s for s in self.state.values() if s.missing is None]

    def _take(self, st: TaskState, result: UnitResult, stage: str) -> Any:
        """The unit's output for task ``st``; records a flag, or the task as missing when no output."""
        if result.flagged:
            st.flags.append({"stage": stage, "unit": result.unit, "reason": result.reason})
        if result.output is None and st.missing is None:
            st.missing = stage
        return result.output

    # -- Phase 1 -----------------------------------------------------------------------------------
    def step1(self) -> None:
        tasks = [s.shifted for s in self.state.values()]
        corpus = "\n\n".join(f"[{t.task_id}] {t.context.background.strip()}" for t in tasks)
        ids = [t.task_id for t in tasks]

        def generate(unit, attempt):
            return attempt.ask("entity_extraction", {"background_corpus": corpus}, sc.EntityExtraction)

        def check(unit, out):
            return checks.entity_problems(out, ids)

        def judge(unit, out):
            calls = []
            for t in tasks:
                slice_ = [{"entity_name": e["entity_name"],
                           "time_series_variable_for_this_task": _variables_for(e, t.task_id)}
                          for e in out["entities"] if t.task_id in e["source_tasks_as_primary_entity"]]
                calls.append(JudgeCall("judge_entity", {"task_id": t.task_id, "context": t.context.text(),
                                                        "entity_extraction": dumps({"primary_entities": slice_})},
                                       t.task_id))
            return calls

        result = self._run(1, Stage(STAGES[1], 1, generate, check, judge, "judge_entity"), [Unit("pool")])["pool"]
        out = result.output
        for st in self.state.values():
            self._take(st, result, STAGES[1])
            if out is None:
                continue
            for e in out["entities"]:
                if st.caf.task_id in e["source_tasks_as_primary_entity"]:
                    st.entity = e["entity_name"]
                    variables = _variables_for(e, st.caf.task_id)
                    st.variable = variables[0] if variables else st.caf.target_description
            parents = {r["child_entity"]: r["parent_entity"] for r in out["contain_relations"]}
            node, seen = st.entity, set()
            while node in parents and parents[node] not in seen:
                node = parents[node]
                seen.add(node)
                st.ancestors.append(node)
            if st.entity is None and st.missing is None:
                st.missing = STAGES[1]
        self.extraction = out

    def step2(self) -> None:
        live = self._live()
        primary: dict[str, list[TaskState]] = {}
        for st in sorted(live, key=lambda s: s.caf.task_id):
            primary.setdefault(st.entity, []).append(st)
        ancestors = sorted({a for st in live for a in st.ancestors} - set(primary))
        need = {e: len(sts) + 1 for e, sts in primary.items()} | {a: 1 for a in ancestors}
        units = [Unit(unit_id(e), e) for e in sorted(need)]

        def variables(entity):
            return sorted({st.variable for st in primary.get(entity, []) if st.variable})

        def generate(unit, attempt):
            return attempt.ask("profile_generation", {"entity_name": unit.data,
                                                      "all_time_series_variables": dumps(variables(unit.data)),
                                                      "k_profiles": need[unit.data]}, sc.ProfileSet)

        def check(unit, out):
            problems = []
            if out["entity_name"] != unit.data:
                problems.append(f"entity_name {out['entity_name']!r} is not {unit.data!r}")
            if len(out["profiles"]) != need[unit.data]:
                problems.append(f"{len(out['profiles'])} profiles, {need[unit.data]} asked")
            names = [p["name"] for p in out["profiles"]]
            if len(set(names)) != len(names):
                problems.append("profile names repeat")
            return problems

        results = self._run(2, Stage(STAGES[2], 2, generate, check), units)
        by_entity = {u.data: results[u.id] for u in units}
        for entity, sts in primary.items():
            for i, st in enumerate(sts):
                out = self._take(st, by_entity[entity], STAGES[2])
                if out is None:
                    continue
                st.profile, st.other_profile = out["profiles"][i], out["profiles"][-1]
        for st in live:
            for a in st.ancestors:
                out = self._take(st, by_entity[a], STAGES[2]) if a in by_entity else None
                if out is not None:
                    st.ancestor_profiles.append({"entity_name": a, **out["profiles"][0]})

    def step3(self) -> None:
        live = self._live()

        def ask(st, attempt, original):
            return attempt.ask("profile_assignment", {
                "original_context": original, "source_task_id": st.caf.task_id,
                "primary_entity_name": st.entity, "primary_entity_profile": dumps(st.profile),
                "ancestor_chain_profiles": dumps(st.ancestor_profiles)}, sc.ProfileAssignment)

        def generate(unit, attempt):
            # the context, then the forecasting objective with the same profile (.anonymity)
            st = self.state[unit.id]
            out = ask(st, attempt, st.shifted.context.text())
            out["target_description"] = ask(st, attempt, st.caf.target_description)["rewritten_context"]
            return out

        def check(unit, out):
            from tsagent_plugins.tasks.drcik.generation.window import dates_in

            st = self.state[unit.id]
            problems = []
            if out["source_task_id"] != st.caf.task_id:
                problems.append(f"source_task_id {out['source_task_id']!r} is not {st.caf.task_id!r}")
            if st.profile["name"] not in out["rewritten_context"]:
                problems.append(f"the rewritten context does not name the profile {st.profile['name']!r}")
            if sorted(dates_in(out["rewritten_context"])) != sorted(dates_in(st.shifted.context.text())):
                problems.append("the rewritten context changed the (shifted) dates of the original")
            names = self.real_names(st, out)
            for field_name in ("target_description", "background_rewritten_context"):
                left = anonymity.named(out[field_name], names)
                if left:
                    problems.append(f"the rewritten {field_name} still names {', '.join(left)} (removed from the "
                                    "context as real)")
            return problems

        results = self._run(3, Stage(STAGES[3], 3, generate, check), [Unit(s.caf.task_id) for s in live])
        for st in live:
            st.rewrite = self._take(st, results[st.caf.task_id], STAGES[3])
            if st.rewrite is not None:
                st.real_names = self.real_names(st, st.rewrite)

    @staticmethod
    def real_names(st: TaskState, rewrite: dict) -> list[str]:
        """The task's real names (:func:`.anonymity.real_names`): the capitalised words each rewrite (context,
        objective) dropped."""
        return anonymity.real_names([(st.shifted.context.text(), rewrite["rewritten_context"]),
                                     (st.caf.target_description, rewrite["target_description"])])

    # -- Phase 2 -----------------------------------------------------------------------------------
    def step4(self) -> None:
        live = self._live()

        def generate(unit, attempt):
            return attempt.ask("evidence_decomposition", {"context": self.state[unit.id].rewrite["rewritten_context"]},
                               sc.EvidenceDecomposition)

        def check(unit, out):
            ids = [e["event_id"] for e in out["extracted_events"]]
            problems = [] if "E1" in ids else ["no background item E1"]
            if len(set(ids)) != len(ids):
                problems.append("event ids repeat")
            for edge in out["causal_graph"]:
                if edge["cause_event_id"] not in ids or edge["effect_event_id"] not in ids:
                    problems.append(f"causal edge {edge['cause_event_id']}->{edge['effect_event_id']} names an "
                                    "unknown event")
            if len(out["causal_context"]) != len(out["causal_graph"]):
                problems.append(f"{len(out['causal_context'])} causal contexts for {len(out['causal_graph'])} edges")
            first_future = self.state[unit.id].shifted.series.datetimes()[len(self.state[unit.id].shifted.series
                                                                              .history_timestamps)]
            problems += checks.event_problems(out["extracted_events"], first_future)
            return problems

        def judge(unit, out):
            st = self.state[unit.id]
            return [JudgeCall("judge_evidence", {"task_id": unit.id, "context": st.rewrite["rewritten_context"],
                                                 "gt_evidence_extraction": dumps(out)})]

        results = self._run(4, Stage(STAGES[4], 4, generate, check, judge, "judge_evidence"),
                            [Unit(s.caf.task_id) for s in live])
        for st in live:
            st.evidence = self._take(st, results[st.caf.task_id], STAGES[4])

    def chain_item(self, st: TaskState) -> tuple[str, list[str], str]:
        """``(item_kind, source event ids, item text)`` of a task's chain expansion (module docstring)."""
        events = [e for e in st.evidence["extracted_events"] if e["event_id"] != "E1"]
        if not events:
            events = st.evidence["extracted_events"][:1]
        kind = "causal_chain" if st.evidence["causal_graph"] else "events"
        item = {"events": events, "causal_graph": st.evidence["causal_graph"],
                "causal_context": st.evidence["causal_context"]}
        return kind, [e["event_id"] for e in events], dumps(item)

    def step5(self) -> None:
        live = self._live()

        def values(unit):
            kind, ids, text = self.chain_item(self.state[unit.id])
            return {"hops": self.hops, "item_kind": kind, "source_event_ids": ", ".join(ids),
                    "item_specific_rules": ITEM_RULES, "context": text}

        def generate(unit, attempt):
            return attempt.ask("chain_expansion", values(unit), sc.ChainExpansion)

        def check(unit, out):
            contexts = [c["context_id"] for c in out["contexts"]]
            problems = checks.chain_problems(contexts, [(e["source_context_id"], e["target_context_id"])
                                                        for e in out["relation_graph"]])
            new = sum(c["origin"] == "new" for c in out["contexts"])
            if new != self.hops:
                problems.append(f"{new} new contexts, exactly {self.hops} asked")
            covered = {c.get("source_context_id") for c in out["contexts"]}
            _, ids, _ = self.chain_item(self.state[unit.id])
            problems += [f"source event {i} is in no context" for i in ids if i not in covered]
            return problems

        def judge(unit, out):
            v = values(unit)
            return [JudgeCall("judge_chain", {"context": v["context"], "expanded_output": dumps(out),
                                              "item_kind": v["item_kind"], "source_event_ids": v["source_event_ids"]})]

        results = self._run(5, Stage(STAGES[5], 5, generate, check, judge, "judge_chain"),
                            [Unit(s.caf.task_id) for s in live])
        for st in live:
            st.chain = self._take(st, results[st.caf.task_id], STAGES[5])

    # -- Phase 3 -----------------------------------------------------------------------------------
    def bundles(self, st: TaskState) -> list[str]:
        """Step 6's evidence bundles: the background, then each overlapping pair of chain contexts with the
        reasoning link between them."""
        text = {c["context_id"]: c["context"] for c in st.chain["contexts"]}
        link = {f"{e['source_context_id']}->{e['target_context_id']}": e["relational_context"]
                for e in st.chain["relation_graph"]}
        order = [c["context_id"] for c in st.chain["contexts"]]
        out = [st.rewrite["background_rewritten_context"]]
        for a, edge, b in checks.overlapping_assignment(order):
            out.append(f"{text[a]}\n{link.get(edge, '')}\n{text[b]}".strip())
        return out

    def step6(self) -> None:
        live = self._live()
        units = [Unit(unit_id(st.caf.task_id, f"{k:02d}"), (st.caf.task_id, bundle))
                 for st in live for k, bundle in enumerate(self.bundles(st))]

        def generate(unit, attempt):
            return attempt.ask("source_metadata", {"context": unit.data[1]}, sc.SourceMetadata)

        results = self._run(6, Stage(STAGES[6], 6, generate), units)
        for unit in units:
            st = self.state[unit.data[0]]
            st.supporting.append(self._take(st, results[unit.id], STAGES[6]))

    def step7(self) -> None:
        live = self._live()
        types = distractor_types()
        units = [Unit(unit_id(st.caf.task_id, sub), (st.caf.task_id, sub)) for st in live for sub in GENERIC]
        units += [Unit(unit_id(st.caf.task_id, "timeseries", f"{i:02d}"), (st.caf.task_id, "timeseries"))
                  for st in live for i in range(1, self.per_subtype + 1)]

        def supplemental(st, sub):
            if sub == "profile":
                return f"Other entity of the same type ({st.entity}):\n{dumps(st.other_profile)}"
            if sub == "temporal":
                start, end = st.shifted.window()
                return f"Task time window: {start:%Y-%m-%d %H:%M:%S} to {end:%Y-%m-%d %H:%M:%S}"
            return ""

        def generate(unit, attempt):
            tid, sub = unit.data
            st = self.state[tid]
            if sub == "timeseries":
                s = st.shifted.series
                spec = attempt.ask("counterfactual_spec", {
                    "history_values": series_lines(s.history_timestamps, s.history_values),
                    "future_values": series_lines(s.future_timestamps, s.future_values),
                    "context": st.rewrite["rewritten_context"]}, sc.CounterfactualSpec)
                item = attempt.ask("counterfactual_item", {
                    "context": st.rewrite["background_rewritten_context"], "scope": spec["scope"],
                    "feature_type": spec["feature_type"],
                    "distractor_history_description": spec["distractor_history_description"],
                    "distractor_future_pattern": spec["distractor_future_pattern"]}, sc.DistractorSet)
                return {"specification": spec, "distractors": item["distractors"]}
            t = types[sub]
            return attempt.ask("distractor_generic", {
                "context": st.rewrite["rewritten_context"], "supplemental_context_block": supplemental(st, sub),
                "num_distractors": self.per_subtype, "distractor_type": t["name"],
                "distractor_type_description": t["description"], "distractor_type_requirements": t["requirements"]},
                sc.DistractorSet)

        def check(unit, out):
            tid, sub = unit.data
            want = 1 if sub == "timeseries" else self.per_subtype
            name = "timeseries" if sub == "timeseries" else types[sub]["name"]
            problems = [] if len(out["distractors"]) == want else [f"{len(out['distractors'])} distractors, "
                                                                   f"{want} asked"]
            problems += [f"distractor {i} has type {d['distractor_type']!r}, not {name!r}"
                         for i, d in enumerate(out["distractors"], 1) if d["distractor_type"] != name]
            if sub == "temporal":
                start, end = self.state[tid].shifted.window()
                problems += checks.off_window_problems([" ".join(d["provides"]) for d in out["distractors"]],
                                                       start, end)
            return problems

        results = self._run(7, Stage(STAGES[7], 7, generate, check), units)
        for unit in units:
            tid, sub = unit.data
            st = self.state[tid]
            out = self._take(st, results[unit.id], STAGES[7])
            if out is not None:
                st.distractors.setdefault(sub, []).extend(out["distractors"])

    def step8(self) -> None:
        live = self._live()
        units = [Unit(unit_id(st.caf.task_id, "supporting"), (st.caf.task_id, "supporting")) for st in live]
        units += [Unit(unit_id(st.caf.task_id, sub), (st.caf.task_id, sub)) for st in live for sub in SUBTYPES]
        types = distractor_types()

        def metadata(st, group):
            if group == "supporting":
                return st.supporting
            return [{"name": f"{types.get(group, {}).get('name', COUNTERFACTUAL_NAME)} source", "type": "document",
                     "provides": d["provides"]} for d in st.distractors.get(group, [])]

        def generate(unit, attempt):
            st = self.state[unit.data[0]]
            return [attempt.ask("meta2doc", {"source_metadata": dumps(m)}, sc.DocumentContent)["content"]
                    for m in metadata(st, unit.data[1])]

        def check(unit, out):
            tid, group = unit.data
            problems = [] if out else ["no document"]
            if group != "supporting" and len(out) != self.per_subtype:
                problems.append(f"{len(out)} documents of subtype {group}, {self.per_subtype} needed")
            if group == "temporal":
                start, end = self.state[tid].shifted.window()
                problems += checks.off_window_problems(out, start, end)
            return problems

        def judge(unit, out):
            tid, group = unit.data
            st = self.state[tid]
            context = st.rewrite["rewritten_context"]
            if group == "supporting":
                docs = "\n\n".join(f"id: Supporting Document {i:02d}\n{c}" for i, c in enumerate(out, 1))
                return [JudgeCall("judge_supporting", {"task_id": tid, "context": context,
                                                       "supporting_documents": docs})]
            docs = "\n\n".join(f"id: Distractor Document {i:02d}\n{c}" for i, c in enumerate(out, 1))
            name = types[group]["name"] if group in types else COUNTERFACTUAL_NAME
            return [JudgeCall("judge_distractor", {"task_id": tid, "context": context, "distractor_type": name,
                                                   "distractor_documents": docs,
                                                   "distractor_type_specific_rules":
                                                       OFF_ENTITY_RULE if group == "profile" else ""})]

        results = self._run(8, Stage(STAGES[8], 8, generate, check, judge, "judge_supporting+judge_distractor"),
                            units)
        for unit in units:
            tid, group = unit.data
            st = self.state[tid]
            out = self._take(st, results[unit.id], STAGES[8])
            if out is not None:
                st.documents[group] = out


def _variables_for(entity: dict, task_id: str) -> list[str]:
    """The variable of ``entity`` for ``task_id`` (the prompt keeps the two lists in the same order)."""
    primary = entity["source_tasks_as_primary_entity"]
    variables = entity["time_series_variable"]
    if task_id in primary and primary.index(task_id) < len(variables):
        return [variables[primary.index(task_id)]]
    return variables[:1]
