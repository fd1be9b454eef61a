//===- hbg/support/Xml.h - Text in XML ------------------------------------===//
#pragma once

#include <string>

namespace hbg {

/// `s` as XML character data or an attribute value in double quotes: `&`,
/// `<`, `>` and `"` as entities (an FMU's model description, an SVG).
inline std::string xmlEscaped(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

} // namespace hbg
