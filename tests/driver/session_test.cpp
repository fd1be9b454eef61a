// driver::Session, what hbgc's commands share: loading a model, printing
// its stages, and the LLVM module `--emit=llvm` prints, which must be the
// one the JIT compiles.

#include "hbg/driver/Session.h"

#include <doctest/doctest.h>

#include <sstream>

namespace {

std::string example(const char *name) { return std::string(HBG_SOURCE_DIR) + "/examples/" + name; }

/// The module the JIT compiles first for `file` (its initial mode), with
/// every module's text captured as it is handed to the JIT.
std::string jitModule(const std::string &file) {
  std::vector<std::string> modules;
  hbg::CompilerOptions opts;
  opts.tiering = hbg::Tiering::Jit;
  opts.codegen.onModule = [&modules](const std::string &text) { modules.push_back(text); };
  hbg::Model model = hbg::Compiler(opts).compileFile(file);
  REQUIRE(!modules.empty());
  return modules.front();
}

std::string emitted(const std::string &file) {
  std::ostringstream err;
  hbg::driver::Session session({}, err);
  REQUIRE(session.load(file));
  std::optional<std::string> ir = session.emit(hbg::driver::Stage::LLVM);
  REQUIRE(ir);
  CHECK(err.str().empty());
  return *ir;
}

} // namespace

TEST_CASE("--emit=llvm prints the module the JIT compiles, every function of it") {
  // A linear model, one with algebraic loops (residual and Jacobian), and
  // a switched one (guards, kinks, dependent states, impulses).
  for (const char *name : {"rlc.hbg", "resistor_bridge.hbg", "bouncing_ball.hbg"}) {
    CAPTURE(name);
    std::string file = example(name);
    std::string ir = emitted(file);
    CHECK(ir == jitModule(file));
    CHECK(ir.find("define void @rhs(") != std::string::npos);
    CHECK(ir.find("define void @outputs(") != std::string::npos);
  }
  CHECK(emitted(example("bouncing_ball.hbg")).find("define void @guards(") != std::string::npos);
}

TEST_CASE("a session prints each diagnostic once, and the stages it reached") {
  std::ostringstream err;
  hbg::driver::Session session({}, err);
  CHECK(!session.load(example("does_not_exist.hbg")));
  CHECK(err.str().find("cannot open") != std::string::npos);
  session.printDiagnostics();
  std::string once = err.str();
  session.printDiagnostics();
  CHECK(err.str() == once);

  std::ostringstream err2;
  hbg::driver::Session ok({}, err2);
  REQUIRE(ok.load(example("rlc.hbg"), hbg::driver::Stage::Causality));
  CHECK(ok.emit(hbg::driver::Stage::Ast)->find("Model RLC") != std::string::npos);
  CHECK(!ok.emit(hbg::driver::Stage::Causality)->empty());
  CHECK(!ok.frontend().equations);
}
