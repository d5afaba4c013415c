"""MassSlide observation model (TraceBench Table 16 coefficients, calibrated to Table 17 by form only).

Components and exact coefficients are Table 16's; forms are those of
:mod:`plugins.simulators.common.noise` (scale ``S_c`` = peak magnitude of the clean channel).
Event times are the stick/slip transitions (``Trajectory.events``).  The friction ``bias`` is one
constant offset per noise seed.  :data:`EVENT_TAU` (s) localises the event components around
the transitions; :data:`DRIFT_TAU` (s) is the drift's correlation time.  Only these forms were
tuned to Table 17; the coefficients are never changed.
"""

from __future__ import annotations

from plugins.simulators.common.noise import ChannelNoise, FieldNoise

#: Table 16, exact MassSlide observation-noise coefficients at kappa_ref.
COEFFICIENTS = {
    "friction_base_sigma_scale": 0.001,
    "friction_bias_sigma_scale": 0.002,
    "friction_drift_sigma_scale": 0.001,
    "friction_event_sigma_scale": 0.02,
    "normal_base_sigma_scale": 0.001,
    "normal_drift_sigma_scale": 0.0002,
    "velocity_base_sigma_scale": 0.003,
    "velocity_drift_sigma_scale": 0.0005,
    "velocity_event_sigma_scale": 0.01,
    "velocity_hetero_sigma_scale": 0.003,
}

EVENT_TAU = 0.1
POST_TAU = 0.1  # unused: Table 16 has no post-event component
DRIFT_TAU = 1.0
SALT = 0x51DE


def model(dt: float) -> FieldNoise:
    """The observation model for channels (velocity, friction force, normal force)."""
    return FieldNoise(
        (ChannelNoise.from_table(COEFFICIENTS, "velocity"),
         ChannelNoise.from_table(COEFFICIENTS, "friction"),
         ChannelNoise.from_table(COEFFICIENTS, "normal")),
        dt=dt, event_tau=EVENT_TAU, post_tau=POST_TAU, drift_tau=DRIFT_TAU, salt=SALT)
