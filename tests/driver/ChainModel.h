// A chain of masses as .hbg text, for the tier tests: large tapes from a
// model whose behaviour is plain.
#pragma once

#include <string>

namespace hbg::test {

/// A chain of n unit masses between springs of compliance 0.5 and
/// dampers of 0.1, the first spring on a wall, with one output.
inline std::string chainModel(int n) {
  std::string text = "model Chain {\n  Sf wall(0);\n";
  for (int i = 0; i < n; ++i) {
    std::string k = std::to_string(i), prev = i ? "v" + std::to_string(i - 1) : "wall";
    text += "  C spring" + k + "(0.5) { q0 = " + std::to_string(0.01 * (i % 7)) + "; }\n" +
            "  I mass" + k + "(1) { p0 = 0; }\n  R damper" + k + "(0.1);\n  1 v" + k +
            ";\n  0 s" + k + ";\n  bond v" + k + " -> s" + k + ";\n  bond s" + k + " -> " +
            prev + ";\n  bond s" + k + " -> spring" + k + ";\n  bond v" + k + " -> mass" + k +
            ";\n  bond v" + k + " -> damper" + k + ";\n";
  }
  return text + "  output mass" + std::to_string(n - 1) + ".p;\n}\n";
}

} // namespace hbg::test
