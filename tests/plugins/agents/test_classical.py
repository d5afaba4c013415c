"""The euclidean-1nn agent: conformance suite plus Appendix E's rules with values."""

import json

import numpy as np
import pandas as pd
import pytest

import harness.plugins
from tests.support.tracebench_fakes import FakePool, StandInBallDrop, registry_with
from harness.testing import AgentTests
from tsagent_plugins.agents.classical import EuclideanNN, nn, solve


class TestEuclideanNN(AgentTests):
    @pytest.fixture
    def agent(self):
        return EuclideanNN()

    @pytest.fixture
    def template(self):
        """The tracebench template on a stand-in simulator and an in-memory pool (a small episode)."""
        from tsagent_plugins.tasks.tracebench.template import TracebenchTemplate

        sim = StandInBallDrop("toyball")
        old = harness.plugins.reset(registry_with(sim))
        yield TracebenchTemplate(pool_loader=lambda s, seed, per_class, progress: FakePool(s),
                                 simulator_lookup={"toyball": sim}.__getitem__)
        harness.plugins.reset(old)

    @pytest.fixture
    def params(self, template):
        return template.params_model.model_validate(dict(
            simulator="toyball", noise="low", context=True, examples_per_class=3, submission="direct", n_test=10,
            seed=0, pool_seed=0, heldout_per_class=2))


def test_impulse_column_divided_by_its_max_abs_only_when_nonzero():
    values = np.array([[1.0, -4.0, 0.1], [2.0, 2.0, 0.2]])
    np.testing.assert_allclose(nn.features(values, [1]), [[1.0, -1.0], [2.0, 0.5]])
    zeros = np.array([[1.0, 0.0, 0.1], [2.0, 0.0, 0.2]])
    np.testing.assert_allclose(nn.features(zeros, [1]), [[1.0, 0.0], [2.0, 0.0]])


def test_rms_distance_on_flattened_trajectory():
    a = np.zeros((2, 2))
    b = np.array([[1.0, 1.0], [1.0, 3.0]])
    assert nn.rms_distance(a, b) == pytest.approx(np.sqrt((1 + 1 + 1 + 9) / 4))


def test_ties_broken_by_distance_then_class_index_then_sample_id():
    x = np.zeros((1, 1))
    near = np.full((1, 1), 1.0)
    support = [(near, 2, "b"), (near, 1, "z"), (near, 1, "a"), (np.full((1, 1), 2.0), 0, "0")]
    assert nn.nearest(x, support) == 2  # class 1 beats class 2; id "a" beats "z"
    support.append((np.full((1, 1), 0.5), 3, "q"))
    assert nn.nearest(x, support) == 4  # strictly nearer wins regardless of class


def test_rule_py_is_self_contained_and_agrees_with_direct_mode(tmp_path):
    rng = np.random.default_rng(3)
    labels = ["p", "q", "no parameter change"]
    support = [(rng.normal(size=(20, 2)), i % 3, f"s{i}") for i in range(6)]
    solve.write_rule(tmp_path / "rule.py", "euclidean", support, labels, [1])
    namespace: dict = {}
    source = (tmp_path / "rule.py").read_text()
    assert "open(" not in source and "read_parquet" not in source
    exec(compile(source, "rule.py", "exec"), namespace)
    for _ in range(5):
        frame = pd.DataFrame(np.column_stack([rng.normal(size=(20, 2)), np.arange(20)]),
                             columns=["col1", "col2", "col3"])
        x = nn.features(frame.to_numpy(), [1])
        expected = labels[support[nn.nearest(x, support)][1]]
        assert namespace["predict"](frame) == [expected]


def test_without_support_batch_predicts_no_change(tmp_path, monkeypatch):
    (tmp_path / "test_samples").mkdir()
    pd.DataFrame({"col1": [1.0], "col2": [0.0]}).to_parquet(tmp_path / "test_samples" / "abc.parquet")
    monkeypatch.chdir(tmp_path)
    info = {"submission": "direct", "labels": ["mass", "no parameter change"], "columns": ["col1", "col2"]}
    assert solve.main(["--task-info", json.dumps(info)]) == 0
    assert json.loads((tmp_path / "results.json").read_text()) == {"abc.parquet": ["no parameter change"]}
