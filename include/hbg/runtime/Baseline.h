//===- hbg/runtime/Baseline.h - Tapes as machine code, one op at a time ---===//
//
// The baseline tier: each tape instruction translated to a few x86-64
// instructions (load the operands from the values array, do the op, store
// the result), with no optimisation and no register allocation beyond
// keeping the last result in a register. Translating takes tens of
// nanoseconds per instruction where LLVM's quickest tier takes about ten
// microseconds, and the code runs several times faster than the tape's
// interpreter. Its arithmetic is the tape's: the same IEEE operations in
// the same order, and the same functions for everything else, so its
// values equal the tape's and LLVM's bit for bit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Tape.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace hbg::runtime {

/// Machine code for a group of tapes, in one executable mapping.
class BaselineCode {
public:
  /// One tape's code: out = the tape's results at (t, x, p), with
  /// `values` holding at least valuesNeeded(tape) doubles.
  using Entry = void (*)(const double *x, const double *p, double *out, double *values, double t);

  /// The code of each of `tapes`; null when this machine is not x86-64,
  /// a tape is too large to address, or executable memory cannot be had
  /// (the tapes then run in their interpreter).
  static std::shared_ptr<const BaselineCode> translate(const std::vector<const Tape *> &tapes);
  /// Doubles of `values` a tape's code needs: one per instruction, and
  /// the time.
  static std::size_t valuesNeeded(const Tape &tape) { return tape.code.size() + 1; }

  BaselineCode(const BaselineCode &) = delete;
  BaselineCode &operator=(const BaselineCode &) = delete;
  ~BaselineCode();

  Entry entry(std::size_t i) const { return entries_[i]; }
  /// Bytes of machine code.
  std::size_t size() const { return size_; }

private:
  BaselineCode() = default;
  void *memory_ = nullptr;
  std::size_t size_ = 0, mapped_ = 0;
  std::vector<Entry> entries_;
};

} // namespace hbg::runtime
