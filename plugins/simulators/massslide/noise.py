"""MassSlide observation model (TraceBench Table 16 coefficients, calibrated to Table 17 by form only).

Components and exact coefficients are Table 16's; forms are those of
:mod:`tsagent_plugins.simulators.common.noise` (scale ``S_c`` = peak magnitude of the clean channel).
Event times are the stick/slip transitions (``Trajectory.events``).  The friction ``bias`` is one
constant offset per noise seed.  ``*_EVENT_TAU`` (s) localise the event components around
the transitions; :data:`DRIFT_TAU` (s) is the drift's correlation time.  Only these forms were
tuned to Table 17; the coefficients are never changed.
"""

from __future__ import annotations

from tsagent_plugins.simulators.common.noise import ChannelNoise, FieldNoise

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

#: Event-envelope time scales (s), set against Table 17 on a retained pool (seed 0, 142 per class).
#: Each stick/slip transition adds its own burst (``overlap="sum"``): a block that chatters between
#: sticking and slipping is read with more noise than one that sticks once, which widens the
#: pool's SNR spread towards Table 17's (6.6 and 9.8 dB).  The velocity reading is disturbed for
#: about 1 s around a transition, the friction reading for about 50 ms -- the friction force jumps
#: there, the velocity does not.
VELOCITY_EVENT_TAU = 1.0
FRICTION_EVENT_TAU = 0.05
POST_TAU = 0.1  # unused: Table 16 has no post-event component
#: Correlation time (s) of the drift fields.
DRIFT_TAU = 1.0
SALT = 0x51DE


def model(dt: float) -> FieldNoise:
    """The observation model for channels (velocity, friction force, normal force)."""
    return FieldNoise(
        (ChannelNoise.from_table(COEFFICIENTS, "velocity", event_tau=VELOCITY_EVENT_TAU, overlap="sum"),
         ChannelNoise.from_table(COEFFICIENTS, "friction", event_tau=FRICTION_EVENT_TAU, overlap="sum"),
         ChannelNoise.from_table(COEFFICIENTS, "normal")),
        dt=dt, event_tau=VELOCITY_EVENT_TAU, post_tau=POST_TAU, drift_tau=DRIFT_TAU, salt=SALT)
