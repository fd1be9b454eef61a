//===- hbg/runtime/Mat.h - Results as a MATLAB v4 result file -------------===//
//
// The result format Modelica tools read (Dymola's `dsres`, OpenModelica's
// `_res.mat`): a MATLAB version 4 file holding the matrices
//
//   Aclass       "Atrajectory", "1.1", "", "binTrans" (4 rows of text)
//   name         each variable's name, one per column
//   description  each variable's description, one per column
//   dataInfo     per variable: its matrix (0 time, 1 data_1, 2 data_2),
//                its column there, 0 (interpolated linearly) and -1 (not
//                defined outside the time range; 0 for constants)
//   data_1       constants: time's first and last value, then each
//                parameter's value twice (start and end)
//   data_2       the trajectories: per sample, time then each output
//
// stored transposed ("binTrans"), so that each sample's values are
// contiguous, as Modelica tools write them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace hbg::runtime {

/// Writes the result file: `names` are `time` and the outputs, `columns`
/// their samples; the parameters are stored as constants.
void writeMat(std::ostream &os, const std::vector<std::string> &names,
              const std::vector<std::vector<double>> &columns,
              const std::vector<std::string> &parameterNames,
              const std::vector<double> &parameterValues);

} // namespace hbg::runtime
