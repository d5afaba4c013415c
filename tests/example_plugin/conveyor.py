"""A tiny third-party simulator plugin: a parcel on a conveyor belt.

Register it from your distribution's pyproject.toml::

    [project.entry-points.harness]
    conveyor = "conveyor"
"""

from harness import (Channel, Configuration, Intervention, Parameter, SimulatedTrajectory as Trajectory, Simulator,
                     hookimpl, lazy_module)

np = lazy_module("numpy")  # imported on first use: `harness plugins list` loads this module and needs no numpy


class Conveyor(Simulator):
    name = "conveyor"
    version = "1"
    horizon, dt = 5.0, 0.05
    state_variables = (Parameter("start", "start position", "m", 0.0, 1.0),)
    parameters = (Parameter("speed", "belt speed", "m/s", 0.5, 2.0, min_abs=0.2),
                  Parameter("gain", "sensor gain", "1", 0.8, 1.2, min_abs=0.05))
    channels = (Channel("Reading", "sensor reading", "m"), Channel("Speed", "belt speed", "m/s"))
    description = "a parcel carried at constant speed by a conveyor belt past a position sensor."

    def sample_configurations(self, n, rng):
        draw = lambda p: float(rng.uniform(p.low, p.high))  # noqa: E731
        return [Configuration({"start": draw(self.state_variables[0])},
                              {p.name: draw(p) for p in self.parameters}) for _ in range(n)]

    def sample_intervention(self, config, parameter, rng):
        p = next(q for q in self.parameters if q.name == parameter)
        old = config.parameters[parameter]
        new = p.high if old - p.low < p.min_abs else (p.low if p.high - old < p.min_abs else
                                                      float(rng.choice([p.low, p.high])))
        return Intervention(parameter, float(rng.uniform(0.2, 0.8) * self.horizon), new)

    def simulate(self, config, intervention=None):
        t = np.arange(1, round(self.horizon / self.dt)) * self.dt  # t_k = k*dt, every t_k < horizon
        speed = np.full_like(t, config.parameters["speed"])
        gain = np.full_like(t, config.parameters["gain"])
        if intervention is not None:
            after = t >= intervention.time
            {"speed": speed, "gain": gain}[intervention.parameter][after] = intervention.new_value
        position = config.initial_state["start"] + np.concatenate([[0.0], np.cumsum(speed[1:] * self.dt)])
        return Trajectory(t, np.stack([gain * position, speed], axis=1))

    def observe(self, clean, kappa, seed):
        if kappa == 0:
            return clean.values.copy()
        noise = np.random.default_rng(seed).standard_normal(clean.values.shape)
        return clean.values + 0.01 * kappa * noise


@hookimpl
def register_simulators(register):
    register(Conveyor())
