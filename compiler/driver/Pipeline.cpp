//===- compiler/driver/Pipeline.cpp - The compiler's stages in order ------===//

#include "hbg/driver/Pipeline.h"

#include "hbg/flatten/Flatten.h"
#include "hbg/sema/Sema.h"
#include "hbg/syntax/Parser.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>

namespace hbg::driver {

bool parseStage(const std::string &name, Stage &out) {
  static const std::pair<const char *, Stage> stages[] = {
      {"ast", Stage::Ast},           {"bondgraph", Stage::BondGraph},
      {"causality", Stage::Causality}, {"equations", Stage::Equations},
      {"llvm", Stage::LLVM},
  };
  for (const auto &[text, stage] : stages)
    if (name == text) {
      out = stage;
      return true;
    }
  return false;
}

namespace {
/// Times one pass when timings are requested.
class PassTimer {
public:
  PassTimer(const PipelineOptions &opts, const char *name)
      : out_(opts.timings), name_(name), start_(std::chrono::steady_clock::now()) {}
  ~PassTimer() {
    if (!out_)
      return;
    std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start_;
    *out_ << "pass " << name_ << ": " << ms.count() << " ms\n";
  }

private:
  std::ostream *out_;
  const char *name_;
  std::chrono::steady_clock::time_point start_;
};

/// Parses `--mode` text over `mode`; problems become diagnostics.
bool parseMode(const bg::BondGraph &g, const std::string &text, DiagnosticEngine &diags,
               bg::Mode &mode) {
  bg::ModeError err;
  bg::Mode parsed;
  if (bg::parseMode(g, text, mode, parsed, err)) {
    mode = std::move(parsed);
    return true;
  }
  reportModeError(g, err, diags);
  return false;
}
} // namespace

void reportModeError(const bg::BondGraph &g, const bg::ModeError &err, DiagnosticEngine &diags) {
  switch (err.kind) {
  case bg::ModeError::Syntax:
    diags.report(DiagKind::ModeSyntax, {}, {err.text});
    break;
  case bg::ModeError::UnknownJunction:
    if (err.suggestion.empty())
      diags.report(DiagKind::ModeUnknownJunction, {}, {err.name});
    else
      diags.report(DiagKind::ModeUnknownJunctionSuggest, {}, {err.name, err.suggestion});
    break;
  case bg::ModeError::NotSwitched:
    diags.report(DiagKind::ModeNotSwitched, g.element(err.element).range, {err.name});
    break;
  case bg::ModeError::BadValue:
    diags.report(DiagKind::ModeBadValue, {}, {err.name, err.value});
    break;
  }
}

std::vector<std::string> libraryDirs(const std::vector<std::string> &libPath) {
  std::vector<std::string> dirs = libPath;
  if (const char *env = std::getenv("HBG_PATH")) {
    std::string list = env;
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t colon = list.find(':', start);
      std::string dir = list.substr(start, colon == std::string::npos ? std::string::npos
                                                                      : colon - start);
      if (!dir.empty())
        dirs.push_back(dir);
      if (colon == std::string::npos)
        break;
      start = colon + 1;
    }
  }
  // The standard library: next to the running program's installation
  // (bin/../share/hbg/stdlib), else the source tree's, else the
  // installation's path (a program embedding an installed hbg).
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> stdlib;
  if (!ec)
    stdlib.push_back((exe.parent_path() / ".." / "share" / "hbg" / "stdlib").string());
  stdlib.push_back(HBG_STDLIB_DIR);
#ifdef HBG_STDLIB_INSTALL_DIR
  stdlib.push_back(HBG_STDLIB_INSTALL_DIR);
#endif
  for (const std::string &dir : stdlib)
    if (std::filesystem::is_directory(dir, ec)) {
      dirs.push_back(dir);
      return dirs;
    }
  dirs.push_back(HBG_STDLIB_DIR); // named in "not found" messages
  return dirs;
}

namespace {
/// Parses the files `root` imports, and theirs, each once: a file reached
/// again through another import is the same file; reached again from
/// itself, a cycle. False after errors (reported at the import).
class Importer {
public:
  Importer(SourceManager &sm, DiagnosticEngine &diags, std::vector<std::string> dirs)
      : sm_(sm), diags_(diags), dirs_(std::move(dirs)) {}

  bool load(const ast::File &root) {
    stack_.push_back(canonical(sm_.name(root.fileId)));
    bool ok = visit(root);
    stack_.pop_back();
    return ok;
  }
  /// The imported files, each after those it imports.
  std::vector<const ast::File *> files() const {
    std::vector<const ast::File *> out;
    for (const std::unique_ptr<ast::File> &f : files_)
      out.push_back(f.get());
    return out;
  }

private:
  static std::string canonical(const std::string &path) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
    return ec ? path : p.string();
  }

  bool visit(const ast::File &file) {
    bool ok = true;
    std::filesystem::path here = std::filesystem::path(sm_.name(file.fileId)).parent_path();
    for (const ast::Import &im : file.imports) {
      std::string path;
      if (im.isPath) {
        std::filesystem::path p(im.name);
        path = (p.is_relative() ? here / p : p).string();
      } else {
        for (const std::string &dir : dirs_) {
          std::filesystem::path candidate = std::filesystem::path(dir) / (im.name + ".hbg");
          std::error_code ec;
          if (std::filesystem::is_regular_file(candidate, ec)) {
            path = candidate.string();
            break;
          }
        }
        if (path.empty()) {
          std::string searched;
          for (const std::string &dir : dirs_)
            searched += (searched.empty() ? "`" : ", `") + dir + "`";
          diags_.report(DiagKind::ImportNotFound, im.range, {im.name, searched});
          ok = false;
          continue;
        }
      }
      std::string key = canonical(path);
      auto onStack = std::find(stack_.begin(), stack_.end(), key);
      if (onStack != stack_.end()) {
        std::string cycle;
        for (auto it = onStack; it != stack_.end(); ++it)
          cycle += "`" + std::filesystem::path(*it).filename().string() + "` -> ";
        cycle += "`" + std::filesystem::path(key).filename().string() + "`";
        diags_.report(DiagKind::ImportCycle, im.range, {cycle});
        ok = false;
        continue;
      }
      if (!loaded_.insert(key).second)
        continue; // imported before, through another file
      std::string text, why;
      if (!readFile(path, text, why)) {
        diags_.report(DiagKind::CannotOpenFile, im.range, {path, why});
        ok = false;
        continue;
      }
      std::uint32_t id = sm_.addBuffer(path, std::move(text));
      std::unique_ptr<ast::File> parsed = syntax::parse(id, sm_, diags_);
      if (!parsed) {
        diags_.note(DiagKind::ImportedHere, im.range, {path});
        ok = false;
        continue;
      }
      for (const std::unique_ptr<ast::Model> &m : parsed->models)
        if (!m->component) {
          diags_.report(DiagKind::ImportedModel, m->nameRange, {m->name});
          diags_.note(DiagKind::ImportedHere, im.range, {path});
          ok = false;
        }
      stack_.push_back(key);
      ok = visit(*parsed) && ok;
      stack_.pop_back();
      files_.push_back(std::move(parsed));
    }
    return ok;
  }

  SourceManager &sm_;
  DiagnosticEngine &diags_;
  std::vector<std::string> dirs_;
  std::vector<std::string> stack_;
  std::set<std::string> loaded_;
  std::vector<std::unique_ptr<ast::File>> files_;
};
} // namespace

namespace {

/// The names a message quotes: `mass.body` in "initial value `p0` of
/// `mass.body` is ignored".
std::vector<std::string> quotedNames(const std::string &message) {
  std::vector<std::string> out;
  for (std::size_t open = message.find('`'); open != std::string::npos;) {
    std::size_t close = message.find('`', open + 1);
    if (close == std::string::npos)
      break;
    out.push_back(message.substr(open + 1, close - open - 1));
    open = message.find('`', close + 1);
  }
  return out;
}

bool within(SourceRange inner, SourceRange outer) {
  return inner.valid() && outer.valid() && inner.begin.file == outer.begin.file &&
         inner.begin.offset >= outer.begin.offset &&
         inner.begin.offset < outer.begin.offset + outer.length;
}

} // namespace

DiagnosticEngine::ContextFn instanceContext(const std::vector<ast::InstanceInfo> &instances) {
  auto all = std::make_shared<std::vector<ast::InstanceInfo>>(instances);
  return [all](const Diagnostic &d) {
    std::vector<Diagnostic> notes;
    // Flattening's own errors name their instances already.
    for (const Diagnostic &n : d.notes)
      if (n.kind == DiagKind::InInstance)
        return notes;
    // The instances of the component the line is in; of those, the one
    // whose path begins a name the message quotes (`d1.j` for `d1`), the
    // longest such; or the only one.
    const ast::InstanceInfo *found = nullptr;
    std::size_t candidates = 0;
    const ast::InstanceInfo *only = nullptr;
    std::vector<std::string> names = quotedNames(d.message);
    for (const Diagnostic &n : d.notes)
      for (std::string &name : quotedNames(n.message))
        names.push_back(std::move(name));
    for (const ast::InstanceInfo &in : *all) {
      if (!within(d.range, in.body))
        continue;
      ++candidates;
      only = &in;
      for (const std::string &name : names)
        if (name.size() > in.path.size() && name.compare(0, in.path.size(), in.path) == 0 &&
            name[in.path.size()] == '.' && (!found || in.path.size() > found->path.size()))
          found = &in;
    }
    if (!found && candidates == 1)
      found = only;
    if (!found)
      return notes;
    // The instance, then each one around it, outwards.
    std::string path = found->path;
    while (!path.empty()) {
      for (const ast::InstanceInfo &in : *all)
        if (in.path == path) {
          notes.push_back(DiagnosticEngine::make(DiagKind::InInstance, in.declared, {in.path, in.type}));
          break;
        }
      std::size_t dot = path.rfind('.');
      path = dot == std::string::npos ? "" : path.substr(0, dot);
    }
    return notes;
  };
}

FrontendResult runFrontend(SourceManager &sm, std::uint32_t file, DiagnosticEngine &diags,
                           const PipelineOptions &opts) {
  FrontendResult r;
  // Text -> AST; syntax errors stop here.
  {
    PassTimer t(opts, "parse");
    r.ast = syntax::parse(file, sm, diags);
  }
  if (!r.ast)
    return r;
  // Components and instances -> one flat model.
  if (flatten::needed(*r.ast)) {
    PassTimer t(opts, "flatten");
    Importer imports(sm, diags, libraryDirs(opts.libPath));
    if (!imports.load(*r.ast))
      return r;
    flatten::Options fo;
    fo.parameters = opts.parameters;
    std::unique_ptr<ast::File> flat = flatten::flatten(*r.ast, imports.files(), diags, fo);
    if (!flat)
      return r;
    if (!flat->instances.empty())
      diags.setContext(instanceContext(flat->instances));
    if (opts.stopAfter != Stage::Ast)
      r.ast = std::move(flat);
  }
  if (opts.stopAfter == Stage::Ast)
    return r;
  // AST -> checked, flat bond graph (names, arities, bonds, expressions).
  {
    PassTimer t(opts, "sema");
    r.graph = sema::analyze(*r.ast, sm, diags);
  }
  if (!r.graph || opts.stopAfter == Stage::BondGraph)
    return r;
  r.mode = bg::initialMode(*r.graph);
  if (!opts.mode.empty() && !parseMode(*r.graph, opts.mode, diags, r.mode))
    return r;
  // SCAP: the causality of every bond, its choices and derivative storage.
  {
    PassTimer t(opts, "causality");
    r.causality = causality::assignCausality(*r.graph, r.mode, diags);
  }
  if (!r.causality || opts.stopAfter == Stage::Causality)
    return r;
  // Causal graph -> state equations: tear and solve algebraic loops, make
  // storage in derivative causality dependent.
  {
    PassTimer t(opts, "equations");
    r.equations = eq::buildEquations(*r.graph, *r.causality, r.mode, diags, opts.equations);
  }
  return r;
}

std::string explain(const bg::BondGraph &g, const causality::CausalAssignment &ca,
                    const eq::EquationSystem &sys) {
  std::ostringstream os;
  os << "model " << g.modelName << "\n";
  if (bg::hasSwitched(g))
    os << "mode: " << bg::modeText(g, ca.mode) << "\n";
  os << "\n" << ca.dump(g) << "\n" << sys.dump();
  if (!sys.guards.empty()) {
    // Each comparison's two sides as this mode computes them: what its
    // transitions are judged on here (+ marks in a mythical mode, both
    // marks in a real one).
    os << "guards\n";
    std::size_t k = 0; // comparisons are numbered in guardComparisons order
    for (const bg::Element &e : g.elements) {
      if (!e.fsm)
        continue;
      for (const bg::FsmTransition &t : e.fsm->transitions) {
        os << "  " << e.name << ": " << e.fsm->states[t.from].name << " -> "
           << e.fsm->states[t.to].name << "\n";
        for (const bg::Guard *c : eq::guardComparisons(t.guard)) {
          os << "    (" << sys.ctx->print(sys.guards[2 * k]) << " " << compareOpText(c->op) << " "
             << sys.ctx->print(sys.guards[2 * k + 1]) << ")" << c->mark << "\n";
          ++k;
        }
      }
    }
  }
  return os.str();
}

} // namespace hbg::driver
