"""Code checks of the generation stages, beside their LLM judges (Dr-CiK Section 4.1).

Each returns a list of problems (empty: the output passes); the engine rejects an attempt with any.
"""

from __future__ import annotations

from datetime import datetime

from tsagent_plugins.tasks.drcik.generation.window import dates_in


def chain_problems(contexts: list[str], edges: list[tuple[str, str]]) -> list[str]:
    """The reasoning chain (step 5) must be one linear path over ``contexts`` (ids in order): ``len - 1``
    edges, each from one context to the next in the listed order.  Named failures: an unknown node, a
    *branch* (a node with two successors or two predecessors), a *cycle*, a *shortcut* (an edge skipping
    a context), a *gap* (a node no edge reaches), a reversed edge."""
    problems: list[str] = []
    position = {c: i for i, c in enumerate(contexts)}
    if len(position) != len(contexts):
        problems.append("context ids repeat")
    succ: dict[str, list[str]] = {}
    pred: dict[str, list[str]] = {}
    for a, b in edges:
        if a not in position or b not in position:
            problems.append(f"edge {a}->{b} names an unknown context")
            continue
        succ.setdefault(a, []).append(b)
        pred.setdefault(b, []).append(a)
    for node, nxt in succ.items():
        if len(nxt) > 1:
            problems.append(f"branch: {node} leads to {', '.join(nxt)}")
    for node, prv in pred.items():
        if len(prv) > 1:
            problems.append(f"branch: {node} is reached from {', '.join(prv)}")
    # cycle: follow successors from every node
    for start in succ:
        seen, node = {start}, start
        while len(succ.get(node, [])) == 1:
            node = succ[node][0]
            if node in seen:
                problems.append(f"cycle through {node}")
                break
            seen.add(node)
        else:
            continue
        break
    for a, b in edges:
        if a in position and b in position:
            step = position[b] - position[a]
            if step > 1:
                problems.append(f"shortcut: {a}->{b} skips {step - 1} context(s)")
            elif step <= 0 and not any(p.startswith("cycle") for p in problems):
                problems.append(f"edge {a}->{b} runs against the chain's order")
    if len(edges) != max(len(contexts) - 1, 0):
        problems.append(f"{len(edges)} edges for {len(contexts)} contexts (a path has {len(contexts) - 1})")
    linked = {a for a, _ in edges} | {b for _, b in edges}
    missing = [c for c in contexts if c not in linked] if len(contexts) > 1 else []
    if missing:
        problems.append(f"gap: {', '.join(missing)} on no edge")
    return list(dict.fromkeys(problems))


def entity_problems(extraction: dict, task_ids: list[str]) -> list[str]:
    """Step 1: exactly one primary entity per task; relations between listed entities, one nearest parent per
    child (the prompt's rule 7), no containment cycle."""
    problems = []
    for tid in task_ids:
        n = sum(tid in e["source_tasks_as_primary_entity"] for e in extraction["entities"])
        if n != 1:
            problems.append(f"task {tid}: {n} primary entities (exactly one needed)")
    names = {e["entity_name"] for e in extraction["entities"]}
    for r in extraction["contain_relations"]:
        if r["parent_entity"] not in names or r["child_entity"] not in names:
            problems.append(f"relation {r['parent_entity']} > {r['child_entity']} names an unlisted entity")
    parents: dict[str, str] = {}
    for r in extraction["contain_relations"]:
        if parents.setdefault(r["child_entity"], r["parent_entity"]) != r["parent_entity"]:
            problems.append(f"{r['child_entity']} has two parents ({parents[r['child_entity']]}, "
                            f"{r['parent_entity']}): only the nearest one is wanted")
    for child in parents:
        seen, node = {child}, child
        while node in parents:
            node = parents[node]
            if node in seen:
                problems.append(f"containment cycle through {node}")
                break
            seen.add(node)
    return list(dict.fromkeys(problems))


def overlapping_assignment(nodes: list[str]) -> list[tuple[str, str, str]]:
    """Step 6's overlapping assignment: for chain nodes ``R1..Rn``, supporting document k covers the
    adjacent nodes ``R_k``, ``R_k+1`` and the reasoning link between them; consecutive documents share
    exactly the node between them.  Returns ``(node, link label, next node)`` per document."""
    return [(nodes[k], f"{nodes[k]}->{nodes[k + 1]}", nodes[k + 1]) for k in range(len(nodes) - 1)]


def off_window_problems(texts: list[str], start: datetime, end: datetime) -> list[str]:
    """Off-window distractors must name at least one date, and every date they name falls outside the
    task window ``[start, end]`` (dates as :func:`.window.dates_in` reads them)."""
    problems = []
    for i, text in enumerate(texts, 1):
        dates = dates_in(text)
        if not dates:
            problems.append(f"off-window distractor {i} names no date (YYYY-MM-DD)")
        inside = [d for d in dates if start.date() <= d.date() <= end.date()]
        if inside:
            problems.append(f"off-window distractor {i} names {inside[0]:%Y-%m-%d}, inside the task window "
                            f"{start:%Y-%m-%d} to {end:%Y-%m-%d}")
    return problems


def evidence_role(time_start: str | None, first_future: datetime) -> str:
    """Appendix K.2: ``prospective`` when the event starts at or after the first future timestamp, else
    ``retrospective`` (an undated event is background: retrospective)."""
    if time_start and datetime.strptime(time_start, "%Y-%m-%d %H:%M:%S") >= first_future:
        return "prospective"
    return "retrospective"


def role_problems(label: str, text: str, role: str, first_future: datetime) -> list[str]:
    """A role the dates of ``text`` contradict: ``retrospective`` while every date it names is in the forecast
    window (at or after ``first_future``), or ``prospective`` while every date is before it."""
    dates = dates_in(text)
    if not dates:
        return []
    if role == "retrospective" and min(dates) >= first_future:
        return [f"{label} is retrospective but its text dates it {min(dates):%Y-%m-%d %H:%M}, inside the forecast "
                f"window (from {first_future:%Y-%m-%d %H:%M})"]
    if role == "prospective" and max(dates) < first_future:
        return [f"{label} is prospective but its text dates it {max(dates):%Y-%m-%d %H:%M}, before the forecast "
                f"window (from {first_future:%Y-%m-%d %H:%M})"]
    return []


def event_problems(events: list[dict], first_future: datetime) -> list[str]:
    """Step 4's dated events (Appendix K.2 roles): ``time_end`` not before ``time_start``; every date an event's
    text names lies within its ``[time_start, time_end]`` (by day; an event naming a date needs a
    ``time_start``); and the role the start gives agrees with the text (:func:`role_problems`)."""
    fmt = "%Y-%m-%d %H:%M:%S"
    problems = []
    for e in events:
        label = e["event_id"]
        start = datetime.strptime(e["time_start"], fmt) if e.get("time_start") else None
        end = datetime.strptime(e["time_end"], fmt) if e.get("time_end") else start
        dates = dates_in(e["event"])
        if start and end and end < start:
            problems.append(f"{label}: time_end {e['time_end']} is before time_start {e['time_start']}")
        if dates and start is None:
            problems.append(f"{label} names {dates[0]:%Y-%m-%d %H:%M} but has no time_start")
        elif start and end:
            outside = [d for d in dates if not start.date() <= d.date() <= end.date()]
            if outside:
                problems.append(f"{label} names {outside[0]:%Y-%m-%d %H:%M}, outside its time_start..time_end "
                                f"({e['time_start']}..{e.get('time_end') or e['time_start']})")
        problems += role_problems(label, e["event"], evidence_role(e.get("time_start"), first_future), first_future)
    return problems
