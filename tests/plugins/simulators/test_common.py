"""Sampling and observation-model building blocks of BounceBall and MassSlide."""

from __future__ import annotations

import numpy as np
import pytest

from harness.contracts import Parameter, Trajectory
from tsagent_plugins.simulators.bounceball import BounceBall
from tsagent_plugins.simulators.bounceball import noise as bb_noise
from tsagent_plugins.simulators.bounceball.sampling import TABLE10
from tsagent_plugins.simulators.common.noise import ChannelNoise, FieldNoise, envelopes
from tsagent_plugins.simulators.common.sampling import Marginal, admissible_sides, new_value, srd
from tsagent_plugins.simulators.massslide import MassSlide
from tsagent_plugins.simulators.massslide import noise as ms_noise
from tsagent_plugins.simulators.massslide.sampling import TABLE15


def test_two_piece_marginal_hits_min_median_max():
    m = Marginal(0.3, 15.4, 99.3, log=True)
    np.testing.assert_allclose(m.ppf(np.array([0.0, 0.25, 0.5, 1.0])), [0.3, np.sqrt(0.3 * 15.4), 15.4, 99.3])
    u = np.random.default_rng(0).random(20001)
    assert np.median(Marginal(-17.01, -8.2, 10.0).ppf(u)) == pytest.approx(-8.2, abs=0.2)


def test_zero_mass_marginal_puts_an_atom_at_zero():
    m = Marginal(-0.67, 0.0, 0.95, zero_mass=0.3)
    x = m.ppf(np.random.default_rng(1).random(10000))
    assert np.mean(x == 0.0) == pytest.approx(0.3, abs=0.02)
    assert x.min() >= -0.67 and x.max() <= 0.95 and np.median(x) == 0.0
    with pytest.raises(ValueError, match="zero_mass"):
        Marginal(0.1, 0.5, 1.0, zero_mass=0.2)


def test_new_values_on_a_signed_range_respect_min_abs_and_min_srd():
    p = Parameter("inclination_angle", "x", "deg", -0.67, 0.95, min_srd=0.3, min_abs=0.06)
    rng = np.random.default_rng(2)
    for old in (-0.6, -0.05, 0.0, 0.03, 0.5, 0.9):
        for _ in range(50):
            b = new_value(p, old, rng)
            assert -0.67 <= b <= 0.95 and abs(b - old) >= 0.06 - 1e-12 and srd(old, b) >= 0.3 - 1e-9
    # from 0.5 the SRD bound is 0.5 * 2.3 / 1.7 = 0.676 above and 0.5 * 1.7 / 2.3 = 0.370 below
    (up_lo, up_hi), (dn_lo, dn_hi) = admissible_sides(p, 0.5)
    assert up_lo == pytest.approx(0.5 * 2.3 / 1.7, rel=1e-9) and dn_hi == pytest.approx(0.5 * 1.7 / 2.3, rel=1e-9)
    with pytest.raises(ValueError, match="no admissible new value"):
        new_value(Parameter("q", "q", "-", 0.9, 1.0, min_srd=0.3, min_abs=0.06), 0.95, rng)


@pytest.mark.parametrize("sim, table", [(BounceBall(), TABLE10), (MassSlide(), TABLE15)])
def test_ranges_are_the_tables(sim, table):
    for p in (*sim.state_variables, *sim.parameters):
        assert (p.low, p.high) == (table[p.name][0], table[p.name][2])
        assert sim.marginals[p.name].low == p.low and sim.marginals[p.name].high == p.high


def test_noise_coefficients_are_tables_11_and_16_exactly():
    bb = bb_noise.model(0.02).channels
    assert (bb[0].base, bb[0].drift, bb[0].event, bb[0].quant_floor, bb[0].quant_scale) == (
        0.0175, 0.004, 0.04, 0.0005, 0.0025)
    assert (bb[1].base, bb[1].drift, bb[1].event, bb[1].hetero, bb[1].post_event) == (
        0.00088, 0.0001056, 0.00704, 0.0022, 0.00308)
    assert (bb[2].base, bb[2].event, bb[2].drift) == (0.0001, 0.004, 0.0)
    ms = ms_noise.model(0.02).channels
    assert (ms[0].base, ms[0].drift, ms[0].event, ms[0].hetero) == (0.003, 0.0005, 0.01, 0.003)
    assert (ms[1].base, ms[1].bias, ms[1].drift, ms[1].event) == (0.001, 0.002, 0.001, 0.02)
    assert (ms[0].event_field, ms[1].event_field, ms[1].bias_form) == ("drift", "drift", "gain")
    assert (ms[2].base, ms[2].drift) == (0.001, 0.0002)
    with pytest.raises(ValueError, match="unknown noise coefficient"):
        ChannelNoise.from_table({"speed_wobble_sigma_scale": 1.0}, "speed")


def test_noise_is_linear_in_kappa_and_the_bias_is_constant_per_seed():
    t = np.arange(1, 101) * 0.02
    y = np.stack([np.sin(t), np.cos(t)], axis=1)
    fn = FieldNoise((ChannelNoise(base=0.01, drift=0.01), ChannelNoise(bias=0.1)), dt=0.02, event_tau=0.1,
                    post_tau=0.1, drift_tau=0.2, salt=1)
    a, b = fn.observe(t, y, np.zeros(0), 1.0, 5) - y, fn.observe(t, y, np.zeros(0), 4.0, 5) - y
    np.testing.assert_allclose(b, 4 * a, rtol=1e-12)
    assert np.ptp(a[:, 1]) == pytest.approx(0.0, abs=1e-15) and a[0, 1] != 0.0
    naive = np.mean([(fn.observe(t, y, np.zeros(0), 2.0, s) - y) ** 2 for s in range(16)], axis=0)
    np.testing.assert_allclose(fn.noise_power(t, y, np.zeros(0), 2.0, 16), naive, rtol=1e-10)


def test_event_on_the_drift_field_and_gain_bias_keep_the_variances_and_the_exact_power():
    """``event_field="drift"``: at every t the corruption variance is still
    kappa^2 [(drift S)^2 + (event S w)^2], now on the smooth field; ``bias_form="gain"``: the bias is
    ``kappa bias b y(t)`` (zero where the reading is zero).  ``noise_power`` stays exact."""
    t = np.arange(1, 301) * 0.02
    y = np.stack([1.0 + np.sin(t), np.where(t < 3.0, 0.0, 2.0 * np.cos(t))], axis=1)
    ev = np.array([2.0, 4.0])
    white = ChannelNoise(base=0.01, drift=0.02, event=0.1, event_tau=0.3)
    smooth = ChannelNoise(base=0.01, drift=0.02, event=0.1, event_tau=0.3, event_field="drift")
    fn = FieldNoise((smooth, ChannelNoise(bias=0.1, bias_form="gain")), dt=0.02, event_tau=0.3, post_tau=0.1,
                    drift_tau=1.0, salt=3)
    ref = FieldNoise((white, ChannelNoise(bias=0.1)), dt=0.02, event_tau=0.3, post_tau=0.1, drift_tau=1.0, salt=3)
    a, d, b, _ = fn.amplitudes(t, y, ev, 2.0)
    a0, d0, b0, _ = ref.amplitudes(t, y, ev, 2.0)
    np.testing.assert_allclose(a[0] ** 2 + d[0] ** 2, a0[0] ** 2 + d0[0] ** 2, rtol=1e-12)
    np.testing.assert_allclose(a[0], 2.0 * 0.01 * np.abs(y[:, 0]).max())  # the white part is base only
    np.testing.assert_allclose(b[1], 2.0 * 0.1 * y[:, 1])
    np.testing.assert_allclose(b0[1], 2.0 * 0.1 * np.abs(y[:, 1]).max())
    err = fn.observe(t, y, ev, 2.0, 7) - y
    assert np.all(err[t < 3.0, 1] == 0.0) and np.all(err[t >= 3.0, 1] != 0.0)
    naive = np.mean([(fn.observe(t, y, ev, 2.0, s) - y) ** 2 for s in range(12)], axis=0)
    np.testing.assert_allclose(fn.noise_power(t, y, ev, 2.0, 12), naive, rtol=1e-10)
    with pytest.raises(ValueError, match="event_field"):
        ChannelNoise(event_field="pink")
    with pytest.raises(ValueError, match="bias_form"):
        ChannelNoise(bias_form="scale")


def test_envelopes_two_sided_and_after_only():
    t = np.array([0.5, 1.0, 1.5, 2.5])
    w, p = envelopes(t, np.array([1.0, 2.0]), 0.5, 1.0)
    np.testing.assert_allclose(w, np.exp(-np.array([0.5, 0.0, 0.5, 0.5]) / 0.5))
    np.testing.assert_allclose(p, [0.0, 1.0, np.exp(-0.5), np.exp(-0.5)])


def test_force_event_noise_sits_on_right_wall_contacts():
    sim = BounceBall()
    t = sim.time
    y = np.zeros((t.size, 3))
    y[:, 0], y[:, 1] = 5.0, 1.0
    y[1000, 2] = 800.0
    tr = Trajectory(t, y, np.array([5.0, 20.0]))  # impacts elsewhere do not disturb the force channel
    power = sim.noise_power(tr, 1.0, 8)[:, 2]
    assert power[1000] > 100 * power[200]


def test_summed_envelopes_add_one_burst_per_event():
    t = np.array([1.0, 1.5])
    w, p = envelopes(t, np.array([1.0, 1.0, 2.0]), 0.5, 1.0, overlap="sum")
    np.testing.assert_allclose(w ** 2, [2 + np.exp(-4.0), 2 * np.exp(-2.0) + np.exp(-2.0)])
    np.testing.assert_allclose(p ** 2, [2.0, 2 * np.exp(-1.0)])


def test_simulators_pickle_for_worker_processes():
    import pickle

    for sim in (BounceBall(), MassSlide()):
        tr = sim.simulate(sim.sample_configurations(1, np.random.default_rng(0))[0])
        sim.noise_power(tr, 4.0, 4)  # fills the moment cache
        copy = pickle.loads(pickle.dumps(sim))
        np.testing.assert_array_equal(copy.observe(tr, 1.0, 3), sim.observe(tr, 1.0, 3))


def test_rms_scale_gives_massslide_normal_force_its_table17_snr_whatever_the_step():
    """``scale="rms"``: S = sqrt(mean y^2).  MassSlide's normal force uses it (Table 17: 59.90 +- 0.40 dB;
    a constant force under Table 16's base and drift reads -10 log10(0.001^2 + 0.0002^2) = 59.83 dB): a force
    that steps to half or to twice its value reads the same expected SNR as a constant one, where the peak
    scale loses 10 log10(mean y^2 / max y^2) dB."""
    with pytest.raises(ValueError, match="scale"):
        ChannelNoise(scale="span")
    sim = MassSlide()
    assert sim.noise_model.channels[2].scale == "rms" and sim.noise_model.channels[0].scale == "peak"
    t = sim.time
    expected = -10 * np.log10(0.001 ** 2 + 0.0002 ** 2)
    for after in (20.0, 5.0, 40.0):
        y = np.zeros((t.size, 3))
        y[:, 2] = np.where(t < 5.0, 10.0, after)
        power = sim.noise_model.noise_power(t, y, np.array([]), 1.0, 256)[:, 2]
        snr = 10 * np.log10((y[:, 2] ** 2).sum() / power.sum())
        assert abs(snr - expected) < 0.05, (after, snr)
    peak = FieldNoise((ChannelNoise.from_table(ms_noise.COEFFICIENTS, "normal"),), dt=0.02, event_tau=1.0,
                      post_tau=0.1, drift_tau=6.0, salt=1)
    power = peak.noise_power(t, y[:, 2:], np.array([]), 1.0, 256)[:, 0]
    loss = 10 * np.log10((y[:, 2] ** 2).mean() / 40.0 ** 2)
    assert abs(10 * np.log10((y[:, 2] ** 2).sum() / power.sum()) - (expected + loss)) < 0.05


@pytest.mark.parametrize("name", ["balldrop", "bounceball", "massslide"])
def test_reference_tables_match_the_ranges(name):
    """The simulators' published tables (no longer in the core's contract) name every variable within its
    bounds and only real channels."""
    from harness.plugins import get

    simulator = get("simulator", name)
    ref = simulator.reference
    for v in simulator.state_variables + simulator.parameters:
        assert v.name in ref.ranges, f"reference.ranges lacks {v.name!r}"
        lo, med, hi = ref.ranges[v.name]
        assert lo <= med <= hi and v.low <= lo and hi <= v.high, v.name
    assert set(ref.snr) <= {c.name for c in simulator.channels} and ref.snr


def test_drift_filter_with_numpy_fft_is_bit_identical_to_scipy_fft():
    """The drift fields are filtered with numpy.fft (a viewer rebuilding one sample loads no scipy); the pools
    were made with scipy.fft, whose results these must equal bit for bit, lengths chosen the same way."""
    import numpy as np
    from scipy import fft as sfft

    from tsagent_plugins.simulators.common.noise import next_fast_len

    assert [next_fast_len(t) for t in range(1, 5000)] == [sfft.next_fast_len(t, real=True) for t in range(1, 5000)]
    rng = np.random.default_rng(7)
    for width in (999, 1000, 1123, 2001):
        nfft = next_fast_len(width + 200)
        raw, kernel = rng.standard_normal((3, 2, width)), rng.standard_normal(201)
        assert np.array_equal(np.fft.rfft(kernel, nfft), sfft.rfft(kernel, nfft))
        ours = np.fft.irfft(np.fft.rfft(raw, nfft, axis=2) * np.fft.rfft(kernel, nfft), nfft, axis=2)
        theirs = sfft.irfft(sfft.rfft(raw, nfft, axis=2) * sfft.rfft(kernel, nfft), nfft, axis=2)
        assert np.array_equal(ours, theirs)


def test_one_seeds_fields_are_drawn_once_and_read_only_and_equal_a_fresh_draw():
    """An episode's samples share one noise seed: its fields are kept, never recomputed, and cannot be changed."""
    from tsagent_plugins.simulators.balldrop import noise as bd_noise

    for model, n in ((bb_noise.model(0.01), 1234), (ms_noise.model(0.01), 999)):
        first = model.seed_fields(17, n)
        assert model.seed_fields(17, n) is first  # kept
        fresh = model.fields([17], n)
        assert first.keys() == fresh.keys()
        for key, array in first.items():
            assert np.array_equal(array, fresh[key]), key
            assert not array.flags.writeable
        with pytest.raises(ValueError):
            first["z0"][0] = 1.0
        for seed in range(model.SEED_FIELDS_KEPT + 1):  # bounded: the oldest goes
            model.seed_fields(1000 + seed, n)
        assert model.seed_fields(17, n) is not first
    kept = bd_noise.seed_fields(5, 800)
    assert bd_noise.seed_fields(5, 800) is kept and not kept["d0"].flags.writeable
    assert all(np.array_equal(v, bd_noise.fields([5], 800)[k]) for k, v in kept.items())
