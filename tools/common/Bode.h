//===- tools/common/Bode.h - Frequency responses drawn as SVG -------------===//
//
// `hbgc ac --plot out.svg`: a Bode diagram, magnitude in dB over phase in
// degrees, both against frequency on a logarithmic axis with a line per
// decade, a curve per output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <complex>
#include <string>
#include <vector>

namespace hbg::tools {

/// Phases in degrees of `h`, unwrapped: each within 180 degrees of the one
/// before, the first in (-180, 180].
std::vector<double> unwrappedPhase(const std::vector<std::complex<double>> &h);

/// The Bode diagram of `responses` (one per name) at `frequencies` (Hz,
/// positive, increasing), as a standalone SVG document.
std::string bodeSvg(const std::string &title, const std::vector<double> &frequencies,
                    const std::vector<std::string> &names,
                    const std::vector<std::vector<std::complex<double>>> &responses);

} // namespace hbg::tools
