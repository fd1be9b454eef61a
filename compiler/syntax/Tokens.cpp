//===- compiler/syntax/Tokens.cpp - ANTLR tokens as source ranges ---------===//

#include "Tokens.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace hbg::syntax {

bool parseNumber(std::string_view text, double &value) {
  // strtod needs a terminator; number tokens are short.
  std::string s(text);
  char *end = nullptr;
  errno = 0;
  value = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size())
    return false;
  if (errno != ERANGE)
    return true;
  // ERANGE also flags results that lost precision in the subnormal range;
  // those are still the closest double to what was written.
  return !std::isinf(value) && value != 0;
}

} // namespace hbg::syntax
