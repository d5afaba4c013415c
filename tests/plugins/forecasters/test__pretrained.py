"""The shared code of the pretrained forecasters: paths drawn from quantiles, options, refusals."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from scipy import stats

from harness.contracts import ForecastError
from harness.testing.forecaster import synthetic_request
from tsagent_plugins.forecasters._pretrained import PretrainedForecaster, paths_from_quantiles

LEVELS = np.round(np.arange(0.1, 1.0, 0.1), 1)


def test_paths_have_the_quantiles_marginals():
    """Quantiles of N(10 + h, (1 + h)^2): the paths' empirical quantiles at each step match them."""
    horizon = 4
    q = np.stack([stats.norm.ppf(LEVELS, loc=10 + h, scale=1 + h) for h in range(horizon)], axis=1)   # (K, H)
    paths = paths_from_quantiles(LEVELS, q, 20000, seed=3)
    assert paths.shape == (20000, horizon)
    error = np.abs(np.quantile(paths, LEVELS, axis=0) - q)
    assert (error <= 0.06 * (1 + np.arange(horizon))).all(), error.max(axis=0)


def test_one_level_per_path_and_the_seed_decides():
    q = np.stack([LEVELS * 10, LEVELS * 20], axis=1)                  # step 2 is step 1 doubled
    paths = paths_from_quantiles(LEVELS, q, 25, seed=0)
    np.testing.assert_allclose(paths[:, 1], 2 * paths[:, 0])          # comonotone: same level at every step
    np.testing.assert_array_equal(paths, paths_from_quantiles(LEVELS, q, 25, seed=0))
    assert not np.array_equal(paths, paths_from_quantiles(LEVELS, q, 25, seed=1))


def test_tails_extend_the_outer_segments_linearly_and_crossing_quantiles_are_sorted():
    q = (LEVELS * 10)[:, None]                                          # q(u) = 10 u inside [0.1, 0.9]
    paths = paths_from_quantiles(LEVELS, q, 5000, seed=0)
    assert paths.min() < 1.0 - 1e-9 and paths.max() > 9.0 + 1e-9        # beyond the outer levels
    assert paths.min() >= 0.0 - 1e-9 and paths.max() <= 10.0 + 1e-9     # slope 10: q(0) = 0, q(1) = 10
    crossed = q[::-1]
    np.testing.assert_array_equal(paths_from_quantiles(LEVELS, crossed, 50, 2), paths_from_quantiles(LEVELS, q, 50, 2))
    with pytest.raises(ValueError, match="do not match"):
        paths_from_quantiles(LEVELS, q[:3], 5, 0)


class Missing(PretrainedForecaster):
    name = "missing-family"
    family = "Missing"
    modules = ("no_such_family_module",)
    install = "pip install -e '.[missing]'"
    default_model = "org/missing"


def test_a_family_not_installed_refuses_with_its_install_command():
    expected = r"missing-family is not installed .*install: pip install -e '\.\[missing\]'"
    with pytest.raises(ForecastError, match=expected):
        Missing().forecast(synthetic_request())
    assert Missing.installed() is False


def test_options_device_and_model_resolution(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="device must be one of auto, cpu, cuda"):
        Missing(device="tpu")
    with pytest.raises(ValueError, match="weights must be"):
        Missing(weights="half")
    with pytest.raises(ValueError, match=r"unknown option\(s\) colour \(known: model, device, weights, batch_size\)"):
        Missing().configured(colour="red")
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1, got 0"):
        Missing(batch_size=0)
    assert Missing().batch_size == 16 and Missing().configured(batch_size=4).batch_size == 4
    assert Missing().model == "org/missing"
    monkeypatch.setenv("HARNESS_MISSING_FAMILY_MODEL", str(tmp_path))
    assert Missing().model == str(tmp_path) and Missing("x/y").model == "x/y"
    assert Missing().configured(device="cpu").device == "cpu"


def test_an_uncached_hub_id_offline_fails_at_once(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ForecastError, match=r"'org/missing' is not a local folder nor in the Hugging Face cache"):
        Missing().locate()
    with pytest.raises(ForecastError, match="no such folder nor a Hugging Face id"):
        Missing(str(tmp_path / "gone")).locate()


def test_the_install_script_installs_what_each_family_imports():
    """Every family's refusal names a command that exists, and the script's import check covers the modules
    the forecaster imports (so a family the script calls installed does not refuse)."""
    import re
    from pathlib import Path

    from tsagent_plugins.forecasters import moirai, timesfm, tirex, toto

    script = (Path(__file__).resolve().parents[3] / "scripts" / "install-forecasters.sh").read_text()
    checks = dict(re.findall(r'\[(\w+)\]="import ([^"]+)"', script))
    pyproject = (Path(__file__).resolve().parents[3] / "pyproject.toml").read_text()
    for cls, family in [(timesfm.TimesFMForecaster, "timesfm"), (tirex.TiRexForecaster, "tirex"),
                        (moirai.MoiraiForecaster, "moirai"), (moirai.MoiraiMoEForecaster, "moirai"),
                        (toto.TotoForecaster, "toto")]:
        assert family in checks, family
        imported = {m.strip() for m in checks[family].split(",")}
        assert set(cls.modules) - {"tirex"} <= imported, (cls.name, cls.modules, imported)
        assert cls.install in (f"bash scripts/install-forecasters.sh {family}", f"pip install -e '.[{family}]'")
        assert re.search(rf"^{family} = \[", pyproject, re.M), f"no extra {family}"


class Linear(PretrainedForecaster):
    """A quantile "model" without a package: quantile k at step h is last value + (level - 0.5) * (h + 1)
    (torch only).  It raises on a history holding the value 13.0, and counts its calls."""

    name = "linear-test"
    family = "Linear"
    calls: list[int] = []

    def locate(self) -> str:
        return "here"

    def load(self, mods, source, device):
        return object()

    def predict_quantiles(self, handle, contexts, horizon, requests):
        Linear.calls.append(len(contexts))
        if any((c == 13.0).any() for c in contexts):
            raise ValueError("unlucky history")
        steps = np.arange(1, horizon + 1)
        q = np.stack([[c[-1] + (lv - 0.5) * steps for lv in LEVELS] for c in contexts])     # (B, K, H)
        return LEVELS, q


def _requests(count, n=48, horizon=6):
    import dataclasses

    return [dataclasses.replace(synthetic_request(n=n, horizon=horizon, seed=s), seed=s) for s in range(count)]


def test_a_batch_is_one_model_call_per_chunk_and_each_request_keeps_its_own_seeds_paths():
    pytest.importorskip("torch")
    Linear.calls.clear()
    forecaster = Linear(batch_size=3)
    requests = _requests(5) + _requests(2, n=40)          # two history lengths: two batch keys
    batched = forecaster.forecast_batch(requests)
    assert Linear.calls == [3, 2, 2]                      # 5 of length 48 in chunks of 3 and 2; 2 of length 40
    assert [f.info["batch"] for f in batched] == [3, 3, 3, 2, 2, 2, 2]
    for request, forecast in zip(requests, batched):
        alone = forecaster.forecast(request)
        np.testing.assert_array_equal(alone.samples, forecast.samples)
        expected = paths_from_quantiles(LEVELS, [request.history.iloc[-1] + (lv - 0.5) * np.arange(1, 7)
                                                 for lv in LEVELS], 25, request.seed)
        np.testing.assert_allclose(forecast.samples, expected)
    assert not np.array_equal(batched[0].samples, batched[1].samples)


def test_a_failing_request_fails_alone_in_its_batch():
    pytest.importorskip("torch")
    import dataclasses

    Linear.calls.clear()
    forecaster = Linear(batch_size=8)
    requests = _requests(4)
    unlucky = requests[1].history.copy()
    unlucky.iloc[-5] = 13.0
    requests[1] = dataclasses.replace(requests[1], history=unlucky)                   # the package raises on it
    empty = requests[3].history.iloc[:0]
    requests[3] = dataclasses.replace(requests[3], history=empty)                     # refused before the model
    out = forecaster.forecast_batch(requests)
    assert isinstance(out[1], ValueError) and str(out[1]) == "unlucky history"
    assert isinstance(out[3], ForecastError) and "non-empty" in str(out[3])
    assert Linear.calls == [3, 1, 1, 1]                   # the batch raised: each of its requests retried alone
    for i in (0, 2):
        np.testing.assert_array_equal(out[i].samples, forecaster.forecast(requests[i]).samples)
    with pytest.raises(ValueError, match="unlucky history"):
        forecaster.forecast(requests[1])


def test_sample_path_models_take_one_request_at_a_time_and_an_uninstalled_family_fails_each_request():
    class Sampler(Linear):
        quantile_model = False

    assert Sampler(batch_size=8).batch_size == 1 and Linear(batch_size=8).batch_size == 8
    out = Missing().forecast_batch(_requests(2))
    assert all(isinstance(o, ForecastError) and "missing-family is not installed" in str(o) for o in out)


def test_each_family_installs_its_own_requirements_so_test_and_chronos_extras_suffice():
    """tirex-ts imports scikit-learn and uni2ts imports toolz (issue 38): each family's extra declares them, and the
    install script's resolver step installs the extra less what the family's no-deps list pins."""
    import subprocess
    from pathlib import Path

    repo = Path(__file__).resolve().parents[3]
    script = repo / "scripts" / "install-forecasters.sh"
    body = script.read_text()
    reqs = body[body.index("reqs() {"):body.index("\n}\n", body.index("reqs() {")) + 3]
    out = {}
    for family in ("timesfm", "tirex", "moirai", "toto"):
        proc = subprocess.run(["bash", "-c", f'{reqs}\nPY="$1"; reqs {family}', "-", sys.executable],
                              capture_output=True, text=True, cwd=repo, check=True)
        out[family] = proc.stdout.split()
    assert out["tirex"] == ["torch", "scikit-learn>=1.3"] and "toolz>=0.12" in out["moirai"]
    assert out["timesfm"] == ["torch"]                                # timesfm itself goes in --no-deps
    assert not any(r.startswith(("uni2ts", "gluonts", "lightning", "toto-ts")) for r in out["moirai"] + out["toto"])
