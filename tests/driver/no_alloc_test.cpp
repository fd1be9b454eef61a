//===- tests/driver/no_alloc_test.cpp - Model entry points do not allocate ===//
//
// Model::rhs and Model::outputs are called in hand-written loops and by
// other integrators; after the first call on a thread they must not
// allocate (models with nonlinear loops still do: Newton's method keeps
// its iterates on the heap). This test counts every global operator new
// of the calling thread: a tiered model's code is compiled on a thread of
// its own, which allocates whenever it runs.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

namespace {
thread_local std::size_t allocations = 0;
} // namespace

// Every form of the global allocation functions, replaced together so that
// each allocation is a malloc and each deallocation a free (under the
// sanitizers too, which check that they pair).
namespace {
void *counted(std::size_t n, std::size_t align = 0) {
  ++allocations;
  std::size_t size = n ? n : 1;
  if (align > alignof(std::max_align_t))
    size = (size + align - 1) / align * align;
  return align > alignof(std::max_align_t) ? std::aligned_alloc(align, size) : std::malloc(size);
}
void *orThrow(void *p) {
  if (!p)
    throw std::bad_alloc();
  return p;
}
} // namespace

void *operator new(std::size_t n) { return orThrow(counted(n)); }
void *operator new[](std::size_t n) { return orThrow(counted(n)); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept { return counted(n); }
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return counted(n); }
void *operator new(std::size_t n, std::align_val_t a) {
  return orThrow(counted(n, static_cast<std::size_t>(a)));
}
void *operator new[](std::size_t n, std::align_val_t a) {
  return orThrow(counted(n, static_cast<std::size_t>(a)));
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

/// Allocations made by `f` after one warm-up call.
template <class F> std::size_t allocationsOf(F &&f) {
  f();
  std::size_t before = allocations;
  for (int k = 0; k < 10; ++k)
    f();
  return allocations - before;
}

} // namespace

TEST_CASE("Model::rhs and Model::outputs allocate nothing after the first call") {
  struct Case {
    const char *what, *file;
  };
  for (Case c : {Case{"plain", "rlc.hbg"}, Case{"switched", "bouncing_ball.hbg"},
                 Case{"kinks", "stick_slip.hbg"}}) {
    CAPTURE(c.what);
    hbg::Model model =
        hbg::Compiler().compileFile(std::string(HBG_SOURCE_DIR) + "/examples/" + c.file);
    std::vector<double> p = model.parameterValues(), x = model.initialState(p);
    std::vector<double> xdot(x.size()), y(model.outputNames().size());
    CHECK(allocationsOf([&] { model.rhs(0.1, x.data(), p.data(), xdot.data()); }) == 0);
    CHECK(allocationsOf([&] { model.outputs(0.1, x.data(), p.data(), y.data()); }) == 0);
  }
}
