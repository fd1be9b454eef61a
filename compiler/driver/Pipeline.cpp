//===- compiler/driver/Pipeline.cpp - The compiler's stages in order ------===//

#include "hbg/driver/Pipeline.h"

#include "Imports.h"

#include "hbg/flatten/Flatten.h"
#include "hbg/sema/Sema.h"
#include "hbg/syntax/Parser.h"

#include <algorithm>
#include <chrono>
#include <ostream>

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

FrontendResult runFrontend(SourceManager &sm, std::uint32_t file, DiagnosticEngine &diags,
                           const PipelineOptions &opts) {
  FrontendResult r;
  // Text -> AST; syntax errors stop here.
  {
    PassTimer t(opts.timings, "parse");
    r.ast = syntax::parse(file, sm, diags);
  }
  if (!r.ast)
    return r;
  // Components and instances -> one flat model.
  if (flatten::needed(*r.ast)) {
    PassTimer t(opts.timings, "flatten");
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
    PassTimer t(opts.timings, "sema");
    r.graph = sema::analyze(*r.ast, sm, diags);
  }
  if (!r.graph || opts.stopAfter == Stage::BondGraph)
    return r;
  r.mode = bg::initialMode(*r.graph);
  if (!opts.mode.empty() && !parseMode(*r.graph, opts.mode, diags, r.mode))
    return r;
  // SCAP: the causality of every bond, its choices and derivative storage.
  {
    PassTimer t(opts.timings, "causality");
    r.causality = causality::assignCausality(*r.graph, r.mode, diags);
  }
  if (!r.causality || opts.stopAfter == Stage::Causality)
    return r;
  // Causal graph -> state equations: tear and solve algebraic loops, make
  // storage in derivative causality dependent.
  {
    PassTimer t(opts.timings, "equations");
    r.equations = eq::buildEquations(*r.graph, *r.causality, r.mode, diags, opts.equations);
  }
  return r;
}

} // namespace hbg::driver
