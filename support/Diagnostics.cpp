//===- support/Diagnostics.cpp - Diagnostic kinds, run diagnostics -------===//

#include "hbg/support/Diagnostics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

namespace hbg {

namespace {
struct KindInfo {
  const char *name;
  Severity severity;
  const char *format;
};

const KindInfo kKinds[] = {
#define HBG_DIAG(ID, SEVERITY, FORMAT) {#ID, Severity::SEVERITY, FORMAT},
#include "hbg/support/DiagnosticKinds.def"
};

} // namespace

const char *diagKindName(DiagKind kind) { return kKinds[static_cast<int>(kind)].name; }
std::size_t numDiagKinds() { return sizeof kKinds / sizeof kKinds[0]; }
Severity diagKindSeverity(DiagKind kind) { return kKinds[static_cast<int>(kind)].severity; }
const char *diagKindFormat(DiagKind kind) { return kKinds[static_cast<int>(kind)].format; }

DiagArg::DiagArg(double v) {
  std::ostringstream os;
  os.precision(12);
  os << v;
  text_ = os.str();
}

std::string timeText(double t) {
  if (t == 0)
    return "0"; // never `-0`
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, t);
  if (ec != std::errc())
    return "?";
  return std::string(buf, end);
}

DiagArg DiagArg::loop(std::string paths) {
  std::string text = loopsText(paths);
  return {ArgRole::Loop, std::move(text), std::move(paths)};
}

std::string RunDiagnostic::where() const {
  std::string out;
  if (!std::isnan(time))
    out = "at t = " + timeText(time);
  if (!mode.empty())
    out += (out.empty() ? "in mode `" : " in mode `") + mode + "`";
  return out;
}

std::string RunDiagnostic::text(const std::string &model) const {
  std::string at = where();
  return "model `" + model + "`" + (at.empty() ? "" : " " + at) + ": " + message;
}

RunDiagnostic runDiagnostic(DiagKind kind, double t, std::string mode,
                            std::initializer_list<DiagArg> args) {
  const KindInfo &info = kKinds[static_cast<int>(kind)];
  RunDiagnostic d{
      kind, info.severity, t, std::move(mode), {}, {}, formatMessage(info.format, args)};
  for (const DiagArg &a : args) {
    if (a.role() == ArgRole::Element && d.element.empty())
      d.element = a.value();
    if (a.role() == ArgRole::Loop && d.loop.empty())
      d.loop = a.value();
  }
  return d;
}

std::string loopsText(const std::string &paths) {
  std::vector<std::string> each;
  for (std::size_t from = 0;;) {
    std::size_t to = paths.find("; ", from);
    each.push_back(paths.substr(from, to == std::string::npos ? std::string::npos : to - from));
    if (to == std::string::npos)
      break;
    from = to + 2;
  }
  return (each.size() == 1 ? "the algebraic loop " : "the algebraic loops ") + quoteList(each);
}

std::string formatMessage(const char *format, std::initializer_list<DiagArg> args) {
  std::string out;
  const DiagArg *argv = args.begin();
  for (const char *p = format; *p; ++p) {
    if (*p == '{' && p[1] >= '0' && p[1] <= '9' && p[2] == '}') {
      std::size_t i = static_cast<std::size_t>(p[1] - '0');
      if (i >= args.size())
        throw InternalError(std::string("diagnostic format needs argument ") + p[1] + ": " +
                            format);
      out += argv[i].text();
      p += 2;
    } else {
      out += *p;
    }
  }
  return out;
}

/// Edits (insertions, deletions, substitutions and swaps of two adjacent
/// characters) that turn `a` into `b`: `rnu` is one from `run`.
static std::size_t editDistance(const std::string &a, const std::string &b) {
  std::size_t n = a.size(), m = b.size();
  std::vector<std::size_t> d((n + 1) * (m + 1));
  auto at = [&](std::size_t i, std::size_t j) -> std::size_t & { return d[i * (m + 1) + j]; };
  for (std::size_t i = 0; i <= n; ++i)
    at(i, 0) = i;
  for (std::size_t j = 0; j <= m; ++j)
    at(0, j) = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
    }
  return at(n, m);
}

std::string quoteList(const std::vector<std::string> &names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i ? (i + 1 == names.size() ? " and " : ", ") : "") + ("`" + names[i] + "`");
  return out;
}

std::string closestName(const std::string &name, const std::vector<std::string> &candidates) {
  // A suggestion is plausible when at most a third of the longer name is
  // edited (one more for short names): `capacitr` finds `capacitor` and `CC`
  // finds `C`, but `d` does not find `c`.
  // Ties go to the longer common prefix: `sinn` means `sin`, not `sign`.
  auto prefix = [&name](const std::string &c) {
    std::size_t k = 0;
    while (k < name.size() && k < c.size() && name[k] == c[k])
      ++k;
    return k;
  };
  std::size_t best = SIZE_MAX, bestPrefix = 0;
  std::string bestName;
  for (const std::string &c : candidates) {
    std::size_t d = editDistance(name, c);
    if (d == 0 || 3 * d > std::max(name.size(), c.size()) + 1)
      continue;
    if (d < best || (d == best && prefix(c) > bestPrefix)) {
      best = d;
      bestPrefix = prefix(c);
      bestName = c;
    }
  }
  return bestName;
}

} // namespace hbg
