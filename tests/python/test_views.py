"""What a notebook shows: a model as its bond graph (hbgc dot's drawing),
a result as its plot (hbgc run --plot's), and matplotlib's figure."""
import os
import subprocess

import pytest

import hbg

HBGC = os.path.join(os.path.dirname(hbg.__file__), "..", "..", "bin", "hbgc")


def test_model_draws_as_hbgc_dot(examples):
    path = os.path.join(examples, "ideal_switch.hbg")
    model = hbg.compile(path)
    dot = subprocess.run([HBGC, "dot", path], capture_output=True, text=True, check=True).stdout
    assert model.dot() == dot
    closed = subprocess.run([HBGC, "dot", path, "--mode", "sw.j=closed"], capture_output=True,
                            text=True)
    if closed.returncode == 0:
        assert model.dot(mode="sw.j=closed") == closed.stdout
    svg = model._repr_svg_()
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    with pytest.raises(hbg.CompileError):
        model.dot(mode="nosuch=on")


def test_model_from_text_draws_too():
    text = "model RC {\n Se s(1); R r(1); C c(1); 1 j;\n bond s -> j; bond j -> r; bond j -> c;\n}\n"
    assert 'digraph "RC"' in hbg.compile(text).dot()


def test_result_plots_as_hbgc_run_plot(tmp_path, examples):
    path = os.path.join(examples, "ideal_switch.hbg")
    out = tmp_path / "plot.svg"
    subprocess.run([HBGC, "run", path, "--t-end", "0.04", "-o", str(tmp_path / "r.csv"), "--plot",
                    str(out)], check=True, cwd=examples)
    r = hbg.compile(path).simulate(t_end=0.04)
    assert r.svg(title="model IdealSwitch (%s)" % path) == out.read_text()
    assert r._repr_svg_().startswith("<svg") or "<svg" in r._repr_svg_()


def test_result_plot_with_matplotlib(examples):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    r = hbg.compile(os.path.join(examples, "rlc.hbg")).simulate(t_end=2)
    fig = r.plot()
    assert len(fig.axes) == 2
    assert [a.get_ylabel() for a in fig.axes] == ["capacitor.q", "current"]
