//===- support/Compare.cpp - Comparison operators of guards ---------------===//

#include "hbg/support/Compare.h"

namespace hbg {

const char *compareOpText(CompareOp op) {
  switch (op) {
  case CompareOp::Less: return "<";
  case CompareOp::LessEqual: return "<=";
  case CompareOp::Equal: return "=";
  case CompareOp::GreaterEqual: return ">=";
  case CompareOp::Greater: return ">";
  }
  return "?";
}

} // namespace hbg
