#include "hbg/support/Diagnostics.h"

#include <doctest/doctest.h>

using namespace hbg;

TEST_CASE("line and column of offsets") {
  SourceManager sm;
  auto f = sm.addBuffer("a.hbg", "ab\ncd\n\nef");
  CHECK(sm.lineCol({f, 0}).line == 1);
  CHECK(sm.lineCol({f, 4}).line == 2);
  CHECK(sm.lineCol({f, 4}).column == 2);
  CHECK(sm.lineCol({f, 7}).line == 4);
  CHECK(sm.lineText(f, 2) == "cd");
  CHECK(sm.lineText(f, 3) == "");
  CHECK(sm.lineText(f, 4) == "ef");
  CHECK(sm.locOfLine(f, 2, 1).offset == 4);
}

TEST_CASE("rendered diagnostic has location, source line and caret") {
  SourceManager sm;
  auto f = sm.addBuffer("m.hbg", "model M {\n  bond a -> bb;\n}\n");
  DiagnosticEngine diags(sm);
  diags.report(DiagKind::UnknownNameSuggest, {{f, 22}, 2}, {"bb", "b"});
  diags.note(DiagKind::PreviousDefinition, {{f, 0}, 5}, {"M"});
  CHECK(diags.hasErrors());
  CHECK(diags.renderAll() == "m.hbg:2:13: error: unknown name `bb`; did you mean `b`?\n"
                             "  bond a -> bb;\n"
                             "            ^~\n"
                             "m.hbg:1:1: note: `M` first defined here\n"
                             "model M {\n"
                             "^~~~~\n");
}

TEST_CASE("caret is clipped to the line and tabs are kept") {
  SourceManager sm;
  auto f = sm.addBuffer("t.hbg", "\tx y\n");
  DiagnosticEngine diags(sm);
  diags.report(DiagKind::UnknownName, {{f, 3}, 10}, {"y"});
  CHECK(diags.renderAll() == "t.hbg:1:4: error: unknown name `y`\n\tx y\n\t  ^\n");
}

TEST_CASE("diagnostics without a location name the tool") {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  diags.report(DiagKind::CannotOpenFile, {}, {"x.hbg", "No such file or directory"});
  CHECK(diags.renderAll() == "hbgc: error: cannot open `x.hbg`: No such file or directory\n");
}

TEST_CASE("error limit keeps the count") {
  SourceManager sm;
  auto f = sm.addBuffer("t.hbg", "x\n");
  DiagnosticEngine diags(sm);
  diags.setErrorLimit(2);
  for (int i = 0; i < 5; ++i)
    diags.report(DiagKind::UnknownName, {{f, 0}, 1}, {"x"});
  CHECK(diags.errorCount() == 5);
  CHECK(diags.diagnostics().size() == 2);
  CHECK(diags.renderAll().find("3 more errors not shown") != std::string::npos);
}

TEST_CASE("closest name") {
  CHECK(closestName("capacitr", {"capacitor", "inductor"}) == "capacitor");
  CHECK(closestName("zzz", {"capacitor", "inductor"}) == "");
  CHECK(closestName("d", {"c", "q"}) == "");
  CHECK(closestName("r", {"r1", "q"}) == "r1");
  CHECK(closestName("spirng", {"spring", "string"}) == "spring");
  CHECK(closestName("mass", {"mass"}) == "");
  CHECK(closestName("sinn", {"sign", "sin"}) == "sin");
}

TEST_CASE("format placeholders") {
  CHECK(formatMessage("{1} and {0}", {"a", 2}) == "2 and a");
  CHECK_THROWS_AS(formatMessage("{3}", {"a"}), InternalError);
}
