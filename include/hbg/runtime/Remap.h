//===- hbg/runtime/Remap.h - State remapping at mode changes --------------===//
//
// When a new mode makes storage dependent, the stored quantities jump. The
// impulse into dependent storage is taken out of independent storage along
// the junction structure (the impulse matrix B), and afterwards the new
// mode's constraints d = D(x) hold:
//
//     x+ - x- = B (D(x+) - d-),    d+ = D(x+)
//
// remapExact solves this by Newton's method with the Jacobian I - B dD/dx
// (one step for linear storage); remapIterative is HYBRSIM's redistribution
// of a fraction of the inconsistency at a time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/System.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace hbg::runtime {

/// The matrices and vectors of remapExact, kept between remaps so that a
/// run's events allocate nothing for them once their sizes have been seen.
class RemapWorkspace {
public:
  RemapWorkspace();
  ~RemapWorkspace();
  RemapWorkspace(const RemapWorkspace &) = delete;
  RemapWorkspace &operator=(const RemapWorkspace &) = delete;
  struct Impl;
  Impl &impl() { return *impl_; }

private:
  std::unique_ptr<Impl> impl_;
};

/// Remaps into `mode` at time `t`: `x` holds the mode's independent states
/// before the jump on entry and after it on return, `d` the dependent
/// storage's values likewise. `modeText` names the mode in errors. Throws
/// RunError when the system is singular or does not converge.
void remapExact(Mode &mode, const std::string &modeText, double t, std::vector<double> &x,
                std::vector<double> &d, RemapWorkspace &work);
void remapExact(Mode &mode, const std::string &modeText, double t, std::vector<double> &x,
                std::vector<double> &d);

/// HYBRSIM's iteration: moves `factor` of the difference between D(x) and d
/// into d (and out of x along B) until it is below `tolerance` relative to
/// the values; `step(x, d)` sees every iterate.
void remapIterative(Mode &mode, const std::string &modeText, double t, double factor,
                    double tolerance, std::vector<double> &x, std::vector<double> &d,
                    const std::function<void(const std::vector<double> &x,
                                             const std::vector<double> &d)> &step);

} // namespace hbg::runtime
