//===- grammar/ParserBase.h - The generated parser's base class -*- C++ -*-===//
//
// HbgParser derives from this class (Hbg.g4's superClass option) rather
// than from antlr4::Parser, so that its rule functions find these members
// first where the runtime's cost more than a parser that builds its tree of
// rule contexts only needs:
//
// - `_tracker` allocates the contexts from 64 KB blocks and destroys them
//   all at once; the runtime's tracker allocates and frees each with
//   `new` and `delete`, one per rule invocation.
// - `exitRule` returns to the parent context with a static_cast; the
//   runtime's uses dynamic_cast, although every parent of a context the
//   parser creates is a ParserRuleContext.
// - `finally` holds a rule's exit action without a std::function.
//
// Each hides the antlr4::Parser member or antlrcpp function of the same
// name, which the generated code would otherwise call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <Parser.h>
#include <ParserRuleContext.h>
#include <TokenStream.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace hbg_antlr {

/// Owns the contexts of one parse, allocated from blocks.
class ContextArena {
public:
  ContextArena() = default;
  ContextArena(const ContextArena &) = delete;
  ContextArena &operator=(const ContextArena &) = delete;
  ~ContextArena() { reset(); }

  template <typename T, typename... Args> T *createInstance(Args &&...args) {
    static_assert(std::is_base_of<antlr4::tree::ParseTree, T>::value,
                  "the arena holds parse trees");
    T *tree = new (allocate(sizeof(T), alignof(T))) T(std::forward<Args>(args)...);
    live_.push_back(tree);
    return tree;
  }

  /// Destroys every context and frees the blocks.
  void reset() {
    for (auto tree = live_.rbegin(); tree != live_.rend(); ++tree)
      (*tree)->~ParseTree();
    live_.clear();
    for (char *block : blocks_)
      ::operator delete(block);
    blocks_.clear();
    next_ = end_ = 0;
  }

private:
  static constexpr std::size_t kBlockBytes = 64 * 1024;

  void *allocate(std::size_t size, std::size_t align) {
    std::uintptr_t at = (next_ + align - 1) & ~(align - 1);
    if (at + size > end_) {
      std::size_t bytes = std::max(kBlockBytes, size + align);
      blocks_.push_back(static_cast<char *>(::operator new(bytes)));
      next_ = reinterpret_cast<std::uintptr_t>(blocks_.back());
      end_ = next_ + bytes;
      at = (next_ + align - 1) & ~(align - 1);
    }
    next_ = at + size;
    return reinterpret_cast<void *>(at);
  }

  std::vector<antlr4::tree::ParseTree *> live_;
  std::vector<char *> blocks_;
  std::uintptr_t next_ = 0, end_ = 0; ///< the free part of the last block
};

/// Runs a rule's exit action when the rule function returns or throws.
template <class F> class ExitAction {
public:
  explicit ExitAction(F action) : action_(std::move(action)) {}
  ExitAction(ExitAction &&other) : action_(std::move(other.action_)), armed_(other.armed_) {
    other.armed_ = false;
  }
  ExitAction(const ExitAction &) = delete;
  ExitAction &operator=(const ExitAction &) = delete;
  ~ExitAction() {
    if (armed_)
      action_();
  }

private:
  F action_;
  bool armed_ = true;
};

class ParserBase : public antlr4::Parser {
public:
  explicit ParserBase(antlr4::TokenStream *input) : antlr4::Parser(input) {}

protected:
  template <class F> static ExitAction<F> finally(F action) {
    return ExitAction<F>(std::move(action));
  }

  void exitRule() {
    _ctx->stop = _input->LT(_matchedEOF ? 1 : -1);
    if (!_parseListeners.empty())
      triggerExitRuleEvent();
    setState(_ctx->invokingState);
    _ctx = static_cast<antlr4::ParserRuleContext *>(_ctx->parent);
  }

  ContextArena _tracker;
};

} // namespace hbg_antlr
