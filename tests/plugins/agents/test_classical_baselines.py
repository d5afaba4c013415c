"""Appendix E baselines on tiny hand-made inputs: nearest neighbours, ties, DTW warping,
privileged subtraction, impulse-channel normalisation, MiniRocket on a constant channel,
random guessing, programmatic rules and refusals."""

from __future__ import annotations

import importlib.util
import json
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tsagent_plugins.agents.classical import agents, nn, solve
from tsagent_plugins.agents.classical.solve import Refusal
from tests.support.paths import REPO

LABELS = ["a", "b", "no parameter change"]


def frame(x: np.ndarray) -> pd.DataFrame:
    """(T, C) values -> a sample DataFrame with time last."""
    t = np.arange(1, len(x) + 1) * 0.01
    return pd.DataFrame(np.column_stack([x, t]), columns=[f"col{i + 1}" for i in range(x.shape[1] + 1)])


def write_workspace(root, tests: dict[str, np.ndarray], support: dict[str, tuple[np.ndarray, str]],
                    clean: dict[str, np.ndarray] | None = None):
    (root / "test_samples").mkdir()
    (root / "train_samples").mkdir()
    for name, x in tests.items():
        frame(x).to_parquet(root / "test_samples" / name)
    for name, (x, label) in support.items():
        frame(x).to_parquet(root / "train_samples" / name)
    (root / "train_labels.json").write_text(json.dumps({n: lab for n, (_, lab) in support.items()}))
    for name, x in (clean or {}).items():
        folder = root / "clean_pairs" / ("test_samples" if name in tests else "train_samples")
        folder.mkdir(parents=True, exist_ok=True)
        frame(x).to_parquet(folder / name)


# -- Euclidean 1-NN ----------------------------------------------------------------------------

def test_known_nearest_neighbour():
    support = [(np.full((4, 2), 0.0), 0, "s0"), (np.full((4, 2), 1.0), 1, "s1"), (np.full((4, 2), 3.0), 2, "s2")]
    assert nn.nearest(np.full((4, 2), 0.4), support) == 0
    assert nn.nearest(np.full((4, 2), 0.6), support) == 1
    assert nn.nearest(np.full((4, 2), 2.1), support) == 2
    # RMS over the flattened trajectory: one channel far off counts as its share
    x = np.column_stack([np.zeros(4), np.full(4, 2.0)])
    assert nn.rms_distance(x, np.zeros((4, 2))) == pytest.approx(np.sqrt(2.0))


def test_ties_by_class_index_then_sample_id_for_any_distance():
    x = np.zeros((3, 1))
    same = np.ones((3, 1))
    support = [(same, 1, "b"), (same, 1, "a"), (same, 2, "0")]
    assert nn.nearest(x, support) == 1
    assert nn.nearest(x, support, distance=lambda a, b: 5.0) == 1
    assert nn.nearest(x, [(same, 2, "a"), (same, 0, "z")], distance=lambda a, b: 0.0) == 1


# -- preprocessing -----------------------------------------------------------------------------

def test_privileged_subtraction_then_impulse_normalisation():
    values = np.array([[1.0, 10.0, 5.0, 0.1], [2.0, 20.0, 1.0, 0.2], [3.0, 30.0, -7.0, 0.3]])
    clean = np.array([[1.0, 8.0, 1.0, 0.1], [1.0, 20.0, 1.0, 0.2], [1.0, 35.0, 1.0, 0.3]])
    x = nn.features(values, [2], clean)
    # channel by channel difference; the impulse residual (4, 0, -8) is divided by its max |.| = 8
    np.testing.assert_allclose(x, [[0.0, 2.0, 0.5], [1.0, 0.0, 0.0], [2.0, -5.0, -1.0]])
    with pytest.raises(ValueError, match="clean pair has shape"):
        nn.features(values, [2], clean[:2])


def test_the_other_reading_divides_the_residual_by_the_observed_peak():
    """``peak="observed"``: the residual's impulse channel over the observed trajectory's max |.| (7), not
    the residual's own (8); the other channels and an unprivileged input are the same either way."""
    values = np.array([[1.0, 10.0, 5.0, 0.1], [2.0, 20.0, 1.0, 0.2], [3.0, 30.0, -7.0, 0.3]])
    clean = np.array([[1.0, 8.0, 1.0, 0.1], [1.0, 20.0, 1.0, 0.2], [1.0, 35.0, 1.0, 0.3]])
    x = nn.features(values, [2], clean, peak="observed")
    np.testing.assert_allclose(x, [[0.0, 2.0, 4 / 7], [1.0, 0.0, 0.0], [2.0, -5.0, -8 / 7]])
    np.testing.assert_allclose(nn.features(values, [2], peak="observed"), nn.features(values, [2]))
    # a no-intervention residual (noise alone) keeps its small size instead of being stretched to 1
    noise = values.copy()
    noise[:, 2] = clean[:, 2] + np.array([0.01, -0.02, 0.005])
    assert np.abs(nn.features(noise, [2], clean)[:, 2]).max() == pytest.approx(1.0)
    assert np.abs(nn.features(noise, [2], clean, peak="observed")[:, 2]).max() == pytest.approx(0.02 / 1.01)
    with pytest.raises(ValueError, match="peak must be one of"):
        nn.features(values, [2], clean, peak="clean")


def test_impulse_peak_comes_from_the_profile_option_into_the_solver(tmp_path, monkeypatch):
    from tsagent_plugins.agents.classical import impulse_peak

    agent = {a.name: a for a in agents()}["euclidean-1nn-privileged"]
    info = {"submission": "direct", "labels": LABELS, "columns": ["col1", "col2", "col3"]}

    def argv(options):
        ctx = SimpleNamespace(task_info=info, profile=SimpleNamespace(options=options))
        return agent.command(ctx).argv

    assert "--impulse-peak" not in argv({})
    assert argv({"impulse_peak": "observed"})[-2:] == ["--impulse-peak", "observed"]
    with pytest.raises(ValueError, match="options.impulse_peak"):
        impulse_peak({"impulse_peak": "max"})
    # the solver reads the same option; with equal peaks of 1 both readings agree on the tiny workspace
    tiny(tmp_path, privileged=True)
    monkeypatch.chdir(tmp_path)
    assert solve.main(["--task-info", json.dumps(info), "--method", "euclidean", "--privileged",
                       "--impulse-peak", "observed"]) == 0
    assert json.loads((tmp_path / "results.json").read_text()) == {"t0.parquet": ["b"],
                                                                    "t1.parquet": ["no parameter change"]}


def test_only_the_impulse_channel_is_normalised_and_a_zero_channel_is_left_alone():
    values = np.array([[4.0, 0.0, -2.0, 0.1], [-8.0, 0.0, 1.0, 0.2]])
    np.testing.assert_allclose(nn.features(values, [2]), [[4.0, 0.0, -1.0], [-8.0, 0.0, 0.5]])
    np.testing.assert_allclose(nn.features(values, [1]), values[:, :3])  # all-zero impulse: unchanged
    np.testing.assert_allclose(nn.features(values, []), values[:, :3])  # no impulse channel (no context)


def test_impulse_columns_come_from_channel_metadata():
    """The template names the channels flagged ``impulse`` (BallDrop's Hard_Stop_f), not a simulator name."""
    from harness.plugins import get
    from tsagent_plugins.tasks.tracebench.prompts import column_names

    sim = get("simulator", "balldrop")
    columns = column_names(len(sim.channels))
    flagged = [col for col, ch in zip(columns, sim.channels) if ch.impulse]
    assert [ch.name for ch in sim.channels if ch.impulse] == ["Hard_Stop_f"]
    assert flagged == [columns[[ch.name for ch in sim.channels].index("Hard_Stop_f")]]


# -- DTW ---------------------------------------------------------------------------------------

from tsagent_plugins.agents.classical import learned  # noqa: E402  (imports aeon on first use)

needs_aeon = pytest.mark.skipif(importlib.util.find_spec("aeon") is None, reason="needs the baselines extra: pip install -e '.[baselines]'")


def dtw_reference(a: np.ndarray, b: np.ndarray) -> float:
    """Textbook dependent DTW: squared Euclidean cost summed over channels, full warping freedom."""
    n, m = len(a), len(b)
    d = np.full((n + 1, m + 1), np.inf)
    d[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = float(np.sum((a[i - 1] - b[j - 1]) ** 2))
            d[i, j] = cost + min(d[i - 1, j], d[i, j - 1], d[i - 1, j - 1])
    return float(d[n, m])


@needs_aeon
def test_dtw_is_dependent_multivariate_with_squared_cost():
    a = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 1.0], [2.0, 3.0]])
    b = np.array([[0.0, 1.0], [2.0, 1.0], [2.0, 2.0]])
    assert learned.dtw_distance(a, b) == pytest.approx(dtw_reference(a, b))
    # dependent: one path for both channels, so not the sum of per-channel DTWs
    x = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    y = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    per_channel = dtw_reference(x[:, :1], y[:, :1]) + dtw_reference(x[:, 1:], y[:, 1:])
    assert learned.dtw_distance(x, y) == pytest.approx(dtw_reference(x, y))
    assert learned.dtw_distance(x, y) > per_channel


@needs_aeon
def test_a_warping_path_beats_the_euclidean_match():
    x = np.zeros((12, 1))
    x[4] = 5.0                      # a spike at t = 4
    shifted = np.zeros((12, 1))
    shifted[7] = 5.0                # the same spike, later: class 0
    flat = np.zeros((12, 1))        # nothing: class 1
    support = [(shifted, 0, "s0"), (flat, 1, "s1")]
    assert support[nn.nearest(x, support)][1] == 1                          # Euclidean prefers flat
    assert learned.dtw_distance(x, shifted) == pytest.approx(0.0)
    assert support[nn.nearest(x, support, learned.dtw_distance)][1] == 0    # DTW warps onto the spike


# -- MiniRocket --------------------------------------------------------------------------------

@needs_aeon
def test_minirocket_with_a_constant_channel():
    rng = np.random.default_rng(0)
    t = np.arange(64)

    def sample(freq, flat=None):
        flat = np.full(64, 3.0) if flat is None else flat
        return np.column_stack([np.sin(freq * t + rng.uniform(0, 6)), flat])

    xs = [sample(0.2) for _ in range(3)] + [sample(1.3) for _ in range(3)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = learned.fit_minirocket(xs, [0, 0, 0, 1, 1, 1])
    assert model._transformer.n_kernels == 10_000
    assert not any("1e-07" in str(w.message) for w in caught)  # exactly constant: not flagged
    feats = model._transformer.transform(np.stack([x.T for x in xs]))
    assert np.isfinite(feats).all()
    assert learned.predict_minirocket(model, [sample(0.2), sample(1.3)]) == [0, 1]
    # a channel with std <= 1e-7 but nonzero range crosses aeon's threshold: flagged, still classified
    nearly = 3.0 + 1e-9 * (t % 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert learned.predict_minirocket(model, [sample(0.2, nearly), sample(1.3, nearly)]) == [0, 1]
    assert any("1e-07" in str(w.message) for w in caught)
    with pytest.raises(ValueError, match="one length"):
        learned.predict_minirocket(model, [sample(0.2)[:40], sample(0.2)])


# -- solver end to end on a tiny workspace -----------------------------------------------------

def tiny(root, privileged=False):
    t = np.linspace(0, 1, 30)
    base = {k: np.column_stack([np.sin(6 * t + i), np.cos(3 * t) * i]) for i, k in enumerate("pqrstu")}
    offsets = {"a": 0.0, "b": 2.0, "no parameter change": -2.0}
    support = {f"s{j}{lab[0]}.parquet": (base["pqrstu"[j]] + off, lab)
               for j, (lab, off) in enumerate([(lab, o) for lab, o in offsets.items() for _ in range(2)])}
    tests = {"t0.parquet": base["p"] + 2.1, "t1.parquet": base["q"] - 1.9}
    clean = None
    if privileged:  # privileged: the label is visible only after subtracting each sample's own base
        support = {n: (x + 50 * np.sin(40 * t)[:, None] * k, lab) for k, (n, (x, lab)) in enumerate(support.items())}
        clean = {n: base["pqrstu"[int(n[1])]] + 50 * np.sin(40 * t)[:, None] * k
                 for k, n in enumerate(support)}
        clean |= {"t0.parquet": base["p"], "t1.parquet": base["q"]}
    write_workspace(root, tests, support, clean)


@pytest.mark.parametrize("method", ["euclidean", pytest.param("dtw", marks=needs_aeon),
                                    pytest.param("minirocket", marks=needs_aeon)])
def test_privileged_solver_uses_the_clean_pairs(tmp_path, method):
    tiny(tmp_path, privileged=True)
    solve.solve(tmp_path, method, LABELS, [], "direct", privileged=True)
    got = json.loads((tmp_path / "results.json").read_text())
    if method != "minirocket":  # 1-NN: the residuals are exactly the class offsets
        assert got == {"t0.parquet": ["b"], "t1.parquet": ["no parameter change"]}
    else:
        assert set(got) == {"t0.parquet", "t1.parquet"}


def test_privileged_solver_without_clean_pairs_refuses(tmp_path):
    tiny(tmp_path)
    with pytest.raises(Refusal, match="clean pair"):
        solve.solve(tmp_path, "euclidean", LABELS, [], "direct", privileged=True)


def test_random_is_seeded_uniform_and_within_the_labels(tmp_path):
    draws = [nn.random_label(LABELS, nn.seed_of(f"{i:012x}.parquet")) for i in range(3000)]
    counts = np.array([draws.count(lab) for lab in LABELS])
    assert set(draws) == set(LABELS) and abs(counts / 3000 - 1 / 3).max() < 0.04
    assert draws == [nn.random_label(LABELS, nn.seed_of(f"{i:012x}.parquet")) for i in range(3000)]


@pytest.mark.parametrize("method", ["euclidean", pytest.param("minirocket", marks=needs_aeon), "random"])
def test_programmatic_rule_agrees_with_direct_mode(tmp_path, method):
    tiny(tmp_path)
    solve.solve(tmp_path, method, LABELS, [], "direct")
    direct = json.loads((tmp_path / "results.json").read_text())
    solve.solve(tmp_path, method, LABELS, [], "programmatic")
    source = (tmp_path / "rule.py").read_text()
    assert "read_parquet" not in source and "open(" not in source
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, "rule.py", "exec"), namespace)
        for name, labels in direct.items():
            out = namespace["predict"](pd.read_parquet(tmp_path / "test_samples" / name))
            assert out[0] in LABELS
            if method != "random":  # random draws per file in direct mode, per content in rule.py
                assert out == labels


@pytest.mark.parametrize("name,refuses", [
    ("euclidean-1nn", False), ("minirocket-ridge", False), ("random", False), ("dtw-1nn", True),
    ("euclidean-1nn-privileged", True), ("dtw-1nn-privileged", True), ("minirocket-ridge-privileged", True)])
def test_programmatic_refusals(name, refuses):
    from types import SimpleNamespace

    agent = {a.name: a for a in agents()}[name]
    reason = agent.refusal(SimpleNamespace(submission="programmatic"))
    assert bool(reason) is refuses
    assert agent.refusal(SimpleNamespace(submission="direct")) is None
    if refuses:
        assert ("clean no-intervention" in reason) if agent.privileged_inputs else ("too slow" in reason)


def test_solver_refuses_programmatic_privileged_with_a_message(tmp_path, monkeypatch, capsys):
    tiny(tmp_path)
    monkeypatch.chdir(tmp_path)
    info = {"submission": "programmatic", "labels": LABELS, "columns": ["col1", "col2", "col3"]}
    assert solve.main(["--task-info", json.dumps(info), "--method", "euclidean", "--privileged"]) == 2
    assert "refuses programmatic submission" in capsys.readouterr().err
    assert not (tmp_path / "rule.py").exists()


def test_only_privileged_agents_declare_privileged_inputs():
    declared = {a.name for a in agents() if a.privileged_inputs}
    assert declared == {"euclidean-1nn-privileged", "dtw-1nn-privileged", "minirocket-ridge-privileged"}


def test_aeon_agents_refuse_clearly_without_the_extra(monkeypatch):
    import importlib.util
    from types import SimpleNamespace

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "aeon" else real(name, *a))
    by_name = {a.name: a for a in agents()}
    for name in ("dtw-1nn", "minirocket-ridge-privileged"):
        assert "pip install -e '.[baselines]'" in by_name[name].refusal(SimpleNamespace(submission="direct"))
    assert by_name["euclidean-1nn"].refusal(SimpleNamespace(submission="direct")) is None


# -- start-up and JIT accounting -----------------------------------------------------------------

@needs_aeon
def test_the_solver_process_loads_aeon_without_torch():
    """aeon's convolution package would import torch (installed for Chronos); the solver hides it."""
    import subprocess
    import sys

    code = ("import sys; from tsagent_plugins.agents.classical import learned; learned.hide_torch(); "
            "learned.load('minirocket'); learned.load('dtw'); print(sorted(m for m in sys.modules if m == 'torch' "
            "or m.startswith('torch.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_the_jit_timer_counts_compiles_and_not_cache_loads():
    numba = pytest.importorskip("numba")

    timer = solve._jit_timer()
    try:
        assert not timer.done  # nothing compiled yet

        @numba.njit
        def twice(x):
            return 2 * x

        assert twice(3) == 6
        assert timer.done and timer.duration > 0
        before = timer.duration
        assert twice(4) == 8  # the same signature: no compile
        assert timer.duration == before
    finally:
        solve._stop(timer)
    counted = timer.duration
    assert numba.njit(lambda x: x + 1)(1) == 2  # a compile after _stop is not counted: the listener is gone
    assert timer.duration == counted


def test_aeon_stays_an_optional_extra_out_of_the_agent_image():
    import subprocess
    import sys
    import tomllib

    from harness.image.recipe import RUNTIME_PACKAGES

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.lower().startswith("aeon")]
    assert [name for name, deps in project["optional-dependencies"].items()
            if any(d.lower().startswith("aeon") for d in deps)] == ["baselines"]
    assert "aeon" not in {name.lower() for name in RUNTIME_PACKAGES}  # the LLM agents' image (Table 20)
    # the core and every plugin load with aeon absent; the aeon agents are listed (and refuse when run)
    code = ("import sys\n"
            "class NoAeon:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'aeon':\n"
            "            raise ModuleNotFoundError(name, name=name)\n"
            "sys.meta_path.insert(0, NoAeon())\n"
            "sys.argv = ['harness', 'plugins', 'list']\n"
            "import runpy; runpy.run_module('harness', run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "dtw-1nn" in done.stdout and "minirocket-ridge" in done.stdout


def test_numba_cache_key_names_versions_warm_up_code_and_aeon_location(monkeypatch, tmp_path):
    """numba files a function's cache under its source's absolute path: an aeon installed elsewhere (another
    venv sharing ~/.cache) must get its own cache, or every episode would compile again."""
    import importlib.util
    from types import SimpleNamespace

    from tsagent_plugins.agents.classical import numba_cache

    pytest.importorskip("aeon")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    here = numba_cache.cache_dir()
    assert here.parent == tmp_path / "numba" and here.name.startswith("py3")
    assert numba_cache.cache_dir() == here  # stable
    real = importlib.util.find_spec
    elsewhere = SimpleNamespace(submodule_search_locations=[str(tmp_path / "other-venv" / "aeon")])
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: elsewhere if name == "aeon" else real(name, *a))
    assert numba_cache.cache_dir() != here


def test_building_a_cache_removes_the_same_environments_caches_of_older_warm_up_code(monkeypatch, tmp_path):
    from tsagent_plugins.agents.classical import numba_cache

    pytest.importorskip("aeon")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    target = numba_cache.cache_dir()
    versions, where, code = target.name.rsplit("-", 2)
    older = target.parent / f"{versions}-{where}-{'0' * 10}"          # this environment, older code
    other_env = target.parent / f"{versions}-{'f' * 8}-{code}"       # another venv sharing the cache root
    other_versions = target.parent / f"py39-numba0.1-aeon0.1-{where}-{code}"
    for folder in (older, other_env, other_versions):
        (folder / "sub").mkdir(parents=True)
    assert numba_cache.superseded(target) == [older]
    monkeypatch.setattr(numba_cache.subprocess, "run", lambda *a, **k: SimpleNamespace(returncode=0, stderr=""))
    assert numba_cache.ensure_cache() == target and (target / numba_cache.STAMP).exists()
    assert not older.exists() and other_env.exists() and other_versions.exists()


def test_numba_cache_key_follows_a_reinstall_of_aeon_at_the_same_path(monkeypatch, tmp_path):
    """numba's index checks each source file's modification time and size: aeon reinstalled at the same path (a
    recreated venv) must get a new cache, or every MiniRocket episode compiles again (~25 s) in its read-only copy."""
    import os

    from tsagent_plugins.agents.classical import numba_cache

    pytest.importorskip("aeon")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    package = tmp_path / "venv" / "aeon"
    (package / "distances").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    module = package / "distances" / "_dtw.py"
    module.write_text("def dtw(): pass\n")
    os.utime(module, ns=(1_000_000_000_000, 1_000_000_000_000))
    real = importlib.util.find_spec
    fake = SimpleNamespace(submodule_search_locations=[str(package)])
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: fake if name == "aeon" else real(name, *a))
    first = numba_cache.cache_dir()
    assert numba_cache.cache_dir() == first
    os.utime(module, ns=(2_000_000_000_000, 2_000_000_000_000))  # reinstalled: same path, same bytes, new mtime
    second = numba_cache.cache_dir()
    assert second != first and second.name.rsplit("-", 1)[0] == first.name.rsplit("-", 1)[0]
    assert numba_cache.superseded(second) == [] and (first.mkdir(parents=True) or numba_cache.superseded(second) == [first])
