"""``harness dr-generate``: turn CAF tasks into Dr-CiK deep-research environments (Section 4.1).

::

    harness dr-generate SPEC --out DIR [--model-backend scripted [--script FILE]] [--settings FILE]
                         [--max-cost USD] [--jobs N] [--resume] [--dry-run] [--include-flagged]

Every model call goes through :class:`harness.ModelClient` (one per profile of the spec's ``models``),
with the rate limits of ``--settings`` shared by the clients of a provider and ``--max-cost`` shared by
all of them; proxy logs go under ``DIR/generation/proxy/``.  ``--resume`` continues a killed generation
in ``DIR`` (the same spec) without asking any accepted unit again.  ``--dry-run`` prints the expected
calls and cost per stage and calls nothing.

Bad input (the spec, a CAF file: :mod:`.caf`) is one ``error:`` line naming the file and field (one for every
bad CAF file), exit 2, before the first model call and without an output folder.  A task with a unit flagged
for human repair (Appendix D.2) is held back in ``DIR/generation/repair_queue.json`` and not exported, unless
``--include-flagged`` (then exported and marked).  A generation that writes no task fails (exit 2).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import click

if TYPE_CHECKING:
    from tsagent_plugins.tasks.drcik.generation.caf import CafTask
    from tsagent_plugins.tasks.drcik.generation.spec import GenerationSpec

ROLES = ("generator", "judge_entity", "judge_evidence", "judge_chain", "judge_supporting", "judge_distractor")


def read_caf_folder(spec: "GenerationSpec", spec_file: Path,
                    check: "Callable[[CafTask], list[str]] | None" = None) -> "list[CafTask]":
    """The CAF tasks of the generation spec ``spec`` (read from ``spec_file``; :func:`.caf.read_folder` with
    ``check``).  Every bad file is one ``error:`` line on stderr, then exit 2: the commands reading CAF tasks
    (``dr-generate``, ``dr-offline-scripts``) report all of them at once."""
    from tsagent_plugins.tasks.drcik.generation import caf

    try:
        return caf.read_folder(spec.path(spec_file, spec.input), spec.window_shift_weeks, check)
    except caf.CafFolderError as exc:
        for line in exc.lines():
            click.echo(f"error: {line}", err=True)
        sys.exit(2)


@click.command("dr-generate")
@click.argument("spec_file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True, help="Output folder.")
@click.option("--model-backend", default=None, help="Model backend (e.g. scripted); default: each profile's provider.")
@click.option("--script", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Script of the scripted backend (default: the spec's script).")
@click.option("--settings", "settings_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Run settings YAML (rate_limits per provider).")
@click.option("--max-cost", type=float, default=None, help="Stop once the generation has spent this much (USD).")
@click.option("--jobs", type=click.IntRange(1, 256), default=4, show_default=True, help="Units in flight per stage.")
@click.option("--resume", is_flag=True, help="Continue the generation in --out.")
@click.option("--dry-run", is_flag=True, help="Print the expected calls and cost per stage; call nothing.")
@click.option("--include-flagged", is_flag=True,
              help="Export tasks with units flagged for human repair too (marked generation.flagged_for_repair).")
def dr_generate(spec_file: Path, out: Path, model_backend: str | None, script: Path | None,
                settings_file: Path | None, max_cost: float | None, jobs: int, resume: bool, dry_run: bool,
                include_flagged: bool) -> None:
    """Generate Dr-CiK deep-research environments from the CAF tasks of SPEC_FILE (Dr-CiK Section 4.1)."""
    from harness import ConfigError, HarnessError, resolve_profile
    from harness.reporting import cost_text
    from tsagent_plugins.tasks.drcik.generation import caf
    from tsagent_plugins.tasks.drcik.generation.engine import CHAT_PROVIDERS
    from tsagent_plugins.tasks.drcik.generation.spec import load_spec

    # everything below up to generate() is checked before the first model call: a refused run costs nothing
    # and leaves no output folder (ConfigError / HarnessError: one "error:" line, exit 2)
    spec = load_spec(spec_file)
    profiles = {role: resolve_profile(getattr(spec.models, role)) for role in ROLES}
    for role, profile in profiles.items():
        if model_backend is None and profile.provider not in CHAT_PROVIDERS:
            raise ConfigError(spec_file, [f"models.{role}: profile {profile.name!r} has provider "
                                          f"{profile.provider!r}; dr-generate speaks Chat Completions (openai, "
                                          "openrouter, custom)"])
    from tsagent_plugins.tasks.drcik.generation.estimate import estimate, print_estimate

    tasks = read_caf_folder(spec, spec_file, lambda task: caf.size_problems(
        task, sum(r["cost_usd"] for r in estimate(spec, [task], profiles))))
    for task in tasks:
        for warning in caf.injection_warnings(task):
            click.echo(f"warning: {task.source or spec_file}: {warning}", err=True)
    if dry_run:
        print_estimate(spec, tasks, profiles)
        return
    identity = spec.model_dump(mode="json")
    marker = out / "generation" / "spec.json"
    if out.exists() and any(out.iterdir()):
        if not resume:
            raise click.ClickException(f"{out} is not empty: pass --resume to continue its generation, or choose "
                                       "another --out")
        if not marker.is_file() or json.loads(marker.read_text()) != identity:
            raise click.ClickException(f"{out} holds no generation of this spec ({marker} differs or is missing)")
    from tsagent_plugins.tasks.drcik.generation.run import generate

    options = {}
    if model_backend == "scripted":
        chosen = script or (spec.path(spec_file, spec.script) if spec.script else None)
        if chosen is None:
            raise click.UsageError("--model-backend scripted needs --script or the spec's script")
        options["script"] = str(Path(chosen).resolve())
    elif script is not None:
        options["script"] = str(script.resolve())
    created = not out.exists()
    try:
        summary = generate(spec, tasks, profiles, out, model_backend, options, settings_file, max_cost, jobs,
                           include_flagged=include_flagged)
    except (ConfigError, HarnessError, OSError):
        if created and not any((out / "generation").glob("step*/*/attempts.jsonl")):
            shutil.rmtree(out, ignore_errors=True)  # refused before its first model call: nothing to keep
        raise  # otherwise what was paid for stays, and --resume continues it
    written, incomplete = summary["output"]["written"], summary["output"]["incomplete"]
    held = summary["output"]["held_back"]
    click.echo(f"wrote {len(written)} task(s) to {out}; {len(held)} task(s) held back in the repair queue "
               f"({summary['totals']['flagged']} unit(s) flagged for human repair"
               + (", included and marked by --include-flagged" if include_flagged else "") + "); "
               f"{len(incomplete)} task(s) incomplete; "
               f"{cost_text(summary['totals']['cost_usd'], summary['totals']['offline_backends'], digits=4)}"
               + (": no money spent" if summary['totals']['offline_backends'] else "")
               + f" ({out / 'generation' / 'summary.json'})")
    if not written:
        raise HarnessError(
            f"{out}: no task written: {len(held)} held back for repair, {len(incomplete)} incomplete (see "
            f"{out / 'generation' / 'repair_queue.json'}); with --model-backend scripted, a script made for other "
            "tasks answers none of these (make one for them: docs/benchmarks/drcik-own-data.md)")
