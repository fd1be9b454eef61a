//===- hbg/runtime/ResultWriter.h - A run's rows written as they come ----===//
//
// The runtime's output sink: a run hands each output row over as it is
// computed (SimulateOptions::onRow), and a writer puts it into CSV, an
// aligned table or a MATLAB v4 result file, so that nothing is held for
// the whole run and every front door (`hbgc run`, a built simulator, a
// sweep's trajectories) writes the same bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Mat.h"

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace hbg::runtime {

/// How a trajectory is written: CSV (RFC 4180), an aligned table for
/// reading, or the MATLAB v4 result file of Modelica tools.
enum class ResultFormat { Csv, Table, Mat };

class ResultWriter {
public:
  /// `names`: time, then the outputs. The MATLAB file also holds the
  /// parameters. Writes the header now. `file`: `os` is a file opened for
  /// the results (the MATLAB file is then written as the rows come), not
  /// standard output.
  ResultWriter(std::ostream &os, ResultFormat format, std::vector<std::string> names,
               std::vector<std::string> parameterNames = {},
               std::vector<double> parameterValues = {}, bool file = false);
  void row(const double *values);
  /// After the last row (the MATLAB file's counts): "" or what the format
  /// could not hold.
  std::string finish();

private:
  std::ostream &os_;
  ResultFormat format_;
  std::size_t width_;
  std::unique_ptr<MatWriter> mat_;
};

} // namespace hbg::runtime
