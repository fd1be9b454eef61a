//===- hbg/support/FunctionRef.h - A non-owning reference to a callable ---===//
//
// What std::function is for callbacks that do not outlive the call they
// are passed to, without its copy of the callable: a lambda that captures
// more than two pointers would be allocated on the heap by std::function,
// and the event locator passes such lambdas to the root finder several
// times per event.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <type_traits>
#include <utility>

namespace hbg {

template <class Signature> class FunctionRef;

/// Refers to a callable object (a lambda, a std::function, a function
/// pointer variable) that must outlive the FunctionRef: a lambda passed as
/// an argument lives until the call returns.
template <class R, class... Args> class FunctionRef<R(Args...)> {
public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef> &&
                                              !std::is_function_v<std::remove_reference_t<F>> &&
                                              std::is_invocable_r_v<R, F &, Args...>>>
  FunctionRef(F &&f) // NOLINT: implicit, like std::function
      : object_(const_cast<void *>(static_cast<const void *>(&f))),
        call_([](void *object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F> *>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

private:
  void *object_;
  R (*call_)(void *, Args...);
};

} // namespace hbg
