"""What a run will do and cost before it spends anything (``harness plan``).

:func:`plan_costs` lists a run's episodes, which of them are already finished
in the target run directory, and each profile's expected tokens and dollars:
per episode, the mean usage of earlier episodes of the same task spec and
profile found in the history directories (their ``episodes/*/row.json``), else
the template's :meth:`~harness.contracts.TaskTemplate.usage_estimate` (e.g.
a paper's reported usage), else unknown.  Dollars are the tokens at the
profile's prices (:meth:`harness.config.Prices.cost`).  The profile is the
one whose model the episode calls: a sandboxed LLM agent's, or for an
in-harness episode the one its template names
(:meth:`~harness.contracts.InHarnessTaskTemplate.model_profile`); an episode calling no
model costs $0 ("no model"), one calling a model with no profile to price it
is unknown.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from harness.config import RunSettings
from harness.experiment import Unit
from harness.store import RunStore, episode_rows, kept_row, run_dirs

USAGE_FIELDS = ("prompt_tokens", "cached_tokens", "completion_tokens")


@dataclass
class PlannedEpisode:
    key: str
    task: str
    profile: str | None
    seed: int | None
    done: bool
    tokens: int | None  # expected total tokens (None: unknown)
    cost_usd: float | None
    source: str
    template: str | None = None
    params: dict = field(default_factory=dict)  # the episode's task parameters (for ``--power``)


@dataclass
class ProfilePlan:
    """One profile's share of a plan: episodes, finished ones, and the expected usage of the rest."""

    profile: str | None
    episodes: int = 0
    done: int = 0
    tokens: float = 0.0
    cost_usd: float = 0.0
    unknown: int = 0  # episodes to run without an estimate
    per_episode_usd: list[float] = field(default_factory=list)
    reported_usd: tuple[float, float] | None = None
    sources: set[str] = field(default_factory=set)


def history_usage(dirs: list[Path]) -> dict[tuple[str | None, str], dict[str, float]]:
    """Mean ``prompt/cached/completion_tokens`` of finished episodes under ``dirs`` by (profile, task)."""
    sums: dict[tuple, list] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for d in dirs:
        for run in run_dirs(d, "episodes"):  # a run directory, or a stage of one
            for row in episode_rows(run, skip_invalid=True):
                if row.get("status") == "infra_failed" or not isinstance(row.get("prompt_tokens"), (int, float)):
                    continue
                acc = sums[(row.get("profile"), row.get("task"))]
                for i, name in enumerate(USAGE_FIELDS):
                    acc[i] += float(row.get(name) or 0)
                acc[3] += 1
    return {k: {name: v[i] / v[3] for i, name in enumerate(USAGE_FIELDS)} | {"n": v[3]} for k, v in sums.items()}


def model_profile(plan) -> tuple[object | None, bool]:
    """``(profile whose model the episode calls or None, True when it calls a model but no profile can be
    chosen)``: a sandboxed agent's profile when the agent ``needs_model``; for an in-harness episode the one
    its template names (:meth:`~harness.contracts.InHarnessTaskTemplate.model_profile`, e.g. a forecaster that calls a
    model), so such episodes are priced like agents and never planned at $0."""
    if plan.in_harness:
        try:
            return plan.template.model_profile(plan.params, plan.episode, plan.profile), False
        except ValueError:
            return None, True
    if plan.profile is None:
        return None, False
    return (plan.profile, False) if plan.agent is None or plan.agent.needs_model else (None, False)


def plan_costs(units: list[Unit], root: Path, history: list[Path] | None = None,
               settings: RunSettings | None = None) -> tuple[list[PlannedEpisode], dict[str | None, ProfilePlan]]:
    """The episodes of ``units`` for run directory ``root`` (done or not) and the plan per profile."""
    from harness.run import plan_episodes

    store = RunStore(root)
    settings = settings or RunSettings()
    plans = plan_episodes(units, settings, store.run_id, sandboxes=False)
    past = history_usage([*(history or []), root] if root.exists() else list(history or []))
    episodes: list[PlannedEpisode] = []
    profiles: dict[str | None, ProfilePlan] = {}
    for plan in plans:
        profile, no_profile = model_profile(plan)
        # a sandboxed episode is its agent profile's; an in-harness one is the model's profile's, if any
        name = profile.name if profile else plan.profile.name if plan.profile and not plan.in_harness else None
        done = kept_row(store.episode(plan.key).row, settings.retry_failed) is not None  # what a run keeps
        usage, source = past.get((name, plan.task_name)), "earlier runs"
        reported = None
        no_model = profile is None and not no_profile
        if no_profile:
            usage, source = None, "unknown (no profile for its model)"
        elif usage is None and not no_model:
            estimate = plan.template.usage_estimate(plan.params, profile)
            if estimate is not None:
                usage = {k: float(estimate[k]) for k in USAGE_FIELDS}
                source = estimate.get("source") or "template estimate"
                reported = estimate.get("reported_cost_usd")
        tokens = cost = None
        if no_model:
            tokens, cost, source = 0, 0.0, "no model"
        elif usage is not None:
            tokens = int(usage["prompt_tokens"] + usage["completion_tokens"])
            cost = profile.prices.cost(usage["prompt_tokens"], usage["cached_tokens"],
                                            usage["completion_tokens"])
        elif not no_profile:
            source = "unknown"
        seed = getattr(plan.params, "seed", None)
        episodes.append(PlannedEpisode(plan.key, plan.task_name, name, seed, done, tokens, cost, source,
                                       plan.template.name, plan.params.model_dump(mode="json")))
        p = profiles.setdefault(name, ProfilePlan(name))
        p.episodes += 1
        p.sources.add(source)
        if reported:
            p.reported_usd = (min(reported[0], (p.reported_usd or reported)[0]),
                              max(reported[1], (p.reported_usd or reported)[1]))
        if cost is not None:
            p.per_episode_usd.append(cost)
        if done:
            p.done += 1
        elif cost is None:
            p.unknown += 1
        else:
            p.tokens += tokens or 0
            p.cost_usd += cost
    return episodes, profiles
