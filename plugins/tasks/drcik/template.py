"""The ``drcik`` task template: Dr-CiK forecasting and research episodes in the harness run loop (paper Section 5).

Episodes have a kind (``params.episode_kind``):

- ``forecast``: one forecaster × context condition × task (``episode`` =
  ``<forecaster>/<context>/<benchmark_id>``).  Forecasters are models, not agents:
  they run in the harness process (:meth:`DrcikTemplate.runs_in_harness`), with
  the same run directory, resume, retries and ``results.parquet`` as sandboxed
  episodes.
- ``research``: one task × one deep-research agent (``episode`` = ``<benchmark_id>``;
  the agent is the run's agent profile, which is required), run in a sandbox like
  any agent episode (paper Section 5, Appendix G "Common interface").  The
  workspace and key come from :func:`tsagent_plugins.tasks.drcik.research.episodes.materialize_research`
  (the corpus pools the documents of every loaded task), the score from
  :func:`tsagent_plugins.tasks.drcik.research.episodes.score_research`; its row holds
  ``benchmark_id``, ``episode_kind`` and the research metrics (``evidence_items``,
  ``cited_documents``, ``hallucinated_ids``, ``cross_task_citations``,
  ``distractor_citations``, ``report_chars``, ``report_ok``, ``evidence_ok``,
  ``output_reason``), plus the agent columns of every sandboxed episode (tokens,
  cost, time, tool calls).  The episode's ``key/`` holds the release's
  ``deep_research.jsonl`` row and ``metadata.json``; :meth:`DrcikTemplate.finish`
  merges them per agent profile into ``submissions/deep_research__<profile>/`` (``metadata.json``: the
  method is the profile and its agent, the base model the profile's model, unless ``params.metadata``
  says otherwise).

Per forecasting episode folder: ``samples.npy`` (the (S, H) sample paths) and
``score.json``.  After the episodes, :meth:`DrcikTemplate.finish` writes the
release's submission files per forecaster × context
(``submissions/<forecaster>__<context>/forecasts.jsonl`` + ``metadata.json``)
and records their validation in ``run.json``.  A DR condition with evidence from a research run
gets the release template's combined folder ``submissions/<forecaster>__<context>__<DR profile>/``:
``forecasts.jsonl``, ``deep_research.jsonl`` (the research run's export for that profile) and
``metadata.json`` (naming the evidence agent), all three validated.

A row holds, besides the metrics of :func:`tsagent_plugins.tasks.drcik.forecast.metrics.score_task`
and the columns of :func:`tsagent_plugins.tasks.drcik.forecast.experiment.info_columns`:
``forecaster``, ``forecaster_options`` (JSON), ``context``, ``benchmark_id``,
``episode_kind``, ``evidence_run`` / ``evidence_agent`` (DR conditions: which
run and which agent produced the evidence), ``fitted_model`` (JSON of what the
forecaster fitted, e.g. ARIMA order and AIC, the seasonal period and where it
came from), ``seasonal_period`` (the task's m), ``n_samples``, ``seed``,
``data_rules`` (the loader's data rules applied to this task), ``profile`` and
``model`` (model-backed forecasters).  An agent profile whose ``agent`` is a
forecaster's name (``--agent``) supplies that forecaster's options (e.g. a
Chronos ``model`` folder); the spec's own options win.

A forecaster that ignores text (``uses_context = False``) forecasts a task once
per process and the forecast is reused for every condition (``context_used`` is
False in those rows).  A failed forecast is reused within one run only: :meth:`DrcikTemplate.prepare`, which
each run calls first, drops the failures, so a retry (``--retry-failed``, in a notebook or on a Dask worker)
forecasts again.

A forecaster declaring ``batch_size`` > 1 gets a condition's tasks in chunks of that size
(:mod:`tsagent_plugins.tasks.drcik.forecast.chunks`); rows, samples and failures stay per task.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import ConfigError, UnknownPlugin, get_plugin, lazy_module
from harness import AgentTaskTemplate, EpisodeScore, InHarnessTaskTemplate, Materialized
from tsagent_plugins.tasks.drcik.columns import FORECAST, IDENTITY_COLUMNS, RESEARCH, RESULT_COLUMNS, TEMPLATE
from tsagent_plugins.tasks.drcik.research.corpus_refs import ResearchInputs

if TYPE_CHECKING:
    import numpy as np

    from harness import AgentProfile
    from tsagent_plugins.tasks.drcik import spec
    from tsagent_plugins.tasks.drcik.dataset import contexts as ctx, loader
    from tsagent_plugins.tasks.drcik.dataset.loader import DrcikTask
    from tsagent_plugins.tasks.drcik.forecast import chunks, experiment, exports, metrics, validate as checks
    from tsagent_plugins.tasks.drcik.research import as_context, episodes, outputs as research_out, submissions
    from tsagent_plugins.tasks.drcik.spec import DrcikParams, ForecasterEntry
else:  # the template's stages (and pydantic, numpy) load on first use: registering the template needs none
    np = lazy_module("numpy")
    spec, ctx, loader, chunks, experiment, exports, metrics, checks, as_context, episodes, research_out, submissions = (
        lazy_module(f"tsagent_plugins.tasks.drcik.{name}") for name in (
            "spec", "dataset.contexts", "dataset.loader", "forecast.chunks", "forecast.experiment", "forecast.exports",
            "forecast.metrics", "forecast.validate", "research.as_context", "research.episodes", "research.outputs",
            "research.submissions"))

#: Keys of a forecast's ``info`` that describe the fitted model (see tsagent_plugins.forecasters.statistical).
FIT_KEYS = ("ses", "ets", "arima", "sarima", "seasonal", "context_length", "fit_warnings")


class DrcikTemplate(ResearchInputs, AgentTaskTemplate, InHarnessTaskTemplate):
    name = TEMPLATE
    #: the version of both scorings, :func:`score_task` (forecasts) and :func:`score_research` (research
    #: outputs): bump it with any change that could change a score of the same output
    #: (tests/plugins/test_tasks_versions.py fails until it is)
    scorer_version = "1"
    result_columns = RESULT_COLUMNS
    identity_columns = IDENTITY_COLUMNS
    experiment_axis = "forecasters"
    evidence_param = "evidence"
    summary_columns = {"forecaster": "forecaster", "context": "context", "evidence_agent": "evidence agent",
                       "scrps": "sCRPS"}
    agent_episode_columns = False

    def __init__(self) -> None:
        self._tasks: dict[str, dict[str, DrcikTask]] = {}
        self._forecasters: dict[str, Any] = {}
        self._reuse: dict[str, tuple] = {}
        self._evidence: dict[str, dict] = {}

    @property
    def params_model(self) -> type[DrcikParams]:  # type: ignore[override]  # pydantic: imported on first use
        return spec.DrcikParams

    @functools.cached_property
    def _chunks(self) -> chunks.ChunkedForecasts:
        return chunks.ChunkedForecasts()

    # -- planning -----------------------------------------------------------------------------------
    def rewrite_paths(self, params: DrcikParams, spec_file: Path) -> DrcikParams:
        return params.resolved(Path(spec_file).resolve().parent)

    def tasks(self, params: DrcikParams) -> dict[str, DrcikTask]:
        key = str(params.tasks_path)
        if key not in self._tasks:
            self._tasks[key] = {t.benchmark_id: t for t in loader.load_tasks(params.tasks_path)}
        return self._tasks[key]

    def task_ids(self, params: DrcikParams) -> list[str]:
        """The benchmark ids to run: ``params.episodes`` (checked against the loaded tasks), else all."""
        ids = list(self.tasks(params))
        if params.episodes is None:
            return ids
        unknown = sorted(set(params.episodes) - set(ids))
        if unknown:
            raise ValueError(f"params.episodes: unknown benchmark ids {unknown} (loaded: {ids})")
        return list(params.episodes)

    def episodes(self, params: DrcikParams) -> list[str]:
        ids = self.task_ids(params)
        if params.episode_kind == RESEARCH:
            return ids
        return [spec.ForecastEpisode.id(f.name, c, t) for f in params.forecasters for c in params.contexts for t in ids]

    def episode_identity(self, params: DrcikParams, episode: str) -> Any:
        # fields that select episodes, label rows or tidy up afterwards never change one episode's content
        common = {"episodes", "keep_corpus", "judge", "corpus"}
        if params.episode_kind == RESEARCH:
            narrowed = params.model_dump(mode="json", exclude=common | {
                "forecasters", "contexts", "submission", "dr_evidence", "evidence", "samples", "time_limit",
                "agent", "model_backend", "script", "budget"})
            return {"params": narrowed, "task": episode}
        parsed = spec.ForecastEpisode.parse(params, episode)
        entry, cond, task_id = parsed.entry, parsed.context, parsed.task_id
        exclude = common | {"forecasters", "contexts", "submission", "metadata"}
        if not ctx.get(cond).needs_dr:  # evidence does not change a non-DR episode: one id whatever its source
            exclude |= {"dr_evidence", "evidence"}
        narrowed = params.model_dump(mode="json", exclude=exclude)
        return {"params": narrowed, "forecaster": entry.model_dump(mode="json"), "context": cond, "task": task_id}

    def episode_label(self, task_name: str, params: DrcikParams, episode: str) -> str:
        if params.episode_kind == RESEARCH:
            return f"research_{episode}"
        return episode.replace("/", "_") + f"-s{params.samples}"

    def needs_agent_profile(self, params: DrcikParams) -> bool:
        return params.episode_kind == RESEARCH

    def runs_in_harness(self, params: DrcikParams) -> bool:
        return params.episode_kind == FORECAST

    def validate(self, params: DrcikParams) -> None:
        """Forecasting params: every forecaster exists and takes its options, the DR conditions have an
        evidence source, a ``dr_evidence`` folder exists (``evidence.run`` may be an earlier stage's run
        directory, not written yet: :meth:`prepare` checks it)."""
        if params.episode_kind == RESEARCH:
            return
        needs_dr = [c for c in params.contexts if ctx.get(c).needs_dr]
        if needs_dr and not (params.dr_evidence or params.evidence):
            raise ValueError(f"params.dr_evidence: the condition(s) {', '.join(needs_dr)} need a DR agent's "
                             "evidence (dr_evidence: FOLDER, or evidence: {run, agent})")
        for i, entry in enumerate(params.forecasters):
            self.forecaster(entry, f"params.forecasters[{i}]")
        roles = [c for c in params.contexts if c in ctx.ROLE_CONDITIONS]
        if roles:   # Appendix K.2: only tasks marking each evidence item's role
            tasks = self.tasks(params)
            problems = [p for p in (ctx.role_problem(tasks[t]) for t in self.task_ids(params)) if p]
            if problems:
                raise ValueError(f"params.contexts: {len(problems)} task(s) cannot be given {' / '.join(roles)}; "
                                 f"{problems[0]}")
        carried = [c for c in params.contexts if c in ctx.UNAVAILABLE]
        if carried:   # only tasks carrying the original / rewritten context (dr-generate output)
            tasks = self.tasks(params)
            problems = [p for c in carried for p in (ctx.text_problem(tasks[t], c) for t in self.task_ids(params)) if p]
            if problems:
                raise ValueError(f"params.contexts: {len(problems)} task(s) cannot be given {' / '.join(carried)}; "
                                 f"{problems[0]}")
        if params.dr_evidence and not Path(params.dr_evidence).is_dir():
            raise ValueError(f"params.dr_evidence: no such folder {params.dr_evidence}")
        if params.agent:
            from harness import HarnessError, resolve_profile

            try:
                resolve_profile(params.agent)
            except (HarnessError, ConfigError) as exc:  # a missing or invalid profile (an invalid one names its file)
                raise ValueError(f"params.agent: {exc}") from None

    def profile_problem(self, params: DrcikParams, profile) -> str | None:
        """A forecasting run uses an agent profile whose ``agent`` is one of its forecasters (the profile's
        options configure it) or, when ``params.agent`` names none, as the model of its model-backed
        forecasters (llm-dp), which need one of ``params.agent``, the given profile, or the scripted backend
        (as :meth:`_profile` picks them); research episodes are sandboxed (the core checks their profile)."""
        if params.episode_kind == RESEARCH:
            return None
        names = [f.name for f in params.forecasters]
        model_backed = [f.name for f in params.forecasters if getattr(self.forecaster(f), "needs_model", False)]
        if profile is None:
            if model_backed and not params.agent and params.model_backend != "scripted":
                return (f"params.agent: the model-backed forecaster(s) {', '.join(model_backed)} need an agent "
                        "profile (params.agent or --agent), or model_backend: scripted with a script")
            return None
        if profile.agent in names or (model_backed and not params.agent):
            return None
        why = (f"its model-backed forecasters ({', '.join(model_backed)}) use params.agent ({params.agent})"
               if model_backed else "none of them calls a model")
        return (f"agent profile {profile.name!r} would be ignored: its agent {profile.agent!r} is not one of "
                f"this task's forecasters ({', '.join(names)}) and {why}")

    def prepare(self, params: DrcikParams, progress) -> None:
        if params.episode_kind == RESEARCH:
            return
        self._reuse = {key: result for key, result in self._reuse.items() if result[1] is None}  # see the module
        self.validate(params)
        if params.evidence and not Path(params.evidence.run).is_dir():
            raise ValueError(f"params.evidence.run: no such run directory {params.evidence.run}")

    # -- research episodes (sandboxed: one task × one DR agent) ------------------------------------
    def materialize(self, params: DrcikParams, episode: str, workspace: Path, key_dir: Path) -> Materialized:
        """The research workspace of task ``episode`` over the pooled corpus of every loaded task."""
        return episodes.materialize_research(list(self.tasks(params).values()), episode, workspace, key_dir)

    def score(self, params: DrcikParams, episode: str, workspace: Path, key_dir: Path,
              run_submission) -> EpisodeScore:
        """The research metrics of :func:`score_research`, with ``benchmark_id`` and ``episode_kind``."""
        score = episodes.score_research(workspace, key_dir, params.metadata)
        score.metrics = {"benchmark_id": episode, "episode_kind": RESEARCH, "corpus": params.corpus,
                         "tasks_source": params.tasks, **score.metrics}
        return score

    def submission_problem(self, params: DrcikParams, episode: str, score: EpisodeScore) -> str | None:
        """No valid submission unless both ``report.md`` and ``evidence.json`` were read without a problem
        (``report_ok`` and ``evidence_ok``); the problem is the score's ``output_reason``."""
        metrics = score.metrics
        if metrics.get("report_ok") and metrics.get("evidence_ok"):
            return None
        return metrics.get("output_reason") or "report.md or evidence.json is missing or unreadable"

    # -- forecasting episodes -----------------------------------------------------------------------
    def forecaster(self, entry: ForecasterEntry, where: str = "forecasters"):
        """The registered forecaster of ``entry``, configured with its options (cached); ValueError naming
        ``where`` when unknown or misconfigured."""
        key = json.dumps(entry.model_dump(mode="json"), sort_keys=True)
        if key not in self._forecasters:
            try:
                forecaster = get_plugin("forecaster", entry.name)
            except UnknownPlugin as exc:
                raise ValueError(f"{where}.name: {exc}") from None
            if entry.options:
                configure = getattr(forecaster, "configured", None)
                if configure is None:
                    raise ValueError(f"{where}.options: forecaster {entry.name!r} takes no options")
                try:
                    forecaster = configure(**entry.options)
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"{where}.options: {exc}") from None
            self._forecasters[key] = forecaster
        return self._forecasters[key]

    def evidence_for(self, params: DrcikParams, task_id: str
                     ) -> tuple[list | ctx.DrOutput | None, str | None, str | None]:
        """(DR evidence or None, evidence_run, evidence_agent) for one task: the claims of a
        ``dr_evidence`` folder, or the :class:`~tsagent_plugins.tasks.drcik.dataset.contexts.DrOutput` (claims and
        report) of ``params.evidence``'s research run (:mod:`tsagent_plugins.tasks.drcik.research.as_context`)."""
        if params.dr_evidence:
            folder = Path(params.dr_evidence)
            for candidate in (folder / f"{task_id}.json", folder / task_id / "evidence.json"):
                if candidate.is_file():
                    return ctx.load_dr_evidence(candidate), str(folder), None
            return None, str(folder), None
        if params.evidence:
            found = self.research_evidence(params.evidence.run, params.evidence.agent).get(task_id)
            return found, params.evidence.run, params.evidence.agent
        return None, None, None

    def research_evidence(self, run: str, agent: str) -> dict[str, ctx.DrOutput]:
        """DR outputs per task from the research run directory ``run``, for the episodes whose row's
        ``profile`` is ``agent`` (cached); see :func:`tsagent_plugins.tasks.drcik.research.as_context.research_output`."""
        key = f"{run}\0{agent}"
        if key not in self._evidence:
            self._evidence[key] = as_context.dr_outputs_from_run(run, agent).get(agent, {})
        return self._evidence[key]

    def model_settings(self, params: DrcikParams) -> dict:
        """The params' model settings (``model_backend``, ``script``, ``budget``: caps per forecast)."""
        return {"backend": params.model_backend, "options": {"script": params.script} if params.script else {},
                "budget": params.budget}

    def run_in_harness(self, params: DrcikParams, episode: str, folder: Path, profile,
                       model: Any = None) -> EpisodeScore:
        parsed = spec.ForecastEpisode.parse(params, episode)
        fname, cond_name, task_id, entry = parsed.forecaster, parsed.context, parsed.task_id, parsed.entry
        if profile is not None and profile.agent == fname and profile.options:  # a profile of this forecaster
            entry = entry.model_copy(update={"options": {**profile.options, **entry.options}})
        forecaster = self.forecaster(entry)
        task = self.tasks(params)[task_id]
        cond = ctx.get(cond_name)
        evidence, evidence_run, evidence_agent = self.evidence_for(params, task_id)
        row: dict[str, Any] = {
            "forecaster": fname, "forecaster_options": json.dumps(entry.options, sort_keys=True) if entry.options
            else None, "context": cond.name, "benchmark_id": task_id, "episode_kind": params.episode_kind,
            "evidence_run": evidence_run if cond.needs_dr else None,
            "evidence_agent": evidence_agent if cond.needs_dr else None,
            "reproduces_paper": cond.reproduces_paper,
            "context_used": ctx.context_used(cond, forecaster.uses_context),
            "scale_status": task.scale_status, "n_samples": params.samples, "seed": params.seed,
            "seasonal_period": task.seasonal_period, "data_rules": "; ".join(task.data_notes) or None,
            "tasks_source": params.tasks, "corpus": params.corpus, "profile": None,
        }
        future = None if task.future is None else task.future.to_numpy(dtype=float)
        if cond.needs_dr and evidence is None:
            row.update(metrics.score_task(None, future, "no DR evidence for this task").row(), context_status="missing",
                       context_items=0, fallback=None, seconds=0.0, fitted_model=None, **experiment.info_columns({}))
            return EpisodeScore(row)
        text = cond.text_for(task, evidence)
        row.update(context_status=text.status, context_items=text.items)
        if getattr(forecaster, "needs_model", False):
            if model is None:  # the run opens the client of model_profile(); a direct call must pass one
                raise ValueError(f"forecaster {fname!r} calls a model: run_in_harness needs model= (a ModelClient)")
            forecaster = forecaster.bind_model(model)
            row.update(profile=model.profile.name, model=model.profile.model)
        reuse_key = json.dumps([entry.model_dump(mode="json"), str(params.tasks_path), task_id, params.samples,
                                params.seed, params.time_limit])
        if not forecaster.uses_context and reuse_key in self._reuse:
            result = self._reuse[reuse_key]
        else:
            if forecaster.batch_size > 1 and not getattr(forecaster, "needs_model", False):
                tasks = {t: self.tasks(params)[t] for t in self.task_ids(params)}
                result = self._chunks.result(params, entry, forecaster, cond, task_id, tasks,
                                             lambda t: self.evidence_for(params, t)[0])
            else:
                result = experiment.forecast_task(forecaster, task, text.text, params.samples, params.seed,
                                                  params.time_limit)
            if not forecaster.uses_context:
                self._reuse[reuse_key] = result
        paths, failure, fallback, seconds, info = result
        fitted = {k: info[k] for k in FIT_KEYS if k in info}
        row.update(fallback=fallback, seconds=seconds, fitted_model=json.dumps(fitted, sort_keys=True, default=str)
                   if fitted else None, **experiment.info_columns(info),
                   **metrics.score_task(paths, future, failure).row())
        if paths is not None:
            np.save(folder / "samples.npy", paths)
        return EpisodeScore(row, warnings=[failure] if failure else [])

    def rescore_in_harness(self, params: DrcikParams, episode: str, folder: Path, row: dict[str, Any]) -> EpisodeScore:
        """The forecast's scores again from its stored sample paths (``samples.npy``) and the task's future
        (:func:`score_task`); a forecast that failed (its warning in ``score.json``) or made no samples stays
        failed with its reason.  The row's other columns (forecaster, context, fit) are the run's."""
        from harness import read_score

        parsed = spec.ForecastEpisode.parse(params, episode)
        task = self.tasks(params)[parsed.task_id]
        future = None if task.future is None else task.future.to_numpy(dtype=float)
        path = Path(folder) / "samples.npy"
        samples = np.load(path) if path.is_file() else None
        warnings = list((read_score(folder) or {}).get("warnings") or [])
        failure = warnings[0] if warnings else None
        if samples is None and failure is None:
            failure = str(row.get("reason") or "no samples")
        return EpisodeScore(metrics.score_task(samples, future, failure).row(), warnings=[failure] if failure else [])

    def model_rescoring(self, params: DrcikParams, run_dir: Path,
                        model: dict[str, Any]) -> list[tuple[str, float | None, Any]]:
        """Research runs: judging again with each LLM judge whose verdicts ``dr_scores.jsonl`` holds
        (:func:`~tsagent_plugins.tasks.drcik.research.scoring.model_rescoring`); the no-model judge of
        ``params.judge`` runs again in :meth:`finish`."""
        if params.episode_kind != RESEARCH:
            return []
        from tsagent_plugins.tasks.drcik.research.scoring import model_rescoring

        return model_rescoring(run_dir, model)

    def model_profile(self, params: DrcikParams, episode: str, profile) -> AgentProfile | None:
        """The profile whose model a forecasting episode's forecaster calls (one declaring ``needs_model``,
        chosen as :meth:`run_in_harness` does: ``params.agent``, the given profile, or the scripted backend's);
        None for a forecaster that calls no model and for research episodes (sandboxed)."""
        if params.episode_kind == RESEARCH:
            return None
        entry = spec.ForecastEpisode.parse(params, episode).entry
        if not getattr(self.forecaster(entry), "needs_model", False):
            return None
        try:
            return self._profile(params, profile)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None

    @staticmethod
    def _profile(params: DrcikParams, given) -> AgentProfile:
        if params.agent:
            from harness import resolve_profile

            return resolve_profile(params.agent)
        if given is not None:
            return given
        if params.model_backend == "scripted":
            return spec.SCRIPTED_PROFILE
        raise ConfigError("params.agent", ["a model-backed forecaster (llm-dp) needs an agent profile "
                                           "(params.agent or --agent), or model_backend: scripted with a script"])

    # -- after the episodes -------------------------------------------------------------------------
    def finish(self, params: DrcikParams, rows: list[dict[str, Any]], run_dir: Path) -> dict[str, Any]:
        """Write and validate the release's submission files: per forecaster × context (``SUBMISSION.md``),
        or for research episodes per agent profile (``deep_research.jsonl`` + ``metadata.json``).

        Only the cells this call's ``rows`` hold are exported (a staged run calls it once per unit; a
        cell another unit ran is left as that unit wrote it).  Each export is written beside its folder,
        validated, and moved in place unless it is invalid while the folder holds a valid one (never
        replaced by a worse file).  Invalid exports are listed under ``invalid_exports``: the run
        command fails on them."""
        if not rows:
            return {}
        if params.episode_kind == RESEARCH:
            return submissions.finish_research(self.tasks(params), rows, Path(run_dir), metadata=params.metadata,
                                   judge=params.judge)
        import pandas as pd  # imported on use: pandas is slow to load

        frame = pd.DataFrame(rows)
        if not {"forecaster", "context", "benchmark_id"} <= set(frame.columns):   # no episode got that far
            return {"messages": ["no forecast was made: no submission files written"]}
        samples = {}
        for row in rows:
            path = Path(run_dir) / "episodes" / str(row.get("episode")) / "samples.npy"
            if path.is_file():
                samples[(row["forecaster"], row["context"], row["benchmark_id"])] = np.load(path)
        result = experiment.ExperimentResult(frame, samples)
        tasks = list(self.tasks(params).values())
        out = {}
        kept: list[str] = []
        for entry in params.forecasters:
            forecaster = self.forecaster(entry)
            for cond_name in params.contexts:
                condition = ctx.get(cond_name)
                kind = "agentic" if condition.needs_dr else getattr(forecaster, "submission_type", "statistical")
                cell = frame[(frame["forecaster"] == entry.name) & (frame["context"] == cond_name)]
                if cell.empty:   # run (and exported) by another unit of this stage
                    continue
                models = cell["model"].dropna() if "model" in cell else pd.Series(dtype=object)
                base = models.iloc[0] if len(models) else getattr(forecaster, "model", None) or "none"
                notes = params.submission.notes or (
                    f"S={params.samples} sample paths per task, seed {params.seed}, context condition {cond_name!r}"
                    + ("" if condition.reproduces_paper else " (a stand-in for the paper's condition)"))
                evidence = params.evidence if params.evidence and condition.needs_dr else None
                if evidence is not None:
                    # the run folder's name: a local absolute path means nothing to the leaderboard
                    run_name = Path(evidence.run).name
                    notes += f"; DR evidence from agent profile {evidence.agent!r} (research run {run_name})"
                method = f"{entry.name} ({cond_name}" + (f", evidence: {evidence.agent})" if evidence else ")")
                meta = {"method": method, "organization": params.submission.organization,
                        "type": kind, "base_model": str(base), "reproduction": params.submission.reproduction,
                        "contact": params.submission.contact, "notes": notes}
                key = f"{entry.name}__{cond_name}" + (f"__{evidence.agent}" if evidence else "")
                research_rows = exports.research_export(evidence) if evidence else None

                def write(folder, entry=entry, cond_name=cond_name, meta=meta, research_rows=research_rows):
                    experiment.write_submission(folder, result, entry.name, cond_name, meta)
                    if research_rows is not None:   # the combined folder of the release's template
                        (folder / research_out.DEEP_RESEARCH_FILE).write_text(
                            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in research_rows), encoding="utf-8")

                def validate(folder, research_rows=research_rows):
                    check = experiment.validate_submission(folder, tasks)
                    if research_rows is not None:
                        check.errors += exports.research_problems(folder, research_rows, tasks)
                    return check

                check, replaced = exports.export(Path(run_dir) / "submissions" / key, write, validate)
                out[key] = {"ok": check.ok, "errors": check.errors, "warnings": check.warnings,
                            "empty_metadata": checks.empty_contact_fields(meta)}
                if not replaced:
                    kept.append(key)
        messages = checks.submission_messages(out, kept)
        failed = frame[frame["status"] == "failed"] if "status" in frame else frame.iloc[:0]
        messages += [f"failed: {f} / {c}: {len(g)} task(s), e.g. {g['reason'].iloc[0]}"
                     for (f, c), g in failed.groupby(["forecaster", "context"], sort=True)]
        return {"submissions": out, "messages": messages,
                "invalid_exports": [f"submissions/{k}" for k, c in out.items() if not c["ok"]]}

