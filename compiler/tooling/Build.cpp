//===- compiler/tooling/Build.cpp - Simulators compiled ahead of time -----===//
//
// Every mode to compile in is analysed as a run would analyse it on first
// entry, with its Jacobian (the stiff method may need it); their
// functions go into one object file under distinct names, the image
// refers to them by their place in the object's entry-point table, and
// the system's C++ compiler links the object with the simulator's main(),
// the runtime and KLU.
//
//===----------------------------------------------------------------------===//

#include "hbg/tooling/Build.h"

#include "FmuExport.h"
#include "../driver/ModelImpl.h"

#include "hbg/runtime/FmuLayout.h"

#include "hbg/codegen/CodeGen.h"
#include "hbg/runtime/Image.h"
#include "hbg/support/Diagnostics.h"

#include "hbg_build_config.h"

#include <cstdio>
#include <dlfcn.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace hbg::driver {

namespace {

namespace fs = std::filesystem;

/// The FSM states of mode text `text` (`j1=on, j2=closed`; junctions not
/// named keep their initial state). Throws CompileError.
std::vector<std::uint32_t> parseModeText(const runtime::Switching &sw, const std::string &text) {
  std::vector<std::uint32_t> q = sw.initialStates();
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    if (b == std::string::npos)
      continue;
    item = item.substr(b, e - b + 1);
    std::size_t eq = item.find('=');
    std::string name = item.substr(0, eq), state = eq == std::string::npos ? "" : item.substr(eq + 1);
    const std::vector<runtime::Junction> &js = sw.junctions();
    auto j = std::find_if(js.begin(), js.end(), [&](const auto &x) { return x.name == name; });
    if (j == js.end())
      throw CompileError("mode `" + text + "` names no switched junction `" + name + "`");
    auto s = std::find(j->stateNames.begin(), j->stateNames.end(), state);
    if (s == j->stateNames.end())
      throw CompileError("mode `" + text + "`: junction `" + name + "` has no state `" + state +
                         "`");
    q[static_cast<std::size_t>(j - js.begin())] =
        static_cast<std::uint32_t>(s - j->stateNames.begin());
  }
  return q;
}

/// Every combination of the states each junction's state machine can
/// reach from its initial state; empty when there are more than `bound`.
std::vector<std::vector<std::uint32_t>> reachableModes(const runtime::Switching &sw,
                                                       std::size_t bound, std::size_t &count) {
  std::vector<std::vector<std::uint32_t>> states;
  count = 1;
  for (const runtime::Junction &j : sw.junctions()) {
    std::vector<bool> seen(j.stateNames.size(), false);
    std::vector<std::uint32_t> todo{j.initial}, reached;
    seen[j.initial] = true;
    while (!todo.empty()) {
      std::uint32_t s = todo.back();
      todo.pop_back();
      reached.push_back(s);
      for (const runtime::Transition &t : j.transitions)
        if (t.from == s && !seen[t.to]) {
          seen[t.to] = true;
          todo.push_back(t.to);
        }
    }
    std::sort(reached.begin(), reached.end());
    // Saturates well above any bound (2^62).
    count = count > (std::size_t(1) << 62) / std::max<std::size_t>(reached.size(), 1)
                ? std::size_t(1) << 62
                : count * reached.size();
    states.push_back(std::move(reached));
  }
  std::vector<std::vector<std::uint32_t>> modes;
  if (count > bound)
    return modes;
  std::vector<std::size_t> digit(states.size(), 0);
  for (;;) {
    std::vector<std::uint32_t> q;
    for (std::size_t j = 0; j < states.size(); ++j)
      q.push_back(states[j][digit[j]]);
    modes.push_back(std::move(q));
    std::size_t j = 0;
    while (j < states.size() && ++digit[j] == states[j].size())
      digit[j++] = 0;
    if (j == states.size())
      break;
  }
  return modes;
}

/// A new private directory under the system's temporary directory.
fs::path makeTempDir(const std::string &prefix) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "XXXXXX")).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    throw std::runtime_error("cannot create a temporary directory `" + pattern + "`");
  return fs::path(buf.data());
}

/// Runs `args` (no shell) with its output into `log`; its exit status, or
/// -1 when it cannot start.
int runProgram(const std::vector<std::string> &args, const std::string &log,
               std::string &output) {
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    if (!std::freopen(log.c_str(), "w", stdout) || dup2(fileno(stdout), fileno(stderr)) < 0)
      _exit(127);
    std::vector<char *> argv;
    for (const std::string &a : args)
      argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0)
    return -1;
  std::ifstream in(log);
  output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The libraries a simulator links: the build tree's when the program
/// building it runs from the build tree; otherwise the installation's,
/// found relative to the program (an installation moved, or installed
/// with `cmake --install --prefix`) or where it was configured to go.
std::vector<std::string> libraries(const std::vector<std::string> &build,
                                   const std::vector<std::string> &install) {
  std::error_code ec;
  // The file this code is in: the program, or the shared object that
  // carries the compiler into another (the Python module).
  fs::path self = fs::canonical("/proc/self/exe", ec);
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&libraries), &info) != 0 && info.dli_fname &&
      info.dli_fname[0] == '/')
    self = fs::canonical(info.dli_fname, ec);
  fs::path tree = fs::weakly_canonical(kBuildTree, ec);
  std::string s = self.string(), t = tree.string();
  bool inBuild = !t.empty() && s.compare(0, t.size(), t) == 0 &&
                 (s.size() == t.size() || s[t.size()] == '/');
  if (inBuild)
    return build;
  fs::path near = self.parent_path() / kInstallLibraryDirFromBin;
  if (!fs::is_directory(near, ec))
    return install;
  std::string configured = kInstallLibraryDir, here = near.lexically_normal().string();
  std::vector<std::string> out;
  for (const std::string &l : install)
    out.push_back(l.compare(0, configured.size(), configured) == 0
                      ? here + l.substr(configured.size())
                      : l);
  return out;
}

} // namespace

std::vector<std::string> modesOfEventLog(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read `" + path + "`");
  std::string line;
  if (!std::getline(in, line) || line.rfind("event,time,phase,mode,", 0) != 0)
    throw std::runtime_error("`" + path + "` is not an event log (`hbgc run --events`)");
  std::set<std::string> seen;
  std::vector<std::string> modes;
  while (std::getline(in, line)) {
    // event,time,phase,"mode",...: the fourth field, quoted.
    std::size_t open = line.find(",\"");
    std::size_t close = open == std::string::npos ? open : line.find('"', open + 2);
    if (close == std::string::npos)
      throw std::runtime_error("`" + path + "`: a row without a mode: `" + line + "`");
    std::string phase = line.substr(0, open);
    phase = phase.substr(phase.find_last_of(',') + 1);
    if (phase == "remap")
      continue; // its `mode` field is the iteration's number
    std::string mode = line.substr(open + 2, close - open - 2);
    if (seen.insert(mode).second)
      modes.push_back(mode);
  }
  return modes;
}

namespace {

/// A model's image and the functions its object file will hold.
struct Prepared {
  runtime::ModelImage image;
  std::vector<codegen::FunctionSpec> specs;
  /// Each function of the image's programs: its entry in `specs`.
  std::map<const runtime::ModeFn *, std::uint32_t> index;
  BuildReport report;
};

Prepared prepare(const Model &model, const BuildOptions &opts) {
  const Model::Impl &impl = *model.impl();
  Prepared out;
  BuildReport &report = out.report;
  runtime::ModelImage &image = out.image;
  image.name = model.name();
  image.stateNames = impl.stateNames;
  image.outputNames = impl.outputNames;
  image.setup = impl.setup;
  for (const eq::Parameter &p : impl.initial->equations.parameters)
    image.structural.push_back(p.structural);
  image.numHeld = impl.initial->equations.numHeld;
  for (std::size_t k = 0; k < impl.graph->held.size(); ++k) {
    const bg::Held &h = impl.graph->held[k];
    if (h.kind == bg::Held::Kind::Discrete)
      image.discretes.push_back({h.name, std::uint32_t(k)});
    if (h.kind == bg::Held::Kind::Settle)
      image.settleSlot = std::int64_t(k);
  }
  image.switched = impl.switched;
  image.switching = impl.switching;
  image.storageLaws = impl.storageLaws;

  // The modes to compile in, by FSM states.
  std::vector<std::shared_ptr<ModeCode>> codes;
  std::map<const ModeCode *, std::int32_t> programOf;
  auto add = [&](const std::shared_ptr<ModeCode> &code) {
    auto [it, fresh] = programOf.emplace(code.get(), static_cast<std::int32_t>(codes.size()));
    if (fresh)
      codes.push_back(code);
    return it->second;
  };
  if (!impl.switched) {
    add(impl.initial);
  } else {
    std::vector<std::vector<std::uint32_t>> modes;
    std::size_t count = 0;
    if (opts.modesSource.empty()) {
      modes = reachableModes(impl.switching, opts.maxModes, count);
      if (modes.empty())
        throw CompileError("model `" + model.name() + "` can reach " +
                           (count == std::size_t(1) << 62 ? "more than 2^62"
                                                          : std::to_string(count)) +
                           " modes, more than --max-modes " + std::to_string(opts.maxModes) +
                           " allows: raise it, or compile in the modes a run visits "
                           "(`hbgc run --events events.csv`, then `--modes-from events.csv`)");
      image.missingModes = "every mode the junctions can reach is compiled in";
    } else {
      modes.push_back(impl.switching.initialStates());
      for (const std::string &text : opts.modes)
        modes.push_back(parseModeText(impl.switching, text));
      image.missingModes = "only " + opts.modesSource +
                           " are; rebuild with them and this one, or raise --max-modes to build "
                           "every reachable mode";
    }
    std::set<std::vector<std::uint32_t>> done;
    for (const std::vector<std::uint32_t> &q : modes) {
      if (!done.insert(q).second)
        continue;
      runtime::ImageMode m;
      m.states = q;
      try {
        m.program = add(impl.modeCode(impl.modeOf(q)));
      } catch (const CompileError &e) {
        m.why = e.what();
        ++report.unanalysable;
      }
      image.modes.push_back(std::move(m));
    }
  }

  if (opts.jitFallback && impl.switched) {
    // The sources, laid out as the simulator writes them out to compile
    // from: the model's directory under `model/`, the rest (the standard
    // library, other imports by name) under `lib/`.
    const SourceManager &sm = *impl.sources;
    fs::path home = fs::path(sm.name(1)).parent_path();
    for (std::uint32_t f = 1; f <= sm.numFiles(); ++f) {
      fs::path path(sm.name(f));
      fs::path rel = path.lexically_relative(home);
      bool inside = f == 1 || (!rel.empty() && *rel.begin() != "..");
      fs::path where = inside ? fs::path("model") / (f == 1 ? path.filename() : rel)
                              : fs::path("lib") / path.filename();
      image.sources.emplace_back(where.string(), std::string(sm.text(f)));
    }
  }

  // Their functions, named by program, and each one's place in the table.
  std::vector<codegen::FunctionSpec> &specs = out.specs;
  std::map<const runtime::ModeFn *, std::uint32_t> index;
  auto collect = [&](const TieredCode &code, std::size_t k) {
    for (std::size_t i = 0; i < code.specs.size(); ++i) {
      index[code.fns[i]] = static_cast<std::uint32_t>(specs.size());
      specs.push_back({"hbg_m" + std::to_string(k) + "_" + code.specs[i].name, code.specs[i].outputs});
    }
  };
  for (std::size_t k = 0; k < codes.size(); ++k) {
    const ModeCode &m = *codes[k];
    collect(m.code, k);
    collect(m.jacobianCode().code, k);
    auto p = std::make_shared<runtime::ImageProgram>();
    static_cast<runtime::ModeProgram &>(*p) = m;
    p->jacobianCode = static_cast<const runtime::JacobianProgram &>(m.jacobianCode());
    p->hasJacobian = true;
    image.programs.push_back(p);
  }
  report.programs = codes.size();
  report.functions = specs.size();
  // The copies' functions stand where the originals' do.
  std::map<const runtime::ModeFn *, std::uint32_t> &copyIndex = out.index;
  for (std::size_t k = 0; k < codes.size(); ++k) {
    std::vector<const runtime::ModeFn *> from = runtime::programFunctions(*codes[k]),
                                         to = runtime::programFunctions(*image.programs[k]);
    from.push_back(&codes[k]->jacobianCode().fn);
    to.push_back(&image.programs[k]->jacobianCode.fn);
    for (std::size_t i = 0; i < from.size(); ++i) {
      auto it = index.find(from[i]);
      copyIndex[to[i]] = it == index.end() ? UINT32_MAX : it->second;
    }
  }
  return out;
}

} // namespace

std::string imageOf(const Model &model, const BuildOptions &opts) {
  Prepared p = prepare(model, opts);
  return runtime::writeImage(
      p.image, [&](const runtime::ModeFn &f) { return p.index.at(&f); }, /*withTapes=*/true);
}

BuildReport buildSimulator(const Model &model, const BuildOptions &opts) {
  const Model::Impl &impl = *model.impl();
  Prepared prepared = prepare(model, opts);
  runtime::ModelImage &image = prepared.image;
  std::vector<codegen::FunctionSpec> &specs = prepared.specs;
  codegen::ObjectSpec spec;
  spec.dataSymbol = "hbg_image";
  spec.tableSymbol = "hbg_function_table";
  spec.data = runtime::writeImage(
      image, [&](const runtime::ModeFn &f) { return prepared.index.at(&f); },
      /*withTapes=*/false);

  fs::path dir = makeTempDir("hbg-build-");
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{dir};
  std::string object = (dir / "model.o").string();
  {
    std::lock_guard<std::mutex> lock(impl.initial->equations.ctx->mutex());
    codegen::CodeGenerator(codegen::CodeGenOptions{}).emitObject(*impl.initial->equations.ctx,
                                                                 specs, spec, object);
  }
  std::string binary = opts.output;
  std::vector<std::string> args{kSimulatorLinker};
  std::vector<std::string> libs;
  if (opts.fmu) {
    // A shared object exporting the fmi3 functions and nothing else.
    binary = (dir / (image.name + ".so")).string();
    std::string map = (dir / "fmi3.map").string();
    std::ofstream(map) << "{ global: fmi3*; local: *; };\n";
    args.insert(args.end(), {"-shared", "-Wl,--version-script=" + map, "-Wl,--no-undefined"});
    libs = libraries(kFmuLibrariesBuild, kFmuLibrariesInstall);
  } else if (!image.sources.empty()) {
    libs = libraries(kFallbackLibrariesBuild, kFallbackLibrariesInstall);
  } else {
    libs = libraries(kSimulatorLibrariesBuild, kSimulatorLibrariesInstall);
  }
  args.insert(args.end(), {"-o", binary, object});
  args.insert(args.end(), libs.begin(), libs.end());
  std::string output;
  int status = runProgram(args, (dir / "link.log").string(), output);
  if (status != 0)
    throw std::runtime_error("linking `" + binary + "` failed" +
                             (status < 0 ? " (cannot run `" + args[0] + "`)" : "") + ":\n" +
                             output);
  if (opts.fmu) {
    std::ifstream in(binary, std::ios::binary);
    std::string so((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string token = fmi::instantiationToken(fmi::imageHash(
        reinterpret_cast<const unsigned char *>(spec.data.data()), spec.data.size()));
    writeZip(opts.output, {{"modelDescription.xml", modelDescription(image, token)},
                           {"binaries/x86_64-linux/" + image.name + ".so", so}});
  }
  return prepared.report;
}

} // namespace hbg::driver
