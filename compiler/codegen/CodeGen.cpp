//===- codegen/CodeGen.cpp - Lower, optimise, JIT-compile -----------------===//
//
// The public face of code generation. The work is done by the LLVM backend
// (Backend.h), loaded on first use; this file holds its handles.
//
//===----------------------------------------------------------------------===//

#include "hbg/codegen/CodeGen.h"

#include "Backend.h"

#include <unordered_map>

namespace hbg::codegen {

struct JitSession::Impl {
  std::shared_ptr<void> session;
};

struct LoweredModule::Impl {
  std::shared_ptr<void> module;
  std::vector<std::string> names;
};

struct CompiledModule::Impl {
  /// Owns the code: every address in `entries` dies with it.
  std::shared_ptr<void> code;
  std::unordered_map<std::string, CompiledFn> entries;
};

JitSession::JitSession() : impl_(std::make_unique<Impl>()) {
  impl_->session = backend().createSession();
}
JitSession::~JitSession() = default;

std::shared_ptr<JitSession> JitSession::create() {
  return std::shared_ptr<JitSession>(new JitSession());
}

CompiledModule::CompiledModule() = default;
CompiledModule::CompiledModule(CompiledModule &&) noexcept = default;
CompiledModule &CompiledModule::operator=(CompiledModule &&) noexcept = default;
CompiledModule::~CompiledModule() = default;

CompiledFn CompiledModule::lookup(const std::string &name) const {
  if (!impl_)
    return nullptr;
  auto it = impl_->entries.find(name);
  return it == impl_->entries.end() ? nullptr : it->second;
}

LoweredModule::LoweredModule() = default;
LoweredModule::LoweredModule(LoweredModule &&) noexcept = default;
LoweredModule &LoweredModule::operator=(LoweredModule &&) noexcept = default;
LoweredModule::~LoweredModule() = default;

CodeGenerator::CodeGenerator(CodeGenOptions opts) : opts_(opts) {}

std::string CodeGenerator::emitIR(const sym::ExprContext &ctx,
                                  const std::vector<FunctionSpec> &fns) const {
  return backend().emitIR(ctx, fns, opts_);
}

void CodeGenerator::emitObject(const sym::ExprContext &ctx, const std::vector<FunctionSpec> &fns,
                               const ObjectSpec &spec, const std::string &path) const {
  backend().emitObject(ctx, fns, opts_, spec, path);
}

LoweredModule CodeGenerator::lower(const sym::ExprContext &ctx,
                                   const std::vector<FunctionSpec> &fns) const {
  LoweredModule result;
  result.impl_ = std::make_unique<LoweredModule::Impl>();
  result.impl_->module = backend().lower(ctx, fns, opts_);
  for (const FunctionSpec &spec : fns)
    result.impl_->names.push_back(spec.name);
  return result;
}

CompiledModule CodeGenerator::compile(LoweredModule lowered,
                                      const std::shared_ptr<JitSession> &session) const {
  CompiledModule result;
  result.impl_ = std::make_unique<CompiledModule::Impl>();
  std::shared_ptr<void> shared = session ? session->impl_->session : nullptr;
  result.impl_->code = backend().compile(std::move(lowered.impl_->module), lowered.impl_->names,
                                         opts_, shared, result.impl_->entries);
  return result;
}

CompiledModule CodeGenerator::compile(const sym::ExprContext &ctx,
                                      const std::vector<FunctionSpec> &fns,
                                      const std::shared_ptr<JitSession> &session) const {
  return compile(lower(ctx, fns), session);
}

} // namespace hbg::codegen
