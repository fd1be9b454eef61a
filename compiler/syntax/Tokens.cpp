//===- compiler/syntax/Tokens.cpp - ANTLR tokens as source ranges ---------===//

#include "Tokens.h"

#include <charconv>
#include <system_error>

namespace hbg::syntax {

bool parseNumber(std::string_view text, double &value) {
  // Correctly rounded, like strtod, and out of range exactly when strtod
  // overflows or underflows to zero (a nonzero subnormal is in range).
  const char *end = text.data() + text.size();
  std::from_chars_result r = std::from_chars(text.data(), end, value);
  return r.ec == std::errc() && r.ptr == end;
}

} // namespace hbg::syntax
