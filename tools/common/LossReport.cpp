//===- tools/common/LossReport.cpp - Losses and efficiency on the report --===//

#include "LossReport.h"

#include "Cli.h"

#include "hbg/runtime/Csv.h"
#include "hbg/support/Diagnostics.h"

#include <cstdio>
#include <ostream>

namespace hbg::tools {

Efficiency parseEfficiency(const std::string &spec) {
  std::size_t slash = spec.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == spec.size() ||
      spec.find('/', slash + 1) != std::string::npos)
    throw UsageError{"`--efficiency` needs OUT/IN (element paths, comma-separated on each "
                     "side), got `" + spec + "`"};
  Efficiency e;
  e.out = spec.substr(0, slash);
  e.in = spec.substr(slash + 1);
  return e;
}

bool resolveEfficiency(Efficiency &e, const std::vector<runtime::PowerElement> &elements,
                       std::string &error) {
  for (auto [list, at] : {std::pair{&e.out, &e.outAt}, std::pair{&e.in, &e.inAt}}) {
    *at = runtime::findElements(elements, *list, error);
    if (at->empty()) {
      error = "`--efficiency`: " + error;
      return false;
    }
  }
  return true;
}

std::string lossesProblem(const std::vector<runtime::PowerElement> &elements,
                          std::optional<Efficiency> &e, const char *option) {
  std::string error;
  if (elements.empty())
    error = std::string("the model has no R element or source whose power `") + option +
            "` could measure";
  else if (e)
    resolveEfficiency(*e, elements, error);
  return error;
}

void printLosses(std::ostream &os, const runtime::PowerFigures &f, const Efficiency *e) {
  char line[256];
  os << "mean powers over [" << timeText(f.t0) << ", " << timeText(f.t1)
     << "] (R: dissipated; sources: delivered into the model):\n";
  std::snprintf(line, sizeof line, "%-24s %-9s %16s\n", "element", "kind", "mean power");
  os << line;
  for (std::size_t i = 0; i < f.elements.size(); ++i) {
    std::snprintf(line, sizeof line, "%-24s %-9s %16.9g\n", f.elements[i].path.c_str(),
                  f.elements[i].kind.c_str(), f.mean[i]);
    os << line;
  }
  std::snprintf(line, sizeof line, "%-24s %-9s %16.9g (%zu events%s)\n", "events", "switching",
                f.eventLoss, f.events, f.audited ? "" : ", some without an energy audit");
  os << line;
  double delivered = f.delivered(), dissipated = f.dissipated();
  std::snprintf(line, sizeof line,
                "sources deliver %.9g, R elements dissipate %.9g, events lose %.9g; "
                "storage gains the rest, %.3g\n",
                delivered, dissipated, f.eventLoss, delivered - dissipated - f.eventLoss);
  os << line;
  if (e) {
    double out = f.sumOf(e->outAt), in = f.sumOf(e->inAt);
    std::snprintf(line, sizeof line, "efficiency %s / %s: %.9g (%.9g / %.9g)\n", e->out.c_str(),
                  e->in.c_str(), out / in, out, in);
    os << line;
  }
}

void writeLossesCsv(std::ostream &os, const runtime::PowerFigures &f) {
  os << "element,kind,mean_power\n";
  char value[40];
  for (std::size_t i = 0; i < f.elements.size(); ++i) {
    std::snprintf(value, sizeof value, "%.17g", f.mean[i]);
    os << runtime::csvField(f.elements[i].path) << "," << f.elements[i].kind << "," << value
       << "\n";
  }
  std::snprintf(value, sizeof value, "%.17g", f.eventLoss);
  os << "events,switching," << value << "\n";
}

} // namespace hbg::tools
