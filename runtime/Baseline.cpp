//===- runtime/Baseline.cpp - Tapes as machine code, one op at a time -----===//
//
// Each function's frame keeps its four pointers in callee-saved registers
// (x in rbx, p in rbp, the values in r13, out in r14), so that calls to
// libm leave them alone. States, parameters and the time are read where
// they are; every other instruction i stores its value at values[i]. The
// value just computed stays in xmm0, and an operand that is the previous
// instruction's is not loaded again. +, -, *, / are SSE2's scalar
// operations on the same operands in the same order as the interpreter;
// negation and fabs flip or clear the sign bit, as the interpreter's
// compiled code does; every other op calls the function the interpreter
// calls (TapeFunctions.h), so that both tiers give the same bits.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Baseline.h"

#include "TapeFunctions.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#if defined(__x86_64__) && defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#define HBG_BASELINE 1
#endif

namespace hbg::runtime {

#ifdef HBG_BASELINE
namespace {

/// Base registers: their numbers in the ModRM and REX encodings.
enum Reg : std::uint8_t { kRbx = 3, kRbp = 5, kR13 = 13, kR14 = 14 };
constexpr Reg kXReg = kRbx, kPReg = kRbp, kValues = kR13, kOut = kR14;

class Emitter {
public:
  std::vector<std::uint8_t> bytes;

  void put(std::initializer_list<std::uint8_t> b) { bytes.insert(bytes.end(), b); }
  void u32(std::uint32_t v) {
    for (int k = 0; k < 4; ++k)
      bytes.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
  }
  void u64(std::uint64_t v) {
    for (int k = 0; k < 8; ++k)
      bytes.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
  }
  /// `prefix 0F op` between xmm register `xmm` and [base + 8 * index].
  void sse(std::uint8_t prefix, std::uint8_t op, int xmm, Reg base, std::uint32_t index) {
    bytes.push_back(prefix);
    if (base >= 8)
      bytes.push_back(0x41); // REX.B
    put({0x0F, op, static_cast<std::uint8_t>(0x80 | (xmm << 3) | (base & 7))});
    u32(index * 8);
  }
  void load(int xmm, Reg base, std::uint32_t index) { sse(0xF2, 0x10, xmm, base, index); }
  void store(Reg base, std::uint32_t index) { sse(0xF2, 0x11, 0, base, index); }
  void movRax(std::uint64_t v) {
    put({0x48, 0xB8});
    u64(v);
  }
  void call(TapeFunction fn) {
    movRax(reinterpret_cast<std::uint64_t>(fn));
    put({0xFF, 0xD0}); // call rax
  }
  /// xmm0 = xmm0 op mask (op 0x57: xorpd, 0x54: andpd), through xmm1.
  void mask(std::uint8_t op, std::uint64_t m) {
    movRax(m);
    put({0x66, 0x48, 0x0F, 0x6E, 0xC8}); // movq xmm1, rax
    put({0x66, 0x0F, op, 0xC1});
  }

  void prologue(std::uint32_t timeSlot) {
    put({0x53, 0x55, 0x41, 0x55, 0x41, 0x56}); // push rbx, rbp, r13, r14
    put({0x48, 0x83, 0xEC, 0x08});             // sub rsp, 8: calls see rsp 16-aligned
    put({0x48, 0x89, 0xFB});                   // mov rbx, rdi (x)
    put({0x48, 0x89, 0xF5});                   // mov rbp, rsi (p)
    put({0x49, 0x89, 0xD6});                   // mov r14, rdx (out)
    put({0x49, 0x89, 0xCD});                   // mov r13, rcx (values)
    store(kValues, timeSlot);                  // t, from xmm0
  }
  void epilogue() {
    put({0x48, 0x83, 0xC4, 0x08});                   // add rsp, 8
    put({0x41, 0x5E, 0x41, 0x5D, 0x5D, 0x5B, 0xC3}); // pop r14, r13, rbp, rbx; ret
  }
};

/// Appends the code of `tape` to `e`.
void translateTape(const Tape &tape, Emitter &e) {
  const std::vector<TapeInstr> &code = tape.code;
  std::uint32_t timeSlot = static_cast<std::uint32_t>(code.size());
  e.prologue(timeSlot);
  // Where instruction j's value is read: states, parameters and the time
  // where they are, every other value where it was stored.
  struct Slot {
    Reg base;
    std::uint32_t index;
  };
  auto slot = [&](std::uint32_t j) -> Slot {
    switch (code[j].op) {
    case TapeOp::X: return {kXReg, code[j].a};
    case TapeOp::P: return {kPReg, code[j].a};
    case TapeOp::Time: return {kValues, timeSlot};
    default: return {kValues, j};
    }
  };
  auto load = [&](int xmm, std::uint32_t j) {
    Slot s = slot(j);
    e.load(xmm, s.base, s.index);
  };
  constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t inXmm0 = kNone; // the instruction whose value xmm0 holds
  auto operand = [&](std::uint32_t a) {
    if (inXmm0 != a)
      load(0, a);
  };
  for (std::uint32_t i = 0; i < code.size(); ++i) {
    const TapeInstr &in = code[i];
    switch (in.op) {
    case TapeOp::Const: {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &in.value, sizeof bits);
      e.movRax(bits);
      e.put({0x49, 0x89, 0x85}); // mov [r13 + disp32], rax
      e.u32(i * 8);
      continue; // xmm0 keeps its value
    }
    case TapeOp::Time:
    case TapeOp::X:
    case TapeOp::P:
      continue; // read where they are
    case TapeOp::Add:
    case TapeOp::Sub:
    case TapeOp::Mul:
    case TapeOp::Div: {
      std::uint8_t op = in.op == TapeOp::Add   ? 0x58
                        : in.op == TapeOp::Sub ? 0x5C
                        : in.op == TapeOp::Mul ? 0x59
                                               : 0x5E;
      operand(in.a);
      Slot b = slot(in.b);
      e.sse(0xF2, op, 0, b.base, b.index);
      break;
    }
    case TapeOp::Neg:
      operand(in.a);
      e.mask(0x57, 0x8000000000000000ull);
      break;
    case TapeOp::Abs:
      operand(in.a);
      e.mask(0x54, 0x7FFFFFFFFFFFFFFFull);
      break;
    default: {
      int n = arity(in.op);
      operand(in.a);
      if (n >= 2)
        load(1, in.b);
      if (n >= 3)
        load(2, in.c);
      e.call(tapeFunction(code, in));
      break;
    }
    }
    e.store(kValues, i);
    inXmm0 = i;
  }
  for (std::uint32_t k = 0; k < tape.results.size(); ++k) {
    load(0, tape.results[k]);
    e.sse(0xF2, 0x11, 0, kOut, k);
  }
  e.epilogue();
}

/// Whether every instruction has an op the translation knows and operands
/// before it, and slots fit a 32-bit displacement.
bool translatable(const Tape &tape) {
  if (tape.code.size() >= (1u << 27) || tape.results.size() >= (1u << 27))
    return false;
  for (const TapeInstr &in : tape.code)
    if ((in.op == TapeOp::X || in.op == TapeOp::P) && in.a >= (1u << 27))
      return false;
  for (const TapeInstr &in : tape.code)
    if (static_cast<std::size_t>(in.op) >= kNumTapeOps ||
        (in.op > TapeOp::P && in.op != TapeOp::Add && in.op != TapeOp::Sub &&
         in.op != TapeOp::Mul && in.op != TapeOp::Div && in.op != TapeOp::Neg &&
         in.op != TapeOp::Abs && !tapeFunction(tape.code, in)))
      return false;
  return tape.verify().empty();
}

} // namespace

std::shared_ptr<const BaselineCode> BaselineCode::translate(const std::vector<const Tape *> &tapes) {
  Emitter e;
  std::vector<std::size_t> offsets;
  for (const Tape *tape : tapes) {
    if (!translatable(*tape))
      return nullptr;
    // 16-byte aligned entries.
    while (e.bytes.size() % 16)
      e.bytes.push_back(0xCC);
    offsets.push_back(e.bytes.size());
    translateTape(*tape, e);
  }
  long page = sysconf(_SC_PAGESIZE);
  std::size_t pageSize = page > 0 ? static_cast<std::size_t>(page) : 4096;
  std::size_t mapped = (e.bytes.size() + pageSize - 1) / pageSize * pageSize;
  if (mapped == 0)
    mapped = pageSize;
  void *mem = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
    return nullptr;
  std::memcpy(mem, e.bytes.data(), e.bytes.size());
  if (mprotect(mem, mapped, PROT_READ | PROT_EXEC) != 0) {
    munmap(mem, mapped);
    return nullptr;
  }
  std::shared_ptr<BaselineCode> code(new BaselineCode);
  code->memory_ = mem;
  code->mapped_ = mapped;
  code->size_ = e.bytes.size();
  for (std::size_t off : offsets)
    code->entries_.push_back(reinterpret_cast<Entry>(static_cast<std::uint8_t *>(mem) + off));
  return code;
}

BaselineCode::~BaselineCode() {
  if (memory_)
    munmap(memory_, mapped_);
}

#else

std::shared_ptr<const BaselineCode> BaselineCode::translate(const std::vector<const Tape *> &) {
  return nullptr;
}

BaselineCode::~BaselineCode() = default;

#endif

} // namespace hbg::runtime
