//===- compiler/syntax/Parser.cpp - .hbg text to AST ----------------------===//
//
// Lexes the whole buffer into one array of tokens (TokenList.h, with
// Lexer.h: the grammar's lexer rules written out), parses it with ANTLR's
// generated parser stopping at the first error, and reports whichever comes
// first in the text: a lexical error (an error token from the lexer) or the
// syntax error. Only an error-free tree reaches the AST builder.
//
// The parse is ANTLR's two-stage one. The first stage predicts with SLL,
// which ignores the rule invocation stack and so never falls back to full
// LL context, and gives up at the first error without a word. When SLL
// succeeds the tree is the one LL would have built (ANTLR's guarantee for
// PredictionMode::SLL), so most files are parsed once, fast. Any failure,
// and any file with an error token, is parsed again from the start with LL
// and StopAtFirstError, the parse whose errors are reported.
//
//===----------------------------------------------------------------------===//

#include "hbg/syntax/Parser.h"

#include "AstBuilder.h"
#include "ErrorMessages.h"
#include "ErrorStrategy.h"
#include "TokenList.h"
#include "Tokens.h"

#include "HbgParser.h"

#include <BailErrorStrategy.h>
#include <BaseErrorListener.h>
#include <atn/ParserATNSimulator.h>
#include <atn/PredictionMode.h>

#include <cctype>
#include <vector>
#include <Exceptions.h>

namespace hbg::syntax {

namespace {

/// Keeps ANTLR from printing to the console. The parser should never call
/// it (its errors go through StopAtFirstError), so it only remembers
/// where, in case it does.
class SilentListener : public antlr4::BaseErrorListener {
public:
  void syntaxError(antlr4::Recognizer *, antlr4::Token *offending, size_t line, size_t column,
                   const std::string &, std::exception_ptr) override {
    if (called)
      return;
    called = true;
    this->offending = offending;
    this->line = line;
    this->column = column;
  }

  bool called = false;
  antlr4::Token *offending = nullptr;
  size_t line = 0, column = 0;
};

/// HbgParser whose tree holds rule contexts only. ANTLR adds a node for
/// every token matched, which doubles the tree's allocations; the AST
/// builder reads tokens from the contexts' labels and the token stream
/// instead. No error is recovered from, so no error node is ever needed.
/// Entering a rule reads the token list directly, and links the context to
/// its parent without the runtime's dynamic_cast: every context of a
/// generated parser is a ParserRuleContext.
///
/// Each declaration of a model or component goes to the AST builder as
/// soon as it is parsed, and its contexts are released: the tree of a
/// large model would otherwise take many times the memory of its text
/// (about 57 bytes a byte), and the time to fault that memory in.
class RuleTreeParser : public hbg_antlr::HbgParser {
public:
  RuleTreeParser(TokenList *tokens, AstBuilder &builder)
      : HbgParser(tokens), tokens_(tokens), builder_(&builder) {}

  /// Rethrows what building a declaration threw, other than a syntax error.
  void rethrowBuildFailure() const {
    if (failure_)
      std::rethrow_exception(failure_);
  }

  antlr4::Token *consume() override {
    antlr4::Token *tok = tokens_->current();
    if (tok->getType() != antlr4::Token::EOF)
      tokens_->consume();
    return tok;
  }

  void enterRule(antlr4::ParserRuleContext *ctx, size_t state, size_t ruleIndex) override {
    setState(state);
    _ctx = ctx;
    ctx->start = tokens_->current();
    if (ctx->parent) {
      auto *parent = static_cast<antlr4::ParserRuleContext *>(ctx->parent);
      std::vector<antlr4::tree::ParseTree *> &siblings = parent->children;
      // Room for three children in malloc's smallest block, where growing
      // one at a time would allocate three times.
      if (siblings.capacity() == 0)
        siblings.reserve(3);
      siblings.push_back(ctx);
      if (builder_ && ruleIndex == RuleDeclaration &&
          (parent->getRuleIndex() == RuleModel || parent->getRuleIndex() == RuleComponent)) {
        watched_ = ctx;
        mark_ = _tracker.beforeLast();
      }
    }
  }

  void enterOuterAlt(antlr4::ParserRuleContext *ctx, size_t alt) override {
    ctx->setAltNumber(alt);
    // A labelled alternative replaces the rule's context, already a child
    // of its parent, with its own.
    if (_ctx != ctx && _ctx->parent) {
      auto *parent = static_cast<antlr4::ParserRuleContext *>(_ctx->parent);
      parent->children.back() = ctx;
    }
    _ctx = ctx;
  }

private:
  void watchedExited(antlr4::ParserRuleContext *ctx) override {
    try {
      if (!builder_->declarationParsed(static_cast<DeclarationContext *>(ctx))) {
        builder_ = nullptr; // a syntax error: build no more
        return;
      }
    } catch (...) {
      failure_ = std::current_exception();
      builder_ = nullptr;
      return;
    }
    // The declaration is its parent's last child, and the contexts created
    // since it are its own.
    static_cast<antlr4::ParserRuleContext *>(ctx->parent)->children.pop_back();
    _tracker.release(mark_);
  }

  TokenList *tokens_;
  AstBuilder *builder_;
  hbg_antlr::ContextArena::Mark mark_;
  std::exception_ptr failure_;
};

/// The first token, in text order, that carries a lexical error.
const antlr4::Token *firstLexicalError(const SourceText &src, const TokenList &tokens) {
  for (const ListToken &tok : tokens.tokens())
    if (isLexicalError(src, &tok))
      return &tok;
  return nullptr;
}

/// Whether a token of `type` ends an operand: a name, a keyword, a number
/// or a `.`. Tokens in error are judged by their last character.
bool endsOperand(std::size_t type, std::string_view text) {
  using P = hbg_antlr::HbgParser;
  switch (type) {
  case P::BAD_NUMBER:
  case P::UNTERMINATED_STRING:
  case P::UNTERMINATED_COMMENT:
  case P::ERROR_CHAR:
    return !text.empty() && (std::isalnum(static_cast<unsigned char>(text.back())) ||
                             text.back() == '_' || text.back() == '.');
  case P::COMMA:
  case P::ASSIGN:
  case P::COLON:
  case P::ARROW:
  case P::LBRACE:
  case P::RBRACE:
  case P::LPAREN:
  case P::RPAREN:
  case P::LBRACKET:
  case P::RBRACKET:
  case P::SEMI:
  case P::PLUS:
  case P::MINUS:
  case P::STAR:
  case P::SLASH:
  case P::CARET:
  case P::LE:
  case P::GE:
  case P::LT:
  case P::GT:
  case P::STRING:
  case antlr4::Token::EOF:
    return false;
  default: // IDENT, keywords, NUMBER, ZERO, ONE, DOT
    return true;
  }
}

/// The first token that nests deeper than kMaxNesting, if any: a `(`
/// inside that many, or the operator past that many in a run of signs
/// (`- - - x`) or of powers at one level (`a ^ b ^ c`), which the AST
/// nests like parentheses; or an `if` inside that many parentheses and
/// `if`s (each `else` runs to its expression's end, so the `if`s of one
/// expression at one level all nest). `[` nests as `(` does, and `{` (the
/// bodies of `for` loops and `if` blocks) on its own count; the `if` of
/// an `if` block is no expression's, and nests by its braces.
const antlr4::Token *tooDeep(const SourceText &src, const TokenList &tokens) {
  using P = hbg_antlr::HbgParser;
  std::vector<std::size_t> powers{0}; // `^` at each open parenthesis level
  std::vector<std::size_t> ifs{0};    // `if` at each level since its `,` or `;`
  std::size_t openIfs = 0;            // their sum over the open levels
  std::size_t signs = 0, braces = 0;
  bool operandBefore = false; // the previous token ends an operand
  // The two tokens before: an `if` after `{`, `}`, `;` or `} else` starts
  // an `if` block (an expression holds no braces, and its `else if`
  // follows an operand).
  std::size_t before = antlr4::Token::INVALID_TYPE, beforeThat = antlr4::Token::INVALID_TYPE;
  for (const ListToken &token : tokens.tokens()) {
    const antlr4::Token *tok = &token;
    std::size_t type = token.type();
    bool blockIf =
        type == P::IF && (before == P::LBRACE || before == P::RBRACE || before == P::SEMI ||
                          (before == P::ELSE && beforeThat == P::RBRACE));
    beforeThat = before;
    before = type;
    bool sign = (type == P::MINUS || type == P::PLUS) && !operandBefore;
    signs = sign ? signs + 1 : 0;
    if (signs > kMaxNesting)
      return tok;
    if (type == P::LBRACE && ++braces > kMaxNesting)
      return tok;
    if (type == P::RBRACE && braces > 0)
      --braces;
    bool open = type == P::LPAREN || type == P::LBRACKET;
    bool close = type == P::RPAREN || type == P::RBRACKET;
    if (open) {
      powers.push_back(0);
      ifs.push_back(0);
      if (powers.size() - 1 > kMaxNesting)
        return tok;
    } else if (close) {
      if (powers.size() > 1) {
        powers.pop_back();
        openIfs -= ifs.back();
        ifs.pop_back();
      }
    } else if (type == P::IF && !blockIf) {
      ++ifs.back();
      if (++openIfs + (powers.size() - 1) > kMaxNesting)
        return tok;
    } else if (type == P::COMMA || type == P::SEMI || type == P::LBRACE || type == P::RBRACE) {
      openIfs -= ifs.back();
      ifs.back() = 0;
    }
    bool operand = endsOperand(type, tokenText(src.buffer, tok));
    if (type == P::CARET) {
      if (++powers.back() > kMaxNesting)
        return tok;
    } else if (!operand && !open && !close) {
      powers.back() = 0; // any other operator ends a chain of powers
    }
    operandBefore = operand || close;
  }
  return nullptr;
}

/// Reports a syntax error at `error.offending`.
void reportAt(const SourceText &src, TokenList &tokens, const SyntaxError &error,
              const antlr4::dfa::Vocabulary &vocabulary, DiagnosticEngine &diags) {
  std::size_t index = error.offending->getTokenIndex();
  antlr4::Token *previous = index > 0 ? tokens.get(index - 1) : nullptr;
  reportSyntaxError(src, error, previous, vocabulary, diags);
}

/// The first stage: SLL, stopping silently at the first error. Null when the
/// file needs the second, or (`reported`) after the builder's syntax error.
std::unique_ptr<ast::File> parseFast(const SourceText &src, TokenList &tokens,
                                     DiagnosticEngine &diags, bool &reported) {
  AstBuilder builder(src, tokens);
  RuleTreeParser parser(&tokens, builder);
  parser.removeErrorListeners();
  parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
      antlr4::atn::PredictionMode::SLL);
  parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  hbg_antlr::HbgParser::FileContext *tree = nullptr;
  try {
    tree = parser.file();
  } catch (const antlr4::ParseCancellationException &) {
    return nullptr;
  }
  parser.rethrowBuildFailure();
  // The whole file parsed and has no error token: an error the builder
  // finds is the first in the text.
  std::unique_ptr<ast::File> file = builder.error() ? nullptr : builder.build(tree);
  if (!file) {
    reportAt(src, tokens, *builder.error(), parser.getVocabulary(), diags);
    reported = true;
  }
  return file;
}

} // namespace

std::unique_ptr<ast::File> parse(std::uint32_t fileId, const SourceManager &sm,
                                 DiagnosticEngine &diags) {
  SourceText src{fileId, sm.text(fileId)};
  SilentListener listener;

  TokenList tokens(src.buffer, std::string(sm.name(fileId)));
  const antlr4::Token *lexError = firstLexicalError(src, tokens);
  // The parser and every pass after it walk nested parentheses
  // recursively: bound the depth before any of them runs (as clang's
  // -fbracket-depth does).
  if (const antlr4::Token *deep = tooDeep(src, tokens)) {
    diags.report(deep->getType() == hbg_antlr::HbgParser::LBRACE ? DiagKind::BlocksTooDeep
                                                                 : DiagKind::NestingTooDeep,
                 tokenRange(fileId, deep), {kMaxNesting});
    return nullptr;
  }

  // Only a number out of range parses and is still an error: a file with
  // an error token goes straight to the second stage, which reports it.
  if (!lexError) {
    bool reported = false;
    if (std::unique_ptr<ast::File> file = parseFast(src, tokens, diags, reported))
      return file;
    if (reported)
      return nullptr;
    tokens.seek(0);
  }

  AstBuilder builder(src, tokens);
  RuleTreeParser parser(&tokens, builder);
  parser.removeErrorListeners();
  parser.addErrorListener(&listener);
  auto strategy = std::make_shared<StopAtFirstError>();
  parser.setErrorHandler(strategy);

  hbg_antlr::HbgParser::FileContext *tree = nullptr;
  try {
    tree = parser.file();
  } catch (const antlr4::ParseCancellationException &) {
    // The strategy has recorded why.
  }
  parser.rethrowBuildFailure();

  // The builder has seen only declarations that parsed, so an error it
  // found comes before the parser's; only a number out of range, which
  // parses, can come before it.
  if (const std::optional<SyntaxError> &early = builder.error()) {
    if (lexError && lexError->getTokenIndex() <= early->offending->getTokenIndex())
      reportLexicalError(src, lexError, diags);
    else
      reportAt(src, tokens, *early, parser.getVocabulary(), diags);
    return nullptr;
  }
  if (const std::optional<SyntaxError> &error = strategy->error()) {
    // The parser cannot get past an error token, so a lexical error before
    // or at the point of failure is the first error in the text.
    if (lexError && lexError->getTokenIndex() <= error->offending->getTokenIndex())
      reportLexicalError(src, lexError, diags);
    else
      reportAt(src, tokens, *error, parser.getVocabulary(), diags);
    return nullptr;
  }
  if (listener.called) {
    SourceRange range{sm.locOfLine(fileId, static_cast<std::uint32_t>(listener.line),
                                   static_cast<std::uint32_t>(listener.column)),
                      1};
    std::string what = "input";
    if (listener.offending) {
      range = tokenRange(fileId, listener.offending);
      what = describeToken(src, listener.offending);
    }
    diags.report(DiagKind::UnexpectedInput, range, {what});
    return nullptr;
  }
  // Only a number out of range parses and is still an error, unless the
  // builder finds a syntax error before it.
  std::unique_ptr<ast::File> file = builder.build(tree);
  const std::optional<SyntaxError> &late = builder.error();
  if (lexError && (!late || lexError->getTokenIndex() <= late->offending->getTokenIndex())) {
    reportLexicalError(src, lexError, diags);
    return nullptr;
  }
  if (late)
    reportAt(src, tokens, *late, parser.getVocabulary(), diags);
  return file;
}

} // namespace hbg::syntax
