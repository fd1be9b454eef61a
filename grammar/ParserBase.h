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
// - `exitRule` also tells a derived class when one watched context's rule
//   has ended, so that it can turn the context into its AST at once and
//   release it (compiler/syntax/Parser.cpp does this for each of a
//   model's declarations, so that the tree never holds more than one).
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
#include <exception>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace hbg_antlr {

/// Owns the contexts of one parse, allocated from blocks.
class ContextArena {
public:
  /// A point to release back to.
  struct Mark {
    std::size_t live = 0;
    std::size_t block = 0;
    std::uintptr_t next = 0;
  };

  ContextArena() = default;
  ContextArena(const ContextArena &) = delete;
  ContextArena &operator=(const ContextArena &) = delete;
  ~ContextArena() { reset(); }

  template <typename T, typename... Args> T *createInstance(Args &&...args) {
    static_assert(std::is_base_of<antlr4::tree::ParseTree, T>::value,
                  "the arena holds parse trees");
    void *at = allocate(sizeof(T), alignof(T));
    T *tree = new (at) T(std::forward<Args>(args)...);
    live_.push_back(tree);
    last_ = Mark{live_.size() - 1, current_, reinterpret_cast<std::uintptr_t>(at)};
    return tree;
  }

  /// The point just before the last context created.
  Mark beforeLast() const { return last_; }

  /// Destroys the contexts created since `mark`, and reuses their memory.
  void release(const Mark &mark) {
    for (std::size_t i = live_.size(); i-- > mark.live;)
      live_[i]->~ParseTree();
    live_.resize(mark.live);
    current_ = mark.block;
    next_ = mark.next;
    end_ = current_ < blocks_.size() ? reinterpret_cast<std::uintptr_t>(blocks_[current_].base) +
                                           blocks_[current_].bytes
                                     : 0;
  }

  /// Destroys every context and frees the blocks.
  void reset() {
    release(Mark{0, kNone, 0});
    for (const Block &block : blocks_)
      ::operator delete(block.base);
    blocks_.clear();
  }

private:
  static constexpr std::size_t kBlockBytes = 64 * 1024;
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  struct Block {
    char *base;
    std::size_t bytes;
  };

  void *allocate(std::size_t size, std::size_t align) {
    for (;;) {
      std::uintptr_t at = (next_ + align - 1) & ~(align - 1);
      if (next_ != 0 && at + size <= end_) {
        next_ = at + size;
        return reinterpret_cast<void *>(at);
      }
      // The next block, kept from before a release if there is one.
      if (++current_ == blocks_.size()) {
        std::size_t bytes = std::max(kBlockBytes, size + align);
        blocks_.push_back(Block{static_cast<char *>(::operator new(bytes)), bytes});
      }
      next_ = reinterpret_cast<std::uintptr_t>(blocks_[current_].base);
      end_ = next_ + blocks_[current_].bytes;
    }
  }

  std::vector<antlr4::tree::ParseTree *> live_;
  std::vector<Block> blocks_;
  std::size_t current_ = kNone;       ///< the block being filled
  std::uintptr_t next_ = 0, end_ = 0; ///< its free part
  Mark last_;
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
    antlr4::ParserRuleContext *done = _ctx;
    done->stop = _input->LT(_matchedEOF ? 1 : -1);
    if (!_parseListeners.empty())
      triggerExitRuleEvent();
    setState(done->invokingState);
    _ctx = static_cast<antlr4::ParserRuleContext *>(done->parent);
    if (done == watched_) {
      watched_ = nullptr;
      // Not while a syntax error unwinds the rules: the context is partial.
      if (std::uncaught_exceptions() == 0)
        watchedExited(done);
    }
  }

  /// Called when the rule of `watched_` has ended normally, `_ctx` back at
  /// its parent.
  virtual void watchedExited(antlr4::ParserRuleContext *) {}

  ContextArena _tracker;
  antlr4::ParserRuleContext *watched_ = nullptr;
};

} // namespace hbg_antlr
