//===- hbg/codegen/CodeGen.h - Expressions to LLVM IR to native code ------===//
//
// Lowers groups of DAG expressions into functions of one C signature,
//
//   void name(double t, const double *x, const double *p, double *out);
//
// where out[i] receives the i-th expression of the group, symbols of kind
// State and Algebraic read x[slot] (algebraic unknowns are stored after the
// states), Parameter read p[slot] and Time reads t. Parameters
// are arguments, so changing one never recompiles. The module goes through
// LLVM's O1 pipeline and SLP vectoriser and is JIT-compiled by ORC LLJIT.
//
// Large groups are split into helper functions of bounded size (each
// writes a slice of `out`), so that optimisation and compile time grow
// linearly with the model.
//
// LLVM itself is loaded on first use (compiler/codegen/Backend.h), so a
// program that has compiled nothing yet has not paid for loading it.
//
// Lowering reads the expression store; optimising and JIT-compiling do
// not. They are separate steps (lower(), then compile()), so that a
// caller sharing the store between threads holds its lock while lowering
// only. Modules compiled into one JitSession share one LLJIT, each under
// a resource tracker of its own that frees its code when dropped.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/codegen/Options.h"
#include "hbg/symbolic/Expr.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace hbg::codegen {

/// The signature of every generated function.
using CompiledFn = void (*)(double t, const double *x, const double *p, double *out);

/// One function to generate: out[i] = outputs[i].
struct FunctionSpec {
  std::string name;
  std::vector<sym::ExprId> outputs;
};


/// What an object file holds besides the functions (CodeGenerator::
/// emitObject): a byte array and a table of the functions' entry points,
/// each under the given symbol names, for the program it is linked into.
struct ObjectSpec {
  /// `data` as `const unsigned char <dataSymbol>[]` and its size as
  /// `const unsigned long <dataSymbol>_size`.
  std::string dataSymbol;
  std::string data;
  /// The entry points of every function, in FunctionSpec order, as
  /// `const CompiledFn <tableSymbol>[]`, and their number as
  /// `const unsigned long <tableSymbol>_size`.
  std::string tableSymbol;
  /// Export the symbols from a shared library (an FMU's binary): default
  /// visibility for the data, the table and nothing else.
  bool shared = false;
};

/// Whether LLVM's half of code generation (libhbg_llvm.so) has been
/// loaded into this process: it is loaded by the first compilation.
bool backendLoaded();

/// LLVM's half of code generation (libhbg_llvm.so, loaded on first use)
/// cannot be found or loaded: an installation problem, not a bug.
class BackendUnavailable : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One LLJIT that many modules are compiled into (a switched model's
/// modes): created once, so a module costs its own compilation only.
/// Thread-safe; kept alive by every module compiled into it.
class JitSession {
public:
  static std::shared_ptr<JitSession> create();
  ~JitSession();

private:
  friend class CompiledModule;
  friend class CodeGenerator;
  JitSession();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Lowered LLVM IR, not yet optimised or compiled; owns its LLVM context.
class LoweredModule {
public:
  LoweredModule();
  LoweredModule(LoweredModule &&) noexcept;
  LoweredModule &operator=(LoweredModule &&) noexcept;
  ~LoweredModule();

private:
  friend class CodeGenerator;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The functions of one compiled module. Owns its code (in a JIT of its
/// own, or under a resource tracker in a JitSession); dropping it frees
/// the code. Movable, not copyable.
class CompiledModule {
public:
  CompiledModule();
  CompiledModule(CompiledModule &&) noexcept;
  CompiledModule &operator=(CompiledModule &&) noexcept;
  ~CompiledModule();
  /// The entry point generated for FunctionSpec `name`, or nullptr.
  CompiledFn lookup(const std::string &name) const;

private:
  friend class CodeGenerator;
  friend class JitSession;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Lowers and compiles. Errors are internal (the input was already checked),
/// so they are thrown as std::runtime_error with LLVM's message.
class CodeGenerator {
public:
  explicit CodeGenerator(CodeGenOptions opts = {});
  /// The optimised (or, with optLevel 0, unoptimised) module as LLVM IR text.
  std::string emitIR(const sym::ExprContext &ctx, const std::vector<FunctionSpec> &fns) const;
  /// Lowers, optimises and JIT-compiles the functions, in a JIT of their
  /// own or, given `session`, in that one.
  CompiledModule compile(const sym::ExprContext &ctx, const std::vector<FunctionSpec> &fns,
                         const std::shared_ptr<JitSession> &session = nullptr) const;
  /// Compiles the functions ahead of time, with the same IR, optimisation
  /// and target as the JIT's code (so the same values, bit for bit), into
  /// the object file `path`, with `spec`'s data and entry-point table.
  void emitObject(const sym::ExprContext &ctx, const std::vector<FunctionSpec> &fns,
                  const ObjectSpec &spec, const std::string &path) const;
  /// The first step alone: the only one that reads `ctx`.
  LoweredModule lower(const sym::ExprContext &ctx, const std::vector<FunctionSpec> &fns) const;
  /// The rest: optimises and JIT-compiles a lowered module.
  CompiledModule compile(LoweredModule lowered,
                         const std::shared_ptr<JitSession> &session = nullptr) const;

private:
  CodeGenOptions opts_;
};

} // namespace hbg::codegen
