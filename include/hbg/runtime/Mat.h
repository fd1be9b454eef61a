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

#include <ostream>
#include <string>
#include <vector>

namespace hbg::runtime {

/// Writes the result file sample by sample: `names` are `time` and the
/// outputs; the parameters are stored as constants. To a file opened for
/// it (`seekable`), each sample is written as it comes and finish() writes
/// the count and the end time into the headers; to anything else (a pipe,
/// standard output, which may be a file opened for appending), the
/// samples are held until finish().
class MatWriter {
public:
  MatWriter(std::ostream &os, std::vector<std::string> names,
            std::vector<std::string> parameterNames, std::vector<double> parameterValues,
            bool seekable);
  /// One sample: time, then each output.
  void row(const double *values);
  /// Completes the file after the last sample. False when the file cannot
  /// hold the samples (more than 2^31 - 1 of them, its format's limit).
  bool finish();

private:
  void writeHead(double t0, double t1, std::size_t samples);
  std::ostream &os_;
  std::vector<std::string> names_, parameterNames_;
  std::vector<double> parameterValues_;
  bool seekable_ = false;
  /// Where data_1's values and data_2's column count are (seekable).
  std::streampos data1_ = 0, data2Columns_ = 0;
  std::size_t samples_ = 0;
  double t0_ = 0, t1_ = 0;
  std::vector<double> held_; ///< the samples, to a stream that cannot seek
};

/// The whole file at once, from `columns` (time, then each output).
void writeMat(std::ostream &os, const std::vector<std::string> &names,
              const std::vector<std::vector<double>> &columns,
              const std::vector<std::string> &parameterNames,
              const std::vector<double> &parameterValues);

} // namespace hbg::runtime
