"""Code checks beside the judges: the chain is one path, the supporting documents overlap by one node, the
off-window distractors stay outside the window."""

from __future__ import annotations

from datetime import datetime

from tsagent_plugins.tasks.drcik.generation import checks
from tsagent_plugins.tasks.drcik.generation.checks import chain_problems, off_window_problems, overlapping_assignment

NODES = ["R1", "R2", "R3", "R4"]
PATH = [("R1", "R2"), ("R2", "R3"), ("R3", "R4")]


def test_a_linear_chain_passes():
    assert chain_problems(NODES, PATH) == []


def test_a_branch_is_refused():
    problems = chain_problems(NODES, [("R1", "R2"), ("R2", "R3"), ("R2", "R4")])
    assert "branch: R2 leads to R3, R4" in problems and "gap: " not in " ".join(problems)


def test_a_cycle_is_refused():
    problems = chain_problems(NODES, [("R1", "R2"), ("R2", "R3"), ("R3", "R1")])
    assert any(p.startswith("cycle through") for p in problems)


def test_a_shortcut_is_refused():
    problems = chain_problems(NODES, [("R1", "R2"), ("R2", "R4"), ("R3", "R4")])
    assert "shortcut: R2->R4 skips 1 context(s)" in problems


def test_missing_and_unknown_nodes_are_refused():
    assert "gap: R4 on no edge" in chain_problems(NODES, PATH[:2])
    assert "edge R3->R9 names an unknown context" in chain_problems(NODES, [*PATH[:2], ("R3", "R9")])


def test_consecutive_supporting_documents_share_exactly_one_node():
    docs = overlapping_assignment(["R1", "R2", "R3", "R4", "R5"])
    assert docs == [("R1", "R1->R2", "R2"), ("R2", "R2->R3", "R3"), ("R3", "R3->R4", "R4"), ("R4", "R4->R5", "R5")]
    for a, b in zip(docs, docs[1:]):
        assert {a[0], a[2]} & {b[0], b[2]} == {a[2]}


def test_off_window_dates_must_lie_outside_the_window():
    start, end = datetime(2026, 6, 8), datetime(2026, 6, 10, 23)
    assert off_window_problems(["Pumps were serviced on 2025-06-10 04:00:00."], start, end) == []
    assert off_window_problems(["On 2026-06-09 the pumps..."], start, end) == [
        "off-window distractor 1 names 2026-06-09, inside the task window 2026-06-08 to 2026-06-10"]
    assert off_window_problems(["Last summer the pumps..."], start, end) == [
        "off-window distractor 1 names no date (YYYY-MM-DD)"]


def entity(name, primary, variables=("v",)):
    return {"entity_name": name, "time_series_variable": list(variables), "source_tasks": list(primary),
            "source_tasks_as_primary_entity": list(primary)}


def test_each_task_has_exactly_one_primary_entity_and_relations_are_sound():
    from tsagent_plugins.tasks.drcik.generation.checks import entity_problems

    good = {"entities": [entity("pump", ["a", "b"]), entity("utility", [])],
            "contain_relations": [{"parent_entity": "utility", "child_entity": "pump"}]}
    assert entity_problems(good, ["a", "b"]) == []
    two = {"entities": [entity("pump", ["a"]), entity("station", ["a"])], "contain_relations": []}
    assert entity_problems(two, ["a", "b"]) == ["task a: 2 primary entities (exactly one needed)",
                                                "task b: 0 primary entities (exactly one needed)"]
    cycle = {"entities": [entity("pump", ["a"]), entity("utility", [])],
             "contain_relations": [{"parent_entity": "utility", "child_entity": "pump"},
                                   {"parent_entity": "pump", "child_entity": "utility"},
                                   {"parent_entity": "city", "child_entity": "pump"}]}
    problems = entity_problems(cycle, ["a"])
    assert "relation city > pump names an unlisted entity" in problems
    assert "pump has two parents (utility, city): only the nearest one is wanted" in problems
    cycle["contain_relations"].pop()
    assert [p for p in entity_problems(cycle, ["a"]) if p.startswith("containment cycle through")]


def test_an_event_dated_inside_the_forecast_window_but_labelled_retrospective_is_caught():
    """Issue 37: roles (Appendix K.2) follow ``time_start``; an event whose text names a date in the forecast
    window while its start says otherwise was exported as retrospective.  Step 4's check and dr-audit catch it."""
    from datetime import datetime

    first_future = datetime(2026, 6, 15)
    wrong = {"event_id": "E2", "event": "On 2026-06-15 04:00 two pumps go out of service.",
             "time_start": "2026-06-10 00:00:00", "time_end": "2026-06-16 00:00:00"}
    assert checks.evidence_role(wrong["time_start"], first_future) == "retrospective"
    assert checks.event_problems([wrong], first_future) == [
        "E2 is retrospective but its text dates it 2026-06-15 04:00, inside the forecast window (from "
        "2026-06-15 00:00)"]
    undated = {**wrong, "time_start": None, "time_end": None}
    assert checks.event_problems([undated], first_future)[0] == "E2 names 2026-06-15 04:00 but has no time_start"
    off = {**wrong, "time_start": "2026-06-01 00:00:00", "time_end": "2026-06-02 00:00:00"}
    assert "outside its time_start..time_end" in checks.event_problems([off], first_future)[0]
    reversed_ = {**wrong, "time_start": "2026-06-15 04:00:00", "time_end": "2026-06-14 00:00:00"}
    assert "is before time_start" in checks.event_problems([reversed_], first_future)[0]
    right = {**wrong, "time_start": "2026-06-15 04:00:00", "time_end": "2026-06-15 12:00:00"}
    assert checks.event_problems([right], first_future) == []
    assert checks.evidence_role(right["time_start"], first_future) == "prospective"
    # the exported label against its text (what dr-audit checks): both directions
    assert checks.role_problems("E2", wrong["event"], "retrospective", first_future)
    assert checks.role_problems("E3", "Flow was low on 2026-06-01.", "prospective", first_future)
    assert checks.role_problems("E1", "A pumping station.", "retrospective", first_future) == []
