//===- runtime/ResultWriter.cpp - A run's rows written as they come -------===//

#include "hbg/runtime/ResultWriter.h"

#include "hbg/runtime/Csv.h"

namespace hbg::runtime {

ResultWriter::ResultWriter(std::ostream &os, ResultFormat format, std::vector<std::string> names,
                           std::vector<std::string> parameterNames,
                           std::vector<double> parameterValues, bool file)
    : os_(os), format_(format), width_(names.size()) {
  switch (format_) {
  case ResultFormat::Csv:
    writeCsvHeader(os_, names);
    break;
  case ResultFormat::Table:
    writeTableHeader(os_, names);
    break;
  case ResultFormat::Mat:
    mat_ = std::make_unique<MatWriter>(os_, std::move(names), std::move(parameterNames),
                                       std::move(parameterValues), file);
    break;
  }
}

void ResultWriter::row(const double *values) {
  switch (format_) {
  case ResultFormat::Csv:
    writeCsvRow(os_, values, width_);
    return;
  case ResultFormat::Table:
    writeTableRow(os_, values, width_);
    return;
  case ResultFormat::Mat:
    mat_->row(values);
    return;
  }
}

std::string ResultWriter::finish() {
  if (mat_ && !mat_->finish())
    return "the run has more samples than a MATLAB v4 file holds (2^31 - 1); write CSV, or a "
           "larger --dt-out";
  return "";
}

} // namespace hbg::runtime
