//===- runtime/Mat.cpp - Results as a MATLAB v4 result file ---------------===//
//
// Written directly rather than through libmatio: version 4 is five 32-bit
// integers, a name and the data, column by column, and writing it here
// keeps built simulators free of another library (docs/results.md).
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Mat.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <ostream>

namespace hbg::runtime {

namespace {

static_assert(sizeof(double) == 8, "MATLAB v4 doubles are IEEE binary64");
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the type field says little-endian");

// The type field: 0 for little-endian IEEE (x86-64, AArch64), then the
// element type (0 double, 2 int32, 5 uint8), then 1 for text.
constexpr std::int32_t kDouble = 0, kInt32 = 20, kText = 51;

void header(std::ostream &os, std::int32_t type, std::size_t rows, std::size_t cols,
            const char *name) {
  std::int32_t h[5] = {type, static_cast<std::int32_t>(rows), static_cast<std::int32_t>(cols), 0,
                       static_cast<std::int32_t>(std::strlen(name) + 1)};
  os.write(reinterpret_cast<const char *>(h), sizeof h);
  os.write(name, static_cast<std::streamsize>(std::strlen(name) + 1));
}

/// Strings as a text matrix: one string per column (`byColumn`, as
/// `name` and `description`), or per row (`Aclass`), padded with spaces.
void text(std::ostream &os, const char *name, const std::vector<std::string> &strings,
          bool byColumn) {
  std::size_t width = 1;
  for (const std::string &s : strings)
    width = std::max(width, s.size());
  std::size_t n = strings.size();
  header(os, kText, byColumn ? width : n, byColumn ? n : width, name);
  std::string data(width * n, ' ');
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < strings[i].size(); ++k)
      data[byColumn ? i * width + k : k * n + i] = strings[i][k];
  os.write(data.data(), static_cast<std::streamsize>(data.size()));
}

void doubles(std::ostream &os, const std::vector<double> &v) {
  os.write(reinterpret_cast<const char *>(v.data()),
           static_cast<std::streamsize>(v.size() * sizeof(double)));
}

} // namespace

MatWriter::MatWriter(std::ostream &os, std::vector<std::string> names,
                     std::vector<std::string> parameterNames, std::vector<double> parameterValues,
                     bool seekable)
    : os_(os), names_(std::move(names)), parameterNames_(std::move(parameterNames)),
      parameterValues_(std::move(parameterValues)) {
  parameterValues_.resize(parameterNames_.size());
  seekable_ = seekable && os_.tellp() != std::streampos(-1);
  if (seekable_)
    writeHead(0, 0, 0); // the end time and the count are written by finish()
}

void MatWriter::writeHead(double t0, double t1, std::size_t samples) {
  text(os_, "Aclass", {"Atrajectory", "1.1", "", "binTrans"}, false);
  std::vector<std::string> all = names_, descriptions(names_.size());
  if (!descriptions.empty())
    descriptions[0] = "Time in [s]";
  all.insert(all.end(), parameterNames_.begin(), parameterNames_.end());
  descriptions.resize(all.size(), "parameter");
  text(os_, "name", all, true);
  text(os_, "description", descriptions, true);

  std::size_t outputs = names_.size(), params = parameterNames_.size();
  std::vector<std::int32_t> info;
  for (std::size_t i = 0; i < outputs; ++i)
    info.insert(info.end(), {i == 0 ? 0 : 2, static_cast<std::int32_t>(i + 1), 0, -1});
  for (std::size_t k = 0; k < params; ++k)
    info.insert(info.end(), {1, static_cast<std::int32_t>(k + 2), 0, 0});
  header(os_, kInt32, 4, all.size(), "dataInfo");
  os_.write(reinterpret_cast<const char *>(info.data()),
            static_cast<std::streamsize>(info.size() * sizeof(std::int32_t)));

  header(os_, kDouble, params + 1, 2, "data_1");
  if (seekable_)
    data1_ = os_.tellp();
  for (double t : {t0, t1}) {
    std::vector<double> column{t};
    column.insert(column.end(), parameterValues_.begin(), parameterValues_.end());
    doubles(os_, column);
  }
  if (seekable_) // the header's third field: the number of columns (samples)
    data2Columns_ = os_.tellp() + static_cast<std::streamoff>(2 * sizeof(std::int32_t));
  header(os_, kDouble, outputs, samples, "data_2");
}

void MatWriter::row(const double *values) {
  if (samples_ >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    return; // finish() says the file cannot hold them
  if (samples_++ == 0)
    t0_ = values[0];
  t1_ = values[0];
  if (seekable_)
    os_.write(reinterpret_cast<const char *>(values),
              static_cast<std::streamsize>(names_.size() * sizeof(double)));
  else
    held_.insert(held_.end(), values, values + names_.size());
}

bool MatWriter::finish() {
  bool fits = samples_ < static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());
  if (!seekable_) {
    writeHead(t0_, t1_, samples_);
    doubles(os_, held_);
    held_.clear();
    return fits;
  }
  std::streampos end = os_.tellp();
  std::size_t params = parameterNames_.size();
  os_.seekp(data1_);
  os_.write(reinterpret_cast<const char *>(&t0_), sizeof t0_);
  os_.seekp(data1_ + static_cast<std::streamoff>((params + 1) * sizeof(double))); // end
  os_.write(reinterpret_cast<const char *>(&t1_), sizeof t1_);
  std::int32_t columns = static_cast<std::int32_t>(samples_);
  os_.seekp(data2Columns_);
  os_.write(reinterpret_cast<const char *>(&columns), sizeof columns);
  os_.seekp(end);
  return fits;
}

void writeMat(std::ostream &os, const std::vector<std::string> &names,
              const std::vector<std::vector<double>> &columns,
              const std::vector<std::string> &parameterNames,
              const std::vector<double> &parameterValues) {
  MatWriter w(os, names, parameterNames, parameterValues, false);
  std::size_t rows = columns.empty() ? 0 : columns[0].size();
  std::vector<double> sample(names.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < names.size(); ++i)
      sample[i] = columns[i][r];
    w.row(sample.data());
  }
  if (!w.finish())
    throw std::length_error("a MATLAB v4 result file holds at most 2^31 - 1 samples");
}

} // namespace hbg::runtime
