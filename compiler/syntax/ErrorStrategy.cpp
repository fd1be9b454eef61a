//===- compiler/syntax/ErrorStrategy.cpp - Stop at the first error --------===//

#include "ErrorStrategy.h"

#include <Exceptions.h>
#include <NoViableAltException.h>
#include <Parser.h>
#include <ParserRuleContext.h>
#include <RecognitionException.h>
#include <atn/ATN.h>
#include <atn/ATNState.h>
#include <atn/Transition.h>

namespace hbg::syntax {

using antlr4::atn::ATNState;

void StopAtFirstError::fail(antlr4::Token *offending, antlr4::misc::IntervalSet expected,
                            SyntaxError::Fix fix) {
  if (!error_)
    error_ = SyntaxError{offending, std::move(expected), fix};
  throw antlr4::ParseCancellationException();
}

void StopAtFirstError::reportError(antlr4::Parser *parser, const antlr4::RecognitionException &e) {
  antlr4::Token *offending = e.getOffendingToken();
  if (!offending)
    offending = parser->getCurrentToken();
  // A prediction that looked ahead several tokens fails on a later token than
  // the one it started at; its expected set is about the start token.
  auto *noAlt = dynamic_cast<const antlr4::NoViableAltException *>(&e);
  bool expectedKnown = !noAlt || noAlt->getStartToken() == offending;
  if (!error_)
    error_ =
        SyntaxError{offending, expectedKnown ? e.getExpectedTokens() : antlr4::misc::IntervalSet(),
                    SyntaxError::Fix::None};
}

void StopAtFirstError::recover(antlr4::Parser *, std::exception_ptr) {
  throw antlr4::ParseCancellationException();
}

antlr4::Token *StopAtFirstError::recoverInline(antlr4::Parser *parser) {
  // Called when `match` fails. The same one-token checks as ANTLR's recovery:
  // is the token after this one the expected one (this one is extra), or
  // would it fit after the expected one (that one is missing)?
  const antlr4::atn::ATN &atn = parser->getATN();
  ATNState *state = atn.states[parser->getState()];
  antlr4::TokenStream *tokens = parser->getTokenStream();
  antlr4::misc::IntervalSet expected = parser->getExpectedTokens();
  SyntaxError::Fix fix = SyntaxError::Fix::None;
  if (tokens->LA(1) != antlr4::Token::EOF && expected.contains(tokens->LA(2))) {
    fix = SyntaxError::Fix::Extra;
  } else if (expected.size() == 1 && !state->transitions.empty()) {
    ATNState *next = state->transitions[0]->target;
    if (atn.nextTokens(next, parser->getContext()).contains(tokens->LA(1)))
      fix = SyntaxError::Fix::Missing;
  }
  fail(parser->getCurrentToken(), std::move(expected), fix);
}

void StopAtFirstError::sync(antlr4::Parser *parser) {
  // Before a loop or a choice, fail if no alternative can start with the next
  // token: the expected set is then the full list of alternatives (`a
  // declaration or `}``), not just the one token matched after the loop.
  const antlr4::atn::ATN &atn = parser->getATN();
  ATNState *state = atn.states[parser->getState()];
  size_t next = parser->getTokenStream()->LA(1);
  const antlr4::misc::IntervalSet &first = atn.nextTokens(state);
  if (first.contains(antlr4::Token::EPSILON) || first.contains(next))
    return;
  switch (state->getStateType()) {
  case ATNState::BLOCK_START:
  case ATNState::STAR_BLOCK_START:
  case ATNState::PLUS_BLOCK_START:
  case ATNState::STAR_LOOP_ENTRY:
  case ATNState::PLUS_LOOP_BACK:
  case ATNState::STAR_LOOP_BACK:
    fail(parser->getCurrentToken(), parser->getExpectedTokens(), SyntaxError::Fix::None);
  default:
    return;
  }
}

} // namespace hbg::syntax
