"""One generation: open the model clients, run the eight steps, write the release and the summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness import CostCap, ModelClient, read_run_settings
from harness.wire import RunLimits
from tsagent_plugins.tasks.drcik.generation.engine import Engine
from tsagent_plugins.tasks.drcik.generation.output import summarise, write_json, write_release
from tsagent_plugins.tasks.drcik.generation.pipeline import Pipeline
from tsagent_plugins.tasks.drcik.generation.raw_corpus import export as export_corpus_a


def open_clients(profiles: dict[str, Any], log_dir: Path, backend: str | None, options: dict,
                 settings_file: Path | None, max_cost: float | None) -> dict[str, ModelClient]:
    """One :class:`harness.ModelClient` per distinct profile (roles sharing a profile share its client), the
    rate limiters of ``--settings`` and one cost cap shared by all."""
    settings = read_run_settings(settings_file)
    limits = RunLimits(settings.rate_limits)
    cap = CostCap(max_cost if max_cost is not None else settings.max_run_cost_usd)
    by_name: dict[str, ModelClient] = {}
    clients = {}
    try:
        for role, profile in profiles.items():
            if profile.name not in by_name:
                by_name[profile.name] = ModelClient.open(profile, log_dir / profile.name, backend, options,
                                                         limits=limits, cap=cap)
            clients[role] = by_name[profile.name]
    except Exception:
        for client in by_name.values():
            client.stop()
        raise
    return clients


def generate(spec: Any, tasks: list, profiles: dict[str, Any], out: Path, backend: str | None, options: dict,
             settings_file: Path | None, max_cost: float | None, jobs: int,
             progress: Any = None, include_flagged: bool = False) -> dict[str, Any]:
    """Run the generation of ``spec`` on ``tasks`` into ``out``; returns the summary written to
    ``out/generation/summary.json``."""
    out = Path(out)
    write_json(out / "generation" / "spec.json", spec.model_dump(mode="json"))
    clients = open_clients(profiles, out / "generation" / "proxy", backend, options, settings_file, max_cost)
    # the judges' clients are keyed by their prompt names (the engine's roles)
    engine_clients = {"generator": clients["generator"], **{r: clients[r] for r in clients if r != "generator"}}
    bar = progress or _progress_bar()
    try:
        with bar as report:
            engine = Engine(out, engine_clients, rounds=spec.rounds, jobs=jobs, progress=report, seed=spec.seed)
            states = Pipeline(tasks, engine, spec.hops, spec.distractors_per_subtype, spec.window_shift_weeks).run()
    finally:
        for client in {id(c): c for c in clients.values()}.values():
            client.stop()
    written = write_release(out, states, spec.hops, spec.split, spec.distractors_per_subtype, spec.name,
                            include_flagged)
    export_corpus_a(out, tasks)  # corpus A of Appendix D.1 (Table 10), beside the generated corpus
    summary = summarise(out / "generation")
    summary["output"] = written
    summary["totals"]["held_back"] = len(written["held_back"])
    summary["totals"].update(cost_marks(profiles, backend))
    summary["spec"] = spec.name
    write_json(out / "generation" / "summary.json", summary)
    return summary


def cost_marks(profiles: dict[str, Any], backend: str | None) -> dict[str, Any]:
    """``summary.json``'s marks on its costs: ``model_backends`` (role -> the backend its calls went to:
    ``--model-backend``, else its profile's provider), ``offline_backends`` (those that answered offline, e.g. a
    script: no money was spent on their tokens) and, when there are any, ``cost_note`` saying so."""
    from harness.reporting import NOT_SPENT, backend_billed

    backends = {role: backend or profile.provider for role, profile in profiles.items()}
    offline = sorted({name for name in backends.values() if name and not backend_billed(name)})
    return {"model_backends": backends, "offline_backends": offline,
            **({"cost_note": f"cost_usd is {NOT_SPENT} ({', '.join(offline)})"} if offline else {})}


class _progress_bar:
    """A rich progress bar per stage on stderr (a context manager giving the engine's progress callback)."""

    def __enter__(self):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=Console(stderr=True), transient=False)
        self.progress.__enter__()
        self.bars: dict[str, Any] = {}
        return self.report

    def report(self, stage: str, done: int, total: int) -> None:
        if stage not in self.bars:
            self.bars[stage] = self.progress.add_task(stage, total=total)
        self.progress.update(self.bars[stage], completed=done, total=total)

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)


def read_summary(out: Path) -> dict:
    return json.loads((Path(out) / "generation" / "summary.json").read_text(encoding="utf-8"))
