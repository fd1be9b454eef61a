//===- compiler/tooling/FmuExport.h - FMI 3.0 packaging -------------------===//
#pragma once

#include "hbg/runtime/Image.h"

#include <string>
#include <utility>
#include <vector>

namespace hbg::driver {

/// modelDescription.xml of the FMU of `image` (FMI 3.0, Model Exchange and
/// Co-Simulation): its variables numbered as hbg/runtime/FmuLayout.h
/// numbers them, its model structure, its default experiment.
std::string modelDescription(const runtime::ModelImage &image, const std::string &token);

/// Writes a zip archive of `entries` (name, contents), stored without
/// compression. Throws std::runtime_error when it cannot be written.
void writeZip(const std::string &path, const std::vector<std::pair<std::string, std::string>> &entries);

} // namespace hbg::driver
