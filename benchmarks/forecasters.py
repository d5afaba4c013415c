"""Load time, seconds per task and peak memory of each pretrained forecaster family on the Dr-CiK sample tasks.

Usage: ``python benchmarks/forecasters.py --tiny`` (tiny random checkpoints built with each family's own
classes: measures the harness and package code paths, not the real models' cost) or
``python benchmarks/forecasters.py --model FAMILY=FOLDER ...`` (real weights from local folders).
Options: ``--only FAMILY`` (repeatable), ``--samples S`` (25), ``--device auto|cpu|cuda``, ``--tasks DIR``,
``--copies N`` (8), ``--batch-size B`` (16).

Per family it prints: load seconds (first forecast minus the later ones' mean: imports and weights),
seconds per task one at a time (the sample tasks), then seconds per task over ``N`` copies of each task
(histories shifted by k standard deviations, k = 1..N: a release holds many tasks of one history length
and horizon, the requests a batch groups) forecast one at a time (``forecast``) and batched
(``forecast_batch``, ``batch_size`` B: one model call per chunk for quantile models; sample-path models
and ``chronos`` declare ``batch_size`` 1 and take them one at a time either way), and the peak resident
memory of a child process that ran only that family (``resource.getrusage``, MiB) -- each family runs in
its own process so the peaks do not mix.
A family that is not installed prints its install command.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import multiprocessing as mp
import resource
import sys
import tempfile
import time
from pathlib import Path

import click
import numpy as np

#: family -> (module, forecaster class, tiny-builder keyword arguments)
FAMILIES = {
    "chronos": ("tsagent_plugins.forecasters.chronos", "ChronosForecaster", {}),
    "timesfm": ("tsagent_plugins.forecasters.timesfm", "TimesFMForecaster", {}),
    "tirex": ("tsagent_plugins.forecasters.tirex", "TiRexForecaster", {}),
    "moirai": ("tsagent_plugins.forecasters.moirai", "MoiraiForecaster", {}),
    "moirai-moe": ("tsagent_plugins.forecasters.moirai", "MoiraiMoEForecaster", {"moe": True}),
    "toto": ("tsagent_plugins.forecasters.toto", "TotoForecaster", {}),
}
TINY_OPTIONS = {"moirai": {"context_length": 256}, "moirai-moe": {"context_length": 256, "patch_size": 8},
                "toto": {"context_length": 512}}


def run_family(family: str, model: str | None, samples: int, device: str, tasks_dir: str | None, copies: int,
               batch_size: int, queue) -> None:
    """In a child process: build or take the model, forecast the sample tasks, report figures on ``queue``."""
    from harness.contracts import ForecastError, ForecastRequest
    from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks

    module_name, class_name, tiny_kwargs = FAMILIES[family]
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, class_name)
        options = {}
        if model is None:
            folder = Path(tempfile.mkdtemp(prefix=f"bench-{family}-")) / "tiny"
            model = str(module.build_tiny_model(folder, **tiny_kwargs))
            options = TINY_OPTIONS.get(family, {})
        forecaster = cls(model) if family == "chronos" else cls(model, device=device, batch_size=batch_size,
                                                                **options)
        tasks = load_tasks(tasks_dir)
        requests = [ForecastRequest(history=t.history, future_index=t.future_index, n_samples=samples, seed=0,
                                    time_limit=3600, seasonal_period=t.seasonal_period) for t in tasks]
        times = []
        for request in requests:
            start = time.perf_counter()
            forecaster.forecast(request)
            times.append(time.perf_counter() - start)
        many = [dataclasses.replace(r, history=r.history + k * r.history.std()) for r in requests
                for k in range(1, copies + 1)]
        start = time.perf_counter()
        alone = [forecaster.forecast(r) for r in many]
        alone_s = (time.perf_counter() - start) / len(many)
        start = time.perf_counter()
        batched = forecaster.forecast_batch(many)
        batched_s = (time.perf_counter() - start) / len(many)
        failed = [str(f) for f in batched if isinstance(f, Exception)]
        if failed:
            raise ForecastError(f"batched forecast failed: {failed[0]}")
        same = all(np.array_equal(a.samples, b.samples) for a, b in zip(alone, batched))
        later = times[1:] or times
        per_task = sum(later) / len(later)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        queue.put({"family": family, "load_s": max(0.0, times[0] - per_task), "per_task_s": per_task,
                   "alone_per_task_s": alone_s, "batched_per_task_s": batched_s, "same_paths": same,
                   "batch_size": forecaster.batch_size, "peak_mib": peak, "tasks": len(requests), "copies": len(many),
                   "horizons": [len(r.future_index) for r in requests]})
    except ForecastError as exc:
        queue.put({"family": family, "error": str(exc)})
    except ImportError as exc:
        queue.put({"family": family, "error": f"not installed ({exc})"})


@click.command()
@click.option("--tiny", is_flag=True, help="Tiny random checkpoints built with each family's classes.")
@click.option("--model", "models", multiple=True, help="FAMILY=FOLDER: real weights from a local folder.")
@click.option("--only", multiple=True, type=click.Choice(sorted(FAMILIES)), help="Only these families.")
@click.option("--samples", default=25, show_default=True, help="S, sample paths per task.")
@click.option("--device", default="cpu", show_default=True, type=click.Choice(["auto", "cpu", "cuda"]))
@click.option("--tasks", "tasks_dir", default=None, help="Dr-CiK task folder (default: the bundled samples).")
@click.option("--copies", default=8, show_default=True, help="Copies of each task for the batched figures.")
@click.option("--batch-size", default=16, show_default=True, help="Requests per call (option batch_size).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per family instead of a table.")
def main(tiny, models, only, samples, device, tasks_dir, copies, batch_size, as_json):
    given = dict(m.split("=", 1) for m in models)
    if not tiny and not given:
        raise click.UsageError("give --tiny or at least one --model FAMILY=FOLDER")
    families = list(only) or (list(FAMILIES) if tiny else list(given))
    ctx = mp.get_context("spawn")
    rows = []
    for family in families:
        queue = ctx.Queue()
        child = ctx.Process(target=run_family, args=(family, given.get(family), samples, device, tasks_dir,
                                                        copies, batch_size, queue))
        child.start()
        child.join()
        rows.append(queue.get() if not queue.empty() else {"family": family, "error": f"exit {child.exitcode}"})
        row = rows[-1]
        if as_json:
            print(json.dumps(row), flush=True)
        elif "error" in row:
            print(f"{family:<11} {row['error']}", flush=True)
        else:
            print(f"{family:<11} load {row['load_s']:6.2f} s   per task {row['per_task_s']:6.3f} s   "
                  f"x{copies}: alone {row['alone_per_task_s']:6.3f} / batched {row['batched_per_task_s']:6.3f} s/task "
                  f"(batch_size {row['batch_size']}, same paths: {'yes' if row['same_paths'] else 'NO'})   "
                  f"peak {row['peak_mib']:5.0f} MiB   ({row['tasks']} tasks, H = {row['horizons']}, S = {samples}, "
                  f"{'tiny' if family not in given else given[family]})", flush=True)
    sys.exit(0 if all("error" not in r for r in rows) else 1)


if __name__ == "__main__":
    main()
