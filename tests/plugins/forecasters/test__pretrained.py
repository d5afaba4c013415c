"""The shared code of the pretrained forecasters: paths drawn from quantiles, options, refusals."""

from __future__ import annotations

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
    with pytest.raises(ValueError, match=r"unknown option\(s\) colour \(known: model, device, weights\)"):
        Missing().configured(colour="red")
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
