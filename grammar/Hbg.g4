// The grammar of `.hbg` files (docs/language.md).
//
// The parser builds no AST itself: compiler/syntax/AstBuilder.cpp turns the
// parse tree into hbg::ast nodes. Errors are not recovered from; the first
// one is reported by compiler/syntax/Parser.cpp, which also turns the error
// tokens at the end of the lexer into diagnostics.

grammar Hbg;

// The parser's base class: grammar/ParserBase.h says why.
options { superClass = ParserBase; }

@parser::header {
#include "ParserBase.h"
}

// --- Declarations ----------------------------------------------------------

file : (importDecl | model | component)* EOF ;

// `import electrical;` (electrical.hbg on the library path) or
// `import "parts/valves.hbg";` (relative to this file): their components.
importDecl : kw='import' (name=ident | where=STRING) ';' ;

model : 'model' name=ident '{' declaration* '}' ;

// A reusable part: declarations like a model's, and ports that bonds
// outside attach to. Instances are declared `Type name(param = value);`.
component : kw='component' name=ident '{' declaration* '}' ;

declaration
  : parameterDecl
  | inputDecl
  | elementDecl
  | junctionDecl
  | bondDecl
  | signalDecl
  | discreteDecl
  | outputDecl
  | experimentDecl
  | portDecl
  | instanceDecl
  | forDecl
  | ifDecl
  ;

// `for i in 1:N { ... }`: the declarations inside, once for each integer
// i from 1 to N (none when N < 1). Bounds and indices are computed from
// numbers, parameters and loop variables when the model is built.
forDecl
  : kw='for' var=ident 'in' from=expr ':' to=expr lbrace='{' declaration* rbrace='}' ;

// `if COND { ... }`, then any number of `else if COND { ... }` and an
// `else { ... }`: the declarations of the first branch whose condition
// holds, decided when the model is built. The branches are a list, not
// nested rules, so that a long chain of `else if` does not nest the
// parse; AstBuilder checks that a plain `else` comes last. COND is a
// condition of numbers, parameters and loop variables; in a component it
// may also be `connected(port)`, parsed as a comparison without its
// operator and right side (so that one token decides; `connected` is no
// keyword) and checked by AstBuilder.
ifDecl : kw='if' cond=condition lbrace='{' declaration* rbrace='}' branches+=elseBranch* ;

elseBranch : kw='else' (ifKw='if' cond=condition)? lbrace='{' declaration* rbrace='}' ;

// `[i]`, `[i + 1, j]`: the index of a name declared or used in a loop,
// `mass[i]` (one name, `mass[3]` once built).
index : lbracket='[' items+=expr (',' items+=expr)* rbracket=']' ;

// `port a = j, b = inner.k;`: port `a` is the element (usually a junction)
// `j`; a bond outside to `inst.a` attaches to it. `port p = j in, n = j
// out;`: power enters the component at p and leaves at n, and a bond
// drawn the other way is warned about (`out` is checked by the builder:
// it is not a keyword).
portDecl : kw='port' items+=portItem (',' items+=portItem)* ';' ;

// The direction is any name here (`in` is a keyword, `out` is not), so that
// one token decides; AstBuilder tells them apart.
portItem : name=ident '=' target=path dir=ident? ;

// `Diode d1(Vf = 0.6);` or `Diode d1;`: an instance of a component.
instanceDecl
  : type=IDENT name=ident index? (lparen='(' (args+=instanceArg (',' args+=instanceArg)*)? rparen=')')? ';' ;

instanceArg : name=ident '=' value=expr ;

// `name` or `instance.name`, `a.b.c`: a name inside instances; each part
// may be indexed, `mass[i].a`.
path : parts+=pathPart ('.' parts+=pathPart)* ;

pathPart : name=ident index? ;

parameterDecl : 'parameter' name=ident '=' value=expr ';' ;

// `input u;` or `input u = 1;` (its value until one is set): a value that a
// program driving the model sets between steps (the step API, an FMI
// master). Top-level models only; constant while the model integrates.
inputDecl : kw='input' name=ident ('=' value=expr)? ';' ;

// `C c(1) { q0 = 0; }` ends at its `}`; without initial values it needs `;`.
elementDecl
  : kind=elementKind name=ident index?
    lparen='(' (elementArg (',' elementArg)*)? rparen=')'
    (initialBlock | ';')
  ;

elementKind
  : 'Se' | 'Sf' | 'MSe' | 'MSf' | 'C' | 'I' | 'R' | 'TF' | 'GY' | 'MTF' | 'MGY' ;

// `value` or `name = value`. Both start with an expression, so that one
// token decides (a name is one); AstBuilder checks that what stands before
// `=` is a name, and reports what the text has there otherwise.
elementArg : first=expr (assign='=' value=expr)? ;

initialBlock : '{' initialValue* '}' ;

initialValue : name=ident '=' value=expr ';' ;

// `0 j;`, or a switched junction with its finite state machine:
//     0 contact switched { off initial; on; off -> on when (x < 0)+; }
// `switched dissipative` declares that its events may remove stored energy.
// `0 node pseudo;` marks a pseudo bond graph (temperature and heat flow):
// any name there, checked by AstBuilder (`pseudo` is not a keyword).
junctionDecl
  : kind=('0' | '1') name=ident index? mark=IDENT?
    (';' | switched='switched' dissipative='dissipative'? fsmBlock) ;

fsmBlock : lbrace='{' fsmItem* rbrace='}' ;

// A state, `on;`, `off initial;`, `on closed;`, `off open initial;`, or a
// transition, `off -> on when (x < 0)+;` or `open -> closed when ...;`.
// A transition from an unnamed state starts with the state's kind, as a
// state does: the token after it decides. `off initial;` is an unnamed
// initial state (a state named `initial` is written `off initial
// initial;`): AstBuilder reads a lone name `initial` so.
fsmItem
  : kind=('on' | 'off') (stateTail | transitionTail)
  | from=stateName transitionTail
  ;

stateTail : (name=ident initial='initial'?)? semi=';' ;

transitionTail : '->' to=ident 'when' guard semi=';' ;

// A name that is not `on` or `off`: the name of a named state.
stateName
  : IDENT
  | 'Se' | 'Sf' | 'MSe' | 'MSf' | 'C' | 'I' | 'R' | 'TF' | 'GY' | 'MTF' | 'MGY'
  | 'switched' | 'dissipative' | 'initial' | 'when' | 'and' | 'or' | 'not'
  | 'experiment' | 'component' | 'port' | 'import' | 'in' | 'input' | 'discrete'
  ;

// Guards, loosest binding first: `or`, then `and`, then `not`.
guard : operands+=guardAnd ('or' operands+=guardAnd)* ;

guardAnd : operands+=guardNot ('and' operands+=guardNot)* ;

guardNot
  : op='not' operand=guardNot
  | guardAtom
  ;

// `(lhs OP rhs)+` or `(lhs OP rhs)-`, `(b)+` for a Boolean signal b, or a
// parenthesised guard.
guardAtom
  : lparen='(' lhs=expr (cmp=compareOp rhs=expr)? ')' mark=('+' | '-')  # compareGuard
  | lparen='(' inner=guard rparen=')'                                # parenGuard
  ;

compareOp : '<' | '<=' | '=' | '>=' | '>' ;

// `bond a -> b` or `bond name: a -> b`. Written so that one token after the
// first name decides which, and a wrong one is reported as "expected `:` or
// `->`"; AstBuilder sorts out which name is which.
bondDecl : 'bond' first=path (':' second=path)? '->' to=path ';' ;

// `signal v = expr;`, or a Boolean signal, 1 where a condition holds and 0
// elsewhere: `signal hot = T > 350 and not cooling;`. A condition that is
// one expression is a plain signal (AstBuilder tells them apart).
signalDecl : 'signal' name=ident index? '=' value=condition ';' ;

// `discrete xi(0) when sample(Ts) = xi + Ki * Ts * e;`: a value that changes
// only at the ticks of its clock, to the update's value there (every
// discrete value of the model updated at once, from the values before).
discreteDecl
  : kw='discrete' name=ident index? (lparen='(' initial=expr rparen=')')?
    when='when' clock=expr assign='=' value=expr ';' ;

outputDecl : 'output' outputItem (',' outputItem)* ';' ;

// `expression` or `name = expression`, read as elementArg is.
outputItem : first=expr (assign='=' value=expr)? ;

// The run's defaults, which the command line overrides:
//     experiment { t_end = 2; dt_out = 0.01; method = dopri5; }
experimentDecl : kw='experiment' lbrace='{' experimentSetting* rbrace='}' ;

experimentSetting : name=ident '=' value=expr ';' ;

// Element kinds are keywords only where a declaration starts: the manual's
// own example names parameters `R` and `C`, so everywhere else they are
// ordinary names. The words of switched junctions are keywords only inside
// them, and names elsewhere too; so is `experiment` outside a declaration.
ident
  : IDENT
  | 'Se' | 'Sf' | 'MSe' | 'MSf' | 'C' | 'I' | 'R' | 'TF' | 'GY' | 'MTF' | 'MGY'
  | 'switched' | 'dissipative' | 'on' | 'off' | 'initial' | 'when' | 'and' | 'or' | 'not'
  | 'experiment' | 'component' | 'port' | 'import' | 'in' | 'input' | 'discrete'
  ;

// --- Expressions -------------------------------------------------------------

// An expression is a flat list of operands and binary operators, which
// AstBuilder folds by precedence: `^` binds tightest and to the right
// (`a^b^c` is `a^(b^c)`), then the signs of an operand (`-a^2` is
// `-(a^2)`; `2^-1` is allowed), then `*` and `/`, then `+` and `-`, both
// to the left (`a - b - c` is `(a - b) - c`). Every choice is then made
// by one token, so that ANTLR generates a switch for it and never
// predicts (which costs most at the first use of each decision in a
// process, that is, in every small model).
expr : operands+=signedOperand (ops+=('+' | '-' | '*' | '/' | '^') operands+=signedOperand)* ;

// An `if` may stand wherever an operand may; its `else` runs to the end of
// the expression: `2 * if x > 0 then a else b + 1` is
// `2 * (if x > 0 then a else (b + 1))`. So it is the last operand of its
// list, and its `else` is an elseExpr, which only ANTLR's prediction can
// end: elseExpr is expr in a place where a binary operator may follow,
// and takes it (the longest expression).
signedOperand
  : signs+=('-' | '+')*
    ( kw='if' cond=condition 'then' yes=expr 'else' no=elseExpr
    | base=primary
    )
  ;

elseExpr : operands+=signedOperand (ops+=('+' | '-' | '*' | '/' | '^') operands+=signedOperand)* ;

// A name, `mass[i]`, a member of an instance, `a.b`, `mass[i].v`, or a
// call, `sin(x)`. AstBuilder checks that a member's last part has no
// index. No alternative after the name is empty: the block is optional
// instead, so that a token that cannot follow a name fails where the
// expression ends, with what may follow it as the expected tokens.
primary
  : number=(NUMBER | '0' | '1')                                      # numberExpr
  | head=ident
    ( call='(' (args+=expr (',' args+=expr)*)? rparen=')'
    | index ('.' parts+=pathPart)*
    | ('.' parts+=pathPart)+
    )?                                                               # nameExpr
  | lparen='(' inner=expr rparen=')'                                 # parenExpr
  | lbracket='[' (items+=expr (',' items+=expr)*)? rbracket=']'      # arrayExpr
  | str=STRING                                                       # stringExpr
  ;

// The condition of `if`: comparisons without the marks of guards,
// combined as guards are.
condition : operands+=conditionAnd ('or' operands+=conditionAnd)* ;

conditionAnd : operands+=conditionNot ('and' operands+=conditionNot)* ;

conditionNot
  : op='not' operand=conditionNot
  | conditionAtom
  ;

// A lone expression is a Boolean signal's name, or `connected(port)`
// (ifDecl); AstBuilder reports any other.
conditionAtom
  : lhs=expr (cmp=compareOp rhs=expr)?               # compareCondition
  | lparen='(' inner=condition rparen=')'            # parenCondition
  ;

// --- Tokens -----------------------------------------------------------------

MODEL     : 'model' ;
COMPONENT : 'component' ;
IMPORT    : 'import' ;
PORT      : 'port' ;
PARAMETER : 'parameter' ;
INPUT     : 'input' ;
BOND      : 'bond' ;
SIGNAL    : 'signal' ;
DISCRETE  : 'discrete' ;
OUTPUT    : 'output' ;
EXPERIMENT : 'experiment' ;
FOR       : 'for' ;
IN        : 'in' ;
IF        : 'if' ;
THEN      : 'then' ;
ELSE      : 'else' ;

SE  : 'Se' ;
SF  : 'Sf' ;
MSE : 'MSe' ;
MSF : 'MSf' ;
C   : 'C' ;
I   : 'I' ;
R   : 'R' ;
TF  : 'TF' ;
GY  : 'GY' ;
MTF : 'MTF' ;
MGY : 'MGY' ;

SWITCHED : 'switched' ;
DISSIPATIVE : 'dissipative' ;
ON       : 'on' ;
OFF      : 'off' ;
INITIAL  : 'initial' ;
WHEN     : 'when' ;
AND      : 'and' ;
OR       : 'or' ;
NOT      : 'not' ;

// Junction kinds come before NUMBER so that a lone `0` or `1` is one of them
// (same length, earlier rule wins); expressions accept them as numbers.
ZERO : '0' ;
ONE  : '1' ;

NUMBER
  : DIGITS ('.' DIGITS?)? EXPONENT?
  | '.' DIGITS EXPONENT?
  ;

// `1e` or `2.5E+`: an exponent without digits. Matching it whole gives one
// clear "invalid number" instead of a number followed by a stray name.
BAD_NUMBER : (DIGITS ('.' DIGITS?)? | '.' DIGITS) [eE] [+-]? ;

IDENT : [A-Za-z_] [A-Za-z0-9_]* ;

// Expected-token lists are printed in token order; this one reads best
// ("expected `,` or `)`", "expected `{` or `;`").
COMMA     : ',' ;
ASSIGN    : '=' ;
COLON     : ':' ;
ARROW     : '->' ;
DOT       : '.' ;
LBRACE    : '{' ;
RBRACE    : '}' ;
LPAREN    : '(' ;
RPAREN    : ')' ;
LBRACKET  : '[' ;
RBRACKET  : ']' ;
SEMI      : ';' ;
PLUS      : '+' ;
MINUS     : '-' ;
STAR      : '*' ;
SLASH     : '/' ;
CARET     : '^' ;
LE        : '<=' ;
GE        : '>=' ;
LT        : '<' ;
GT        : '>' ;

// `"road.csv"`: a file name, on one line, without escapes.
STRING : '"' ~["\r\n]* '"' ;

// A `"` that does not close on its line.
UNTERMINATED_STRING : '"' ~["\r\n]* ;

WS            : [ \t\r\n\f]+ -> skip ;
LINE_COMMENT  : '//' ~[\r\n]* -> skip ;
BLOCK_COMMENT : '/*' .*? '*/' -> skip ;

// A `/*` that never closes. It cannot contain `*/`, so a closed comment is
// always the longer match and wins.
UNTERMINATED_COMMENT : '/*' (~'*' | '*'+ ~[*/])* '*'* ;

// Anything else. Last, so it only wins when no other rule matches; the
// parser never accepts it, and Parser.cpp reports it as a diagnostic.
ERROR_CHAR : . ;

fragment DIGITS   : [0-9]+ ;
fragment EXPONENT : [eE] [+-]? DIGITS ;
