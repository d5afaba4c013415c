"""Candidate generation for the sample pool (TraceBench Section 3.4, Appendix C.1).

Initial configurations are drawn in rounds of :data:`ROUND_SIZE` with
``sim.sample_configurations`` (round ``r`` seeded from ``(pool_seed, r)``); the
configuration with global index ``i`` is processed independently of every
other one:

* the no-intervention (NI) trajectory is simulated once and reused as the NI
  probe of every candidate of the configuration and as its NI sample;
* for each parameter, up to :data:`DRAWS_PER_PARAMETER` (1) interventions are
  drawn with ``sim.sample_intervention`` (draw ``d`` seeded from ``(pool_seed, i,
  parameter index, d)``) and filtered (:class:`SolvabilityFilter`) until one
  passes; a parameter without an admissible new value is given up;
* the configuration is **kept** when at least two distinct parameters pass
  (Section 3.4); only kept configurations contribute samples, one per passing
  parameter plus one NI sample.

Work skipping (never changes which samples are selected): parameters whose
class is still needed are tried first; the rest are tried only while the
configuration has fewer than two passes; a configuration stops as soon as two
passes can no longer be reached (status ``rejected``), or when every needed
parameter failed and no NI sample is needed any more, so that nothing it could
yield would be used (status ``skipped``; whether it would have been kept is
then unknown).  "Needed" is taken from the rounds finished two rounds earlier
(rounds are absorbed in order), so results do not depend on the number of
workers or their timing.

The pool takes, for every class, the first ``per_class`` samples of kept
configurations in configuration-index order.

C.1 before the per-class cap.  The rule counts root causes that *passed the filtering procedure*
("we retained an initial configuration only if at least two distinct root-cause interventions
passed the filtering procedure", Appendix C.1), and the cap then takes the first ``per_class`` of
each class, so a kept configuration whose other passing classes are already full contributes one
sample (pool seed 0, 160 per class: BallDrop drag 96 of 160, MassSlide breakaway 95 of 160; the
summary prints these counts).  The paper's pool had this too, as far as its text tells: it gives
exact per-class counts (142 per class, C.1) and no other selection step, and C.1 applied *after* an
exact cap cannot be met by drawing configurations in order -- once every class but the rarest is
full, no configuration can add two retained root causes, so the rarest class's last samples could
never be drawn (only a global re-selection over all configurations could balance both, and the
paper describes none).  Whether a
configuration alone reveals the class is checked on the retained samples instead
(``benchmarks/pool_summary.py``: leave-one-configuration-out 5-NN on the baseline values stays
within chance + 0.10).
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from harness import NO_CHANGE, Configuration, Intervention, Simulator, SimulatedTrajectory as Trajectory
from tsagent_plugins.tasks.tracebench.filtering import FilterSettings, SolvabilityFilter

#: interventions drawn per (configuration, parameter) before the parameter is given up.
#: One draw: each configuration yields one candidate per class, varying class, time
#: and new value (Appendix C.1).  Measured on BallDrop generator version 1 (142 per class, pool seed 0),
#: total worker time for 1 / 2 / 3 draws was about 72 / 104 / 115 s: a second draw rarely
#: rescues a configuration (rarest class: drag, ~1 pass per 80 configurations), so fresh
#: configurations are the cheaper source of samples.
DRAWS_PER_PARAMETER = 1
#: configurations per sampling round (one Latin-hypercube batch)
ROUND_SIZE = 32
#: configurations per task sent to a worker process
TASK_SIZE = 4
#: rounds submitted ahead of the oldest unfinished one (keeps the workers busy)
LAG = 2
#: configuration statuses
KEPT, REJECTED, SKIPPED = "kept", "rejected", "skipped"


def config_rng(pool_seed: int, round_index: int) -> np.random.Generator:
    """Generator for the Latin-hypercube batch of configurations of round ``round_index``."""
    return np.random.default_rng(np.random.SeedSequence([pool_seed, 0, round_index]))


def candidate_rng(pool_seed: int, config_index: int, param_index: int, draw: int) -> np.random.Generator:
    """Generator for intervention draw ``draw`` of parameter ``param_index`` of configuration ``config_index``."""
    return np.random.default_rng(np.random.SeedSequence([pool_seed, 1, config_index, param_index, draw]))


_rounds: dict[tuple, list[Configuration]] = {}
_rounds_lock = threading.Lock()


def sample_recipe(sim: Simulator, pool_seed: int, config_index: int, parameter: str | None,
                  draw: int) -> tuple[Configuration, Intervention | None]:
    """The initial configuration and intervention of one pool sample, drawn again as :func:`generate` drew
    them (configuration ``config_index`` of its round, intervention draw ``draw`` of ``parameter``; None for a
    no-intervention sample), without generating anything else: one sample of a pool is rebuilt from them
    (``sim.simulate(config, intervention)``).  The last rounds' configurations are kept (a few per process).
    Raises ValueError for an unknown parameter or a simulator that returns another round size."""
    key = (sim.name, str(getattr(sim, "version", "")), int(pool_seed), int(config_index) // ROUND_SIZE)
    with _rounds_lock:
        configs = _rounds.get(key)
    if configs is None:
        configs = list(sim.sample_configurations(ROUND_SIZE, config_rng(pool_seed, key[-1])))
        if len(configs) != ROUND_SIZE:
            raise ValueError(f"{sim.name}.sample_configurations({ROUND_SIZE}) returned {len(configs)} configurations")
        with _rounds_lock:
            while len(_rounds) >= 64:
                _rounds.pop(next(iter(_rounds)))
            _rounds[key] = configs
    config = configs[int(config_index) % ROUND_SIZE]
    if parameter is None:
        return config, None
    names = [p.name for p in sim.parameters]
    if parameter not in names:
        raise ValueError(f"{sim.name} has no parameter {parameter!r} (parameters: {names})")
    rng = candidate_rng(pool_seed, int(config_index), names.index(parameter), int(draw))
    return config, sim.sample_intervention(config, parameter, rng)


@dataclass
class Candidate:
    """One filtered intervention candidate.  ``target`` only kept when accepted."""

    parameter: str
    draw: int
    intervention: Intervention
    accepted: bool
    stage: str | None
    ratios: dict[str, float]
    rule_details: list[str]
    target: Trajectory | None


@dataclass
class ConfigOutcome:
    """Everything learnt about one initial configuration."""

    index: int
    config: Configuration
    ni: Trajectory
    candidates: list[Candidate]
    status: str  # KEPT, REJECTED (fewer than two parameters pass) or SKIPPED (could yield nothing needed)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def kept(self) -> bool:
        """At least two distinct parameters passed (Section 3.4)."""
        return self.status == KEPT

    @property
    def passed(self) -> dict[str, Candidate]:
        """Accepted candidate per parameter name."""
        return {c.parameter: c for c in self.candidates if c.accepted}


def process_config(
    sim: Simulator, filt: SolvabilityFilter, pool_seed: int, index: int, config: Configuration,
    needed: frozenset[str], draws: int = DRAWS_PER_PARAMETER,
) -> ConfigOutcome:
    """Filter the candidates of configuration ``index``; see the module docstring for the order.

    ``needed``: parameter names whose class still lacks samples, plus ``NO_CHANGE``
    while NI samples are still needed."""
    timings: Counter = Counter()
    t0 = time.perf_counter()
    ni = sim.simulate(config, None)
    timings["simulate"] += time.perf_counter() - t0
    names = [p.name for p in sim.parameters]
    order = [n for n in names if n in needed] + [n for n in names if n not in needed]
    candidates: list[Candidate] = []
    passes = needed_passes = 0
    status = None
    for pos, name in enumerate(order):
        remaining = len(order) - pos
        if passes + remaining < 2:
            status = REJECTED  # two passes are out of reach: the configuration cannot be kept
            break
        if name not in needed:
            if passes >= 2:
                break  # kept already; the rest would not be used
            if needed_passes == 0 and NO_CHANGE not in needed:
                status = SKIPPED  # every needed parameter failed and NI is full: nothing to gain
                break
        p_index = names.index(name)
        for draw in range(draws):
            t0 = time.perf_counter()
            try:
                iv = sim.sample_intervention(config, name, candidate_rng(pool_seed, index, p_index, draw))
            except ValueError:
                timings["sampling"] += time.perf_counter() - t0
                break  # no admissible new value for this parameter in this configuration
            timings["sampling"] += time.perf_counter() - t0
            v = filt.evaluate(config, iv, ni_probe=ni)
            timings.update(v.timings)
            candidates.append(Candidate(
                name, draw, iv, v.accepted, v.stage, dict(v.ratios),
                [f"{o.rule}: {o.detail}" for o in v.rules if not o.passed],
                v.target if v.accepted else None,
            ))
            if v.accepted:
                passes += 1
                needed_passes += name in needed
                break
    if status is None:
        status = KEPT if passes >= 2 else REJECTED
    return ConfigOutcome(index, config, ni, candidates, status, dict(timings))


# -- worker-process plumbing (fork: the simulator is inherited, never pickled) ------
_WORKER: dict = {}


def _init_worker(sim: Simulator, settings: FilterSettings, pool_seed: int, draws: int) -> None:
    _WORKER.update(sim=sim, filt=SolvabilityFilter(sim, settings), seed=pool_seed, draws=draws)


def _work(batch: list[tuple[int, Configuration]], needed: frozenset[str]) -> list[ConfigOutcome]:
    w = _WORKER
    out = []
    for index, config in batch:
        try:
            res = process_config(w["sim"], w["filt"], w["seed"], index, config, needed, w["draws"])
        except Exception as exc:  # noqa: BLE001 - re-raised with the configuration that failed
            raise RuntimeError(f"{w['sim'].name}: configuration {index} ({config}) failed: "
                               f"{type(exc).__name__}: {exc}") from exc
        if not res.kept:
            res.ni = None  # type: ignore[assignment]  # never used: spare the transfer
        out.append(res)
    return out


#: the longest path an AF_UNIX socket can bind on Linux (``sun_path`` holds 108 bytes with the NUL)
_UNIX_PATH_MAX = 107


def _forkserver_fits() -> bool:
    """Whether the forkserver's socket path fits: it listens on ``$TMPDIR/pymp-XXXXXXXX/listener-XXXXXXXX``,
    which a long temporary folder (a test's, a cluster job's) makes too long to bind."""
    return len(os.fsencode(tempfile.gettempdir())) + len("/pymp-12345678/listener-12345678") <= _UNIX_PATH_MAX


def _start_method() -> str:
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return "fork"
    return "forkserver" if "forkserver" in methods and _forkserver_fits() else "spawn"


def default_workers() -> int:
    """Usable CPU count of this process."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class Selection:
    """Result of :func:`generate`: per-class selected ``(outcome, parameter or None)`` in order."""

    per_class: dict[str, list[tuple[ConfigOutcome, str | None]]]
    outcomes: list[ConfigOutcome]  # every processed configuration (trajectories dropped when unused)
    stats: dict


def generate(
    sim: Simulator, pool_seed: int, per_class: int, settings: FilterSettings | None = None,
    workers: int | None = None, progress: Callable[[int, int], None] | None = None,
    draws: int = DRAWS_PER_PARAMETER, max_configs: int | None = None, start_method: str | None = None,
) -> Selection:
    """Process configurations until every class has ``per_class`` samples.

    Deterministic for a given ``(sim, pool_seed, per_class, settings, draws)``
    whatever ``workers`` is.  Raises RuntimeError naming the short classes when
    ``max_configs`` (default ``max(5000, 400 * per_class)``) are exhausted.
    ``start_method``: worker start method (default: ``fork`` -- the simulator and
    its caches are inherited -- unless other threads are running, where forking
    is unsafe, then ``forkserver``, which needs a picklable simulator, or ``spawn`` where
    the forkserver's socket path under ``$TMPDIR`` would be too long).
    """
    if per_class < 1:
        raise ValueError(f"per_class must be >= 1, got {per_class}")
    settings = settings or FilterSettings()
    workers = default_workers() if workers is None else int(workers)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    max_configs = max_configs or max(5000, 400 * per_class)
    label_of = {p.name: p.label for p in sim.parameters}
    classes = [p.label for p in sim.parameters] + [NO_CHANGE]
    if len(set(classes)) != len(classes):
        raise ValueError(f"{sim.name}: class labels are not distinct: {classes}")
    chosen: dict[str, list[tuple[ConfigOutcome, str | None]]] = {c: [] for c in classes}
    total = per_class * len(classes)
    wall0 = time.perf_counter()
    timings: Counter = Counter()
    rejections: Counter = Counter()
    n_candidates = n_accepted = n_configs = n_kept = n_skipped = 0
    outcomes: list[ConfigOutcome] = []

    def needed_now() -> frozenset[str]:
        names = {p.name for p in sim.parameters if len(chosen[label_of[p.name]]) < per_class}
        return frozenset(names | ({NO_CHANGE} if len(chosen[NO_CHANGE]) < per_class else set()))

    def done() -> bool:
        return all(len(v) >= per_class for v in chosen.values())

    def absorb(batch: list[ConfigOutcome]) -> None:
        nonlocal n_candidates, n_accepted, n_configs, n_kept, n_skipped
        for out in sorted(batch, key=lambda o: o.index):
            n_configs += 1
            n_skipped += out.status == SKIPPED
            timings.update(out.timings)
            for c in out.candidates:
                n_candidates += 1
                if c.accepted:
                    n_accepted += 1
                else:
                    rejections[c.stage] += 1
            used: set[str | None] = set()
            if out.kept:
                n_kept += 1
                for name in label_of:  # simulator parameter order
                    lst = chosen[label_of[name]]
                    if name in out.passed and len(lst) < per_class:
                        lst.append((out, name))
                        used.add(name)
                if len(chosen[NO_CHANGE]) < per_class:
                    chosen[NO_CHANGE].append((out, None))
                    used.add(None)
            # free memory: trajectories that do not enter the pool
            for c in out.candidates:
                if not (c.accepted and c.parameter in used):
                    c.target = None
            if None not in used:
                out.ni = None  # type: ignore[assignment]
            outcomes.append(out)
        if progress is not None:
            progress(sum(min(len(v), per_class) for v in chosen.values()), total)

    def sample_round(r: int) -> list[tuple[int, Configuration]]:
        t0 = time.perf_counter()
        configs = sim.sample_configurations(ROUND_SIZE, config_rng(pool_seed, r))
        timings["sampling"] += time.perf_counter() - t0
        if len(configs) != ROUND_SIZE:
            raise ValueError(f"{sim.name}.sample_configurations({ROUND_SIZE}) returned {len(configs)} configurations")
        return [(r * ROUND_SIZE + j, c) for j, c in enumerate(configs)]

    max_rounds = -(-max_configs // ROUND_SIZE)
    if progress is not None:
        progress(0, total)
    if workers == 1:
        filt = SolvabilityFilter(sim, settings)
        history: list[frozenset[str]] = []
        for r in range(max_rounds):
            # "needed" from rounds finished LAG rounds ago, as in the parallel schedule
            history.append(needed_now())
            needed = _lagged(history, r)
            absorb([process_config(sim, filt, pool_seed, i, c, needed, draws) for i, c in sample_round(r)])
            if done():
                break
    else:
        ctx = multiprocessing.get_context(start_method or _start_method())
        with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                 initargs=(sim, settings, pool_seed, draws)) as ex:
            inflight: list[list[Future]] = []
            r_next = 0
            try:
                while True:
                    while len(inflight) < LAG and r_next < max_rounds:
                        # rounds < r_next - LAG + 1 are absorbed here: the state _lagged replays
                        needed = needed_now()
                        jobs = sample_round(r_next)
                        inflight.append([ex.submit(_work, jobs[j:j + TASK_SIZE], needed)
                                         for j in range(0, len(jobs), TASK_SIZE)])
                        r_next += 1
                    if not inflight:
                        break
                    absorb([o for f in inflight.pop(0) for o in f.result()])
                    if done():
                        break
            finally:
                for batch in inflight:
                    for f in batch:
                        f.cancel()
    if not done():
        short = {c: len(v) for c, v in chosen.items() if len(v) < per_class}
        raise RuntimeError(f"{sim.name}: after {n_configs} configurations only {short} samples "
                           f"(of {per_class} per class) passed the solvability filter")
    stats = {
        "configurations": n_configs,
        "configurations_kept": n_kept,
        "configurations_skipped": n_skipped,
        "candidates": n_candidates,
        "accepted": n_accepted,
        "rejections": dict(sorted(rejections.items())),
        "samples": total,
        "workers": workers,
        "draws_per_parameter": draws,
        "timings": {k: round(v, 6) for k, v in sorted(timings.items())},
        "wall_seconds": round(time.perf_counter() - wall0, 6),
    }
    return Selection(chosen, outcomes, stats)


def _lagged(history: list[frozenset[str]], r: int) -> frozenset[str]:
    """Needed set for round ``r`` in the sequential schedule.

    ``history[k]`` is the state after absorbing rounds ``0..k-1``.  In the parallel
    schedule round ``r`` is submitted once rounds ``0..r-LAG`` are absorbed, so the
    sequential schedule uses ``history[r - LAG + 1]`` (the initial state for the
    first LAG rounds) and both give identical pools."""
    return history[max(0, r - LAG + 1)]
