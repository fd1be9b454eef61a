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

void writeMat(std::ostream &os, const std::vector<std::string> &names,
              const std::vector<std::vector<double>> &columns,
              const std::vector<std::string> &parameterNames,
              const std::vector<double> &parameterValues) {
  text(os, "Aclass", {"Atrajectory", "1.1", "", "binTrans"}, false);
  std::vector<std::string> all = names, descriptions(names.size());
  if (!descriptions.empty())
    descriptions[0] = "Time in [s]";
  all.insert(all.end(), parameterNames.begin(), parameterNames.end());
  descriptions.resize(all.size(), "parameter");
  text(os, "name", all, true);
  text(os, "description", descriptions, true);

  std::size_t outputs = names.size(), params = parameterNames.size();
  std::vector<std::int32_t> info;
  for (std::size_t i = 0; i < outputs; ++i) {
    std::int32_t column = static_cast<std::int32_t>(i + 1);
    info.insert(info.end(), {i == 0 ? 0 : 2, column, 0, -1});
  }
  for (std::size_t k = 0; k < params; ++k)
    info.insert(info.end(), {1, static_cast<std::int32_t>(k + 2), 0, 0});
  header(os, kInt32, 4, all.size(), "dataInfo");
  os.write(reinterpret_cast<const char *>(info.data()),
           static_cast<std::streamsize>(info.size() * sizeof(std::int32_t)));

  std::size_t rows = columns.empty() ? 0 : columns[0].size();
  double t0 = rows ? columns[0].front() : 0, t1 = rows ? columns[0].back() : 0;
  header(os, kDouble, params + 1, 2, "data_1");
  for (double t : {t0, t1}) {
    std::vector<double> column{t};
    column.insert(column.end(), parameterValues.begin(), parameterValues.begin() +
                                                            static_cast<std::ptrdiff_t>(params));
    doubles(os, column);
  }

  header(os, kDouble, outputs, rows, "data_2");
  std::vector<double> sample(outputs);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < outputs; ++i)
      sample[i] = columns[i][r];
    doubles(os, sample);
  }
}

} // namespace hbg::runtime
