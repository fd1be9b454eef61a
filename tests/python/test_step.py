"""A controller written in Python closes the loop through the step API,
against the sampled closed loop's exact recurrence."""
import math
import os

import numpy as np
from scipy.linalg import expm

import hbg


def test_pi_speed_control_against_exact_recurrence(examples):
    # examples/dc_motor_speed.hbg; the controller of pi_speed_control.cpp.
    Ra, La, K, n, J, b = 1.0, 0.01, 0.05, 0.1, 0.02, 0.01
    T, Kp, Ki = 1e-3, 2.0, 30.0
    A = np.array([[-Ra / La, -K / (n * La)], [K / (n * J), -b / J]])
    B = np.array([1 / La, 0.0])
    M = expm(np.block([[A, B[:, None]], [np.zeros((1, 3))]]) * T)
    Phi, Gamma = M[:2, :2], M[:2, 2]

    model = hbg.compile(os.path.join(examples, "dc_motor_speed.hbg"))
    assert model.input_names == ["V"]
    sim = model.simulation()
    sim.start()
    x = np.zeros(2)
    integral = exact_integral = 0.0
    worst = 0.0
    for k in range(1000):
        t = k * T
        r = 20.0 if t < 0.5 else 10.0
        e = r - sim.output("omega")
        integral += T * e
        V = Kp * e + Ki * integral
        ex = r - x[1]
        exact_integral += T * ex
        Vx = Kp * ex + Ki * exact_integral
        worst = max(worst, abs(sim.output("omega") - x[1]))
        sim.set_input("V", V)
        assert sim.input("V") == V
        sim.advance((k + 1) * T)
        x = Phi @ x + Gamma * Vx
    assert sim.time == 1.0
    assert worst < 1e-7 * 20
    assert abs(sim.output("omega") - 10.0) < 1e-3
    assert sim.state("load.body.p") == sim.state()[model.state_names.index("load.body.p")]
    # The load's momentum is J omega.
    assert abs(sim.state("load.body.p") - J * sim.output("omega")) < 1e-12
    assert set(sim.outputs) == set(model.output_names)
