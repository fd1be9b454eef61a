//===- tools/hbgc/Sweep.cpp - hbgc sweep ----------------------------------===//
//
// A model over many parameter sets: compiled once (plan()), each set run
// by the runtime's loop on a system of its own (runSet()), on all cores
// (--jobs) and, under mpirun, on every MPI rank (rank r runs the sets k
// with k mod ranks = r; rank 0 writes them in order, writeSummary()).
// Each run is reduced as its rows come to a summary line, so the sweep's
// memory does not grow with the runs' length. With --steady, each set's
// periodic steady state (Model::steady) takes the place of its run, on
// the same threads and ranks.
//
//===----------------------------------------------------------------------===//

#include "Command.h"

#include "../common/RunModel.h"
#include "../mpi/MpiPlugin.h"

#include "hbg/driver/Internal.h"
#include "hbg/runtime/Csv.h"
#include "hbg/runtime/ResultWriter.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>

namespace hbg::tools {

namespace {

/// `-p NAME=SPEC`: a grid (`a:step:b`, `a,b,c`, `a`) or, with --samples, a
/// range (`lo:hi`).
struct Spec {
  std::string name, text;
  std::vector<double> values; ///< grid points (lists and single values too)
  bool range = false;         ///< `lo:hi`
  double lo = 0, hi = 0;
};

struct SweepArgs {
  std::string file, output, trajectories, sampling = "lhs";
  std::vector<Spec> specs;
  std::vector<std::string> outputs;
  RunOptions run;
  std::size_t samples = 0, jobs = 0;
  std::uint64_t seed = 1;
  /// --steady: each set's periodic steady state instead of a run, over
  /// --period T (each set's source period otherwise) after --transient N
  /// periods.
  bool steady = false;
  std::optional<double> period;
  std::optional<std::size_t> transient;
};

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t at = s.find(sep); at != std::string::npos; at = s.find(sep, start)) {
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
  out.push_back(s.substr(start));
  return out;
}

Spec parseSpec(const std::string &text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError{"`-p` needs NAME=VALUES (a:step:b, a,b,c or lo:hi with --samples), got `" +
                     text + "`"};
  Spec s;
  s.name = text.substr(0, eq);
  s.text = text;
  std::string flag = "-p " + s.name;
  std::string values = text.substr(eq + 1);
  if (values.find(':') != std::string::npos) {
    std::vector<std::string> parts = split(values, ':');
    if (parts.size() == 2) {
      s.range = true;
      s.lo = parseNumber(flag, parts[0]);
      s.hi = parseNumber(flag, parts[1]);
      if (!(s.hi >= s.lo))
        throw UsageError{"`" + flag + "`: the range " + values + " ends before it begins"};
      return s;
    }
    if (parts.size() != 3)
      throw UsageError{"`" + flag + "`: a grid is a:step:b, got `" + values + "`"};
    double a = parseNumber(flag, parts[0]), step = parseNumber(flag, parts[1]),
           b = parseNumber(flag, parts[2]);
    if (!(step > 0) || !(b >= a) || !std::isfinite(a) || !std::isfinite(b))
      throw UsageError{"`" + flag + "`: a grid a:step:b needs step > 0 and b >= a, got `" +
                       values + "`"};
    double count = std::floor((b - a) / step * (1 + 1e-12) + 1e-9);
    if (count > 1e6)
      throw UsageError{"`" + flag + "`: " + values + " has more than 1000000 points"};
    // Each point as the shortest decimal within a billionth of a step of
    // a + k step: 0.1:0.1:0.5 gives 0.3, not 0.30000000000000004.
    for (double k = 0; k <= count; ++k) {
      double v = a + k * step;
      for (int digits = 1; digits <= 17; ++digits) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        double shortest = std::strtod(buf, nullptr);
        if (std::abs(shortest - v) <= 1e-9 * step) {
          v = shortest == 0 ? 0.0 : shortest;
          break;
        }
      }
      s.values.push_back(v);
    }
    return s;
  }
  for (const std::string &v : split(values, ','))
    s.values.push_back(parseNumber(flag, v));
  return s;
}

/// splitmix64: the same numbers on every machine and every rank.
struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
};

/// The parameter sets: the grid's points (the first parameter varying
/// slowest), or `samples` points over the ranges, by Latin hypercube (each
/// range cut into `samples` strata, each stratum used once) or Monte Carlo.
std::vector<std::vector<double>> parameterSets(const SweepArgs &a) {
  std::vector<std::vector<double>> sets;
  if (a.samples == 0) {
    for (const Spec &s : a.specs)
      if (s.range)
        throw UsageError{"`-p " + s.text +
                         "`: a range is sampled with --samples N; a grid needs a step "
                         "(lo:step:hi)"};
    double total = 1;
    for (const Spec &s : a.specs)
      total *= static_cast<double>(s.values.size());
    if (total > 1e7)
      throw UsageError{"the grid has " + num(total) + " points; at most 10000000"};
    sets.push_back({});
    for (const Spec &s : a.specs) {
      std::vector<std::vector<double>> next;
      for (const std::vector<double> &base : sets)
        for (double v : s.values) {
          next.push_back(base);
          next.back().push_back(v);
        }
      sets = std::move(next);
    }
    return sets;
  }
  Random rng{a.seed};
  std::size_t n = a.samples;
  sets.assign(n, std::vector<double>(a.specs.size()));
  for (std::size_t j = 0; j < a.specs.size(); ++j) {
    const Spec &s = a.specs[j];
    if (!s.range && s.values.size() != 1)
      throw UsageError{"with --samples, `-p " + s.name +
                       "` takes a range lo:hi (or one value), not a grid or a list"};
    std::vector<std::size_t> strata(n);
    for (std::size_t i = 0; i < n; ++i)
      strata[i] = i;
    for (std::size_t i = n; i > 1; --i) // Fisher-Yates
      std::swap(strata[i - 1], strata[rng.below(i)]);
    for (std::size_t i = 0; i < n; ++i) {
      double u = a.sampling == "lhs"
                     ? (static_cast<double>(strata[i]) + rng.uniform()) / static_cast<double>(n)
                     : rng.uniform();
      sets[i][j] = s.range ? s.lo + u * (s.hi - s.lo) : s.values[0];
    }
  }
  return sets;
}

/// One run reduced to its summary: final value, minimum and maximum of
/// each chosen output.
struct Summary {
  std::vector<double> final, low, high;
};

/// The MPI ranks, when hbgc runs under mpirun (libhbg_mpi.so loaded).
const HbgMpi *startMpi() {
  const char *size = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!size)
    size = std::getenv("PMI_SIZE");
  if (!size)
    return nullptr;
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("HBG_MPI_PLUGIN"); env && *env)
    candidates.push_back(env);
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec)
    candidates.push_back((exe.parent_path() / ".." / "lib" / "hbg" / "libhbg_mpi.so").string());
#ifdef HBG_MPI_PLUGIN_BUILD_PATH
  candidates.push_back(HBG_MPI_PLUGIN_BUILD_PATH);
#endif
#ifdef HBG_MPI_PLUGIN_INSTALL_PATH
  candidates.push_back(HBG_MPI_PLUGIN_INSTALL_PATH);
#endif
  std::string why;
  for (const std::string &path : candidates) {
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
      const char *e = dlerror();
      why += "\n  " + (e ? std::string(e) : path);
      continue;
    }
    auto init = reinterpret_cast<HbgMpiInit>(dlsym(handle, "hbg_mpi_init"));
    if (!init) {
      why += "\n  " + path + ": no symbol hbg_mpi_init";
      continue;
    }
    const HbgMpi *mpi = init(nullptr, nullptr);
    if (!mpi)
      throw std::runtime_error("MPI_Init failed");
    return mpi;
  }
  throw std::runtime_error("running under mpirun, but MPI (libhbg_mpi.so) cannot be loaded; "
                           "tried:" + why);
}

/// A stream that discards (the diagnostics of ranks other than 0).
struct NullStream : std::ostream {
  NullStream() : std::ostream(nullptr) {}
};

/// What every run of a sweep shares: the compiled model, what each swept
/// name is, and the outputs summarised.
struct Plan {
  std::optional<Model> model;
  /// Per swept name: compiled in (structural, one value).
  std::vector<bool> isStructural;
  /// The outputs summarised, by index in the model's outputs.
  std::vector<std::size_t> chosen;
};

/// Compiles the model (a structural parameter given one value compiled
/// in) and checks the swept names and --outputs against it; false, with
/// the error on `err`, when one is wrong.
bool plan(const SweepArgs &a, const Common &common, std::ostream &err, Plan &out) {
  std::map<std::string, double> fixed;
  for (const Spec &sp : a.specs)
    if (!sp.range && sp.values.size() == 1)
      fixed[sp.name] = sp.values[0];
  driver::Session session(sessionOptions(common, fixed), err);
  if (!session.load(a.file))
    return false;
  if (!a.steady) // a steady state runs for periods, not to an end
    requireEndTime(a.run, session.frontend().graph->experiment.tEnd.valid(), "sweep");
  out.model = session.compile(Compiler());
  if (!out.model)
    return false;
  const Model &model = *out.model;
  // Names: each swept one a parameter or an input, none structural.
  const std::vector<std::string> &params = model.parameterNames(), &inputs = model.inputNames();
  for (const Spec &s : a.specs) {
    bool input = std::find(inputs.begin(), inputs.end(), s.name) != inputs.end();
    if (!input && std::find(params.begin(), params.end(), s.name) == params.end()) {
      std::vector<std::string> all = params;
      all.insert(all.end(), inputs.begin(), inputs.end());
      std::string best = closestName(s.name, all);
      err << "hbgc: error: model `" << model.name() << "` has no parameter `" << s.name << "`"
          << (best.empty() ? "" : "; did you mean `" + best + "`?") << "\n";
      return false;
    }
    bool structural = !input && model.structural(s.name);
    if (structural && (s.range || s.values.size() != 1)) {
      err << "hbgc: error: parameter `" << s.name
          << "` is structural (`for` loops, `if` blocks or indices are computed from it): "
             "a sweep runs one compiled model, so it takes one value of it; run a sweep per "
             "value (`-p "
          << s.name << "=5`)\n";
      return false;
    }
    out.isStructural.push_back(structural);
  }
  const std::vector<std::string> &outputNames = model.outputNames();
  if (a.outputs.empty())
    for (std::size_t i = 0; i < outputNames.size(); ++i)
      out.chosen.push_back(i);
  // Each --outputs value is an output's name, or names separated by commas.
  std::vector<std::string> wanted;
  for (const std::string &value : a.outputs) {
    if (std::find(outputNames.begin(), outputNames.end(), value) != outputNames.end())
      wanted.push_back(value);
    else
      for (const std::string &o : split(value, ','))
        wanted.push_back(o);
  }
  for (const std::string &o : wanted) {
    auto it = std::find(outputNames.begin(), outputNames.end(), o);
    if (it == outputNames.end()) {
      std::string best = closestName(o, outputNames);
      err << "hbgc: error: model `" << model.name() << "` has no output `" << o << "`"
          << (best.empty() ? "" : "; did you mean `" + best + "`?") << "\n";
      return false;
    }
    out.chosen.push_back(static_cast<std::size_t>(it - outputNames.begin()));
  }
  return true;
}

/// Set `k`'s trajectory file, DIR/run_<k>.csv (--trajectories).
std::ofstream openTrajectory(const SweepArgs &a, std::size_t k) {
  std::string path = a.trajectories + "/run_" + std::to_string(k) + ".csv";
  std::ofstream file(path);
  if (!file)
    throw std::runtime_error("cannot write its trajectory `" + path + "`");
  return file;
}

/// A run's part of its summary line: each chosen output's final value,
/// minimum and maximum (empty when the run failed), then its events and
/// steps. `status` becomes the run's error when it fails. With
/// --trajectories, its rows go to DIR/run_<k>.csv as they come.
std::string runFields(const SweepArgs &a, const Plan &plan, std::size_t k,
                      const std::map<std::string, double> &overrides, std::string &status) {
  const Model &model = *plan.model;
  const std::vector<std::string> &outputNames = model.outputNames();
  const std::vector<std::size_t> &chosen = plan.chosen;
  Summary sum;
  runtime::RunRecord r;
  try {
    // The experiment block reads no input (sema refuses it), so the
    // inputs among the overrides leave its settings alone.
    runtime::SimulateOptions o =
        a.run.cli.apply(model.experiment(overrides).apply(a.run.settings));
    std::vector<double> p = model.parameterValues(overrides);
    std::vector<double> x0 = model.initialState(p);
    o.nominal = model.nominalState(p);
    std::size_t n = chosen.size();
    sum.final.assign(n, std::numeric_limits<double>::quiet_NaN());
    sum.low.assign(n, std::numeric_limits<double>::infinity());
    sum.high.assign(n, -std::numeric_limits<double>::infinity());
    std::ofstream trajectory;
    std::optional<runtime::ResultWriter> writer;
    if (!a.trajectories.empty()) {
      trajectory = openTrajectory(a, k);
      std::vector<std::string> names{"time"};
      names.insert(names.end(), outputNames.begin(), outputNames.end());
      writer.emplace(trajectory, runtime::ResultFormat::Csv, names);
    }
    o.onRow = [&](const double *row) {
      for (std::size_t c = 0; c < n; ++c) {
        double v = row[chosen[c] + 1];
        sum.final[c] = v;
        sum.low[c] = std::min(sum.low[c], v);
        sum.high[c] = std::max(sum.high[c], v);
      }
      if (writer)
        writer->row(row);
    };
    o.keepEvents = 0;
    std::unique_ptr<runtime::ProgramSystem> system = driver::systemOf(model, std::move(p));
    runtime::simulate(*system, x0, o, r);
    if (!r.error.empty())
      status = r.errorText(model.name());
    if (trajectory.is_open()) {
      trajectory.close();
      if (!trajectory)
        status = "cannot write its trajectory into `" + a.trajectories + "`";
    }
  } catch (const std::exception &e) {
    status = e.what();
  }
  std::string fields;
  for (std::size_t c = 0; c < chosen.size(); ++c)
    fields += status == "ok" ? "," + exactText(sum.final[c]) + "," + exactText(sum.low[c]) + "," +
                                   exactText(sum.high[c])
                             : std::string(",,,");
  fields += "," + std::to_string(r.events.size() + r.eventsDropped) + "," +
            std::to_string(r.steps);
  return fields;
}

/// A steady state's part of its summary line (--steady): each chosen
/// output's mean, RMS, minimum, maximum and peak-to-peak over the period
/// (empty when it failed), then the period, the final residual, the
/// Newton iterations and the modes of the period in order. `status`
/// becomes the error when it fails. With --trajectories, the period's
/// rows go to DIR/run_<k>.csv.
std::string steadyFields(const SweepArgs &a, const Plan &plan, std::size_t k,
                         const std::map<std::string, double> &overrides, std::string &status) {
  const Model &model = *plan.model;
  SteadyState st;
  try {
    SteadyOptions so;
    so.simulation = a.run.cli.apply(model.experiment(overrides).apply(a.run.settings));
    so.rtol = a.run.cli.rtol.value_or(so.rtol);
    so.period = a.period;
    so.transientPeriods = a.transient.value_or(so.transientPeriods);
    st = model.steady(overrides, so);
    if (!st.ok())
      status = st.error;
    if (!a.trajectories.empty() && !st.rows.columns.empty()) {
      std::ofstream trajectory = openTrajectory(a, k);
      st.rows.writeCsv(trajectory);
      trajectory.close();
      if (!trajectory)
        status = "cannot write its trajectory into `" + a.trajectories + "`";
    }
  } catch (const std::exception &e) {
    status = e.what();
  }
  bool ok = status == "ok";
  std::string fields;
  for (std::size_t c : plan.chosen) {
    if (!ok || c >= st.figures.size()) {
      fields += ",,,,,";
      continue;
    }
    const OutputFigures &f = st.figures[c];
    for (double v : {f.mean, f.rms, f.min, f.max, f.peakToPeak()})
      fields += "," + exactText(v);
  }
  std::string modes;
  for (std::size_t i = 0; ok && i < st.modes.size(); ++i)
    modes += (i ? " | " : "") + st.modes[i];
  fields += "," + (st.period > 0 ? exactText(st.period) : std::string()) + "," +
            (st.iterations.empty() ? std::string() : exactText(st.residual)) + "," +
            std::to_string(st.iterations.size()) + "," + runtime::csvField(modes);
  return fields;
}

/// Runs set `k` (`set`: a value per swept name) and returns its summary
/// line: index, values, status, then the run's (runFields) or the steady
/// state's (steadyFields) figures.
std::string runSet(const SweepArgs &a, const Plan &plan, std::size_t k,
                   const std::vector<double> &set) {
  std::map<std::string, double> overrides; // parameters and inputs, not those compiled in
  for (std::size_t j = 0; j < set.size(); ++j)
    if (!plan.isStructural[j])
      overrides[a.specs[j].name] = set[j];
  std::string status = "ok";
  std::string fields = a.steady ? steadyFields(a, plan, k, overrides, status)
                                : runFields(a, plan, k, overrides, status);
  std::replace(status.begin(), status.end(), '\n', ' ');
  std::string line = std::to_string(k);
  for (double v : set)
    line += "," + exactText(v);
  return line + "," + runtime::csvField(status) + fields + "\n";
}

/// Runs this rank's sets (`mine`) on `jobs` threads; under MPI, rank 0
/// gathers every rank's lines. Each line is kept by its set's index.
std::vector<std::string> runSets(const SweepArgs &a, const Plan &plan,
                                 const std::vector<std::vector<double>> &sets,
                                 const std::vector<std::size_t> &mine, const HbgMpi *mpi) {
  std::vector<std::string> lines(sets.size());
  std::atomic<std::size_t> nextRun{0};
  auto worker = [&] {
    for (std::size_t i = nextRun++; i < mine.size(); i = nextRun++)
      lines[mine[i]] = runSet(a, plan, mine[i], sets[mine[i]]);
  };
  std::size_t jobs = a.jobs ? a.jobs
                            : (mpi ? 1 : std::max(1u, std::thread::hardware_concurrency()));
  jobs = std::min(jobs, std::max<std::size_t>(mine.size(), 1));
  std::vector<std::thread> threads;
  for (std::size_t j = 1; j < jobs; ++j)
    threads.emplace_back(worker);
  worker();
  for (std::thread &t : threads)
    t.join();
  if (!mpi)
    return lines;
  std::string mineText;
  for (std::size_t k : mine)
    mineText += lines[k];
  char *all = nullptr;
  unsigned long size = 0;
  int gathered = mpi->gather(mineText.data(), mineText.size(), &all, &size);
  if (gathered == 2)
    throw std::runtime_error("the summaries exceed the 2 GB MPI gathers at once; sweep "
                             "fewer sets per call");
  if (gathered != 0)
    throw std::runtime_error("MPI could not gather the runs' summaries");
  if (mpi->rank == 0) {
    std::istringstream in(std::string(all, size));
    std::free(all);
    std::string line;
    while (std::getline(in, line)) {
      std::size_t k = std::stoul(line.substr(0, line.find(',')));
      lines.at(k) = line + "\n";
    }
  }
  return lines;
}

/// Rank 0's summary: the header and every set's line, in order; the exit
/// status (1 when a run failed or the summary could not be written).
int writeSummary(const SweepArgs &a, const Plan &plan, const std::vector<std::string> &lines,
                 Output &out) {
  // Failed runs, from their lines (the status follows the index and the
  // values, which hold no commas).
  std::size_t failed = 0;
  for (const std::string &l : lines) {
    std::size_t at = 0;
    for (std::size_t c = 0; c <= a.specs.size(); ++c)
      at = l.find(',', at) + 1;
    if (l.compare(at, 3, "ok,") != 0)
      ++failed;
  }
  std::ostream &os = out.stream();
  os << "run";
  for (const Spec &s : a.specs)
    os << "," << runtime::csvField(s.name);
  os << ",status";
  std::vector<const char *> figures{".final", ".min", ".max"};
  if (a.steady)
    figures = {".mean", ".rms", ".min", ".max", ".peak_to_peak"};
  for (std::size_t c : plan.chosen)
    for (const char *what : figures)
      os << "," << runtime::csvField(plan.model->outputNames()[c] + what);
  os << (a.steady ? ",period,residual,iterations,modes\n" : ",events,steps\n");
  for (const std::string &l : lines)
    os << l;
  bool written = out.finish();
  if (failed > 0) {
    std::cerr << "hbgc: error: " << failed << " of " << lines.size()
              << (a.steady ? " steady states" : " runs")
              << " failed; their status column says why\n";
    return 1;
  }
  return written ? 0 : 1;
}

int sweep(SweepArgs &a, const Common &common) {
  if (a.file.empty())
    throw UsageError{"no input file"};
  if (a.specs.empty())
    throw UsageError{"`sweep` needs at least one `-p NAME=VALUES`"};
  checkRunOptions(a.run);
  if (!a.steady && (a.period || a.transient))
    throw UsageError{std::string("`") + (a.period ? "--period" : "--transient") +
                     "` is an option of steady-state sweeps (`--steady`)"};
  std::vector<std::vector<double>> sets = parameterSets(a);
  for (std::size_t i = 0; i < a.specs.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (a.specs[i].name == a.specs[j].name)
        throw UsageError{"`-p " + a.specs[i].name + "` given twice; give its values once"};
  const HbgMpi *mpi = startMpi();
  int rank = mpi ? mpi->rank : 0, ranks = mpi ? mpi->size : 1;
  if (mpi && a.file == "-")
    throw UsageError{"under mpirun the model cannot come from standard input (only rank 0 "
                     "reads it); name its file"};
  struct Finalize {
    const HbgMpi *mpi;
    ~Finalize() {
      if (mpi)
        mpi->finalize();
    }
  } finalize{mpi};
  NullStream quiet;
  std::ostream &err = rank == 0 ? std::cerr : quiet;

  Plan p;
  if (!plan(a, common, err, p))
    return 1;
  if (!a.trajectories.empty()) { // on every rank: each writes its own runs
    std::error_code ec;
    std::filesystem::create_directories(a.trajectories, ec);
    if (ec) {
      err << "hbgc: error: cannot make the directory `" << a.trajectories
          << "`: " << ec.message() << "\n";
      return 1;
    }
  }
  Output out;
  bool opened = rank != 0 || a.output.empty() || a.output == "-" || out.open(a.output);
  if (mpi ? !mpi->allOk(opened) : !opened)
    return 1;

  // This rank's sets: k with k mod ranks = rank.
  std::vector<std::size_t> mine;
  for (std::size_t k = static_cast<std::size_t>(rank); k < sets.size();
       k += static_cast<std::size_t>(ranks))
    mine.push_back(k);
  std::vector<std::string> lines = runSets(a, p, sets, mine, mpi);
  if (rank != 0)
    return 0;
  return writeSummary(a, p, lines, out);
}

} // namespace

Runner declareSweep(CLI::App *cmd, Common &common) {
  cmd->footer(
      "Compiles FILE once and runs it for every parameter set: the grid of the `-p` values "
      "(a:step:b, a,b,c or a; the first parameter varies slowest), or --samples N sets over the "
      "ranges lo:hi by Latin hypercube (default) or Monte Carlo. The runs share the cores "
      "(--jobs); under `mpirun -n K hbgc sweep ...` they are spread over the K ranks too, and "
      "rank 0 writes the same file a run on one machine writes. One CSV line per run: its "
      "index, parameter values and status (`ok`, or why it failed), then each chosen output's "
      "final value, minimum and maximum, its event count and its steps. With --steady, each "
      "set's periodic steady state instead (as `hbgc steady` finds it): each output's mean, "
      "RMS, minimum, maximum and peak-to-peak over the period, then the period, the residual, "
      "the Newton iterations and the modes in the period (docs/cli.md).");
  auto a = std::make_shared<SweepArgs>();
  addModelArguments(*cmd, a->file, common);
  addRepeated(
      *cmd, "-p,--parameter", [a](const std::string &spec) { a->specs.push_back(parseSpec(spec)); },
      "the values of a parameter or input: a:step:b, a,b,c, one value, or with --samples a range "
      "lo:hi (repeatable)",
      "NAME=VALUES");
  addValue(
      *cmd, "--samples",
      [a](const std::string &text) {
        a->samples = static_cast<std::size_t>(
            parseWhole("--samples", text, 1, 1e7, "a whole number from 1 to 10000000"));
      },
      "sample N parameter sets over the ranges instead of a grid", "N");
  addValue(
      *cmd, "--sampling",
      [a](const std::string &m) {
        if (m != "lhs" && m != "mc")
          throw UsageError{"unknown sampling `" + m + "`; expected lhs or mc"};
        a->sampling = m;
      },
      "lhs (Latin hypercube, default) or mc (Monte Carlo)", "M");
  addValue(
      *cmd, "--seed",
      [a](const std::string &text) {
        a->seed = static_cast<std::uint64_t>(
            parseWhole("--seed", text, 0, 1.8e19, "a whole number of 0 or more"));
      },
      "the sampling's seed (default 1): the same seed, the same sets", "S");
  addValue(
      *cmd, "--jobs,-j",
      [a](const std::string &text) {
        a->jobs = static_cast<std::size_t>(
            parseWhole("--jobs", text, 1, 4096, "a whole number from 1 to 4096"));
      },
      "runs at once (default: the cores; 1 per rank under mpirun)", "N");
  addRepeated(
      *cmd, "--outputs", [a](const std::string &list) { a->outputs.push_back(list); },
      "the outputs summarised: names separated by commas, or one name each time given (a name "
      "with a comma, `max(a, b)`) (default: all)",
      "A,B");
  addValue(
      *cmd, "-o,--output", [a](const std::string &o) { a->output = o; },
      "write the summary to FILE (`-`: standard output, the default)", "FILE");
  addValue(
      *cmd, "--trajectories", [a](const std::string &d) { a->trajectories = d; },
      "also write each run's trajectory as CSV to DIR/run_<index>.csv", "DIR");
  cmd->add_flag("--steady", a->steady,
                "each set's periodic steady state instead of a run (rtol 1e-12 unless given)");
  addValue(
      *cmd, "--period",
      [a](const std::string &text) {
        double v = parseNumber("--period", text);
        if (!(v > 0) || !std::isfinite(v))
          throw UsageError{"`--period` must be positive"};
        a->period = v;
      },
      "with --steady: the period T (default: each set's common period of the model's "
      "periodic sources)",
      "T");
  addValue(
      *cmd, "--transient",
      [a](const std::string &text) {
        a->transient = static_cast<std::size_t>(
            parseWhole("--transient", text, 1, 1e9, "a whole number from 1"));
      },
      "with --steady: periods of transient before shooting (default 5)", "N");
  addSimulationSettings(*cmd, a->run);
  return [a, &common] { return sweep(*a, common); };
}

const Command kSweep = {"sweep",
                        "run a model over a grid or a sample of parameter values, on all cores",
                        declareSweep};

} // namespace hbg::tools
