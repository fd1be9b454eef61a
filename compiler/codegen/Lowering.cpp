//===- codegen/Lowering.cpp - DAG expressions to LLVM IR ------------------===//
//
// Each LLVM function lowers the nodes reachable from its outputs in
// increasing id order. Ids are topological, so every operand already has its
// SSA value when a node is reached, and since the DAG is hash-consed each
// shared subexpression becomes exactly one instruction.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "Partition.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hbg::codegen {

namespace {

using sym::ExprId;
using sym::Op;

/// Integer exponents up to this magnitude use llvm.powi, which the backend
/// expands into a short multiplication chain instead of a call to pow.
constexpr double kMaxPowiExponent = 16;

/// C library functions the generated code may call (directly, or after
/// LLVM lowers an intrinsic or combines calls). A public function of the
/// same name would capture those calls at link time.
constexpr const char *kLibmNames[] = {"sin",  "cos",   "tan",    "exp",   "log",      "sqrt",
                                      "tanh", "fabs",  "pow",    "fmin",  "fmax",     "exp2",
                                      "log2", "log10", "sincos", "exp10", "__powidf2"};

/// Argument positions of the CompiledFn signature.
enum ArgIndex : unsigned { ArgT = 0, ArgX = 1, ArgP = 2, ArgOut = 3 };

/// Lowers the functions of one module.
class Lowerer {
public:
  Lowerer(llvm::Module &module, const sym::ExprContext &ctx)
      : module_(module), ctx_(ctx), builder_(module.getContext()),
        f64_(llvm::Type::getDoubleTy(module.getContext())), set_(ctx),
        values_(ctx.size(), nullptr) {
    auto *ptr = llvm::PointerType::getUnqual(module.getContext());
    fnTy_ = llvm::FunctionType::get(builder_.getVoidTy(), {f64_, ptr, ptr, ptr}, false);
  }

  /// Creates the externally visible function for `spec` without a body, so
  /// that all public names are taken before any helper is named.
  llvm::Function *declarePublic(const FunctionSpec &spec);
  /// Emits the body of `fn` (declared by declarePublic) and its helpers.
  void define(llvm::Function *fn, const FunctionSpec &spec, std::size_t maxNodes);

private:
  llvm::Function *create(const std::string &name, llvm::GlobalValue::LinkageTypes linkage);
  void emitSlice(llvm::Function *fn, const std::vector<ExprId> &outputs, OutputSlice slice);
  llvm::Value *emitNode(const sym::Node &node, llvm::Function *fn);
  llvm::Value *emitSymbol(const sym::Symbol &s, llvm::Function *fn);
  llvm::Value *emitPow(llvm::Value *base, ExprId exponent);
  llvm::Value *emitSign(llvm::Value *v);
  llvm::Value *callLibm(const char *name, llvm::Value *v);
  llvm::Value *operand(ExprId id) const { return values_[id.index]; }

  llvm::Module &module_;
  const sym::ExprContext &ctx_;
  llvm::IRBuilder<> builder_;
  llvm::Type *f64_;
  llvm::FunctionType *fnTy_;
  NodeSet set_;
  /// The depth-first stack of emitSlice: node, operands already pushed.
  std::vector<std::pair<std::uint32_t, bool>> pending_;
  /// SSA value per node id for the function being emitted. Entries left from
  /// earlier functions are never read: a node's operands belong to the same
  /// function and have smaller ids, so they are overwritten first.
  std::vector<llvm::Value *> values_;
};

llvm::Function *Lowerer::create(const std::string &name, llvm::GlobalValue::LinkageTypes linkage) {
  llvm::Function *fn = llvm::Function::Create(fnTy_, linkage, name, module_);
  fn->setDoesNotThrow();
  fn->getArg(ArgT)->setName("t");
  fn->getArg(ArgX)->setName("x");
  fn->getArg(ArgP)->setName("p");
  fn->getArg(ArgOut)->setName("out");
  // x and p are only read, out only written; the caller guarantees out
  // overlaps neither, which lets LLVM keep loads and stores in any order.
  for (unsigned arg : {ArgX, ArgP}) {
    fn->addParamAttr(arg, llvm::Attribute::NoAlias);
    fn->addParamAttr(arg, llvm::Attribute::NoCapture);
    fn->addParamAttr(arg, llvm::Attribute::ReadOnly);
  }
  fn->addParamAttr(ArgOut, llvm::Attribute::NoAlias);
  fn->addParamAttr(ArgOut, llvm::Attribute::NoCapture);
  fn->addParamAttr(ArgOut, llvm::Attribute::WriteOnly);
  return fn;
}

llvm::Function *Lowerer::declarePublic(const FunctionSpec &spec) {
  if (spec.name.empty())
    throw std::runtime_error("codegen: function with an empty name");
  for (const char *reserved : kLibmNames)
    if (spec.name == reserved)
      throw std::runtime_error("codegen: function name '" + spec.name +
                               "' is reserved for the C math library");
  if (module_.getNamedValue(spec.name))
    throw std::runtime_error("codegen: function '" + spec.name + "' is defined twice");
  for (ExprId id : spec.outputs)
    if (!id.valid() || id.index >= ctx_.size())
      throw std::runtime_error("codegen: function '" + spec.name +
                               "' has an output that is not a node of the context");
  llvm::Function *fn = create(spec.name, llvm::GlobalValue::ExternalLinkage);
  if (fn->getName() != spec.name) // LLVM renamed it: clashes with something else
    throw std::runtime_error("codegen: function name '" + spec.name + "' is not available");
  return fn;
}

void Lowerer::define(llvm::Function *fn, const FunctionSpec &spec, std::size_t maxNodes) {
  std::vector<OutputSlice> slices = partitionOutputs(ctx_, spec.outputs, maxNodes);
  if (slices.size() == 1) {
    emitSlice(fn, spec.outputs, slices.front());
    return;
  }
  // Each slice becomes a helper; noinline keeps an optimiser from merging
  // them back into one function of unbounded size. Helper names may be uniqued by
  // LLVM if a public function happens to use them; they are internal.
  std::vector<llvm::Function *> parts;
  for (std::size_t k = 0; k < slices.size(); ++k) {
    llvm::Function *part =
        create(spec.name + ".part" + std::to_string(k), llvm::GlobalValue::InternalLinkage);
    part->addFnAttr(llvm::Attribute::NoInline);
    emitSlice(part, spec.outputs, slices[k]);
    parts.push_back(part);
  }
  builder_.SetInsertPoint(llvm::BasicBlock::Create(module_.getContext(), "entry", fn));
  std::vector<llvm::Value *> args;
  for (llvm::Argument &a : fn->args())
    args.push_back(&a);
  for (llvm::Function *part : parts)
    builder_.CreateCall(part, args);
  builder_.CreateRetVoid();
}

void Lowerer::emitSlice(llvm::Function *fn, const std::vector<ExprId> &outputs, OutputSlice slice) {
  // Instructions in use order: each output's expression depth-first, its
  // operands (loads of states and parameters included) just before their
  // first use, and the output stored as soon as it is computed. Emitting
  // in node-id order instead put every load at the top and every store at
  // the bottom, so values lived across the whole function and the
  // register allocator spilled them.
  set_.clear(); // marks the nodes emitted in this function
  builder_.SetInsertPoint(llvm::BasicBlock::Create(module_.getContext(), "entry", fn));
  llvm::Value *out = fn->getArg(ArgOut);
  for (std::size_t i = slice.begin; i < slice.end; ++i) {
    // Post-order without recursion: an entry is pushed again below its
    // operands, and emitted when it comes back up with them done.
    pending_.clear();
    if (!set_.contains(outputs[i].index))
      pending_.push_back({outputs[i].index, false});
    while (!pending_.empty()) {
      auto [id, expanded] = pending_.back();
      if (set_.contains(id)) {
        pending_.pop_back();
        continue;
      }
      const sym::Node &node = ctx_.node(ExprId{id});
      if (!expanded) {
        pending_.back().second = true;
        // Pushed last, popped first: the left operand is emitted first.
        std::uint32_t operands[3];
        int count = 0;
        sym::forEachOperand(node, [&](ExprId o) { operands[count++] = o.index; });
        for (int k = count; k-- > 0;)
          if (!set_.contains(operands[k]))
            pending_.push_back({operands[k], false});
        continue;
      }
      pending_.pop_back();
      values_[id] = emitNode(node, fn);
      set_.mark(id);
    }
    llvm::Value *slot = builder_.CreateConstInBoundsGEP1_64(f64_, out, i);
    builder_.CreateStore(operand(outputs[i]), slot);
  }
  builder_.CreateRetVoid();
}

llvm::Value *Lowerer::emitNode(const sym::Node &node, llvm::Function *fn) {
  auto unaryIntrinsic = [&](llvm::Intrinsic::ID id) {
    return builder_.CreateUnaryIntrinsic(id, operand(node.lhs));
  };
  auto binaryIntrinsic = [&](llvm::Intrinsic::ID id) {
    return builder_.CreateBinaryIntrinsic(id, operand(node.lhs), operand(node.rhs));
  };
  switch (node.op) {
  case Op::Const:
    return llvm::ConstantFP::get(f64_, node.value);
  case Op::Symbol:
    return emitSymbol(ctx_.symbol(node.symbol), fn);
  case Op::Neg:
    return builder_.CreateFNeg(operand(node.lhs));
  case Op::Sin:
    return unaryIntrinsic(llvm::Intrinsic::sin);
  case Op::Cos:
    return unaryIntrinsic(llvm::Intrinsic::cos);
  case Op::Tan:
    return callLibm("tan", operand(node.lhs));
  case Op::Exp:
    return unaryIntrinsic(llvm::Intrinsic::exp);
  case Op::Log:
    return unaryIntrinsic(llvm::Intrinsic::log);
  case Op::Sqrt:
    return unaryIntrinsic(llvm::Intrinsic::sqrt);
  case Op::Tanh:
    return callLibm("tanh", operand(node.lhs));
  case Op::Abs:
    return unaryIntrinsic(llvm::Intrinsic::fabs);
  case Op::Sign:
    return emitSign(operand(node.lhs));
  case Op::Floor:
    return unaryIntrinsic(llvm::Intrinsic::floor);
  case Op::Add:
    return builder_.CreateFAdd(operand(node.lhs), operand(node.rhs));
  case Op::Sub:
    return builder_.CreateFSub(operand(node.lhs), operand(node.rhs));
  case Op::Mul:
    return builder_.CreateFMul(operand(node.lhs), operand(node.rhs));
  case Op::Div:
    return builder_.CreateFDiv(operand(node.lhs), operand(node.rhs));
  case Op::Pow:
    return emitPow(operand(node.lhs), node.rhs);
  // minnum/maxnum return the non-NaN operand, exactly like std::fmin/fmax.
  case Op::Min:
    return binaryIntrinsic(llvm::Intrinsic::minnum);
  case Op::Max:
    return binaryIntrinsic(llvm::Intrinsic::maxnum);
  case Op::Select: {
    // Ordered comparison: a NaN condition takes the second branch.
    llvm::Value *cond = builder_.CreateFCmpOGT(operand(node.lhs), llvm::ConstantFP::get(f64_, 0.0));
    return builder_.CreateSelect(cond, operand(node.rhs), operand(node.third));
  }
  }
  throw std::runtime_error("codegen: node with an unknown op");
}

llvm::Value *Lowerer::emitSymbol(const sym::Symbol &s, llvm::Function *fn) {
  llvm::Argument *array = nullptr;
  switch (s.kind) {
  case sym::SymbolKind::Time:
    return fn->getArg(ArgT);
  case sym::SymbolKind::State:
  case sym::SymbolKind::Algebraic: // stored after the states in x
    array = fn->getArg(ArgX);
    break;
  case sym::SymbolKind::Parameter:
    array = fn->getArg(ArgP);
    break;
  case sym::SymbolKind::Variable:
    throw std::runtime_error("codegen: internal error: unknown '" + s.name +
                             "' was not eliminated before code generation");
  }
  if (!array)
    throw std::runtime_error("codegen: symbol '" + s.name + "' has an unknown kind");
  llvm::Value *slot = builder_.CreateConstInBoundsGEP1_64(f64_, array, s.slot);
  return builder_.CreateLoad(f64_, slot, s.name);
}

llvm::Value *Lowerer::emitPow(llvm::Value *base, ExprId exponent) {
  const sym::Node &e = ctx_.node(exponent);
  if (e.op == Op::Const) {
    double c = e.value;
    // Squaring is exact (one rounding, like pow); other small integer
    // powers stay within a few ulps and avoid a libm call.
    if (c == 2)
      return builder_.CreateFMul(base, base);
    if (std::fabs(c) <= kMaxPowiExponent && c == std::trunc(c))
      return builder_.CreateIntrinsic(llvm::Intrinsic::powi, {f64_, builder_.getInt32Ty()},
                                      {base, builder_.getInt32(static_cast<int>(c))});
  }
  // A call to libm's pow marked nobuiltin, not llvm.pow: no pass may turn
  // it into another function (InstCombine makes pow(x, 0.5) a sqrt and
  // pow(2^k, y) an exp2(k y), which differ in the last bits), so the tapes
  // and the quick tier, which run no passes, compute the same bits.
  llvm::FunctionCallee pow =
      module_.getOrInsertFunction("pow", llvm::FunctionType::get(f64_, {f64_, f64_}, false));
  llvm::CallInst *call = builder_.CreateCall(pow, {base, operand(exponent)});
  call->addFnAttr(llvm::Attribute::NoBuiltin);
  call->setDoesNotAccessMemory(); // as llvm.pow: errno is not read
  call->setDoesNotThrow();
  return call;
}

llvm::Value *Lowerer::emitSign(llvm::Value *v) {
  // Same as the evaluator: 1 above zero, -1 below, 0 for zeros and NaN.
  auto *zero = llvm::ConstantFP::get(f64_, 0.0);
  llvm::Value *below = builder_.CreateSelect(builder_.CreateFCmpOLT(v, zero),
                                             llvm::ConstantFP::get(f64_, -1.0), zero);
  return builder_.CreateSelect(builder_.CreateFCmpOGT(v, zero), llvm::ConstantFP::get(f64_, 1.0),
                               below);
}

llvm::Value *Lowerer::callLibm(const char *name, llvm::Value *v) {
  // No LLVM intrinsic exists for these; the JIT resolves the C library's
  // definitions from the host process.
  llvm::FunctionCallee callee =
      module_.getOrInsertFunction(name, llvm::FunctionType::get(f64_, {f64_}, false));
  if (auto *decl = llvm::dyn_cast<llvm::Function>(callee.getCallee()))
    decl->setDoesNotThrow();
  return builder_.CreateCall(callee, {v});
}

} // namespace

std::unique_ptr<llvm::Module> lowerFunctions(llvm::LLVMContext &llvmCtx,
                                             const sym::ExprContext &ctx,
                                             const std::vector<FunctionSpec> &fns,
                                             std::size_t maxNodesPerFunction) {
  auto module = std::make_unique<llvm::Module>("hbg", llvmCtx);
  Lowerer lowerer(*module, ctx);
  std::vector<llvm::Function *> declared;
  for (const FunctionSpec &spec : fns)
    declared.push_back(lowerer.declarePublic(spec));
  for (std::size_t i = 0; i < fns.size(); ++i)
    lowerer.define(declared[i], fns[i], std::max<std::size_t>(maxNodesPerFunction, 1));

  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os))
    throw std::runtime_error("codegen: internal error: invalid LLVM IR: " + os.str());
  return module;
}

} // namespace hbg::codegen
