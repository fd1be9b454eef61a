"""hbg from Python: compile a hybrid bond graph model, simulate it, drive it
step by step, sweep its parameters, build it into a simulator or an FMU.

    import hbg
    model = hbg.compile("rlc.hbg")                 # or the model's text
    result = model.simulate(t_end=2, parameters={"R": 0.5})
    result.time, result["vc"]                      # NumPy arrays
    result.events, result.stats, result.to_pandas()

A thin layer over hbg's C++ embedding API (hbg/hbg.h), which does all the
work: docs/python.md describes it.
"""

import os as _os

from . import _hbg

__all__ = ["compile", "Model", "Result", "Event", "Simulation", "LinearModel", "SteadyState",
           "FrequencyResponse", "CompileError", "SimulationError", "Diagnostic"]


class Diagnostic:
    """One diagnostic of a failed compilation: where (file, line, column,
    1-based), what (kind, as hbg names it: "UnknownName"; severity), the
    message alone and as hbgc prints it (rendered: with the source line
    and a caret), and its notes (Diagnostics themselves)."""

    def __init__(self, d):
        self.file = d["file"]
        self.line = d["line"]
        self.column = d["column"]
        self.kind = d["kind"]
        self.severity = d["severity"]
        self.message = d["message"]
        self.rendered = d["rendered"]
        self.notes = [Diagnostic(n) for n in d["notes"]]

    def __repr__(self):
        return "Diagnostic(%s:%d:%d: %s: %s)" % (self.file, self.line, self.column,
                                                 self.severity, self.message)


class CompileError(Exception):
    """A model that does not compile. str() is what hbgc prints; the
    fields are the first error's (file, line, column, kind, message,
    rendered, notes), and `diagnostics` has every one."""

    def __init__(self, text, diagnostics):
        super().__init__(text)
        self.text = text
        self.diagnostics = [Diagnostic(d) for d in diagnostics]
        errors = [d for d in self.diagnostics if d.severity == "error"] or self.diagnostics
        first = errors[0] if errors else None
        self.file = first.file if first else ""
        self.line = first.line if first else 0
        self.column = first.column if first else 0
        self.kind = first.kind if first else ""
        self.message = first.message if first else text
        self.rendered = first.rendered if first else text
        self.notes = first.notes if first else []

    def __str__(self):
        return self.text


class SimulationError(Exception):
    """A run that failed: its kind (as hbg names it: "RunNewtonFailed"),
    time, mode and element, the message, and the result computed up to the
    failure (`result`; None for a run driven step by step)."""

    def __init__(self, text, failure, result, details=""):
        super().__init__(text)
        self.details = details
        failure = failure or {}
        self.kind = failure.get("kind", "")
        self.time = failure.get("time", float("nan"))
        self.mode = failure.get("mode", "")
        self.element = failure.get("element", "")
        self.loop = failure.get("loop", "")
        self.message = failure.get("message", text)
        self.result = result


_hbg.register_errors(CompileError, SimulationError)


def _is_source(text):
    return "\n" in text or "{" in text


def compile(source, parameters=None, lib_path=None, name=None):
    """Compiles a model: `source` is a path (str or os.PathLike) or the
    model's text (a str with a line break or a brace). `parameters`
    (name: value) are the values runs start from; structural ones (loop
    bounds, `if` blocks) are compiled in. `lib_path`: directories
    `import` searches first. Raises CompileError."""
    parameters = dict(parameters or {})
    lib = [str(p) for p in (lib_path or [])]
    if isinstance(source, _os.PathLike) or not _is_source(source):
        path = _os.fspath(source)
        model = _hbg.compile_file(path, parameters, lib)
        origin = ("file", path)
    else:
        name = name or "<string>"
        model = _hbg.compile_string(source, name, parameters, lib)
        origin = ("text", source, name)
    return Model(model, parameters, origin, lib)


def _settings(kwargs):
    return {k: v for k, v in kwargs.items() if v is not None}


class Model:
    """A compiled model (hbg.compile). Any number of threads may simulate
    it at once."""

    def __init__(self, model, parameters=None, origin=None, lib_path=None):
        self._model = model
        self._parameters = dict(parameters or {})
        self._origin = origin
        self._lib_path = list(lib_path or [])

    name = property(lambda self: self._model.name)
    switched = property(lambda self: self._model.switched, doc="whether it has switched junctions")
    state_names = property(lambda self: list(self._model.state_names))
    output_names = property(lambda self: list(self._model.output_names))
    input_names = property(lambda self: list(self._model.input_names))

    @property
    def parameters(self):
        """Every parameter and input with the value runs start from."""
        names = self._model.parameter_names
        return dict(zip(names, self._model.parameter_values(self._parameters)))

    def _with(self, parameters):
        p = dict(self._parameters)
        p.update(parameters or {})
        return p

    def experiment(self, parameters=None):
        """The settings of the model's `experiment { ... }` block."""
        return self._model.experiment(self._with(parameters))

    def simulate(self, t_end=None, dt_out=None, method=None, rtol=None, atol=None, t_start=None,
                 dt=None, max_step=None, parameters=None, check=True):
        """Runs the model from t_start to t_end: the settings given over its
        experiment block over hbg's defaults, with `parameters` (and inputs)
        by name. Returns a Result; a run that fails raises SimulationError
        with the result up to the failure (or, with check=False, returns
        it, `ok` false)."""
        p = self._with(parameters)
        r = Result(self._model.simulate(p, _settings(dict(
            t_end=t_end, dt_out=dt_out, method=method, rtol=rtol, atol=atol, t_start=t_start,
            dt=dt, max_step=max_step))), p, self)
        if check and not r.ok:
            raise SimulationError(r.error_text, r._result.failure, r)
        return r

    def simulation(self, parameters=None, **settings):
        """A run driven step by step (Simulation): set inputs, advance to
        a time, read outputs; the settings as simulate() takes them."""
        p = self._with(parameters)
        return Simulation(self._model.simulation(p, _settings(settings)), self)

    def sweep(self, grid, threads=0, check=True, **settings):
        """Runs every combination of the values `grid` gives (name: list
        of values; `{"R": [1, 2], "L": [1e-3]}` is two runs) in parallel on
        `threads` threads (0: one per core), each run as simulate() would
        give it. Returns the Results in the order of the combinations (the
        last name varying fastest), each with its `parameters`."""
        names = list(grid)
        points = [{}]
        for n in names:
            points = [dict(p, **{n: float(v)}) for p in points for v in grid[n]]
        full = [self._with(p) for p in points]
        results = [Result(r, p, self)
                   for r, p in zip(self._model.sweep(full, _settings(settings), threads), full)]
        if check:
            for r in results:
                if not r.ok:
                    raise SimulationError(r.error_text, r._result.failure, r)
        return results

    def linearize(self, at=0.0, mode=None, parameters=None):
        """The linear model dx/dt = A x + B u, y = C x + D u about the state
        a run from the start reaches at `at`, in `mode` ("sw=on"; None:
        the mode the run is in there): a LinearModel. The inputs u are the
        sources' values, the outputs y the model's outputs."""
        return LinearModel(self._model.linearize(float(at), mode or "", self._with(parameters)))

    def steady(self, parameters=None, period=None, rows_per_period=1000, losses=True, check=True):
        """The periodic steady state under the model's periodic sources,
        found by shooting (`hbgc steady`): a SteadyState with one period's
        rows, each output's mean, RMS, minimum and maximum, the losses
        (mean power of each R element and source, and at events), the
        Floquet multipliers. `period`: the sources' common period unless
        given. A search that fails raises SimulationError (check=False:
        returns it, `ok` false)."""
        d = self._model.steady(self._with(parameters), period, rows_per_period, losses)
        s = SteadyState(d, self)
        if check and not s.ok:
            raise SimulationError(s.error, d["failure"], None)
        return s

    def ac(self, input, frequencies, parameters=None, period=None, check=True):
        """The small-signal frequency response about the periodic steady
        state (`hbgc ac`) to a sinusoid on `input` (a parameter or an
        input) at each frequency (Hz): a FrequencyResponse whose
        `response[output]` is a complex NumPy array per unit of the input."""
        import numpy
        d = self._model.ac(input, [float(f) for f in numpy.atleast_1d(frequencies)],
                           self._with(parameters), period)
        if check and not d["ok"]:
            raise SimulationError(d["error"], d["failure"], None)
        return FrequencyResponse(d)

    def build(self, path):
        """Writes a standalone simulator (`hbgc build`) to `path`."""
        self._model.build(_os.fspath(path), False)

    def build_fmu(self, path):
        """Writes an FMI 3.0 FMU (Model Exchange and Co-Simulation)."""
        self._model.build(_os.fspath(path), True)

    def dot(self, mode=None):
        """The bond graph in Graphviz's DOT language, drawn as `hbgc dot`
        draws it: causal strokes, switched junctions boxed with their
        state, derivative storage red, loops coloured, instances as
        clusters; in `mode` ("sw=on"; None: the initial mode)."""
        if self._origin is None:
            raise ValueError("the model's source is not known")
        if self._origin[0] == "file":
            with open(self._origin[1]) as f:
                text, name = f.read(), self._origin[1]
        else:
            text, name = self._origin[1], self._origin[2]
        structural = {k: v for k, v in self._parameters.items()
                      if self._model.structural(k) is not None}
        return _hbg.dot_text(text, name, structural, self._lib_path, mode or "")

    def svg(self, mode=None):
        """The drawing as SVG, rendered by Graphviz's `dot` program."""
        import subprocess
        return subprocess.run(["dot", "-Tsvg"], input=self.dot(mode), capture_output=True,
                              text=True, check=True).stdout

    def _repr_svg_(self):
        # A notebook shows the bond graph; without Graphviz, the text repr.
        try:
            return self.svg()
        except (OSError, ValueError, CompileError, Exception):
            return None

    def __repr__(self):
        return "<hbg.Model %s: %d states, outputs %s>" % (
            self.name, len(self.state_names), ", ".join(self.output_names))


class LinearModel:
    """Model.linearize's result: A, B, C, D (2-D NumPy arrays), the poles
    (A's eigenvalues, complex, sorted by real part), the names of the
    states, inputs and outputs, and where (time, mode)."""

    def __init__(self, d):
        self.A, self.B, self.C, self.D = d["A"], d["B"], d["C"], d["D"]
        self.poles = d["poles"]
        self.states, self.inputs, self.outputs = list(d["states"]), list(d["inputs"]), list(d["outputs"])
        self.time, self.mode = d["time"], d["mode"]

    def __repr__(self):
        return "<hbg.LinearModel %d states, %d inputs, %d outputs at t=%r%s>" % (
            len(self.states), len(self.inputs), len(self.outputs), self.time,
            " in " + self.mode if self.mode else "")


class SteadyState:
    """Model.steady's result: `period`, one period's `rows` (a Result,
    time from 0 to the period), `figures[output]` (mean, rms, min, max),
    `losses` (element path: mean power; "events": the loss at events),
    `multipliers`, `modes` and `mode_phases`, `residual`; efficiency()."""

    def __init__(self, d, model):
        self.ok, self.error = d["ok"], d["error"]
        self.period, self.residual = d["period"], d["residual"]
        self.rows = Result(d["rows"], model._parameters, model)
        self.figures = dict(d["figures"])
        self.losses = dict(d["losses"])
        self.multipliers = list(d["multipliers"])
        self.modes, self.mode_phases = list(d["modes"]), list(d["mode_phases"])
        self.state = d["state"]
        self._efficiency = d["efficiency"]

    def efficiency(self, out, into):
        """The mean power of the elements `out` names over that of those
        `into` names (comma-separated element paths, as --efficiency);
        ValueError naming an unknown element and close ones."""
        return self._efficiency(out, into)

    def __repr__(self):
        return "<hbg.SteadyState period %r, residual %.2g>" % (self.period, self.residual)


class FrequencyResponse:
    """Model.ac's result: `frequencies` (Hz) and `response[output]`,
    complex NumPy arrays per unit of `input`, with magnitude() and
    phase() (degrees) of an output."""

    def __init__(self, d):
        import numpy
        self.input = d["input"]
        self.frequencies = d["frequencies"]
        self.response = {k: numpy.asarray(v, dtype=complex) for k, v in d["response"].items()}
        self.period, self.residual = d["period"], d["residual"]

    def magnitude(self, output):
        import numpy
        return numpy.abs(self.response[output])

    def phase(self, output):
        import numpy
        return numpy.degrees(numpy.angle(self.response[output]))


class Event:
    """One event: its time, the transitions taken, the modes passed
    through, the state, discrete values and outputs before and after (by
    name), the energy stored before and after, and what the jump removed."""

    def __init__(self, d, states, outputs, discretes):
        self.time = d["time"]
        self.transitions = list(d["transitions"])
        self.modes = list(d["modes"])
        self.before = dict(zip(states, d["before"]))
        self.after = dict(zip(states, d["after"]))
        self.outputs_before = dict(zip(outputs, d["outputs_before"]))
        self.outputs_after = dict(zip(outputs, d["outputs_after"]))
        self.discrete_before = dict(zip(discretes, d["discrete_before"]))
        self.discrete_after = dict(zip(discretes, d["discrete_after"]))
        self.energy_before = d["stored_before"]
        self.energy_after = d["stored_after"]
        self.removed = d["removed"]

    def __repr__(self):
        return "<hbg.Event t=%r %s>" % (self.time, "; ".join(self.transitions) or
                                        " -> ".join(self.modes))


class Result:
    """What a run produced: `time` and each output (result["vout"]) as
    NumPy arrays over the run's own memory (read-only), the events, the
    run's counters (`stats`), its warnings, and its error when it failed
    (`ok`, `error`)."""

    def __init__(self, result, parameters, model):
        self._result = result
        self.parameters = dict(parameters)
        self._model = model
        self.names = list(result.names)
        self._index = {n: i for i, n in enumerate(self.names)}

    ok = property(lambda self: self._result.ok)
    error = property(lambda self: self._result.error)
    warnings = property(lambda self: list(self._result.warnings))
    stats = property(lambda self: self._result.stats)
    output_names = property(lambda self: self.names[1:])
    state_names = property(lambda self: list(self._result.state_names))
    discrete_names = property(lambda self: list(self._result.discrete_names))
    final_state = property(lambda self: self._result.final_state)

    @property
    def error_text(self):
        """The error as hbgc prints it: `model `M` at t = 0.5 in mode ...: ...`."""
        return self.error

    @property
    def time(self):
        return self._result.column(0)

    def __getitem__(self, name):
        if name not in self._index:
            close = [n for n in self.names if name.lower() in n.lower() or n.lower() in name.lower()]
            raise KeyError("no output `%s`%s" % (name, "; did you mean `%s`?" % close[0]
                                                   if close else ""))
        return self._result.column(self._index[name])

    def __contains__(self, name):
        return name in self._index

    def keys(self):
        return list(self.names)

    @property
    def events(self):
        names = (self.state_names, self.output_names, self.discrete_names)
        return [Event(d, *names) for d in self._result.events]

    def to_pandas(self):
        """A pandas DataFrame indexed by time, a column per output."""
        import pandas
        return pandas.DataFrame({n: self[n] for n in self.output_names},
                                index=pandas.Index(self.time, name="time"))

    def svg(self, together=False, title=None):
        """The outputs against time as SVG, with the events as lines and the
        modes as bands, as `hbgc run --plot` draws them (`together`: one
        panel for all)."""
        return _hbg.plot_svg(self._result, title or "model " + self._model.name, together)

    def _repr_svg_(self):
        return self.svg() or None

    def plot(self, outputs=None, events=True, ax=None):
        """The outputs against time with matplotlib (each in a panel of its
        own unless `ax` is given), with the events as vertical lines.
        Returns the figure."""
        import matplotlib.pyplot as plt
        names = list(outputs or self.output_names)
        if ax is None:
            fig, axes = plt.subplots(len(names), 1, sharex=True, squeeze=False,
                                     figsize=(7, 1.8 * len(names) + 0.6))
            axes = [a[0] for a in axes]
        else:
            fig, axes = ax.figure, [ax] * len(names)
        times = [e.time for e in self.events] if events else []
        for a, n in zip(axes, names):
            a.plot(self.time, self[n], label=n)
            for t in times:
                a.axvline(t, color="0.8", linewidth=0.8, zorder=0)
            a.set_ylabel(n)
        axes[-1].set_xlabel("time")
        return fig

    def csv(self):
        """The trajectory as CSV, as `hbgc run` writes it."""
        return self._result.csv()

    def events_csv(self):
        """The event log as CSV, as `hbgc run --events` writes it."""
        return self._result.events_csv()

    def __repr__(self):
        return "<hbg.Result %s: %d rows, %d events%s>" % (
            self._model.name, len(self.time), self.stats["events"],
            "" if self.ok else ", failed: " + self.error)


class Simulation:
    """A run driven step by step (Model.simulation): set inputs between
    steps, advance to a time (events on the way handled), read outputs,
    states and the mode. The run starts (start()) at the first advance or
    read, with the inputs set before it. A failure raises
    SimulationError."""

    def __init__(self, sim, model):
        self._sim = sim
        self._model = model

    def set_input(self, name, value):
        self._sim.set_input(name, float(value))

    def input(self, name):
        return self._sim.input(name)

    def start(self):
        self._sim.start()

    def _started(self):
        if not self._sim.started:
            self._sim.start()
        return self._sim

    def advance(self, t):
        self._started().advance(float(t))

    started = property(lambda self: self._sim.started)
    time = property(lambda self: self._started().time)
    mode = property(lambda self: self._started().mode)
    steps = property(lambda self: self._sim.steps)

    def output(self, name):
        return self._started().output(name)

    @property
    def outputs(self):
        return dict(zip(self._model.output_names, self._started().outputs))

    def state(self, name=None):
        """The state by name, or all of it (an array in Model.state_names
        order)."""
        sim = self._started()
        return sim.state if name is None else sim.state_of(name)

    @property
    def events(self):
        """The events so far (without discrete values: Result.events has
        them)."""
        names = (self._model.state_names, self._model.output_names, [])
        return [Event(d, *names) for d in self._sim.events]
