//===- compiler/sema/Sema.cpp - AST to checked bond graph -----------------===//
//
// Sema runs in four steps, each needing the previous one's results:
//   1. declare every name (duplicates are errors);
//   2. create elements and bonds, then check bond counts and directions
//      (junction and two-port variables need their bonds; Structure.cpp);
//   3. lower expressions (parameters, element values and laws, initial
//      values, signals, outputs: Values.cpp; the switched junctions' state
//      machines: StateMachines.cpp; the experiment block: Experiment.cpp)
//      into the symbolic DAG (Expressions.cpp, Tables.cpp, Pre.cpp);
//   4. check parameter and signal dependencies for cycles (Dependencies.cpp).
// This file declares the names and runs the steps; Analyzer.h declares the
// class whose members they are.
//
//===----------------------------------------------------------------------===//

#include "Analyzer.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace hbg::sema {

using namespace hbg::bg;

void Analyzer::declare(const std::string &name, SourceRange range, NameInfo info) {
  if (name == "time") {
    diags_.report(DiagKind::ReservedName, range, {name});
    return;
  }
  auto [it, inserted] = names_.emplace(name, info);
  if (!inserted) {
    diags_.report(DiagKind::DuplicateName, range, {name});
    diags_.note(DiagKind::PreviousDefinition, it->second.range, {name});
  }
}

std::optional<BondGraph> Analyzer::run(const ast::File &file) {
  if (file.models.empty()) {
    diags_.report(DiagKind::NoModel, {}, {sm_.name(file.fileId)});
    return std::nullopt;
  }
  if (file.models.size() > 1) {
    const ast::Model &second = *file.models[1];
    diags_.report(DiagKind::MultipleModels, second.nameRange, {second.name});
    return std::nullopt;
  }
  const ast::Model &m = *file.models[0];
  model_ = &m;
  flattened_ = file.flattened;
  g_.modelName = m.name;

  // 1. Names. Declaration order across kinds is by source position so that
  // "first defined here" points at the earlier one.
  struct Decl {
    const std::string *name;
    SourceRange range;
    NameInfo info;
  };
  std::vector<Decl> decls;
  decls.reserve(m.parameters.size() + m.elements.size() + m.junctions.size() + m.bonds.size() +
                m.signals.size());
  for (std::size_t i = 0; i < m.parameters.size(); ++i)
    decls.push_back({&m.parameters[i].name, m.parameters[i].nameRange,
                     {NameInfo::Parameter, std::uint32_t(i), m.parameters[i].nameRange}});
  for (std::size_t i = 0; i < m.elements.size(); ++i)
    decls.push_back({&m.elements[i].name, m.elements[i].nameRange,
                     {NameInfo::Element, std::uint32_t(i), m.elements[i].nameRange}});
  for (std::size_t i = 0; i < m.junctions.size(); ++i)
    decls.push_back({&m.junctions[i].name, m.junctions[i].nameRange,
                     {NameInfo::Element, std::uint32_t(m.elements.size() + i),
                      m.junctions[i].nameRange}});
  for (std::size_t i = 0; i < m.bonds.size(); ++i)
    if (!m.bonds[i].name.empty())
      decls.push_back({&m.bonds[i].name, m.bonds[i].nameRange,
                       {NameInfo::Bond, std::uint32_t(i), m.bonds[i].nameRange}});
  for (std::size_t i = 0; i < m.signals.size(); ++i)
    decls.push_back({&m.signals[i].name, m.signals[i].nameRange,
                     {NameInfo::Signal, std::uint32_t(i), m.signals[i].nameRange}});
  std::stable_sort(decls.begin(), decls.end(), [](const Decl &a, const Decl &b) {
    return a.range.begin.offset < b.range.begin.offset;
  });
  names_.reserve(decls.size());
  for (const Decl &d : decls)
    declare(*d.name, d.range, d.info);

  // 2. Structure.
  buildStructure(m);
  if (diags_.hasErrors())
    return std::nullopt;
  checkBondCounts();

  // 3. Expressions.
  lowerParameters(m);
  lowerElements(m);
  lowerSignalsAndOutputs(m);
  lowerSwitchedJunctions(m);
  for (const auto &[key, symbol] : stateSymbols_)
    if (g_.elements[key.first].fsm)
      g_.elements[key.first].fsm->observed = true;
  lowerExperiment(m);

  // 4. Dependencies.
  if (!diags_.hasErrors())
    orderParameters();
  if (!diags_.hasErrors())
    checkExperiment();
  if (!diags_.hasErrors())
    checkStorageValues();
  if (!diags_.hasErrors())
    checkSignalCycles();
  if (diags_.hasErrors())
    return std::nullopt;
  std::string problem = g_.verify();
  if (!problem.empty())
    throw InternalError("bond graph verifier: " + problem);
  return std::move(g_);
}

std::vector<std::string> Analyzer::valueNames() const {
  std::vector<std::string> names;
  for (const ast::Parameter &p : model_->parameters)
    names.push_back(p.name);
  for (const ast::Signal &s : model_->signals)
    names.push_back(s.name);
  names.push_back("time");
  return names;
}

void Analyzer::unknownName(const std::string &name, SourceRange range,
                           const std::vector<std::string> &candidates) {
  std::string best = closestName(name, candidates);
  if (best.empty())
    diags_.report(DiagKind::UnknownName, range, {name});
  else
    diags_.report(DiagKind::UnknownNameSuggest, range, {name, best});
  for (const ast::AbsentName &a : model_->absent)
    if (a.name == name) {
      diags_.note(DiagKind::DeclaredInFalseIf, a.declared, {name});
      break;
    }
}

std::optional<BondGraph> analyze(const ast::File &file, const SourceManager &sm,
                                 DiagnosticEngine &diags) {
  Analyzer a(sm, diags);
  return a.run(file);
}

} // namespace hbg::sema
