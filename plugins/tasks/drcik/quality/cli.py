"""``harness dr-audit`` and ``harness dr-calibrate``: quality control of a ``harness dr-generate`` output.

::

    harness dr-audit GEN_DIR [--difficulty] [--cloze [--repair]] [--distractors] [--model-backend B --script F]
                     [--settings FILE] [--max-cost USD] [--jobs N]
    harness dr-calibrate GEN_DIR [--reviews FILE] [--check-generation DIR] [model options as above]
    harness dr-review GEN_DIR [--port N]      (alias of harness view GEN_DIR: the review page)

The models are the generation's (``GEN_DIR/generation/spec.json``): the generator labels difficulty and answers
the cloze and distractor checks, each stage's judge is re-asked for calibration.  Every call goes through
:class:`harness.ModelClient` (proxy logs under ``GEN_DIR/generation/proxy/``), ``--max-cost`` shared by all;
each pass is an engine stage under ``generation/`` and resumes where a killed run stopped.  Every ``dr-audit``
first runs the release checks (no model call, :mod:`.release_checks`: the repair queue, real-name leaks,
evidence roles against their dates) into ``generation/qc/release.json``.  Results land in
``generation/qc/`` (audits) and ``generation/calibration/agreement.json``; ``harness report GEN_DIR`` tabulates them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import click

from tsagent_plugins.tasks.drcik.generation.output import write_json

JUDGE_ROLES = ("judge_evidence", "judge_chain", "judge_supporting", "judge_distractor")


def model_options(f: Callable) -> Callable:
    for option in reversed([
        click.option("--model-backend", default=None, help="Model backend (e.g. scripted); default: each profile's."),
        click.option("--script", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
                     help="Script of the scripted backend."),
        click.option("--settings", "settings_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
                     help="Run settings YAML (rate_limits per provider)."),
        click.option("--max-cost", type=float, default=None, help="Stop once this much is spent (USD)."),
        click.option("--jobs", type=click.IntRange(1, 256), default=4, show_default=True, help="Units in flight."),
    ]):
        f = option(f)
    return f


def _engine(gen_dir: Path, roles: tuple[str, ...], backend: str | None, script: Path | None,
            settings_file: Path | None, max_cost: float | None, jobs: int) -> tuple[Any, list]:
    from harness import ConfigError, HarnessError, resolve_profile
    from tsagent_plugins.tasks.drcik.generation.engine import Engine
    from tsagent_plugins.tasks.drcik.generation.run import _progress_bar, open_clients

    marker = gen_dir / "generation" / "spec.json"
    if not marker.is_file():
        raise click.ClickException(f"{gen_dir} is not a dr-generate output ({marker} is missing)")
    spec = json.loads(marker.read_text(encoding="utf-8"))
    if backend == "scripted" and script is None:
        raise click.UsageError("--model-backend scripted needs --script")
    options = {"script": str(script.resolve())} if script else {}
    try:
        profiles = {role: resolve_profile(spec["models"][role]) for role in roles}
        clients = open_clients(profiles, gen_dir / "generation" / "proxy", backend, options, settings_file, max_cost)
    except (ConfigError, HarnessError, KeyError) as exc:
        raise click.ClickException(f"{marker}: {exc}") from None
    bar = _progress_bar()
    report = bar.__enter__()
    engine = Engine(gen_dir, clients, rounds=int(spec.get("rounds", 5)), jobs=jobs, progress=report,
                    seed=spec.get("seed"))
    return engine, [bar, *{id(c): c for c in clients.values()}.values()]


def _close(things: list) -> None:
    bar, *clients = things
    bar.__exit__(None, None, None)
    for c in clients:
        c.stop()


@click.command("dr-audit")
@click.argument("gen_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--difficulty", is_flag=True, help="Label difficulty (Appendix L.3) into annotations.difficulty.")
@click.option("--cloze", is_flag=True, help="Cloze audit of the supporting documents (Table 8).")
@click.option("--repair", is_flag=True, help="With --cloze: re-run only the blanks that failed the last round.")
@click.option("--distractors", is_flag=True, help="Distractor distinguishability audit (Table 9).")
@model_options
def dr_audit(gen_dir: Path, difficulty: bool, cloze: bool, repair: bool, distractors: bool, model_backend: str | None,
             script: Path | None, settings_file: Path | None, max_cost: float | None, jobs: int) -> None:
    """Audit a dr-generate output GEN_DIR (Dr-CiK Appendix D.1, L.3); with no pass named, run all three."""
    from tsagent_plugins.tasks.drcik.quality import cloze as cz, difficulty_labels, distractor_audit as da

    if repair and not cloze:
        raise click.UsageError("--repair goes with --cloze")
    if not (difficulty or cloze or distractors):
        difficulty = cloze = distractors = True
    from tsagent_plugins.tasks.drcik.quality import release_checks

    qc = gen_dir / "generation" / "qc"
    if (gen_dir / "generation" / "spec.json").is_file():
        found = release_checks.audit(gen_dir)
        write_json(qc / "release.json", found)
        click.echo(release_checks.summary_line(found))
        for item in found["leaks"][:10]:
            click.echo(f"  real name {item['name']!r} in {item['where']}")
        for item in found["roles"][:10]:
            click.echo(f"  {item['task']}: {item['problem']}")
    engine, things = _engine(gen_dir, ("generator",), model_backend, script, settings_file, max_cost, jobs)
    try:
        if difficulty:
            summary = difficulty_labels.label(gen_dir, engine)
            write_json(qc / "difficulty.json", summary)
            click.echo(f"difficulty: {len(summary['labelled'])} task(s) labelled, "
                       f"{len(summary['unlabelled'])} with a dimension left unlabelled")
        if distractors:
            records = da.audit(gen_dir, engine)
            write_json(qc / "distractors.json", {"records": records, "table": da.table9(records)})
            total = da.table9(records)[-1] if records else {}
            click.echo(f"distractors: {total.get('explicitly_rejectable', 0)}/{total.get('distractors', 0)} "
                       f"explicitly rejectable, {total.get('ambiguous', 0)} ambiguous, {total.get('failing', 0)} "
                       f"failing, {total.get('defective', 0)} defective")
        if cloze:
            try:
                record = cz.audit(gen_dir, engine, repair=repair)
            except cz.NothingToRepair as exc:
                click.echo(f"cloze: {exc}")
                return
            except ValueError as exc:
                raise click.ClickException(str(exc)) from None
            t = record["table"]
            click.echo(f"cloze round {record['round']}: {t['blanks']} blanks over {t['tasks']} task(s): "
                       f"{t['correct']} correct, {t['partial']} partial, {t['wrong']} wrong, mean {t['mean_score']}; "
                       f"{len(cz.documents_to_repair(record['blanks']))} document(s) to repair")
    finally:
        _close(things)


@click.command("dr-calibrate")
@click.argument("gen_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--reviews", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
              help="Review records (default GEN_DIR/generation/calibration/reviews.jsonl).")
@click.option("--check-generation", "others", multiple=True,
              type=click.Path(path_type=Path, file_okay=False, exists=True),
              help="A benchmark generation to check for reused calibration tasks (repeatable).")
@click.option("--strict", is_flag=True, help="Exit 1 when a judge is more permissive than the human majority.")
@model_options
def dr_calibrate(gen_dir: Path, reviews: Path | None, others: tuple[Path, ...], strict: bool, model_backend: str | None,
                 script: Path | None, settings_file: Path | None, max_cost: float | None, jobs: int) -> None:
    """Compare each stage's judge with the human majority on the reviewed units of GEN_DIR (Dr-CiK D.2, Figure 11).

    A judge more permissive than the majority (D.2 selects judges at least as strict) is a "warning:" line;
    the exit status stays 0 unless --strict (then 1)."""
    from tsagent_plugins.tasks.drcik.quality import calibration as cal

    path = reviews or gen_dir / cal.REVIEWS
    try:
        cal.read_reviews(path)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    engine, things = _engine(gen_dir, ("generator", *JUDGE_ROLES), model_backend, script, settings_file, max_cost,
                             jobs)
    try:
        result = cal.calibrate(gen_dir, engine, path)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        _close(things)
    for row in result["rows"]:
        click.echo(f"{row['stage']}: {row['comparable']}/{row['units']} comparable, {row['agree']} agree, "
                   f"{row['judge_stricter']} judge stricter, {row['judge_more_permissive']} judge more permissive: "
                   + ("at least as strict" if row["at_least_as_strict"] else "MORE PERMISSIVE than the majority"))
    failed = False
    for row in result["rows"]:
        if not row["at_least_as_strict"]:
            click.echo(f"warning: {row['stage']}: the judge accepts {row['judge_more_permissive']} unit(s) the human "
                       "majority rejects (Dr-CiK D.2 wants it at least as strict: refine its prompt)", err=True)
            failed = failed or strict
    for other in others:
        reused = cal.reused_units(other, path)
        if reused:
            failed = True
            click.echo(f"{other}: reuses calibration task(s) {', '.join(reused)}: regenerate without them", err=True)
    if failed:
        raise SystemExit(1)


@click.command("dr-review")
@click.argument("gen_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="Loopback port.")
@click.pass_context
def dr_review(ctx: click.Context, gen_dir: Path, port: int) -> None:
    """Alias of `harness view GEN_DIR`: the calibration review page of GEN_DIR (Appendix D.2), on loopback."""
    from tsagent_plugins.tasks.drcik.quality.report import is_generation

    if not is_generation(gen_dir):
        raise click.ClickException(f"{gen_dir} is not a dr-generate output (no generation/ beside tasks/)")
    view = ctx.find_root().command.get_command(ctx, "view")
    ctx.invoke(view, run_dirs=(gen_dir,), host="127.0.0.1", port=port, bundle=None, with_answers=False)
