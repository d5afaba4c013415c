"""Time the statistical forecasters on the Dr-CiK sample tasks and on the release's longest shape.

Usage: ``python benchmarks/forecast.py [--tasks DIR] [--samples S] [--time-limit SECONDS]
[--only NAME ...] [--skip-long]``.

Prints, per forecaster and task, the wall time, whether a fallback fired (and
which), the chosen model and the sCRPS when labels are public.  The synthetic
long task has the release's maximum history (6,528 points) and horizon (2,798
steps): hourly, daily seasonality (m = 24), trend and noise.
"""

from __future__ import annotations

import time

import click
import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from harness.contracts import ForecastError, ForecastRequest
from tsagent_plugins.forecasters.statistical import FORECASTERS
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks
from tsagent_plugins.tasks.drcik.forecast.metrics import OK, score_task

LONG_HISTORY, LONG_HORIZON = 6528, 2798


def long_task(period: int = 24, seed: int = 0) -> tuple[str, pd.Series, pd.DatetimeIndex, int, np.ndarray]:
    """Synthetic series of the release's maximum history and horizon with a daily cycle of
    ``period`` steps (24: hourly, 288: 5-minute)."""
    rng = np.random.default_rng(seed)
    n = LONG_HISTORY + LONG_HORIZON
    t = np.arange(n)
    y = (200 + 0.01 * t + 30 * np.sin(2 * np.pi * t / period) + np.cumsum(rng.normal(0, 0.5, n))
         + rng.normal(0, 2, n))
    index = pd.date_range("2024-01-01", periods=n, freq=pd.Timedelta(days=1) / period)
    history = pd.Series(y[:LONG_HISTORY], index=index[:LONG_HISTORY])
    return f"synthetic-long-m{period}", history, index[LONG_HISTORY:], period, y[LONG_HISTORY:]


def _model(info: dict) -> str:
    for key in ("sarima", "arima", "ets", "ses"):
        if key in info:
            part = info[key]
            if key == "sarima":
                return f"order {part['order']} seasonal {part['seasonal_order']}"
            if key == "arima":
                return f"order {part['order']}"
            if key == "ets":
                return f"trend {part['trend']}"
            return f"alpha {part['smoothing_level']:.3f}"
    return "-"


@click.command()
@click.option("--tasks", "tasks_dir", type=click.Path(exists=True), default=None,
              help="Dr-CiK task folder (default: the embedded sample).")
@click.option("--samples", default=25, show_default=True, help="Sample paths S.")
@click.option("--time-limit", default=600.0, show_default=True, help="Seconds per task and forecaster.")
@click.option("--only", multiple=True, help="Forecaster names to run (default: all).")
@click.option("--skip-long", is_flag=True, help="Skip the synthetic long task.")
@click.option("--long-period", default=24, show_default=True,
              help="Seasonal period of the synthetic long task (24 hourly, 288 for 5-minute data).")
@click.option("--skip-sample", is_flag=True, help="Skip the sample tasks.")
def main(tasks_dir, samples, time_limit, only, skip_long, long_period, skip_sample):
    cases = [(t.benchmark_id, t.history, t.future_index, t.seasonal_period,
              None if t.future is None else t.future.to_numpy())
             for t in ([] if skip_sample else load_tasks(tasks_dir))]
    if not skip_long:
        cases.append(long_task(long_period))
    table = Table(title=f"Statistical forecasters, S={samples}, time limit {time_limit:g} s")
    for col in ("forecaster", "task", "history", "horizon", "m", "seconds", "fallback", "model", "sCRPS"):
        table.add_column(col)
    console = Console(width=160)
    for cls in FORECASTERS:
        forecaster = cls()
        if only and forecaster.name not in only:
            continue
        for task_id, history, future_index, m, future in cases:
            request = ForecastRequest(history=history, future_index=future_index, n_samples=samples, seed=0,
                                      time_limit=time_limit, seasonal_period=m)
            start = time.perf_counter()
            try:
                out = forecaster.forecast(request)
                fallback, model, samples_ = out.fallback or "no", _model(out.info), out.samples
            except ForecastError as exc:
                fallback, model, samples_ = f"FAILED: {exc}", "-", None
            seconds = time.perf_counter() - start
            score = score_task(samples_, future) if future is not None else None
            crps = f"{score.scrps:.3f}" if score is not None and score.status == OK else "-"
            table.add_row(forecaster.name, task_id, str(len(history)), str(len(future_index)), str(m),
                          f"{seconds:.2f}", fallback, model, crps)
            console.print(f"{forecaster.name:7s} {task_id:15s} {seconds:8.2f} s  fallback: {fallback}")
    console.print(table)


if __name__ == "__main__":
    main()
