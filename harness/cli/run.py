"""``harness run --task FILE | --experiment FILE [--agent PROFILE] [--seed N] [--set key=value] [--out DIR]``."""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich import box
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from harness import plugins as registry
from harness.cli._console import console
from harness.config import RunSettings, load_experiment, parse, read_yaml
from harness import interrupt
from harness.errors import HarnessError
from harness.experiment import Unit, parse_set, plan_experiment, repeated_settings, task_title, with_seed
from harness.profiles import resolve_profile
from harness.run import InvalidExports, execute, load_task, preflight
from harness.store import RunStore, inside

#: results column -> summary table header: the row key first, then the templates' own
#: (``TaskTemplate.summary_columns``), then these harness columns
ALWAYS = {"episode": "episode", "status": "status"}
#: `harness run`'s exit status when the run finished but no episode has status ok (documented in --help).
EXIT_ALL_FAILED = 3
TRAILING = {"agent_seconds": "time (s)", "total_tokens": "tokens", "cost_usd": "cost ($)"}
#: Seconds between two progress lines of a task being prepared when stderr is not a terminal (a log).
PREPARE_LINE_EVERY = 5.0


@click.command("run")
@click.option("--task", "task_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Task spec YAML (see `harness tasks list`).")
@click.option("--experiment", "experiment_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Experiment spec YAML: a grid of task specs × agents or forecasters × overrides × seeds.")
@click.option("--agent", "agent_profile", default=None,
              help="Agent profile name (agent_profiles/NAME.yaml) or path (default for agent tasks: the one the task "
                   "template names; for forecasting tasks: the profile of model-backed forecasters).")
@click.option("--seed", "seeds", type=int, multiple=True, help="Repetition seed(s); repeat for several episodes.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="Override a task parameter (dotted path into params, YAML value); repeatable. With --task.")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Run directory (default runs/<run_id>, or runs/<experiment name>); an existing one is resumed.")
@click.option("--sandbox", default=None, help="Sandbox backend: auto (default), bubblewrap, unshare, docker, none.")
@click.option("--timeout", type=float, default=None, help="Episode wall-clock limit in seconds (default 3600).")
@click.option("--settings", "settings_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="RunSettings YAML (limits, budgets, retries).")
@click.option("--model-backend", default=None, help="Model backend for LLM agents (see `harness plugins list`); default: the profile's provider.")
@click.option("--script", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Script for a model backend that answers from a script.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Episodes run in parallel (default 1; RunSettings.jobs).")
@click.option("--max-cost", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Run cost cap in USD: no new episode starts once finished episodes cost this much.")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where episodes run: threads of this process, or an existing Dask cluster (--scheduler).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Dask scheduler address for --executor dask (e.g. tcp://head:8786).")
@click.option("--keep-inputs", is_flag=True,
              help="Keep every generated input file (samples, corpora) in the episode folders (RunSettings.keep_inputs); "
                   "default: those the agent left unchanged are dropped at the episode's end and rebuilt on demand.")
@click.option("--retry-failed", is_flag=True,
              help="Resuming: run again the episodes whose agent or forecaster failed (status failed), e.g. after "
                   "fixing the plugin (RunSettings.retry_failed); default: a finished failure is a result and is kept.")
@click.option("--wait", is_flag=True,
              help="When another run is writing into the same run directory, wait for it to finish and then run "
                   "(default: fail at once, naming the other run).")
def run(task_file, experiment_file, agent_profile, seeds, sets, out, sandbox, timeout, settings_file, model_backend,
        script, jobs, max_cost, executor, scheduler, keep_inputs, retry_failed, wait) -> None:
    """Run a task spec or an experiment: episodes in sandboxes (agents) or in the harness (forecasters),
    scored, written to a run directory that a re-run resumes.

    \b
    Exit codes:
      0  the run finished and at least one episode succeeded (status ok)
      2  bad input (spec, option, profile, sandbox unavailable): one error: line, nothing run
      3  the run finished but every episode failed (see the summary's status and error columns)
    """
    if (task_file is None) == (experiment_file is None):
        raise click.UsageError("give exactly one of --task FILE and --experiment FILE")
    interrupt.install_handlers()  # SIGTERM stops the run as Ctrl-C does, leaving nothing behind
    if any(s < 0 for s in seeds):
        raise click.BadParameter("repetition seeds are non-negative integers", param_hint="--seed")
    data = read_yaml(settings_file) if settings_file else {}
    if sandbox:
        data["sandbox"] = sandbox
    if timeout:
        data["episode_timeout"] = timeout
    if jobs:
        data["jobs"] = jobs
    if max_cost:
        data["max_run_cost_usd"] = max_cost
    if keep_inputs:
        data["keep_inputs"] = True
    if retry_failed:
        data["retry_failed"] = True
    settings = parse(RunSettings, data, settings_file or "--settings")
    options = {"script": str(script)} if script else {}

    if scheduler and executor != "dask":
        raise click.UsageError("--scheduler goes with --executor dask")
    pool = None
    if executor == "dask":
        from harness.dask_executor import DaskExecutor

        pool = DaskExecutor(scheduler)
    stages, title = run_stages(task_file, experiment_file, agent_profile, seeds, sets, out)
    every = [u for _, units, _ in stages for u in units]
    refuse_unused_sandbox_options(every, sandbox=sandbox, timeout=timeout)
    preflight(every, settings, model_backend, options)

    templates = {u.task.template.name: u.task.template for _, units, _ in stages for u in units}
    billed = _billed(model_backend) and all(_billed(getattr(u.task.params, "model_backend", None)) for u in every)
    err = console(stderr=True)
    rows = []
    invalid = None  # InvalidExports of a stage: later stages do not start
    for where, units, identity in stages:
        target = Path(where) if where else Path("runs") / "new"  # a new run's id folder goes under runs/
        existing = next((p for p in (target, *target.parents) if p.exists()), Path("."))
        store = RunStore.create(where)
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                      MofNCompleteColumn(), TimeElapsedColumn(), console=err,
                      transient=False, disable=not err.is_terminal) as progress:  # a log gets the lines below  # a log gets the lines below
            bar = progress.add_task("preparing", total=None)

            tally = Tally(billed)
            said = [float("-inf")]

            def on_event(event: str, data: dict) -> None:
                tally.see(event, data)
                if event == "start":
                    stage = f" stage {identity['stage']}," if identity.get("stage", "main") != "main" else ""
                    err.print(f"run {store.run_id}:{stage} {data['episodes']} episode(s), sandbox "
                              f"[bold]{data['sandbox']}[/], {settings.jobs} at a time")
                    for name, text in (data.get("limits_not_enforced") or {}).items():
                        err.print(f"limits not enforced by the {name} sandbox: {text}", markup=False,
                                  highlight=False, soft_wrap=True)
                    progress.update(bar, total=data["episodes"], completed=0, description="running")
                elif event in ("episode", "done", "skip"):
                    if event != "episode":
                        progress.advance(bar)
                    progress.update(bar, description=tally.line())
                    if event == "done" and not err.is_terminal:  # no live bar in a log: one line per episode
                        row = data.get("row") or {}
                        total = progress.tasks[0].total
                        whose = f" ({row['profile']})" if row.get("profile") else ""  # folder names need not say
                        err.print(f"[{tally.done}/{total}] {data['key']}{whose} {row.get('status', '?')} · "
                                  f"{tally.line()}", markup=False, highlight=False, soft_wrap=True)
                elif event in ("lock_wait", "lock_taken_over"):
                    from harness.runlock import describe

                    err.print(f"waiting for the run writing {store.root} ({describe(data['holder'])})"
                              if event == "lock_wait" else f"took over the lock of a run that ended without "
                              f"releasing {store.root} ({describe(data['holder'])})", markup=False, highlight=False,
                              soft_wrap=True)
                elif event == "resume":
                    for line in resume_lines(store.root, data):
                        err.print(line, markup=False, highlight=False, soft_wrap=True)
                elif event == "retry":
                    progress.update(bar, description=tally.line())
                    err.print(f"[yellow]retry {data['attempt']}[/] {escape(data['key'])}: {escape(str(data['error']))}")
                elif event == "budget":
                    err.print(f"[yellow]run cost cap reached[/]: ${data['spent']:.2f} of ${data['cap']:.2f}; "
                              f"{data['not_started']} episode(s) not started, {data['running']} running finish "
                              "under their own budgets")
                elif event == "message" and data.get("final"):
                    err.print(data["text"], markup=False, highlight=False, soft_wrap=True)  # plugins' text:
                    # literal (an install hint's ``.[extra]`` is not markup)
                elif event == "message" and isinstance(data.get("total"), int) and data["total"] > 0:
                    # a task being prepared (e.g. a sample pool generated): the bar shows its progress
                    progress.update(bar, description=escape(data.get("label") or data["text"]), total=data["total"],
                                    completed=data.get("done") or 0)
                    now = time.monotonic()
                    if not err.is_terminal and (now - said[0] >= PREPARE_LINE_EVERY
                                                or data.get("done") == data["total"]):
                        said[0] = now  # no live bar in a log: a line every few seconds
                        err.print(data["text"], markup=False, highlight=False)
                elif event == "message":
                    progress.update(bar, description=escape(data["text"]))

            try:
                rows += execute(units, store, settings, on_event, model_backend=model_backend,
                                model_options=options, identity=identity, executor=pool, wait=wait)
            except InvalidExports as exc:  # the results are written: show them, then the error
                rows += exc.rows
                invalid = exc
            except BaseException:
                remove_if_empty(store.root, existing)
                raise
        click.echo(f"results: {store.root / 'results.parquet'}")
        if invalid is not None:
            break
    print_whole(console(), summary_table(rows, title, list(templates.values())))
    if not billed:
        console().print("offline model backend: no money was spent (costs are the profiles' prices for the "
                        "tokens the script answered with)", markup=False, highlight=False)
    if invalid is not None:
        raise invalid
    if rows and not any(r.get("status") == "ok" for r in rows):
        err.print(f"error: every episode failed ({len(rows)} of {len(rows)}): exit {EXIT_ALL_FAILED}",
                  markup=False, highlight=False)
        raise SystemExit(EXIT_ALL_FAILED)


def resume_lines(root: Path, data: dict) -> list[str]:
    """The lines a resume of ``root`` prints, from its ``resume`` event (:func:`harness.run.resume_summary`):
    what is kept, the failed episodes among them and ``--retry-failed`` when there are some (or how many it
    runs again), and a warning when other code made kept rows."""
    line = f"resuming {root}: {data['finished']} finished episode(s) are kept"
    if data.get("failed"):
        line += f" ({data['failed']} failed: pass --retry-failed to run them again)"
    if data.get("retried"):
        line += f"; {data['retried']} failed episode(s) run again (--retry-failed)"
    lines = [line]
    if data.get("stale"):
        lines.append(f"warning: {data['stale']} kept episode(s) were made by other code "
                     f"({'; '.join(data.get('changes') or [])}): their numbers stay as they were; use a new --out, "
                     f"or harness rescore {root}")
    return lines


def print_whole(con, table: Table) -> None:
    """Print ``table`` so that no value of its fixed-width columns (episode ids, numbers) is cut: a ``why``
    column wraps to the console's width; when even that is too narrow the table is printed as wide as it
    needs (a terminal then folds its lines; each id is still one unbroken string)."""
    need = con.measure(table, options=con.options.update_width(100_000)).minimum  # unconstrained: every
    # fixed column at its width, "why" at its minimum
    width = con.width
    con.width = max(width, need)  # Console.print(width=...) cannot exceed the console's width
    try:
        con.print(table, crop=False)
    finally:
        con.width = width


def remove_if_empty(folder: Path, existing: Path) -> None:
    """Remove the run directory this command created, and the parents it created with it (a stage's
    ``runs/<experiment>/``, a first ``runs/``), while they are empty: a run refused before writing anything
    (a task that cannot be prepared) leaves nothing behind.  ``existing``: the directory or nearest parent
    that existed before the command; it and what is above it are kept."""
    folder, stop = folder.absolute(), existing.absolute()
    while folder != stop and stop in folder.parents:
        try:
            folder.rmdir()
        except OSError:  # not empty: the run started, or another run lives there
            return
        folder = folder.parent


def refuse_unused_sandbox_options(units, **given) -> None:
    """``--sandbox`` and ``--timeout`` configure sandboxed episodes: a refusal naming the option when
    every episode of ``units`` runs in the harness process (the option would be ignored).  Like every refusal
    of what a run was given (as opposed to a malformed command line, click's usage error) it is a
    :class:`~harness.errors.HarnessError`: one ``error: ...`` line, exit 2."""
    if any(not u.task.template.runs_in_harness(u.task.params) for u in units):
        return
    for name, value in given.items():
        if value is not None:
            raise HarnessError(f"--{name} would be ignored: every episode of this run runs in the harness "
                                   "process, without a sandbox (its limits are the task's params)")


def default_profile(task):
    """The profile a ``--task`` run without ``--agent`` uses: the one its template names
    (:meth:`~harness.contracts.AgentTaskTemplate.default_agent`); a refusal (HarnessError) when it names none."""
    name = task.template.default_agent(task.params)
    if name is None:
        raise HarnessError(f"task template {task.template.name!r} names no default agent: give --agent PROFILE")
    return resolve_profile(name)


def run_stages(task_file, experiment_file, agent_profile, seeds, sets, out):
    """``([(run dir or None for a new one, units, identity)], title)`` of ``--task``/``--experiment`` options."""
    if task_file is not None:
        task = load_task(task_file, parse_set(sets))
        in_harness = task.template.runs_in_harness(task.params)
        profile = resolve_profile(agent_profile) if agent_profile else (
            None if in_harness or task.template.needs_agent_profile(task.params) else default_profile(task))
        units = [Unit(task, profile, seed) for seed in (list(seeds) or [None])]
        identity = {"task": task.spec.name, "profile": profile.name if profile else None}
        if task.overrides:  # shown by the summary title and `runs list`; a resume may change them (see execute)
            identity["overrides"] = task.overrides
        title = task_title(task.spec.name, task.overrides)
        who = profile.name if profile else task.template.name
        return [(Path(out) if out else None, units, identity)], f"{title} · {who}"
    if seeds or sets or agent_profile:
        raise click.UsageError("--seed, --set and --agent apply to --task runs; an experiment lists its own")
    spec = load_experiment(experiment_file)
    planned = plan_experiment(spec, experiment_file, Path(out) if out else inside(Path("runs"), spec.name),
                              resolve_profile, load_task)
    for stage in planned:
        warn_repeats(stage.name, stage.units)
    return [(p.root, p.units, p.identity) for p in planned], spec.name


def warn_repeats(stage: str, units) -> None:
    """One line on stderr when units of a stage repeat another's settings under another spec name
    (:func:`~harness.experiment.repeated_settings`): how many episodes run twice, and an example."""
    repeats = repeated_settings(units)
    if not repeats:
        return
    count = sum(_episode_count(unit) for unit, _ in repeats)
    unit, seen = repeats[0]
    where = f"stage {stage}: " if stage != "main" else ""
    console(stderr=True).print(
        f"[yellow]warning:[/] {where}{count} episode(s) repeat the settings (template, params, profile, seed) "
        f"of episodes of another task spec and run again under other ids, e.g. "
        f"{escape(task_title(unit.task.spec.name, unit.task.overrides))} = "
        f"{escape(task_title(seen.task.spec.name, seen.task.overrides))}", highlight=False, soft_wrap=True)


def _episode_count(unit) -> int:
    try:
        return len(unit.task.template.episodes(with_seed(unit.task, unit.seed)))
    except (ValueError, HarnessError):  # refused later by the preflight, naming the file
        return 1


def _billed(model_backend: str | None) -> bool:
    """Whether model requests through ``model_backend`` (``--model-backend``, or an in-harness task's
    ``params.model_backend``) cost money: False for a backend that answers offline
    (:attr:`harness.contracts.ModelBackend.billed`); True otherwise (the profiles' providers)."""
    if not model_backend:
        return True
    try:
        return bool(getattr(registry.get("model_backend", model_backend), "billed", True))
    except Exception:  # noqa: BLE001 - an unknown backend was already refused by the preflight
        return True


class Tally:
    """Counts for the progress line: done / running / failed / retried, tokens and cost so far
    (``billed`` False: the cost is marked as not spent)."""

    def __init__(self, billed: bool = True):
        self.done = self.running = self.failed = self.retried = self.tokens = 0
        self.cost = 0.0
        self.billed = billed

    def see(self, event: str, data: dict) -> None:
        if event == "episode":
            self.running += 1
        elif event in ("done", "skip"):
            row = data.get("row") or {}
            self.running -= event == "done"
            self.done += 1
            self.failed += row.get("status") not in ("ok", None)
            self.tokens += int(_number(row.get("total_tokens")))
            self.cost += _number(row.get("cost_usd"))
        elif event == "retry":
            self.retried += 1

    def line(self) -> str:
        return (f"done {self.done} · running {self.running} · failed {self.failed} · retried {self.retried} · "
                f"{self.tokens:,} tokens · ${self.cost:.2f}" + ("" if self.billed else " (no money spent)"))


def summary_table(rows: list[dict], title: str, templates: list = ()) -> Table:
    """One line per episode: the row key, then the ``templates``' summary columns
    (``TaskTemplate.summary_columns``; the first of each whenever a row has it, the others when a row
    fills them with a value other than 0), then :data:`TRAILING` when filled; the agent profile after the
    row key when the rows come from several profiles.
    Text columns are left-aligned, numbers right-aligned.  The caption spells out each abbreviated header
    (its results column and the template's meaning of it, ``TaskTemplate.result_columns``) and adds the
    templates' :meth:`~harness.contracts.TaskTemplate.summary_notes`."""
    # a title's "[noise=high]" is text, not console markup
    table = Table(title=Text(title, style="table.title"), box=box.SIMPLE_HEAD)
    several = len({r.get("profile") for r in rows if r.get("profile")}) > 1  # say whose episode each row is
    headers = {**ALWAYS, **({"profile": "profile"} if several else {}),
               **{c: h for t in templates for c, h in t.summary_columns.items()}, **TRAILING}
    headlines = {next(iter(t.summary_columns)) for t in templates if t.summary_columns}
    shown = [c for c in headers if c in ALWAYS or c == "profile" or any(r.get(c) not in (None, 0) for r in rows)
             or (c in headlines and any(c in r for r in rows))]
    for col in shown:  # no value is ever broken (an episode id names its folder): each column is as wide as
        # its longest value and its header's longest word (a header wraps at spaces); only "why" folds
        width = max([len(_fmt(r.get(col))) for r in rows] + [len(w) for w in headers[col].split()])
        text = col in ALWAYS or col == "profile" or any(isinstance(r.get(col), str) for r in rows)
        table.add_column(headers[col], justify="left" if text else "right", overflow="fold", width=width,
                         no_wrap=col == "episode")
    failed = any(r.get("error_kind") or r.get("error") for r in rows)
    if failed:  # why each failed episode failed: error kind and a one-line reason
        table.add_column("why", justify="left", overflow="fold", min_width=20)
    for row in rows:
        cells = [Text(_fmt(row.get(c))) for c in shown]  # values print literally: "[x]" in a value is no markup
        if failed:
            why = ": ".join(str(x) for x in (row.get("error_kind"), row.get("error")) if x)
            cells.append(Text(why))
        table.add_row(*cells)
    meanings = {c: meaning for t in templates for c, (_, meaning) in t.result_columns.items()}
    short = [f"{headers[c]} = {c.replace('_', ' ')}" + (f" ({meanings[c]})" if c in meanings else "") for c in shown
             if headers[c] != c and headers[c].replace(" ", "_") != c and c not in ALWAYS]
    notes = [note for t in templates
             for note in t.summary_notes([r for r in rows if r.get("template") in (t.name, None)])]
    lines = (["; ".join(short) + " (results.parquet columns)"] if short else []) + notes
    if lines:  # the abbreviated headers spelled out with the results column each shows and its meaning; notes
        table.caption = Text("\n".join(lines))
        table.caption_justify = "left"
    return table


def _number(value) -> float:
    return float(value) if isinstance(value, (int, float)) and value == value else 0.0


def _fmt(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return "–" if value != value else f"{value:.3f}"
    return str(value)
