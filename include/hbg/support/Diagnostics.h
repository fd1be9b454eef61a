//===- hbg/support/Diagnostics.h - User-facing diagnostics ----------------===//
//
// Every message hbg can show a user is a kind in DiagnosticKinds.def, with
// its severity and format. Messages are lowercase, carry no trailing period,
// and put names in backticks. Rendered as
//
//   file:line:col: error: message
//   <the source line>
//       ^~~~
//
// with notes attached below the main message. Internal errors (a bug in hbg,
// not in the model) are a separate type, InternalError.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/support/Source.h"

#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace hbg {

enum class Severity { Error, Warning, Note };

/// Every diagnostic hbg emits.
enum class DiagKind {
#define HBG_DIAG(ID, SEVERITY, FORMAT) ID,
#include "hbg/support/DiagnosticKinds.def"
};

/// The identifier of a kind as written in DiagnosticKinds.def.
const char *diagKindName(DiagKind kind);
/// Number of kinds.
std::size_t numDiagKinds();

/// A typed argument of a diagnostic, formatted into a `{N}` placeholder.
class DiagArg {
public:
  DiagArg(std::string s) : text_(std::move(s)) {}
  DiagArg(const char *s) : text_(s) {}
  DiagArg(std::string_view s) : text_(s) {}
  DiagArg(int v) : text_(std::to_string(v)) {}
  DiagArg(unsigned v) : text_(std::to_string(v)) {}
  DiagArg(std::size_t v) : text_(std::to_string(v)) {}
  DiagArg(double v);
  const std::string &text() const { return text_; }

private:
  std::string text_;
};

/// One emitted diagnostic with its notes.
struct Diagnostic {
  DiagKind kind;
  Severity severity;
  SourceRange range;
  std::string message;
  std::vector<Diagnostic> notes;
};

/// Collects diagnostics and renders them.
class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceManager &sm) : sm_(sm) {}

  /// Emits a diagnostic of `kind` at `range`; returns it so notes can be added.
  Diagnostic &report(DiagKind kind, SourceRange range, std::initializer_list<DiagArg> args = {});
  /// Attaches a note to the last reported diagnostic.
  void note(DiagKind kind, SourceRange range, std::initializer_list<DiagArg> args = {});

  bool hasErrors() const { return errors_ > 0; }
  std::size_t errorCount() const { return errors_; }
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  /// Renders one diagnostic and its notes, each with its source line and caret.
  std::string render(const Diagnostic &d) const;
  /// Renders everything reported so far, in order.
  std::string renderAll() const { return renderFrom(0); }
  /// Renders the diagnostics from the `first`-th on (those reported since
  /// an earlier render of `first` of them), and how many errors went
  /// unkept.
  std::string renderFrom(std::size_t first) const;
  /// Stops accepting errors after this many (the rest are counted, not kept).
  void setErrorLimit(std::size_t n) { limit_ = n; }

  /// Notes that say where a diagnostic stands, rendered after its own: the
  /// instances around a line inside a component (set once flattening knows
  /// them). Called on every diagnostic rendered.
  using ContextFn = std::function<std::vector<Diagnostic>(const Diagnostic &)>;
  void setContext(ContextFn fn) { context_ = std::move(fn); }
  /// A diagnostic of `kind` at `range`, not reported (for ContextFn).
  static Diagnostic make(DiagKind kind, SourceRange range, std::initializer_list<DiagArg> args = {});

private:
  std::string renderOne(const Diagnostic &d) const;
  const SourceManager &sm_;
  std::vector<Diagnostic> diags_;
  std::size_t errors_ = 0, limit_ = 50;
  ContextFn context_;
};

/// A bug in hbg itself, distinct from errors in the user's model.
class InternalError : public std::logic_error {
public:
  using std::logic_error::logic_error;
};

/// Formats `format`, replacing `{N}` by args[N].
std::string formatMessage(const char *format, std::initializer_list<DiagArg> args);

/// Names for a message, each in backticks: "`a`", "`a` and `b`",
/// "`a`, `b` and `c`".
std::string quoteList(const std::vector<std::string> &names);

/// The "did you mean" candidate closest to `name` among `candidates` by
/// edit distance, or "" when none is close enough.
std::string closestName(const std::string &name, const std::vector<std::string> &candidates);

} // namespace hbg
