//===- compiler/sema/Tables.cpp - Interpolation tables --------------------===//
//
// `table(x, [xs], [ys])` and `table("file.csv", x)`: the breakpoints from
// the call or from a file, and the piecewise-linear interpolation between
// them as selects on the signs of x minus each breakpoint.
//
//===----------------------------------------------------------------------===//

#include "Analyzer.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace hbg::sema {

using namespace hbg::bg;

bool Analyzer::readTable(const ast::Expr &at, std::vector<double> &xs, std::vector<double> &ys) {
  // Relative to the directory of the model's file.
  std::filesystem::path path(at.name);
  if (path.is_relative())
    path = std::filesystem::path(sm_.name(at.range.begin.file)).parent_path() / path;
  std::string text, why;
  if (!readFile(path.string(), text, why)) {
    diags_.report(DiagKind::CannotOpenFile, at.range, {path.string(), why});
    return false;
  }
  // Lines of two numbers separated by a comma; blank lines, lines from
  // `#`, and a first line that does not start with a number (a header)
  // are skipped.
  std::size_t lineNo = 0, start = 0;
  bool first = true;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    std::size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line[b] == '#')
      continue;
    double v[2];
    std::size_t fields = 0;
    const char *p = line.c_str();
    bool ok = true;
    for (;;) {
      char *stop = nullptr;
      double value = std::strtod(p, &stop);
      if (stop == p) {
        ok = false;
        break;
      }
      if (fields < 2)
        v[fields] = value;
      ++fields;
      p = stop;
      while (*p == ' ' || *p == '\t')
        ++p;
      if (*p == '\0')
        break;
      if (*p != ',') {
        ok = false;
        break;
      }
      ++p;
    }
    bool header = first && !ok && fields == 0;
    first = false;
    if (header)
      continue;
    if (!ok || fields != 2 || !std::isfinite(v[0]) || !std::isfinite(v[1])) {
      diags_.report(DiagKind::TableFileLine, at.range, {path.string(), lineNo});
      return false;
    }
    xs.push_back(v[0]);
    ys.push_back(v[1]);
  }
  return true;
}

sym::ExprId Analyzer::lowerTable(const ast::Expr &e, const ExprScope &scope) {
  std::vector<double> xs;
  std::vector<sym::ExprId> ys;
  const ast::Expr *input = nullptr;
  SourceRange where; // the breakpoints, for errors about them
  if (e.operands.size() == 3 && e.operands[1]->kind == ast::ExprKind::Array &&
      e.operands[2]->kind == ast::ExprKind::Array) {
    input = e.operands[0].get();
    const ast::Expr &ax = *e.operands[1], &ay = *e.operands[2];
    where = ax.range;
    if (ax.operands.size() != ay.operands.size()) {
      diags_.report(DiagKind::TableSizes, ay.range, {ax.operands.size(), ay.operands.size()});
      return {};
    }
    bool ok = true;
    for (const ast::ExprPtr &item : ax.operands) {
      sym::ExprId v = lower(*item, {});
      if (!v.valid()) {
        ok = false;
      } else if (!ctx().isConst(v)) {
        diags_.report(DiagKind::TableBreakpoint, item->range);
        ok = false;
      } else {
        xs.push_back(ctx().node(v).value);
      }
    }
    for (const ast::ExprPtr &item : ay.operands) {
      sym::ExprId v = lowerConstant(*item, [] { return std::string("a value of `table`"); });
      ok = ok && v.valid();
      ys.push_back(v);
    }
    if (!ok)
      return {};
  } else if (e.operands.size() == 2 && e.operands[0]->kind == ast::ExprKind::String) {
    input = e.operands[1].get();
    where = e.operands[0]->range;
    std::vector<double> values;
    if (!readTable(*e.operands[0], xs, values))
      return {};
    for (double v : values)
      ys.push_back(ctx().constant(v));
  } else {
    diags_.report(DiagKind::TableArguments, e.range);
    return {};
  }
  if (xs.size() < 2) {
    diags_.report(DiagKind::TableTooShort, where, {xs.size()});
    return {};
  }
  for (std::size_t i = 1; i < xs.size(); ++i)
    if (!(xs[i] > xs[i - 1])) {
      diags_.report(DiagKind::TableNotIncreasing, where, {xs[i], xs[i - 1], i + 1});
      return {};
    }
  sym::ExprId x = lower(*input, scope);
  if (!x.valid())
    return {};
  // From the right: beyond the last breakpoint its value; before it, the
  // segment it ends, unless x is beyond that segment's start; ... ; below
  // the first breakpoint its value. Each comparison of a varying x with a
  // breakpoint is a kink, so the slope's jumps are events.
  sym::ExprContext &c = ctx();
  std::size_t n = xs.size();
  sym::ExprId v = ys[n - 1];
  for (std::size_t i = n - 1; i-- > 0;) {
    sym::ExprId slope =
        c.div(c.sub(ys[i + 1], ys[i]), c.constant(xs[i + 1] - xs[i]));
    sym::ExprId segment = c.add(ys[i], c.mul(slope, c.sub(x, c.constant(xs[i]))));
    v = ifNotNegative(c, c.sub(x, c.constant(xs[i + 1])), v, segment);
  }
  return ifNotNegative(c, c.sub(x, c.constant(xs[0])), v, ys[0]);
}

} // namespace hbg::sema
