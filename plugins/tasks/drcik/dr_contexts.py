"""Forecasting contexts from a research stage (Dr-CiK Level-1 pipeline, Section 5.4, Figure 4):
a research run directory (``harness run`` with the ``drcik-research`` template) becomes, per DR
agent, the :class:`~plugins.tasks.drcik.contexts.DrOutput` of each task that the ``dr-evidence``,
``dr-report`` and ``verified-dr`` conditions read.

Every ``DrOutput`` names the agent and run that produced it, so forecasting rows can record
their evidence source (``dr_agent``, ``dr_run``).  Claims carry resolved release ids (the
research episode already dropped and counted unresolved ones); ``known_ids`` is the pool.
"""

from __future__ import annotations

from pathlib import Path

from plugins.tasks.drcik import contexts as ctx
from plugins.tasks.drcik.dr_inputs import ResearchEpisode, read_research_run
from plugins.tasks.drcik.loader import DrcikTask


def dr_output(episode: ResearchEpisode) -> ctx.DrOutput:
    """The context-condition input of one research episode."""
    out = episode.output
    return ctx.DrOutput(tuple(ctx.EvidenceClaim(c.claim, c.cited) for c in out.claims), episode.report,
                        out.agent, out.run, frozenset(episode.documents), str(episode.folder.parent.parent.resolve()))


def dr_outputs_from_run(run_dir: Path | str) -> dict[str, dict[str, ctx.DrOutput]]:
    """``{agent: {benchmark_id: DrOutput}}`` for every finished episode of a research run.
    A task researched twice by one agent keeps the later episode (folder order)."""
    outputs: dict[str, dict[str, ctx.DrOutput]] = {}
    for episode in read_research_run(run_dir):
        outputs.setdefault(episode.output.agent, {})[episode.output.benchmark_id] = dr_output(episode)
    return outputs


def is_research_run(folder: Path | str) -> bool:
    """Whether ``folder`` is a research run directory (episodes with a research key)."""
    from plugins.tasks.drcik.research import KEY_FILE

    return any(Path(folder).glob(f"episodes/*/key/{KEY_FILE}"))


def single_agent_outputs(run_dir: Path | str) -> dict[str, ctx.DrOutput]:
    """``{benchmark_id: DrOutput}`` of a research run by one DR agent; ValueError naming the
    agents when the run holds several."""
    outputs = dr_outputs_from_run(run_dir)
    if len(outputs) != 1:
        raise ValueError(f"{run_dir}: expected one DR agent's research run, found {sorted(outputs) or 'none'}")
    return next(iter(outputs.values()))


def forecasting_contexts(run_dir: Path | str, tasks: list[DrcikTask],
                         conditions: tuple[str, ...] = ("dr-evidence", "dr-report", "verified-dr")
                         ) -> list[dict]:
    """One record per (DR agent, task, condition): the text a forecaster is given, its status and
    item count, and the evidence source (``dr_agent``, ``dr_run``).  A task the agent did not
    research has status ``missing``."""
    records = []
    for agent, by_task in sorted(dr_outputs_from_run(run_dir).items()):
        for task in tasks:
            dr = by_task.get(task.benchmark_id)
            for name in conditions:
                base = {"dr_agent": agent, "benchmark_id": task.benchmark_id, "context": name,
                        "dr_run": dr.run if dr else None}
                if dr is None:
                    records.append({**base, "text": None, "context_status": "missing", "context_items": 0})
                    continue
                text = ctx.get(name).text_for(task, dr)
                records.append({**base, "text": text.text, "context_status": text.status,
                                "context_items": text.items})
    return records
