"""Runs through the Python module against closed forms, at default options."""
import math
import os

import numpy as np
import pytest

import hbg


def rlc_charge(t, V=1.0, R=1.0, L=0.5, C=0.1):
    """The series RLC's capacitor charge after a step of V from rest
    (underdamped for these values)."""
    a = R / (2 * L)
    w = math.sqrt(1 / (L * C) - a * a)
    return C * V * (1 - np.exp(-a * t) * (np.cos(w * t) + a / w * np.sin(w * t)))


def test_rlc_step_response(examples):
    model = hbg.compile(os.path.join(examples, "rlc.hbg"))
    assert model.name == "RLC"
    assert model.output_names == ["capacitor.q", "current"]
    r = model.simulate(t_end=5)
    assert r.ok
    t, q = r.time, r["capacitor.q"]
    assert isinstance(q, np.ndarray) and q.dtype == np.float64 and q.shape == t.shape
    assert t[0] == 0 and t[-1] == 5
    # Default rtol 1e-6 of the charge's scale, C V = 0.1.
    assert np.max(np.abs(q - rlc_charge(t))) < 1e-6
    # The columns are the run's own memory, read-only.
    assert not q.flags.writeable
    with pytest.raises(ValueError):
        q[0] = 1
    assert r.stats["steps"] > 0 and r.stats["rhs_calls"] > 0
    df = r.to_pandas()
    assert list(df.columns) == ["capacitor.q", "current"]
    assert np.array_equal(df.index.values, t)


def test_source_text_and_parameters():
    text = """
model RC {
    parameter R = 1.0;
    parameter C = 1.0;
    Se source(2);
    R r(R);
    C cap(C) { q0 = 0; }
    1 loop;
    bond source -> loop; bond loop -> r; bond loop -> cap;
    output v = cap.e;
    experiment { t_end = 3; dt_out = 0.5; }
}
"""
    model = hbg.compile(text, parameters={"R": 2.0})
    assert model.parameters == {"R": 2.0, "C": 1.0}
    # The experiment block's settings, and the compile's parameters.
    r = model.simulate()
    assert np.allclose(r.time, np.arange(0, 3.01, 0.5))
    assert np.max(np.abs(r["v"] - 2 * (1 - np.exp(-r.time / 2.0)))) < 1e-5
    # A run's own parameters over them.
    r = model.simulate(parameters={"R": 0.5, "C": 2.0}, t_end=1, dt_out=0.25)
    assert r.parameters == {"R": 0.5, "C": 2.0}
    assert np.max(np.abs(r["v"] - 2 * (1 - np.exp(-r.time / 1.0)))) < 1e-5
    assert r["v"][-1] == pytest.approx(2 * (1 - math.exp(-1)), rel=1e-5)
    # The tolerance is a setting like the others.
    tight = model.simulate(parameters={"R": 0.5, "C": 2.0}, t_end=1, dt_out=0.25, rtol=1e-10)
    assert np.max(np.abs(tight["v"] - 2 * (1 - np.exp(-tight.time / 1.0)))) < 1e-9
    with pytest.raises(ValueError, match="unknown setting `tend`"):
        model.simulation(tend=1)
    with pytest.raises(ValueError, match="unknown method"):
        model.simulate(method="euler2")
    with pytest.raises(KeyError, match="no output `vv`"):
        r["vv"]


def test_collision_remap(examples):
    # Equal masses, the bullet at 1 m/s hits the wood at rest at t = 0.2:
    # a plastic impact, both at 0.5 m/s, momentum kept, half the energy
    # gone (the contact is declared dissipative).
    model = hbg.compile(os.path.join(examples, "collision_inelastic.hbg"))
    r = model.simulate(t_end=1)
    impacts = [e for e in r.events if any("off -> on" in t for t in e.transitions)]
    assert len(impacts) == 1
    e = impacts[0]
    assert e.time == pytest.approx(0.2, abs=1e-9)
    assert e.before["bullet.p"] == pytest.approx(1.0, abs=1e-12)
    assert e.before["wood.p"] == pytest.approx(0.0, abs=1e-12)
    assert e.after["bullet.p"] == pytest.approx(0.5, abs=1e-12)
    assert e.after["wood.p"] == pytest.approx(0.5, abs=1e-12)
    assert e.energy_before == pytest.approx(0.5, abs=1e-12)
    assert e.energy_after == pytest.approx(0.25, abs=1e-12)
    assert e.removed == pytest.approx(0.25, abs=1e-12)
    assert e.outputs_after["momentum"] == pytest.approx(1.0, abs=1e-12)
    assert r["v1"][-1] == pytest.approx(0.5, abs=1e-9)
    assert "contact=on" in e.modes[-1]


def test_sweep_matches_serial_runs_bit_for_bit(examples):
    model = hbg.compile(os.path.join(examples, "rlc.hbg"))
    grid = {"R": [0.5, 1.0, 2.0, 4.0], "L": [0.25, 0.5]}
    results = model.sweep(grid, threads=4, t_end=3)
    assert [r.parameters["R"] for r in results] == [0.5, 0.5, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0]
    assert [r.parameters["L"] for r in results] == [0.25, 0.5] * 4
    for r in results:
        serial = model.simulate(t_end=3, parameters={"R": r.parameters["R"], "L": r.parameters["L"]})
        assert np.array_equal(r.time, serial.time)
        assert np.array_equal(r["capacitor.q"], serial["capacitor.q"])
        assert np.array_equal(r["current"], serial["current"])
    # Each against its closed form where underdamped.
    for r in results:
        R, L = r.parameters["R"], r.parameters["L"]
        if R * R < 4 * L / 0.1:
            assert np.max(np.abs(r["capacitor.q"] - rlc_charge(r.time, R=R, L=L))) < 1e-6


def test_build_simulator_and_fmu(tmp_path, examples):
    import subprocess
    model = hbg.compile(os.path.join(examples, "rlc.hbg"))
    sim = tmp_path / "rlc"
    model.build(sim)
    out = subprocess.run([str(sim), "--t-end", "5", "-p", "R=2"], capture_output=True, text=True,
                         check=True).stdout
    # The simulator writes what the run gives, byte for byte.
    assert out == model.simulate(t_end=5, parameters={"R": 2}).csv()
    fmu = tmp_path / "rlc.fmu"
    model.build_fmu(fmu)
    import zipfile
    with zipfile.ZipFile(fmu) as z:
        assert "modelDescription.xml" in z.namelist()


def test_linearize_against_characteristic_roots(examples):
    # The series RLC: L C s^2 + R C s + 1 = 0.
    model = hbg.compile(os.path.join(examples, "rlc.hbg"))
    for R in (1.0, 5.0):
        lin = model.linearize(parameters={"R": R})
        L, C = 0.5, 0.1
        roots = np.sort_complex(np.roots([L * C, R * C, 1.0]))
        assert lin.A.shape == (2, 2) and lin.B.shape == (2, 1)
        assert lin.C.shape == (2, 2) and lin.D.shape == (2, 1)
        assert lin.inputs == ["source.e"]
        assert lin.outputs == model.output_names
        assert np.allclose(np.sort_complex(lin.poles), roots, rtol=1e-12, atol=0)
        assert np.allclose(np.sort_complex(np.linalg.eigvals(lin.A)), roots, rtol=1e-12)


def test_linearize_in_a_mode_and_its_errors(examples):
    model = hbg.compile(os.path.join(examples, "ideal_switch.hbg"))
    with pytest.raises(hbg.CompileError) as info:
        model.linearize(mode="nosuch=on")
    assert info.value.kind
    with pytest.raises(ValueError):
        model.linearize(parameters={"nosuch": 1})
