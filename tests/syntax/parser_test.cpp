//===- tests/syntax/parser_test.cpp - .hbg text to AST --------------------===//

#include "hbg/syntax/Parser.h"

#include <doctest/doctest.h>

#include <random>

using namespace hbg;

namespace {

/// One buffer named `test.hbg`, parsed.
struct Parsed {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  std::uint32_t id;
  std::unique_ptr<ast::File> file;

  explicit Parsed(std::string text) {
    id = sm.addBuffer("test.hbg", std::move(text));
    file = syntax::parse(id, sm, diags);
  }

  /// The one model; fails the test if the text did not parse.
  const ast::Model &model() const {
    INFO(diags.renderAll());
    REQUIRE(file);
    REQUIRE(file->models.size() == 1);
    return *file->models[0];
  }
  std::string slice(SourceRange r) const {
    CHECK(r.begin.file == id);
    return std::string(sm.text(id).substr(r.begin.offset, r.length));
  }
  std::string lineCol(SourceRange r) const {
    LineCol lc = sm.lineCol(r.begin);
    return std::to_string(lc.line) + ":" + std::to_string(lc.column);
  }
};

/// The rendered diagnostic of a text that must fail with exactly one error.
std::string errorOf(std::string text) {
  Parsed p(std::move(text));
  CHECK_FALSE(p.file);
  CHECK(p.diags.errorCount() == 1);
  return p.diags.renderAll();
}

std::string show(const ast::Expr &e);

/// An `if` condition: `(> a b)`, `(and c1 c2)`, `(not c)`.
std::string showCondition(const ast::Guard &g) {
  switch (g.kind) {
  case ast::GuardKind::Compare:
    return std::string("(") + compareOpText(g.op) + " " + show(*g.lhs) + " " + show(*g.rhs) + ")";
  case ast::GuardKind::Not: return "(not " + showCondition(*g.children[0]) + ")";
  case ast::GuardKind::Connected:
    return "(connected " + g.lhs->name + ")";
  case ast::GuardKind::Truth: return show(*g.lhs);
  case ast::GuardKind::And:
  case ast::GuardKind::Or: {
    std::string s = g.kind == ast::GuardKind::And ? "(and" : "(or";
    for (const ast::GuardPtr &c : g.children)
      s += " " + showCondition(*c);
    return s + ")";
  }
  }
  return "?";
}

/// An expression as an s-expression: `(+ a (* b c))`, `(- x)`, `sin(x)`.
std::string show(const ast::Expr &e) {
  switch (e.kind) {
  case ast::ExprKind::Number: {
    std::string s = std::to_string(e.number);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.')
      s.pop_back();
    return s;
  }
  case ast::ExprKind::Name:
    return e.name;
  case ast::ExprKind::Member:
    return e.name + "." + e.member;
  case ast::ExprKind::Unary:
    return std::string("(") + e.op + " " + show(*e.operands[0]) + ")";
  case ast::ExprKind::Binary:
    return std::string("(") + e.op + " " + show(*e.operands[0]) + " " + show(*e.operands[1]) + ")";
  case ast::ExprKind::Call: {
    std::string s = e.name + "(";
    for (std::size_t i = 0; i < e.operands.size(); ++i)
      s += (i ? ", " : "") + show(*e.operands[i]);
    return s + ")";
  }
  case ast::ExprKind::Array: {
    std::string s = "[";
    for (std::size_t i = 0; i < e.operands.size(); ++i)
      s += (i ? ", " : "") + show(*e.operands[i]);
    return s + "]";
  }
  case ast::ExprKind::String:
    return "\"" + e.name + "\"";
  case ast::ExprKind::If:
    return "(if " + showCondition(*e.condition) + " " + show(*e.operands[0]) + " " +
           show(*e.operands[1]) + ")";
  }
  return "?";
}

/// The signal `x = <text>` parsed, as an s-expression.
std::string expr(const std::string &text) {
  Parsed p("model m { signal x = " + text + "; }");
  return show(*p.model().signals.at(0).value);
}

const char *const kRlc = R"(// Series RLC circuit driven by a 1 V step.
model RLC {
    parameter V = 1.0;
    parameter R = 1.0;
    parameter L = 0.5;
    parameter C = 0.1;

    Se source(V);
    R  resistor(R);
    I  inductor(L)  { p0 = 0; }
    C  capacitor(C) { q0 = 0; }
    1  loop;

    bond source -> loop;
    bond loop -> resistor;
    bond loop -> inductor;
    bond loop -> capacitor;

    output capacitor.q, inductor.f;
}
)";

} // namespace

// --- Declarations ------------------------------------------------------------

TEST_CASE("the manual's RLC example") {
  Parsed p(kRlc);
  const ast::Model &m = p.model();
  CHECK(p.file->fileId == p.id);
  CHECK(m.name == "RLC");
  CHECK(p.lineCol(m.nameRange) == "2:7");

  REQUIRE(m.parameters.size() == 4);
  CHECK(m.parameters[1].name == "R");
  CHECK(p.lineCol(m.parameters[1].nameRange) == "4:15");
  CHECK(show(*m.parameters[2].value) == "0.5");

  REQUIRE(m.elements.size() == 4);
  const ast::Element &c = m.elements[3];
  CHECK(c.kind == "C");
  CHECK(p.lineCol(c.kindRange) == "11:5");
  CHECK(c.name == "capacitor");
  CHECK(p.lineCol(c.nameRange) == "11:8");
  CHECK(p.slice(c.argsRange) == "(C)");
  REQUIRE(c.args.size() == 1);
  CHECK(c.args[0].name.empty());
  CHECK(show(*c.args[0].value) == "C");
  REQUIRE(c.initials.size() == 1);
  CHECK(c.initials[0].name == "q0");
  CHECK(p.lineCol(c.initials[0].nameRange) == "11:23");
  CHECK(m.elements[0].initials.empty());

  REQUIRE(m.junctions.size() == 1);
  CHECK(m.junctions[0].kind == '1');
  CHECK(m.junctions[0].name == "loop");
  CHECK(p.lineCol(m.junctions[0].kindRange) == "12:5");

  REQUIRE(m.bonds.size() == 4);
  CHECK(m.bonds[0].name.empty());
  CHECK(m.bonds[0].from == "source");
  CHECK(m.bonds[0].to == "loop");
  CHECK(p.lineCol(m.bonds[0].fromRange) == "14:10");
  CHECK(p.lineCol(m.bonds[0].toRange) == "14:20");
  CHECK(p.slice(m.bonds[3].range) == "bond loop -> capacitor;");

  REQUIRE(m.outputs.size() == 2);
  CHECK(m.outputs[0].name.empty());
  CHECK(m.outputs[0].text == "capacitor.q");
  CHECK(m.outputs[1].text == "inductor.f");
  CHECK(m.signals.empty());
}

TEST_CASE("elements: positional and named arguments, initial values") {
  Parsed p("model m {\n"
           "  R r(e = f^3);\n"
           "  C c(e = q / 2) { q0 = x; }\n"
           "  I i(m, 2) {}\n"
           "  MSe s(sin(time));\n"
           "  GY g();\n"
           "}");
  const ast::Model &m = p.model();
  REQUIRE(m.elements.size() == 5);

  const ast::Element &r = m.elements[0];
  REQUIRE(r.args.size() == 1);
  CHECK(r.args[0].name == "e");
  CHECK(p.lineCol(r.args[0].nameRange) == "2:7");
  CHECK(show(*r.args[0].value) == "(^ f 3)");
  CHECK(p.slice(r.argsRange) == "(e = f^3)");

  CHECK(m.elements[1].initials.at(0).name == "q0");
  CHECK(show(*m.elements[1].initials.at(0).value) == "x");

  const ast::Element &i = m.elements[2];
  REQUIRE(i.args.size() == 2);
  CHECK(show(*i.args[1].value) == "2");
  CHECK(i.initials.empty());

  CHECK(m.elements[3].kind == "MSe");
  CHECK(show(*m.elements[3].args.at(0).value) == "sin(time)");
  CHECK(m.elements[4].args.empty());
  CHECK(p.slice(m.elements[4].argsRange) == "()");
}

TEST_CASE("junctions, bonds and signals") {
  Parsed p("model m {\n"
           "  0 j0; 1 j1;\n"
           "  bond a -> b;\n"
           "  bond power: j0 -> j1;\n"
           "  signal x = -0.2 + integral(v.f);\n"
           "}");
  const ast::Model &m = p.model();
  REQUIRE(m.junctions.size() == 2);
  CHECK(m.junctions[0].kind == '0');
  CHECK(m.junctions[1].kind == '1');
  CHECK(p.lineCol(m.junctions[1].nameRange) == "2:11");

  REQUIRE(m.bonds.size() == 2);
  CHECK(m.bonds[0].name.empty());
  CHECK(m.bonds[1].name == "power");
  CHECK(p.lineCol(m.bonds[1].nameRange) == "4:8");
  CHECK(m.bonds[1].from == "j0");
  CHECK(p.lineCol(m.bonds[1].fromRange) == "4:15");
  CHECK(m.bonds[1].to == "j1");
  CHECK(p.slice(m.bonds[1].range) == "bond power: j0 -> j1;");

  REQUIRE(m.signals.size() == 1);
  CHECK(m.signals[0].name == "x");
  CHECK(show(*m.signals[0].value) == "(+ (- 0.2) integral(v.f))");
}

/// A guard as an s-expression: `(<= + (- x2 x1) 0)`, `(and A B)`, `(not A)`.
std::string showGuard(const ast::Guard &g) {
  switch (g.kind) {
  case ast::GuardKind::Compare:
    return std::string("(") + hbg::compareOpText(g.op) + " " + g.mark + " " + show(*g.lhs) + " " +
           show(*g.rhs) + ")";
  case ast::GuardKind::Connected:
    return "(connected " + g.lhs->name + ")";
  case ast::GuardKind::Truth: return std::string("(truth ") + g.mark + " " + show(*g.lhs) + ")";
  case ast::GuardKind::And:
  case ast::GuardKind::Or:
  case ast::GuardKind::Not: {
    std::string s = g.kind == ast::GuardKind::And  ? "(and"
                    : g.kind == ast::GuardKind::Or ? "(or"
                                                   : "(not";
    for (const ast::GuardPtr &c : g.children)
      s += " " + showGuard(*c);
    return s + ")";
  }
  }
  return "?";
}

/// The guard of `0 j switched { off initial; on; off -> on when <text>; }`.
std::string guard(const std::string &text) {
  Parsed p("model m { 0 j switched { off initial; on; off -> on when " + text + "; } }");
  const ast::Junction &j = p.model().junctions.at(0);
  REQUIRE(j.fsm);
  return showGuard(*j.fsm->transitions.at(0).guard);
}

TEST_CASE("switched junctions: the design document's collision") {
  Parsed p("model m {\n"
           "  0 contact switched {\n"
           "    off initial;  on;\n"
           "    off -> on  when (x2 - x1 <= 0)+;\n"
           "    on  -> off when (contact.e < 0)-;\n"
           "  }\n"
           "  1 plain;\n"
           "}");
  const ast::Model &m = p.model();
  REQUIRE(m.junctions.size() == 2);
  const ast::Junction &j = m.junctions[0];
  CHECK(j.kind == '0');
  CHECK(j.name == "contact");
  CHECK(j.switched);
  CHECK(p.slice(j.switchedRange) == "switched");
  REQUIRE(j.fsm);
  CHECK(p.lineCol(j.fsm->range) == "2:22");
  REQUIRE(j.fsm->states.size() == 2);
  CHECK_FALSE(j.fsm->states[0].on);
  CHECK(j.fsm->states[0].name == "off");
  CHECK(p.slice(j.fsm->states[0].nameRange) == "off");
  CHECK(j.fsm->states[0].initial);
  CHECK(p.lineCol(j.fsm->states[0].initialRange) == "3:9");
  CHECK(p.slice(j.fsm->states[0].range) == "off initial;");
  CHECK(j.fsm->states[1].on);
  CHECK(j.fsm->states[1].name == "on");
  CHECK_FALSE(j.fsm->states[1].initial);
  REQUIRE(j.fsm->transitions.size() == 2);
  const ast::FsmTransition &t = j.fsm->transitions[0];
  CHECK(t.from == "off");
  CHECK(t.to == "on");
  CHECK(p.lineCol(t.fromRange) == "4:5");
  CHECK(p.lineCol(t.toRange) == "4:12");
  CHECK(p.slice(t.range) == "off -> on  when (x2 - x1 <= 0)+;");
  CHECK(showGuard(*t.guard) == "(<= + (- x2 x1) 0)");
  CHECK(p.slice(t.guard->range) == "(x2 - x1 <= 0)+");
  CHECK(showGuard(*j.fsm->transitions[1].guard) == "(< - contact.e 0)");

  CHECK_FALSE(m.junctions[1].switched);
  CHECK_FALSE(m.junctions[1].fsm);
  CHECK_FALSE(j.dissipative);
}

TEST_CASE("switched junctions: `switched dissipative`, and `dissipative` as a name") {
  Parsed p("model m { parameter dissipative = 1;\n"
           "  0 contact switched dissipative { off initial; on; }\n"
           "  1 dissipative switched { on initial; } }");
  const ast::Model &m = p.model();
  REQUIRE(m.junctions.size() == 2);
  CHECK(m.junctions[0].dissipative);
  REQUIRE(m.junctions[0].fsm);
  CHECK(m.junctions[0].fsm->states.size() == 2);
  CHECK(m.junctions[1].name == "dissipative");
  CHECK_FALSE(m.junctions[1].dissipative);
  CHECK(m.parameters.at(0).name == "dissipative");
}

TEST_CASE("switched junctions: named states, any number of each kind") {
  Parsed p("model m { 1 valve switched {\n"
           "  on closed; off open initial; off blocked; on;\n"
           "  off initial initial;\n"
           "} }");
  const ast::Junction &j = p.model().junctions.at(0);
  CHECK(j.kind == '1');
  REQUIRE(j.fsm);
  REQUIRE(j.fsm->states.size() == 5);
  auto state = [&](std::size_t i) {
    const ast::FsmState &st = j.fsm->states[i];
    return std::string(st.on ? "on " : "off ") + st.name + (st.initial ? " initial" : "");
  };
  CHECK(state(0) == "on closed");
  CHECK(state(1) == "off open initial");
  CHECK(state(2) == "off blocked");
  CHECK(state(3) == "on on");
  // `initial` is a name where a name is expected.
  CHECK(state(4) == "off initial initial");
  CHECK(p.lineCol(j.fsm->states[1].nameRange) == "2:18");
  CHECK(p.lineCol(j.fsm->states[3].nameRange) == "2:45");
  CHECK(j.fsm->transitions.empty());
}

TEST_CASE("switched junctions: guard operators, marks and precedence") {
  CHECK(guard("(a < 1)+") == "(< + a 1)");
  CHECK(guard("(a <= 1)-") == "(<= - a 1)");
  CHECK(guard("(a = b.e)+") == "(= + a b.e)");
  CHECK(guard("(a >= -1)-") == "(>= - a (- 1))");
  CHECK(guard("(a > 2 * b)+") == "(> + a (* 2 b))");
  // `not` binds tightest, then `and`, then `or`; lists are flat.
  CHECK(guard("(a < 1)+ or (b < 1)+ and (c < 1)-") ==
        "(or (< + a 1) (and (< + b 1) (< - c 1)))");
  CHECK(guard("(a < 1)+ and (b < 1)+ or (c < 1)-") ==
        "(or (and (< + a 1) (< + b 1)) (< - c 1))");
  CHECK(guard("(a < 1)+ and (b < 1)+ and (c < 1)-") ==
        "(and (< + a 1) (< + b 1) (< - c 1))");
  CHECK(guard("not (a < 1)+ and (b < 1)-") == "(and (not (< + a 1)) (< - b 1))");
  CHECK(guard("not not (a < 1)+") == "(not (not (< + a 1)))");
  // Parentheses group guards, and comparisons may start with one.
  CHECK(guard("((a < 1)+ or (b < 1)+) and (c < 1)-") ==
        "(and (or (< + a 1) (< + b 1)) (< - c 1))");
  CHECK(guard("not ((a < 1)+ or (b < 1)-)") == "(not (or (< + a 1) (< - b 1)))");
  CHECK(guard("((a + 1) * 2 < (b))+") == "(< + (* (+ a 1) 2) b)");
  CHECK(guard("(((a < 1)+))") == "(< + a 1)");
}

TEST_CASE("switched junctions: the FSM's words are names elsewhere") {
  Parsed p("model switched {\n"
           "  parameter on = 1; parameter off = on; parameter initial = 2;\n"
           "  parameter when = 3; parameter and = 4; parameter or = 5; parameter not = 6;\n"
           "  0 switched; 1 on switched { on on initial; off; on -> off when (not < and)+; }\n"
           "  bond switched -> on;\n"
           "  signal s = when + or * not;\n"
           "}");
  const ast::Model &m = p.model();
  CHECK(m.name == "switched");
  CHECK(m.parameters.at(1).name == "off");
  CHECK(show(*m.parameters.at(1).value) == "on");
  CHECK(m.junctions.at(0).name == "switched");
  CHECK_FALSE(m.junctions.at(0).switched);
  const ast::Junction &j = m.junctions.at(1);
  CHECK(j.name == "on");
  REQUIRE(j.fsm);
  CHECK(j.fsm->states.at(0).name == "on");
  CHECK(j.fsm->states.at(0).initial);
  CHECK(showGuard(*j.fsm->transitions.at(0).guard) == "(< + not and)");
  CHECK(m.bonds.at(0).from == "switched");
  CHECK(show(*m.signals.at(0).value) == "(+ when (* or not))");
}

TEST_CASE("switched junctions: syntax errors") {
  // The mark is required.
  CHECK(errorOf("model m { 0 j switched { off initial; on; off -> on when (x < 0); } }") ==
        "test.hbg:1:65: error: unexpected `;`; expected `+` or `-`\n"
        "model m { 0 j switched { off initial; on; off -> on when (x < 0); } }\n"
        "                                                                ^\n");
  // So is a comparison, or a name alone (a Boolean signal: Sema checks).
  CHECK(errorOf("model m { 0 j switched { off -> on when (x + 1)+; } }").find(
            "error: unexpected `)`; expected") != std::string::npos);
  CHECK(errorOf("model m { 0 j switched { off -> on when (f(x))+; } }").find(
            "error: unexpected `)`; expected") != std::string::npos);
  CHECK(errorOf("model m { 0 j switched { off -> on when x < 0; } }").find(
            "error: unexpected `x`; expected") != std::string::npos);
  CHECK(errorOf("model m { 0 j switched; }").find("error: unexpected `;`; expected `dissipative` or `{`") !=
        std::string::npos);
}

TEST_CASE("outputs: bare and named, text normalized") {
  Parsed p("model m {\n"
           "  output c.q, e = a*b, (a  +\n"
           "     b) /* why */ ^ 2;\n"
           "}");
  const ast::Model &m = p.model();
  REQUIRE(m.outputs.size() == 3);
  CHECK(m.outputs[0].text == "c.q");
  CHECK(m.outputs[1].name == "e");
  CHECK(p.lineCol(m.outputs[1].nameRange) == "2:15");
  CHECK(m.outputs[1].text == "a*b");
  CHECK(m.outputs[2].name.empty());
  CHECK(m.outputs[2].text == "(a + b) ^ 2");
  CHECK(show(*m.outputs[2].value) == "(^ (+ a b) 2)");
}

TEST_CASE("element kinds are names outside declarations") {
  Parsed p("model C { parameter R = 1; parameter I = R; R R(R); bond R -> TF; "
           "signal s = MGY.e + Se; }");
  const ast::Model &m = p.model();
  CHECK(m.name == "C");
  CHECK(m.parameters.at(1).name == "I");
  CHECK(m.elements.at(0).kind == "R");
  CHECK(m.elements.at(0).name == "R");
  CHECK(m.bonds.at(0).to == "TF");
  CHECK(show(*m.signals.at(0).value) == "(+ MGY.e Se)");
}

TEST_CASE("comments and empty input") {
  Parsed p("/* a * b // c */ model // m {\n m /**/ { /***/ parameter a = 1; /* } */ }\n// end");
  CHECK(p.model().parameters.size() == 1);

  Parsed empty("  // nothing\n");
  REQUIRE(empty.file);
  CHECK(empty.file->models.empty());

  Parsed two("model a {} model b {}");
  REQUIRE(two.file);
  CHECK(two.file->models.size() == 2);
}

// --- Expressions -------------------------------------------------------------

TEST_CASE("expression precedence and associativity") {
  CHECK(expr("a + b * c") == "(+ a (* b c))");
  CHECK(expr("a * b + c") == "(+ (* a b) c)");
  CHECK(expr("a - b - c") == "(- (- a b) c)");
  CHECK(expr("a / b * c") == "(* (/ a b) c)");
  CHECK(expr("a ^ b ^ c") == "(^ a (^ b c))");
  CHECK(expr("-a ^ 2") == "(- (^ a 2))");
  CHECK(expr("-a * b") == "(* (- a) b)");
  CHECK(expr("a * -b") == "(* a (- b))");
  CHECK(expr("a - -b") == "(- a (- b))");
  CHECK(expr("2 ^ -1") == "(^ 2 (- 1))");
  CHECK(expr("+a") == "(+ a)");
  CHECK(expr("(a + b) * c") == "(* (+ a b) c)");
  CHECK(expr("a * b ^ c * d") == "(* (* a (^ b c)) d)");
  CHECK(expr("max(a, b + 1) - pow(2, x.e1)") == "(- max(a, (+ b 1)) pow(2, x.e1))");
  CHECK(expr("f()") == "f()");
}

TEST_CASE("if expressions: conditions, precedence, and the else that runs to the end") {
  CHECK(expr("if x > 0 then a else b") == "(if (> x 0) a b)");
  CHECK(expr("if x + 1 <= y * 2 then a else b") == "(if (<= (+ x 1) (* y 2)) a b)");
  // `and` binds tighter than `or`; `not` tighter than both.
  CHECK(expr("if a < 1 or b > 2 and not c >= 3 then 1 else 0") ==
        "(if (or (< a 1) (and (> b 2) (not (>= c 3)))) 1 0)");
  // A parenthesised condition, and a parenthesised expression in one.
  CHECK(expr("if (a < 1 or b > 2) and c > 0 then 1 else 0") ==
        "(if (and (or (< a 1) (> b 2)) (> c 0)) 1 0)");
  CHECK(expr("if (a + b) > c then 1 else 0") == "(if (> (+ a b) c) 1 0)");
  // The else branch takes the rest of the expression; parentheses end it.
  CHECK(expr("2 * if x > 0 then a else b + 1") == "(* 2 (if (> x 0) a (+ b 1)))");
  CHECK(expr("(if x > 0 then a else b) + 1") == "(+ (if (> x 0) a b) 1)");
  CHECK(expr("if x > 0 then if y > 0 then 1 else 2 else 3") ==
        "(if (> x 0) (if (> y 0) 1 2) 3)");
  // `if`, `then` and `else` are keywords everywhere.
  CHECK(errorOf("model m { parameter if = 1; }").find("unexpected `if`") != std::string::npos);
  CHECK(errorOf("model m { signal s = if x + 1 then 1 else 2; }").find("expected") !=
        std::string::npos);
}

TEST_CASE("numbers, including 0 and 1") {
  CHECK(expr("12") == "12");
  CHECK(expr("0.5") == "0.5");
  CHECK(expr(".5") == "0.5");
  CHECK(expr("1e-3") == "0.001");
  CHECK(expr("2.5E+4") == "25000");
  CHECK(expr("3.") == "3");
  CHECK(expr("0 - 1") == "(- 0 1)");
  CHECK(expr("10 * 01") == "(* 10 1)");
  // Subnormal: strtod flags it, but it is the closest double and in range.
  Parsed tiny("model m { parameter t = 1e-310; }");
  CHECK(tiny.model().parameters.at(0).value->number > 0);
}

TEST_CASE("expression ranges") {
  Parsed p("model m {\n  signal x = -(a + b) * sin(c.q);\n}");
  const ast::Expr &e = *p.model().signals.at(0).value;
  CHECK(p.slice(e.range) == "-(a + b) * sin(c.q)");
  CHECK(p.lineCol(e.range) == "2:14");
  const ast::Expr &neg = *e.operands[0];
  CHECK(p.slice(neg.range) == "-(a + b)");
  CHECK(p.slice(neg.operands[0]->range) == "(a + b)"); // parentheses included
  CHECK(p.slice(neg.operands[0]->operands[1]->nameRange) == "b");
  const ast::Expr &call = *e.operands[1];
  CHECK(p.slice(call.range) == "sin(c.q)");
  CHECK(p.slice(call.nameRange) == "sin");
  const ast::Expr &member = *call.operands[0];
  CHECK(p.slice(member.range) == "c.q");
  CHECK(p.slice(member.nameRange) == "c");
  CHECK(p.slice(member.memberRange) == "q");
  CHECK(p.lineCol(member.memberRange) == "2:31");
}

TEST_CASE("ast::dump") {
  Parsed p("model m { parameter k = 2; C c(e = q / k) { q0 = 1; } 0 j; bond n: c -> j;\n"
           "signal s = -c.e; output s, p = sin(s) ^ 2; }");
  CHECK(ast::dump(*p.file) == "File\n"
                              "  Model m\n"
                              "    Parameter k\n"
                              "      Number 2\n"
                              "    Element C c\n"
                              "      Arg e\n"
                              "        Binary /\n"
                              "          Name q\n"
                              "          Name k\n"
                              "      Initial q0\n"
                              "        Number 1\n"
                              "    Junction 0 j\n"
                              "    Bond n: c -> j\n"
                              "    Signal s\n"
                              "      Unary -\n"
                              "        Member c.e\n"
                              "    Output `s`\n"
                              "      Name s\n"
                              "    Output p\n"
                              "      Binary ^\n"
                              "        Call sin\n"
                              "          Name s\n"
                              "        Number 2\n");
}

// --- Errors ------------------------------------------------------------------

TEST_CASE("syntax errors: unexpected token and what was expected") {
  CHECK(errorOf("model m {\n  parameter a = 1 }\n") ==
        "test.hbg:2:19: error: unexpected `}`; expected `;`\n"
        "  parameter a = 1 }\n"
        "                  ^\n");
  // A name where a declaration starts is a component type: an instance's
  // name follows it.
  CHECK(errorOf("model m {\n  foo = 1;\n}") ==
        "test.hbg:2:7: error: unexpected `=`; expected a name\n"
        "  foo = 1;\n"
        "      ^\n");
  CHECK(errorOf("model m {\n  = 1;\n}") ==
        "test.hbg:2:3: error: unexpected `=`; expected a declaration or `}`\n"
        "  = 1;\n"
        "  ^\n");
  CHECK(errorOf("model m { signal x = ; }") ==
        "test.hbg:1:22: error: unexpected `;`; expected an expression\n"
        "model m { signal x = ; }\n"
        "                     ^\n");
  CHECK(errorOf("model m { R r(1 2); }") ==
        "test.hbg:1:17: error: unexpected `2`; expected `,` or `)`\n"
        "model m { R r(1 2); }\n"
        "                ^\n");
  CHECK(errorOf("model m { R r(1) r }") ==
        "test.hbg:1:18: error: unexpected `r`; expected `{` or `;`\n"
        "model m { R r(1) r }\n"
        "                 ^\n");
  CHECK(errorOf("model m { bond a b; }") ==
        "test.hbg:1:18: error: unexpected `b`; expected `:` or `->`\n"
        "model m { bond a b; }\n"
        "                 ^\n");
  CHECK(errorOf("model m { 0 ; }") == "test.hbg:1:13: error: unexpected `;`; expected a name\n"
                                      "model m { 0 ; }\n"
                                      "            ^\n");
  CHECK(errorOf("model m { 2 j; }") ==
        "test.hbg:1:11: error: unexpected `2`; expected a declaration or `}`\n"
        "model m { 2 j; }\n"
        "          ^\n");
  CHECK(errorOf("model m { Se s(1) }") ==
        "test.hbg:1:19: error: unexpected `}`; expected `{` or `;`\n"
        "model m { Se s(1) }\n"
        "                  ^\n");
  CHECK(errorOf("model m {}\nmodels") ==
        "test.hbg:2:1: error: unexpected `models`; expected `model`, `component`, `import` or end of file\n"
        "models\n"
        "^~~~~~\n");
  CHECK(errorOf("model m { signal x = sin(; }") ==
        "test.hbg:1:26: error: unexpected `;`; expected an expression or `)`\n"
        "model m { signal x = sin(; }\n"
        "                         ^\n");
}

TEST_CASE("syntax errors: end of file is shown where the text stops") {
  CHECK(errorOf("model m {\n  parameter a = 1;\n\n") ==
        "test.hbg:2:19: error: unexpected end of file; expected a declaration or `}`\n"
        "  parameter a = 1;\n"
        "                  ^\n");
  CHECK(errorOf("model m { I i(1) { p0 = 0;") ==
        "test.hbg:1:27: error: unexpected end of file; expected a name or `}`\n"
        "model m { I i(1) { p0 = 0;\n"
        "                          ^\n");
}

TEST_CASE("syntax errors: a missing token at the end of a line") {
  CHECK(errorOf("model m {\n  parameter a = 1\n  parameter b = 2;\n}") ==
        "test.hbg:2:18: error: missing `;` before `parameter`\n"
        "  parameter a = 1\n"
        "                 ^\n");
  CHECK(errorOf("model m\n  parameter a = 1;\n}") ==
        "test.hbg:1:8: error: missing `{` before `parameter`\n"
        "model m\n"
        "       ^\n");
}

TEST_CASE("syntax errors: an extra token") {
  CHECK(errorOf("model m { signal x = a b; }") == "test.hbg:1:24: error: unexpected `b`\n"
                                                  "model m { signal x = a b; }\n"
                                                  "                       ^\n");
  CHECK(errorOf("model m { bond a -> b c; }") == "test.hbg:1:23: error: unexpected `c`\n"
                                                 "model m { bond a -> b c; }\n"
                                                 "                      ^\n");
}

TEST_CASE("lexical errors") {
  CHECK(errorOf("model m {\n  signal x = a $ b;\n}") ==
        "test.hbg:2:16: error: invalid character `$`\n"
        "  signal x = a $ b;\n"
        "               ^\n");
  CHECK(errorOf("model m { signal x = \xc3\xa9; }") ==
        "test.hbg:1:22: error: invalid character `\xc3\xa9`\n"
        "model m { signal x = \xc3\xa9; }\n"
        "                     ^\n");
  CHECK(errorOf("model m { \x01 }") == "test.hbg:1:11: error: invalid character `\\x01`\n"
                                       "model m { \x01 }\n"
                                       "          ^\n");
  CHECK(errorOf("model m { \xff }") == "test.hbg:1:11: error: invalid character `\\xff`\n"
                                       "model m { \xff }\n"
                                       "          ^\n");
  CHECK(errorOf("model m {\n  /* open * /\n}\n") ==
        "test.hbg:2:3: error: unterminated block comment\n"
        "  /* open * /\n"
        "  ^~\n");
  CHECK(errorOf("model m { parameter a = 2.5e+; }") ==
        "test.hbg:1:25: error: invalid number `2.5e+`\n"
        "model m { parameter a = 2.5e+; }\n"
        "                        ^~~~~\n");
  CHECK(errorOf("model m { parameter a = 1e999; }") ==
        "test.hbg:1:25: error: invalid number `1e999`\n"
        "model m { parameter a = 1e999; }\n"
        "                        ^~~~~\n");
  CHECK(errorOf("model m { parameter a = 1e-999; }") ==
        "test.hbg:1:25: error: invalid number `1e-999`\n"
        "model m { parameter a = 1e-999; }\n"
        "                        ^~~~~~\n");
  // Non-ASCII text in comments is fine.
  CHECK(Parsed("// r\xc3\xa9sistance\nmodel m { /* \xff */ }").file);
}

TEST_CASE("only the first error in the text is reported") {
  // A syntax error before a lexical one...
  CHECK(errorOf("model m { parameter = 1; signal x = $; }") ==
        "test.hbg:1:21: error: unexpected `=`; expected a name\n"
        "model m { parameter = 1; signal x = $; }\n"
        "                    ^\n");
  // ...a lexical one before a syntax error...
  CHECK(errorOf("model m { parameter a = $; signal = 1; }") ==
        "test.hbg:1:25: error: invalid character `$`\n"
        "model m { parameter a = $; signal = 1; }\n"
        "                        ^\n");
  // ...and a number out of range before a syntax error after it.
  CHECK(errorOf("model m { parameter a = 1e400; signal = 1; }") ==
        "test.hbg:1:25: error: invalid number `1e400`\n"
        "model m { parameter a = 1e400; signal = 1; }\n"
        "                        ^~~~~\n");
}

TEST_CASE("syntax errors the builder finds: a name before `=`, a member's index") {
  // The grammar reads `first = value` with an expression first (one token
  // decides); what is not a name there is the parser's usual error.
  CHECK(errorOf("model m { R r(a.b = 2); }") ==
        "test.hbg:1:19: error: unexpected `=`; expected `,` or `)`\n"
        "model m { R r(a.b = 2); }\n"
        "                  ^\n");
  for (const char *first : {"a + b", "(a)", "-a", "a[1]", "f(a)", "if c > 0 then a else b"})
    CHECK(errorOf(std::string("model m { R r(") + first + " = 2); }").find(
              "error: unexpected `=`; expected `,` or `)`") != std::string::npos);
  CHECK(errorOf("model m { output x, a.b = 1; }") ==
        "test.hbg:1:25: error: unexpected `=`; expected `,` or `;`\n"
        "model m { output x, a.b = 1; }\n"
        "                        ^\n");
  // An output's name may be indexed; a member's last part may not.
  CHECK(Parsed("model m { for i in 1:2 { output v[i] = i; } }").file);
  CHECK(errorOf("model m { signal s = a.b[1] + 2; }") ==
        "test.hbg:1:29: error: unexpected `+`; expected `.`\n"
        "model m { signal s = a.b[1] + 2; }\n"
        "                            ^\n");
  CHECK(errorOf("model m { signal s = a[1].b[2]; }").find("error: unexpected `;`; expected `.`") !=
        std::string::npos);
  // The first error in the text wins, whichever stage finds it.
  CHECK(errorOf("model m { R r(a.b = 1e400); }").find("error: unexpected `=`") !=
        std::string::npos);
  CHECK(errorOf("model m { parameter p = 1e400; R r(a.b = 2); }").find(
            "error: invalid number `1e400`") != std::string::npos);
}

TEST_CASE("ports: `in` and any other word as the direction") {
  Parsed p("component c { 0 j; port p = j in, n = j out, q = j; }");
  const ast::Model &m = *p.file->models.at(0);
  REQUIRE(m.ports.size() == 3);
  CHECK(m.ports[0].direction == ast::Port::Direction::In);
  CHECK(p.slice(m.ports[0].directionRange) == "in");
  CHECK(m.ports[1].direction == ast::Port::Direction::Out);
  CHECK(m.ports[1].directionText == "out");
  CHECK_FALSE(m.ports[2].directionRange.valid());
}

// --- Robustness ----------------------------------------------------------------

namespace {

/// Parses `text`: it must either parse cleanly or fail with exactly one error.
void checkParsesOrFailsOnce(const std::string &text) {
  Parsed p(text);
  INFO("input: ", text);
  if (p.file)
    CHECK(p.diags.diagnostics().empty());
  else
    CHECK(p.diags.diagnostics().size() == 1);
}

const char *const kEverything = R"(// every construct
model All {
    parameter k = 2.5e-1 * (1 + .5);
    Se s(k); Sf f(1); MSe ms(sin(time)); MSf mf(0);
    C c(e = q^3 / 2) { q0 = 1e-3; }
    I i(k) { p0 = -k; }
    R r(f = e / k);
    TF t(2); GY g(k); MTF mt(s.e); MGY mg(1);
    0 zero; 1 one;
    1 sw switched {
        off initial; on closed; off blocked;
        off -> closed when not (c.e < 0)- and ((s.e >= 1)+ or (time = 2)+);
        closed -> blocked when (c.q <= 0.5)+;
    }
    bond s -> one;
    bond named: one -> c;
    /* block * comment */
    signal x = -0.2 + integral(c.f) ^ 2 ^ -1;
    output c.q, p = max(i.p, 0), x;
}
)";

} // namespace

TEST_CASE("every prefix of a valid model parses or fails once") {
  std::string text = kEverything;
  REQUIRE(Parsed(text).file);
  for (std::size_t n = 0; n < text.size(); ++n)
    checkParsesOrFailsOnce(text.substr(0, n));
}

TEST_CASE("random mutations parse or fail once") {
  const std::string base = kEverything;
  // Bytes that matter to the lexer and parser, plus some that are invalid.
  const std::string alphabet = "{}();,:=->.+-*/^ \n\t0123456789eE_xRbond$#\x80\xc3\xa9\xff/*";
  std::mt19937 rng(20240611);
  for (int n = 0; n < 3000; ++n) {
    std::string text = base;
    for (int edits = 1 + rng() % 3; edits > 0; --edits) {
      std::size_t pos = rng() % (text.size() + 1);
      char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
      case 0:
        if (pos < text.size())
          text[pos] = c;
        break;
      case 1:
        text.insert(text.begin() + pos, c);
        break;
      default:
        if (pos < text.size())
          text.erase(pos, 1);
        break;
      }
    }
    checkParsesOrFailsOnce(text);
  }
}

TEST_CASE("nesting past kMaxNesting is an error at the token too deep") {
  auto model = [](const std::string &expr) {
    return "model M {\n  parameter k = " + expr + ";\n}\n";
  };
  auto nested = [](std::size_t depth, const std::string &open, const std::string &close) {
    std::string s;
    for (std::size_t i = 0; i < depth; ++i)
      s += open;
    s += "1";
    for (std::size_t i = 0; i < depth; ++i)
      s += close;
    return s;
  };
  const std::size_t limit = syntax::kMaxNesting;
  // At the limit, parentheses and calls parse.
  CHECK(Parsed(model(nested(limit, "(", ")"))).file);
  CHECK(Parsed(model(nested(limit, "sin(", ")"))).file);
  // One more, and the error points at the first `(` too deep: column 17
  // of `  parameter k = ` plus the ones before it.
  for (const char *open : {"(", "sin("}) {
    std::string err = errorOf(model(nested(limit + 1, open, ")")));
    std::size_t column = 17 + limit * std::string(open).size() + std::string(open).size() - 1;
    CHECK(err.find("test.hbg:2:" + std::to_string(column) +
                   ": error: parentheses nested more than 256 deep") == 0);
  }
  // Runs of signs and chains of powers nest the same way without
  // parentheses.
  std::string signs;
  for (std::size_t i = 0; i <= limit; ++i)
    signs += "- ";
  CHECK(errorOf(model(signs + "1")).find("test.hbg:2:" + std::to_string(17 + 2 * limit) +
                                          ": error: parentheses nested") == 0);
  std::string powers = "2";
  for (std::size_t i = 0; i <= limit; ++i)
    powers += " ^ 1";
  CHECK(errorOf(model(powers)).find("error: parentheses nested more than 256 deep") !=
        std::string::npos);
  // So do the `if`s of one expression (each else runs to its end), with
  // the parentheses around them, up to the limit; separate declarations
  // and arguments start again.
  auto ifs = [](std::size_t n) {
    std::string e;
    for (std::size_t i = 0; i < n; ++i)
      e += "if k > 0 then 1 else ";
    return e + "0";
  };
  CHECK(Parsed(model(ifs(limit))).file);
  CHECK(errorOf(model(ifs(limit + 1))).find("test.hbg:2:" + std::to_string(17 + 21 * limit) +
                                            ": error: parentheses nested") == 0);
  CHECK(Parsed("model M {\n  parameter a = " + ifs(limit) + ";\n  parameter b = " +
               ifs(limit) + ";\n  parameter c = max(" + ifs(limit - 1) + ", " +
               ifs(limit - 1) + ");\n}\n")
            .file);
  // 100,000 nested ifs: an error, not a crash; nor do parentheses around
  // them multiply the depth.
  CHECK(errorOf(model(ifs(100000))).find("error: parentheses nested") != std::string::npos);
  CHECK(errorOf(model(nested(limit / 2, "(", ")").replace(limit / 2, 1, ifs(limit / 2 + 1))))
            .find("error: parentheses nested") != std::string::npos);
  // A long flat sum of powers and signed terms is not nesting.
  std::string flat = "1";
  for (int i = 0; i < 2000; ++i)
    flat += " + -2 ^ 2";
  CHECK(Parsed(model(flat)).file);
}

TEST_CASE("a sum of 200,000 terms parses, and its AST frees without recursion") {
  std::string sum = "1";
  for (int i = 1; i < 200000; ++i)
    sum += " + " + std::to_string(i % 7 + 1);
  Parsed p("model M {\n  parameter k = " + sum + ";\n}\n");
  const ast::Model &m = p.model();
  // Left-associated: the first operand is a chain 199,999 deep.
  std::size_t depth = 0;
  for (const ast::Expr *e = m.parameters[0].value.get(); e->kind == ast::ExprKind::Binary;
       e = e->operands[0].get())
    ++depth;
  CHECK(depth == 199999);
}

TEST_CASE("declarations built during the parse: many, of every kind, in models and components") {
  // Each declaration of a model or component is built as soon as it is
  // parsed and its contexts released; the memory is reused by the next.
  std::string text = "component Part {\n  parameter k = 1;\n  0 j;\n  port a = j;\n}\n";
  text += "model Big {\n";
  const int n = 3000;
  for (int i = 0; i < n; ++i) {
    std::string s = std::to_string(i);
    text += "  parameter p" + s + " = " + s + " * (1 + 2 ^ -1);\n";
    text += "  C c" + s + "(e = q / p" + s + ") { q0 = " + s + "; }\n";
    text += "  Part part" + s + "(k = p" + s + ");\n";
    text += "  for i in 1:2 { signal s" + s + "[i] = if i > 1 then c" + s + ".e else -p" + s + "; }\n";
  }
  text += "  output last = c" + std::to_string(n - 1) + ".q;\n}\n";
  text += "component Tail { parameter z = 3; }\n";
  Parsed p(text);
  REQUIRE(p.file);
  REQUIRE(p.file->models.size() == 3);
  CHECK(p.file->models[0]->name == "Part");
  CHECK(p.file->models[0]->ports.size() == 1);
  const ast::Model &m = *p.file->models[1];
  REQUIRE(m.parameters.size() == static_cast<std::size_t>(n));
  REQUIRE(m.elements.size() == static_cast<std::size_t>(n));
  REQUIRE(m.instances.size() == static_cast<std::size_t>(n));
  REQUIRE(m.loops.size() == static_cast<std::size_t>(n));
  for (int i : {0, 1, 1234, n - 1}) {
    std::string s = std::to_string(i);
    CHECK(m.parameters[i].name == "p" + s);
    CHECK(show(*m.parameters[i].value) == "(* " + s + " (+ 1 (^ 2 (- 1))))");
    CHECK(m.elements[i].args.at(0).name == "e");
    CHECK(show(*m.elements[i].args.at(0).value) == "(/ q p" + s + ")");
    CHECK(show(*m.elements[i].initials.at(0).value) == s);
    CHECK(m.instances[i].type == "Part");
  }
  CHECK(p.slice(m.parameters[n - 1].value->range) == std::to_string(n - 1) + " * (1 + 2 ^ -1)");
  REQUIRE(m.outputs.size() == 1);
  CHECK(m.outputs[0].name == "last");
  CHECK(p.file->models[2]->name == "Tail");
  CHECK(p.file->models[2]->component);
}

TEST_CASE("if blocks: branches, conditions with connected(port), and their place") {
  Parsed p(R"(component H {
  port heat = th;
  0 th;
  R a(1);
  if not connected(heat) and n > 1 { Se amb(1); bond th -> amb; }
  else if (connected(heat)) { R b(2); }
  else { R c(3); if n < 0 { R d(4); } }
  R e(5);
})");
  const ast::Model &m = p.model();
  REQUIRE(m.conditionals.size() == 1);
  const ast::Conditional &c = m.conditionals[0];
  // Declared after `a`: its declarations take their place before `e`.
  CHECK(c.before[0] == 1);
  CHECK(c.before[2] == 0);
  REQUIRE(c.branches.size() == 3);
  CHECK(showCondition(*c.branches[0].condition) == "(and (not (connected heat)) (> n 1))");
  CHECK(p.slice(c.branches[0].condition->children[0]->children[0]->range) == "connected(heat)");
  CHECK(c.branches[0].body->elements.at(0).name == "amb");
  CHECK(c.branches[0].body->bonds.size() == 1);
  CHECK(showCondition(*c.branches[1].condition) == "(connected heat)");
  CHECK(p.slice(c.branches[1].keywordRange) == "if");
  CHECK_FALSE(c.branches[2].condition);
  CHECK(p.slice(c.branches[2].keywordRange) == "else");
  CHECK(c.branches[2].body->conditionals.size() == 1);
  CHECK(p.file->indexed); // flattening decides the blocks
  CHECK(m.elements.size() == 2);
}

TEST_CASE("if blocks: what the parser refuses") {
  // `connected` is a condition of `if` blocks only, and takes one name.
  CHECK(errorOf("model m { signal s = if connected(p) then 1 else 0; }") ==
        "test.hbg:1:38: error: unexpected `then`; expected a comparison\n"
        "model m { signal s = if connected(p) then 1 else 0; }\n"
        "                                     ^~~~\n");
  // Each text, and the start of its one error.
  const std::pair<const char *, const char *> refused[] = {
      {"model m { if (if connected(p) then 1 else 0) > 0 { } }",
       "test.hbg:1:31: error: unexpected `then`; expected a comparison"},
      {"model m { if connected(1) { } }", "test.hbg:1:24: error: unexpected `1`; expected a name"},
      {"model m { if connected() { } }", "test.hbg:1:24: error: unexpected `)`; expected a name"},
      {"model m { if connected(a, b) { } }", "test.hbg:1:25: error: unexpected `,`; expected `)`"},
      {"model m { if connected(a[1]) { } }", "test.hbg:1:25: error: unexpected `[`; expected `)`"},
      {"model m { if useHeat + 1 { } }", "test.hbg:1:26: error: unexpected `{`; expected a comparison"},
      {"model m { if 2 * connected(p) { } }",
       "test.hbg:1:31: error: unexpected `{`; expected a comparison"},
  };
  for (const auto &[text, error] : refused) {
    INFO(text);
    CHECK(errorOf(text).rfind(error, 0) == 0);
  }
  // A plain `else` is the last branch.
  CHECK(errorOf("model m { if n > 0 { } else { } else { } }") ==
        "test.hbg:1:33: error: unexpected `else`\n"
        "model m { if n > 0 { } else { } else { } }\n"
        "                                ^~~~\n");
  CHECK(errorOf("model m { R r(1); else { } }").find("unexpected `else`") != std::string::npos);
}

TEST_CASE("if blocks nest to kMaxNesting; a chain of else if does not nest") {
  const std::size_t limit = syntax::kMaxNesting;
  // The model's braces count: 255 blocks inside it, at the limit.
  auto nested = [](std::size_t depth) {
    std::string s = "model M {\n";
    for (std::size_t i = 0; i < depth; ++i)
      s += "if n > " + std::to_string(i) + " {\n";
    s += "R r(1);\n";
    for (std::size_t i = 0; i < depth; ++i)
      s += "}\n";
    return s + "}\n";
  };
  CHECK(Parsed(nested(limit - 1)).file);
  std::string err = errorOf(nested(limit));
  CHECK(err.find("test.hbg:257:") == 0);
  CHECK(err.find("error: blocks nested more than 256 deep: `for` loops and `if` blocks nest at "
                 "most 256 deep") != std::string::npos);
  CHECK(errorOf(nested(100000)).find("error: blocks nested more than 256") != std::string::npos);
  // Blocks without declarations between them are not one expression's
  // `if`s either.
  std::string bare = "model M {\n";
  for (std::size_t i = 0; i + 1 < limit; ++i)
    bare += "if n > 0 {";
  bare += std::string(limit - 1, '}') + "}\n";
  CHECK(Parsed(bare).file);
  // 100,000 branches in one chain parse, each a branch of one block.
  std::string chain = "model M {\n  if n < 1 { R r(1); }\n";
  for (int i = 1; i < 100000; ++i)
    chain += "  else if n < " + std::to_string(i + 1) + " { R r(" + std::to_string(i) + "); }\n";
  chain += "  else { R r(0); }\n}\n";
  Parsed p(chain);
  CHECK(p.model().conditionals.at(0).branches.size() == 100001);
}

TEST_CASE("Boolean signals: a condition as a signal's value, a name alone as a condition") {
  Parsed p("model m {\n"
           "  signal hot = T > 350 and not cooling;\n"
           "  signal v = (a + b) * 2;\n"
           "  signal w = (x);\n"
           "  signal c = (x > 1);\n"
           "  signal y = if hot or c then 1 else 0;\n"
           "  0 j pseudo switched { off initial; on; off -> on when (hot)+ and not (c)-; }\n"
           "}");
  const ast::Model &m = p.model();
  REQUIRE(m.signals.size() == 5);
  CHECK(m.signals[0].boolean);
  CHECK(show(*m.signals[0].value) == "(if (and (> T 350) (not cooling)) 1 0)");
  CHECK(p.slice(m.signals[0].value->range) == "T > 350 and not cooling");
  CHECK_FALSE(m.signals[1].boolean);
  CHECK(show(*m.signals[1].value) == "(* (+ a b) 2)");
  CHECK_FALSE(m.signals[2].boolean);
  CHECK(show(*m.signals[2].value) == "x");
  CHECK(m.signals[3].boolean);
  CHECK(show(*m.signals[3].value) == "(if (> x 1) 1 0)");
  CHECK_FALSE(m.signals[4].boolean);
  CHECK(show(*m.signals[4].value) == "(if (or hot c) 1 0)");
  REQUIRE(m.junctions.size() == 1);
  CHECK(m.junctions[0].pseudo);
  CHECK(p.slice(m.junctions[0].markRange) == "pseudo");
  CHECK(showGuard(*m.junctions[0].fsm->transitions.at(0).guard) ==
        "(and (truth + hot) (not (truth - c)))");
  // Any word after a junction's name parses; Flatten refuses all but `pseudo`.
  Parsed q("model m { 0 plate thermal; }");
  CHECK(q.model().junctions.at(0).mark == "thermal");
  CHECK_FALSE(q.model().junctions.at(0).pseudo);
}
