"""Conformance tests every simulator plugin must pass.

Fixture contract: override ``simulator`` to return an instance of your
:class:`harness.contracts.Simulator`.  Optional knobs (class attributes):
``n_configurations`` (how many sampled configurations the checks use) and
``noise_seeds`` (N for the noise_power agreement check).  The optional contract parts
(``early_rejection``) are checked when a simulator provides them::

    import pytest
    from harness.testing import SimulatorTests

    class TestMySimulator(SimulatorTests):
        @pytest.fixture
        def simulator(self):
            return MySimulator()
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.contracts import NO_CHANGE, Simulator

#: A noise scale above ``kappa_ref`` (as a multiple of it) that the observation checks compare with.
LARGER = 2.0


class SimulatorTests:
    """Aggregate conformance suite for :class:`harness.contracts.Simulator` (generation, observation, determinism).

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``simulator`` (required, function scope): your :class:`harness.contracts.Simulator` instance;
    - ``configurations`` (provided, function scope): ``n_configurations`` configurations sampled from
      ``simulator`` with seed 0.
    """

    n_configurations = 3
    noise_seeds = 4

    @pytest.fixture
    def simulator(self) -> Simulator:
        pytest.fail("override the `simulator` fixture to return your Simulator instance")

    @pytest.fixture
    def configurations(self, simulator):
        return simulator.sample_configurations(self.n_configurations, np.random.default_rng(0))

    def test_is_a_simulator(self, simulator):
        assert isinstance(simulator, Simulator)
        assert simulator.name and simulator.name == simulator.name.lower()
        assert isinstance(simulator.version, str) and simulator.version
        assert simulator.horizon > 0 and 0 < simulator.dt < simulator.horizon
        assert simulator.kappa_ref > 0
        assert simulator.description.strip()

    def test_labels(self, simulator):
        labels = simulator.labels
        assert labels[-1] == NO_CHANGE
        assert len(set(labels)) == len(labels), "class labels must be unique"
        names = [p.name for p in simulator.parameters]
        assert len(set(names)) == len(names) and len(names) >= 1
        assert len(simulator.channels) >= 1
        for p in (*simulator.state_variables, *simulator.parameters):
            assert p.low <= p.high, f"{p.name}: low > high"

    def test_configurations_within_ranges(self, simulator, configurations):
        assert len(configurations) == self.n_configurations
        for config in configurations:
            for group, specs in ((config.initial_state, simulator.state_variables),
                                 (config.parameters, simulator.parameters)):
                assert set(group) == {p.name for p in specs}
                for p in specs:
                    assert p.low <= group[p.name] <= p.high, f"{p.name}={group[p.name]} outside [{p.low}, {p.high}]"

    def test_trajectory_shape_and_time_grid(self, simulator, configurations):
        traj = simulator.simulate(configurations[0])
        t = traj.time
        assert t.ndim == 1 and traj.values.shape == (len(t), len(simulator.channels)), (
            f"time has shape {t.shape} and values {traj.values.shape}: expected (T,) and (T, "
            f"{len(simulator.channels)} channels)")
        assert t[0] == pytest.approx(simulator.dt), f"the first time point is {t[0]}: expected dt = {simulator.dt}"
        assert t[-1] < simulator.horizon, (
            f"the last time point {t[-1]} is not before the horizon {simulator.horizon}: the grid is t_k = k*dt for "
            "k = 1..T with every t_k < horizon (np.arange(1, round(horizon / dt)) * dt; see Trajectory)")
        np.testing.assert_allclose(np.diff(t), simulator.dt, rtol=1e-9, err_msg="time steps must all be dt")
        assert np.isfinite(traj.values).all(), "values hold NaN or infinity"

    def test_simulation_is_deterministic(self, simulator, configurations):
        a, b = simulator.simulate(configurations[0]), simulator.simulate(configurations[0])
        np.testing.assert_array_equal(a.values, b.values)

    def test_interventions(self, simulator, configurations):
        """Sampling rules (REFERENCE_NOTES) and causality: nothing changes before t_int."""
        rng = np.random.default_rng(1)
        config = configurations[0]
        baseline = simulator.simulate(config)
        for p in simulator.parameters:
            iv = simulator.sample_intervention(config, p.name, rng)
            assert iv.parameter == p.name
            assert 0.2 * simulator.horizon <= iv.time <= 0.8 * simulator.horizon
            old, new = config.parameters[p.name], iv.new_value
            assert p.low <= new <= p.high
            assert abs(new - old) >= p.min_abs - 1e-12
            assert 2 * abs(new - old) / (abs(new) + abs(old) + 1e-12) >= p.min_srd - 1e-9
            target = simulator.simulate(config, iv)
            before = target.time < iv.time
            np.testing.assert_allclose(target.values[before], baseline.values[before], rtol=0, atol=1e-9,
                                       err_msg=f"intervention on {p.name} changed the trajectory before t_int")

    def test_observation_model(self, simulator, configurations):
        clean = simulator.simulate(configurations[0])
        np.testing.assert_array_equal(simulator.observe(clean, 0.0, 0), clean.values)
        a = simulator.observe(clean, simulator.kappa_ref, 7)
        assert a.shape == clean.values.shape and np.isfinite(a).all()
        np.testing.assert_array_equal(a, simulator.observe(clean, simulator.kappa_ref, 7))
        assert not np.array_equal(a, simulator.observe(clean, simulator.kappa_ref, 8))
        low = np.mean((a - clean.values) ** 2)
        high = np.mean((simulator.observe(clean, LARGER * simulator.kappa_ref, 7) - clean.values) ** 2)
        assert high > low > 0, "more noise at a larger kappa"

    def test_noise_power_matches_definition(self, simulator, configurations):
        clean = simulator.simulate(configurations[0])
        fast = simulator.noise_power(clean, LARGER * simulator.kappa_ref, self.noise_seeds)
        direct = Simulator.noise_power(simulator, clean, LARGER * simulator.kappa_ref, self.noise_seeds)
        np.testing.assert_allclose(fast, direct, rtol=1e-9, atol=1e-15)

    def test_rejection_rules(self, simulator, configurations):
        rng = np.random.default_rng(2)
        config = configurations[0]
        baseline = simulator.simulate(config)
        iv = simulator.sample_intervention(config, simulator.parameters[0].name, rng)
        outcomes = simulator.rejection_rules(config, iv, simulator.simulate(config, iv), baseline)
        for o in outcomes:
            assert isinstance(o.rule, str) and o.rule and isinstance(o.passed, bool)

    def test_early_rejection_agrees_with_the_rules(self, simulator, configurations):
        """An early rejection (before simulating) must be the first failing rule of the full check."""
        rng = np.random.default_rng(5)
        for config in configurations:
            baseline = simulator.simulate(config)
            for p in simulator.parameters:
                try:
                    iv = simulator.sample_intervention(config, p.name, rng)
                except ValueError:
                    continue
                early = simulator.early_rejection(config, iv, baseline)
                if early is None:
                    continue
                full = simulator.rejection_rules(config, iv, simulator.simulate(config, iv), baseline)
                failed = [o.rule for o in full if not o.passed]
                assert not early.passed and failed and failed[0] == early.rule, (config, iv, early, failed)
