//===- compiler/flatten/Unroll.h - Loops, if blocks, indexed names -*- C++ -*-===//
//
// Internal to hbg_flatten. A model or component body with `for` loops,
// `if` blocks and indexed names (`mass[i].a`) becomes one without: each
// loop's declarations are copied once per value of its variable, the
// variable becomes a number in every expression, each `if` block's
// taken branch stands in its place, and every index is computed, so that
// `mass[i]` names `mass[3]`. Bounds, conditions and indices are computed
// when the model is built, from numbers, parameters and loop variables;
// flattening supplies the parameters' values (an instance's own, or the
// command line's) and decides `connected(port)` from the bonds around
// the instance.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/support/Diagnostics.h"
#include "hbg/support/FunctionRef.h"
#include "hbg/syntax/AST.h"

#include <memory>
#include <string>
#include <vector>

namespace hbg::flatten {

/// What looking a parameter up found.
enum class Lookup {
  Value,        ///< its value
  NotParameter, ///< no parameter of that name
  Signal,       ///< a signal of that name (it changes with time)
  Input,        ///< an input of that name (set while the model runs)
  Failed,       ///< a parameter whose value could not be computed (reported)
};

/// Looks a name up among the parameters of the body being unrolled.
using ParameterFn = FunctionRef<Lookup(const std::string &name, double &value)>;
/// Reports a diagnostic (with the notes of the instance being expanded).
using ReportFn = FunctionRef<void(DiagKind kind, SourceRange range,
                                  std::initializer_list<DiagArg> args)>;

/// Decides `connected(port)`, a guard of kind Connected, in the body
/// being unrolled: false after reporting why it cannot.
using ConnectedFn = FunctionRef<bool(const ast::Guard &connected, bool &holds)>;

/// Whether `m` has a loop, an `if` block or an indexed name anywhere.
bool hasIndices(const ast::Model &m);

/// The value of `e`, computed from numbers, parameters (through `params`)
/// and the loop variables `vars` (name and value), with arithmetic and
/// the functions `floor ceil mod min max abs sqrt exp log sin cos pow`.
/// False after reporting why not; `what` names the value in messages
/// ("the loop's first value", "an index").
bool evaluate(const ast::Expr &e, const std::vector<std::pair<std::string, double>> &vars,
              ParameterFn params, ReportFn report, const char *what, double &out);

/// `m` with its loops unrolled, its `if` blocks decided and its indices
/// computed, or null after errors (reported). At most `maxDeclarations`
/// declarations come out of loops and `if` blocks.
std::unique_ptr<ast::Model> unroll(const ast::Model &m, ParameterFn params, ConnectedFn connected,
                                   ReportFn report, std::size_t maxDeclarations);

} // namespace hbg::flatten
