//===- hbg/runtime/SmallSignal.h - Frequency response of a periodic state --===//
//
// The small-signal frequency response of a switching system around its
// periodic steady state (Periodic.h). An input u (a parameter, an input or
// a source's amplitude) is perturbed by a small sinusoid, delta u(t) =
// Re(e^{j w t}). Around the periodic solution the perturbation obeys a
// linear system with periodic coefficients: delta x' = A(t) delta x +
// b(t) delta u inside each mode, and at each event a jump through the
// saltation matrix S plus the input's own share, s_u delta u, which
// includes the event time moving with u (a perturbed duty moves the PWM
// edges). Its response at the input's frequency is e^{j w t} p(t) with p
// periodic: in the rotating frame p' = (A(t) - j w) p + b(t), p+ = S p- +
// s_u at events, p(t0 + T) = p(t0), a linear system for p(t0). The
// output's component at w, the response, is the mean over the period of
// c(t) p(t) + d(t) (c, d: the outputs' derivatives by the state and by u):
// the sampled-data transfer function of the switching system itself, not
// of an averaged model, and exact for piecewise-linear circuits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Periodic.h"

#include <complex>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace hbg::runtime {

/// The input of a frequency response: `perturb(delta)` sets it to its
/// steady value plus delta (0 restores it), and `scale` is its magnitude,
/// which difference steps are a fraction of.
struct SmallSignalInput {
  std::string name;
  std::function<void(double delta)> perturb;
  double scale = 1;
};

struct FrequencyResponse {
  std::vector<double> frequencies;
  /// response[i][k]: output i's response at frequencies[k] per unit of
  /// the input, as a complex amplitude (magnitude and phase).
  std::vector<std::vector<std::complex<double>>> response;
  std::string error;
  std::optional<RunDiagnostic> failure;
  bool ok() const { return error.empty(); }
};

/// The response of every output of `system` to `input` at `frequencies`
/// (Hz), around the periodic steady state `steady` (found with `base`'s
/// settings over `period`).
void frequencyResponse(System &system, const SteadyResult &steady, const SimulateOptions &base,
                       double period, const SmallSignalInput &input,
                       const std::vector<double> &frequencies, FrequencyResponse &out);

} // namespace hbg::runtime
