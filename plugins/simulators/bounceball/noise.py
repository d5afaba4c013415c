"""BounceBall observation model (TraceBench Table 11 coefficients, calibrated to Table 12 by form only).

The components and their exact coefficients are Table 11's; the forms are those of
:mod:`tsagent_plugins.simulators.common.noise` (scale ``S_c`` = peak magnitude of the clean channel).
Documented choices (the coefficients are never changed; only these forms were tuned to Table 12):

* event times: every wall impact (``Trajectory.events``) for position and velocity; the force
  channel's event component sits on its own non-zero samples (right-wall contacts);
* ``*_EVENT_TAU``: decay (s) of each channel's two-sided impact envelope; :data:`POST_TAU`:
  ring-down (s) of the velocity's post-impact component; :data:`DRIFT_TAU`: drift correlation time (s).
"""

from __future__ import annotations

from tsagent_plugins.simulators.common.noise import ChannelNoise, FieldNoise

#: Table 11, exact BounceBall observation-noise coefficients at kappa_ref.
COEFFICIENTS = {
    "position_base_sigma_scale": 0.0175,
    "position_drift_sigma_scale": 0.004,
    "position_event_sigma_scale": 0.04,
    "position_quant_step_floor": 0.0005,
    "position_quant_step_scale": 0.0025,
    "right_force_base_sigma_scale": 0.0001,
    "right_force_event_sigma_scale": 0.004,
    "speed_base_sigma_scale": 0.00088,
    "speed_drift_sigma_scale": 0.0001056,
    "speed_event_sigma_scale": 0.00704,
    "speed_hetero_sigma_scale": 0.0022,
    "speed_post_event_sigma_scale": 0.00308,
}

#: Envelope time scales (s) per channel, set against Table 12 on a retained pool (seed 0):
#: position's impact noise decays within 0.1 s, velocity's within 0.5 s with a 2 s post-impact
#: ring-down, the force sensor's within 0.045 s (about two samples at 50 Hz) of each contact.
POSITION_EVENT_TAU = 0.1
SPEED_EVENT_TAU = 0.5
POST_TAU = 2.0
FORCE_EVENT_TAU = 0.045
#: Correlation time (s) of the drift fields.
DRIFT_TAU = 2.0
SALT = 0xB0BCE


def model(dt: float) -> FieldNoise:
    """The observation model for channels (position, velocity, right-wall force) at sample interval ``dt``."""
    return FieldNoise(
        (ChannelNoise.from_table(COEFFICIENTS, "position", event_tau=POSITION_EVENT_TAU),
         ChannelNoise.from_table(COEFFICIENTS, "speed", event_tau=SPEED_EVENT_TAU),
         ChannelNoise.from_table(COEFFICIENTS, "right_force", events="active", event_tau=FORCE_EVENT_TAU)),
        dt=dt, event_tau=SPEED_EVENT_TAU, post_tau=POST_TAU, drift_tau=DRIFT_TAU, salt=SALT)
