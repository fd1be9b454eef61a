//===- support/DiagnosticEngine.cpp - Diagnostics with source lines -------===//
//
// Compile-time diagnostics rendered against the source: `file:line:col`,
// the line and a caret. Run-time code (simulators, FMUs) reports
// RunDiagnostics and does not link this.
//
//===----------------------------------------------------------------------===//

#include "hbg/support/Diagnostics.h"

#include <algorithm>
#include <string>

namespace hbg {

namespace {
const char *severityText(Severity s) {
  switch (s) {
  case Severity::Error: return "error";
  case Severity::Warning: return "warning";
  case Severity::Note: return "note";
  }
  return "error";
}
} // namespace

Diagnostic &DiagnosticEngine::report(DiagKind kind, SourceRange range,
                                     std::initializer_list<DiagArg> args) {
    if (diagKindSeverity(kind) == Severity::Error)
    ++errors_;
  Diagnostic d{kind, diagKindSeverity(kind), range, formatMessage(diagKindFormat(kind), args), {}};
  // Past the limit errors are counted but not kept; the last slot absorbs
  // notes meant for dropped errors.
  if (diagKindSeverity(kind) == Severity::Error && errors_ > limit_) {
    static thread_local Diagnostic sink;
    sink = d;
    return sink;
  }
  diags_.push_back(std::move(d));
  return diags_.back();
}

void DiagnosticEngine::note(DiagKind kind, SourceRange range,
                            std::initializer_list<DiagArg> args) {
    if (diags_.empty() || errors_ > limit_)
    return;
  diags_.back().notes.push_back(
      Diagnostic{kind, diagKindSeverity(kind), range, formatMessage(diagKindFormat(kind), args), {}});
}

std::string DiagnosticEngine::renderOne(const Diagnostic &d) const {
  std::string out;
  if (!d.range.valid()) {
    out += std::string("hbgc: ") + severityText(d.severity) + ": " + d.message + "\n";
    return out;
  }
  LineCol lc = sm_.lineCol(d.range.begin);
  out += sm_.name(d.range.begin.file) + ":" + std::to_string(lc.line) + ":" +
         std::to_string(lc.column) + ": " + severityText(d.severity) + ": " + d.message + "\n";
  std::string_view line = sm_.lineText(d.range.begin.file, lc.line);
  out += std::string(line) + "\n";
  // Keep tabs in the caret line's indentation so the caret lines up.
  std::string caret;
  for (std::uint32_t i = 0; i + 1 < lc.column && i < line.size(); ++i)
    caret += line[i] == '\t' ? '\t' : ' ';
  caret += '^';
  std::size_t room = line.size() >= lc.column ? line.size() - lc.column : 0;
  std::size_t tildes = std::min<std::size_t>(d.range.length > 0 ? d.range.length - 1 : 0, room);
  caret.append(tildes, '~');
  out += caret + "\n";
  return out;
}

Diagnostic DiagnosticEngine::make(DiagKind kind, SourceRange range,
                                  std::initializer_list<DiagArg> args) {
    return Diagnostic{kind, diagKindSeverity(kind), range, formatMessage(diagKindFormat(kind), args), {}};
}

std::vector<Diagnostic> DiagnosticEngine::notesOf(const Diagnostic &d) const {
  std::vector<Diagnostic> notes = d.notes;
  if (context_)
    for (Diagnostic &n : context_(d))
      notes.push_back(std::move(n));
  return notes;
}

std::string DiagnosticEngine::render(const Diagnostic &d) const {
  std::string out = renderOne(d);
  for (const Diagnostic &n : notesOf(d))
    out += renderOne(n);
  return out;
}

std::string DiagnosticEngine::renderFrom(std::size_t first) const {
  std::string out;
  for (std::size_t i = first; i < diags_.size(); ++i)
    out += render(diags_[i]);
  if (errors_ > limit_)
    out += "hbgc: note: " + std::to_string(errors_ - limit_) + " more errors not shown\n";
  return out;
}

} // namespace hbg
