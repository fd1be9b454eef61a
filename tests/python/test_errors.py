"""Errors as Python exceptions with their fields; none crashes the interpreter."""
import os

import pytest

import hbg

BAD = """model Bad {
    Se source(1);
    R load(2);
    bond source -> lod;
}
"""


def test_compile_error_fields():
    with pytest.raises(hbg.CompileError) as info:
        hbg.compile(BAD, name="bad.hbg")
    e = info.value
    assert e.file == "bad.hbg"
    assert (e.line, e.column) == (4, 20)
    assert e.kind == "UnknownNameSuggest"
    assert "lod" in e.message and "load" in e.message
    # The message with its source line and caret, as hbgc prints it.
    assert e.rendered.startswith("bad.hbg:4:20: error: ")
    assert "    bond source -> lod;\n" in e.rendered
    assert "                   ^~~" in e.rendered
    assert str(e) == e.text and e.text.startswith(e.rendered)
    assert e.diagnostics[0].line == 4


def test_compile_error_notes_point_at_the_first_declaration():
    text = "model Twice {\n    R r(1);\n    R r(2);\n    Se s(1);\n    1 j;\n    bond s -> j; bond j -> r;\n}\n"
    with pytest.raises(hbg.CompileError) as info:
        hbg.compile(text, name="twice.hbg")
    e = info.value
    assert e.line == 3
    assert len(e.notes) == 1
    assert e.notes[0].line == 2 and e.notes[0].severity == "note"


def test_missing_file():
    with pytest.raises(hbg.CompileError) as info:
        hbg.compile("no/such/model.hbg")
    assert info.value.kind == "CannotOpenFile"
    assert "no/such/model.hbg" in str(info.value)


def test_simulation_error_fields_and_partial_result():
    # x' = x^2 from 1 blows up at t = 1.
    text = """model Blow {
    signal x = 1 + integral(x * x);
    output x;
    experiment { t_end = 2; dt_out = 0.1; }
}
"""
    model = hbg.compile(text, name="blow.hbg")
    with pytest.raises(hbg.SimulationError) as info:
        model.simulate()
    e = info.value
    assert e.kind.startswith("Run")
    assert abs(e.time - 1.0) < 1e-3
    assert e.result is not None and not e.result.ok
    # What was computed before the failure is kept: x = 1 / (1 - t).
    t = e.result.time
    assert len(t) > 5 and t[-1] <= 1.0
    assert abs(e.result["x"][5] - 1 / (1 - t[5])) < 1e-5
    assert "model `Blow` at t = " in str(e)
    r = model.simulate(check=False)
    assert not r.ok and r.error


def test_step_api_error():
    text = """model Blow {
    signal x = 1 + integral(x * x);
    output x;
}
"""
    sim = hbg.compile(text).simulation()
    sim.advance(0.5)
    assert sim.output("x") == pytest.approx(2.0, rel=1e-5)
    with pytest.raises(hbg.SimulationError) as info:
        sim.advance(2.0)
    assert info.value.kind.startswith("Run")
    assert info.value.result is None
    with pytest.raises(ValueError):
        sim.set_input("nothing", 1)
