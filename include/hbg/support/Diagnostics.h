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
/// A kind's severity and message format (DiagnosticKinds.def).
Severity diagKindSeverity(DiagKind kind);
const char *diagKindFormat(DiagKind kind);

/// The one way hbg writes a time, in messages and in result files: the
/// shortest decimal that reads back as the same double (`0.5`,
/// `0.0035643370687123456`), so that a time from an error can be given to
/// `--t-end` or `linearize --at` and lands on the same instant, and
/// matches the time column of the trajectory and the event log.
std::string timeText(double t);
/// Any value written as timeText writes a time (result files).
inline std::string exactText(double v) { return timeText(v); }

/// What an argument of a diagnostic stands for. Run-time diagnostics keep
/// the first element and the first loop they name as fields of their own
/// (RunDiagnostic), so that tools need not parse messages.
enum class ArgRole {
  Text,
  /// An element, junction, state, output or kink call, by name.
  Element,
  /// A mode of a switched model: `contact=on, valve=off`.
  Mode,
  /// A time, written by timeText().
  Time,
  /// One or more algebraic loops, as bg::pathText writes them and joined
  /// by "; " (`r1 [b4] 1:ab [b3] 0:b [b11] r3`), shown as loopsText()
  /// shows them.
  Loop,
};

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
  static DiagArg element(std::string name) { return {ArgRole::Element, std::move(name)}; }
  static DiagArg mode(std::string text) { return {ArgRole::Mode, std::move(text)}; }
  static DiagArg time(double t) { return {ArgRole::Time, timeText(t)}; }
  static DiagArg loop(std::string paths);
  /// As the message shows it.
  const std::string &text() const { return text_; }
  ArgRole role() const { return role_; }
  /// What it stands for: the name, mode or loop paths themselves.
  const std::string &value() const { return role_ == ArgRole::Loop ? value_ : text_; }

private:
  DiagArg(ArgRole role, std::string text, std::string value = {})
      : text_(std::move(text)), value_(std::move(value)), role_(role) {}
  std::string text_, value_;
  ArgRole role_ = ArgRole::Text;
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
  const ContextFn &context() const { return context_; }
  /// The notes rendered after `d`: its own, then the context's.
  std::vector<Diagnostic> notesOf(const Diagnostic &d) const;
  /// A diagnostic of `kind` at `range`, not reported (for ContextFn).
  static Diagnostic make(DiagKind kind, SourceRange range, std::initializer_list<DiagArg> args = {});

private:
  std::string renderOne(const Diagnostic &d) const;
  const SourceManager &sm_;
  std::vector<Diagnostic> diags_;
  std::size_t errors_ = 0, limit_ = 50;
  ContextFn context_;
};

/// A diagnostic of a run: where it happened is a time and a mode, not a
/// place in the source. Rendered as
///
///   model `M` at t = 0.5 in mode `sw=on`: message
///
/// (without "at t" before the run has a time, and without the mode for a
/// model without switched junctions).
struct RunDiagnostic {
  DiagKind kind;
  Severity severity;
  /// NaN when the diagnostic is not at a time (settings checked before
  /// the run starts).
  double time;
  /// The mode the run was in; empty for a model without switched
  /// junctions.
  std::string mode;
  /// The first element and the first loops the message names (ArgRole),
  /// or empty.
  std::string element, loop;
  std::string message;

  /// `at t = 0.5 in mode `sw=on``, or "".
  std::string where() const;
  /// `model `M` at t = 0.5 in mode `sw=on`: message`.
  std::string text(const std::string &model) const;
};

/// The run-time diagnostic of `kind` at time `t` (NaN: none) in `mode`.
/// Arguments past the format's placeholders are not shown; a typed one
/// still fills its field (the element of a warning that lists several).
RunDiagnostic runDiagnostic(DiagKind kind, double t, std::string mode,
                            std::initializer_list<DiagArg> args = {});

/// Loop paths joined by "; " for a message: "the algebraic loop `a`" or
/// "the algebraic loops `a` and `b`".
std::string loopsText(const std::string &paths);

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
