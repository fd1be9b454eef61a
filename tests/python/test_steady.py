"""The periodic steady state and the frequency response from Python,
against closed forms."""
import math
import os

import numpy as np
import pytest

import hbg

HERE = os.path.dirname(os.path.abspath(__file__))
STEADY = os.path.join(os.path.dirname(HERE), "steady", "models")
LOSSES = os.path.join(os.path.dirname(HERE), "losses", "models")


def test_steady_rc_sine():
    # vc's amplitude Vm / |1 + j w R C|, mean 0; the resistor's mean power
    # Vm^2 R / (2 |Z|^2), delivered by the source.
    Vm, f, R, C = 5.0, 50.0, 100.0, 20e-6
    model = hbg.compile(os.path.join(LOSSES, "rc_sine.hbg"))
    s = model.steady()
    assert s.period == pytest.approx(1 / f, rel=1e-12)
    w = 2 * math.pi * f
    amp = Vm / math.hypot(1, w * R * C)
    fig = s.figures["vc"]
    assert fig["max"] == pytest.approx(amp, rel=1e-6)
    assert fig["min"] == pytest.approx(-amp, rel=1e-6)
    assert fig["rms"] == pytest.approx(amp / math.sqrt(2), rel=1e-6)
    assert abs(fig["mean"]) < 1e-6 * amp
    z2 = R ** 2 + 1 / (w * C) ** 2
    assert s.losses["r"] == pytest.approx(Vm ** 2 * R / (2 * z2), rel=1e-6)
    assert s.efficiency("r", "src") == pytest.approx(1.0, rel=1e-6)
    t = s.rows.time
    assert t[0] == 0 and t[-1] == pytest.approx(1 / f, rel=1e-12)
    # The period's rows: vc = amp sin(w t - atan(w R C)).
    phase = math.atan(w * R * C)
    assert np.max(np.abs(s.rows["vc"] - amp * np.sin(w * t - phase))) < 1e-6 * amp
    assert all(abs(m) < 1 for m in s.multipliers)


def test_ac_buck_against_the_averaged_model():
    Vin, L, C, R, fs = 12.0, 1e-3, 1e-4, 10.0, 20e3
    model = hbg.compile(os.path.join(STEADY, "buck_ccm.hbg"))
    freqs = np.array([fs / 200, fs / 50])
    ac = model.ac("D", freqs)
    assert np.array_equal(ac.frequencies, freqs)
    s = 2j * math.pi * freqs
    gvd = Vin / (1 + s * L / R + s * s * L * C)
    got = ac.response["vout"]
    assert np.all(np.abs(got - gvd) < 0.01 * np.abs(gvd))
    assert np.allclose(ac.magnitude("vout"), np.abs(got))


def test_steady_errors():
    text = """model Ramp {
    MSe src(time);
    R r(1); C c(1); 1 j;
    bond src -> j; bond j -> r; bond j -> c;
    output v = c.e;
}
"""
    model = hbg.compile(text)
    with pytest.raises(hbg.SimulationError) as info:
        model.steady()
    assert "period" in str(info.value)
    s = model.steady(check=False)
    assert not s.ok and s.error
