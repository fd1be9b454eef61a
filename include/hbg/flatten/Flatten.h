//===- hbg/flatten/Flatten.h - Components into one flat model -------------===//
//
// A file may declare components (`component Diode { port a = j, ...; }`)
// and the model may instantiate them (`Diode d1(Vf = 0.6);`), nested to
// any depth. Flattening copies each instance's declarations into the
// model with their names prefixed by the instance path (`d1.j`, `d1.Vf`),
// resolves every name inside an instance in its component's scope, gives
// parameters and signals the values the instance declaration sets, and
// attaches bonds written to ports (`bond src -> d1.a`) to the elements the
// ports name. `for` loops are unrolled, `if` blocks decided and indexed
// names computed (`mass[i]` is `mass[3]`), in the model and in each
// instance with its parameters' values and, for `connected(port)`, the
// bonds around it. What comes out is one model without components or
// loops, which sema checks and turns into the bond graph like any other.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/support/Diagnostics.h"
#include "hbg/syntax/AST.h"

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hbg::flatten {

/// How flattening builds the model.
struct Options {
  /// Values of parameters by flat name (`N`, `chain.N`), for those that
  /// `for` loops, `if` blocks and indices are computed from (structural parameters,
  /// fixed once the model is built); others are ignored here.
  std::map<std::string, double> parameters;
  /// At most this many declarations come out of `for` loops.
  std::size_t maxUnrolled = 10'000'000;
};

/// Whether `file` declares or imports components, instantiates them, or
/// has `for` loops, `if` blocks or indexed names (else it is flat).
bool needed(const ast::File &file);

/// The file's model with every instance expanded, and no components; null
/// with diagnostics when an instance cannot be: an unknown component or
/// port, a component that contains itself, a name unknown in its
/// component, a value given for nothing the component declares.
/// `imported`: the files `file` imports, directly or not; their
/// components are known in `file` and in each other.
std::unique_ptr<ast::File> flatten(const ast::File &file,
                                   const std::vector<const ast::File *> &imported,
                                   DiagnosticEngine &diags, const Options &opts = {});

} // namespace hbg::flatten
