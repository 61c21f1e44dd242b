//===- SpecParser.cpp - Parser of the .ddt spec language ------------------===//
//
// A recursive-descent parser over one line at a time: each line holds at most
// one binding `name = expr`. Every constructor call is built and checked with
// Datatype::create; the first error stops the parse.
//===----------------------------------------------------------------------===//

#include "ddtc/Core/SpecParser.h"

#include "ddtc/Core/Constructors.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_map>

using namespace ddtc;

const SpecBinding *SpecFile::find(std::string_view name) const {
  for (const SpecBinding &b : bindings)
    if (b.name == name)
      return &b;
  return nullptr;
}

namespace {

/// Deeper type expressions are rejected so that parsing cannot exhaust the
/// stack.
constexpr unsigned kMaxNesting = 1000;

//===----------------------------------------------------------------------===//
// Tokens
//===----------------------------------------------------------------------===//

enum class Tok {
  Ident,
  Int,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Equals,
  End,
  Error
};

struct Token {
  Tok kind = Tok::End;
  std::string_view text;
  size_t pos = 0;    ///< 0-based byte offset in the line
  int64_t value = 0; ///< Int
  std::string error; ///< Error: what is wrong
};

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

std::string describeChar(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f)
    return std::string("'") + c + "'";
  static const char hex[] = "0123456789abcdef";
  return std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
}

/// Splits one line (without its newline) into tokens on demand. A `#` ends
/// the line.
class Lexer {
public:
  explicit Lexer(std::string_view line, size_t pos = 0)
      : line_(line), pos_(pos) {}

  Token next() {
    while (pos_ < line_.size() &&
           (line_[pos_] == ' ' || line_[pos_] == '\t' || line_[pos_] == '\r' ||
            line_[pos_] == '\f' || line_[pos_] == '\v'))
      ++pos_;
    Token t;
    t.pos = pos_;
    if (pos_ >= line_.size() || line_[pos_] == '#') {
      t.kind = Tok::End;
      return t;
    }
    char c = line_[pos_];
    size_t start = pos_;
    if (isIdentStart(c)) {
      while (pos_ < line_.size() && isIdentChar(line_[pos_]))
        ++pos_;
      t.kind = Tok::Ident;
      t.text = line_.substr(start, pos_ - start);
      return t;
    }
    if (isDigit(c) || ((c == '-' || c == '+') && pos_ + 1 < line_.size() &&
                       isDigit(line_[pos_ + 1])))
      return lexInteger();
    ++pos_;
    t.text = line_.substr(start, 1);
    switch (c) {
    case '(':
      t.kind = Tok::LParen;
      return t;
    case ')':
      t.kind = Tok::RParen;
      return t;
    case '[':
      t.kind = Tok::LBracket;
      return t;
    case ']':
      t.kind = Tok::RBracket;
      return t;
    case ',':
      t.kind = Tok::Comma;
      return t;
    case '=':
      t.kind = Tok::Equals;
      return t;
    default:
      break;
    }
    t.kind = Tok::Error;
    if (c == '-' || c == '+')
      t.error = std::string("expected digits after '") + c + "'";
    else
      t.error = "unexpected character " + describeChar(c);
    return t;
  }

private:
  Token lexInteger() {
    Token t;
    t.pos = pos_;
    bool negative = false;
    if (line_[pos_] == '-' || line_[pos_] == '+')
      negative = line_[pos_++] == '-';
    uint64_t magnitude = 0;
    bool overflow = false;
    const uint64_t limit =
        negative ? uint64_t(std::numeric_limits<int64_t>::max()) + 1
                 : uint64_t(std::numeric_limits<int64_t>::max());
    while (pos_ < line_.size() && isDigit(line_[pos_])) {
      unsigned d = unsigned(line_[pos_++] - '0');
      if (magnitude > (limit - d) / 10)
        overflow = true;
      else
        magnitude = magnitude * 10 + d;
    }
    // "12abc" or "0x10" is one malformed literal, not two tokens.
    bool malformed = false;
    while (pos_ < line_.size() && isIdentChar(line_[pos_])) {
      ++pos_;
      malformed = true;
    }
    t.text = line_.substr(t.pos, pos_ - t.pos);
    if (malformed) {
      t.kind = Tok::Error;
      t.error = "invalid integer literal '" + std::string(t.text) +
                "' (integers are decimal)";
      return t;
    }
    if (overflow) {
      t.kind = Tok::Error;
      t.error = "integer literal does not fit in 64 bits";
      return t;
    }
    t.kind = Tok::Int;
    t.value = negative ? int64_t(0 - magnitude) : int64_t(magnitude);
    return t;
  }

  std::string_view line_;
  size_t pos_;
};

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Edit distance, for "did you mean" hints.
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min(
          {row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

class Parser {
public:
  Parser(std::string_view text, std::string_view filename, SpecFile &out)
      : text_(text), filename_(filename), out_(out) {}

  bool parse(std::string &error);

private:
  // Token stream of the current line.
  const Token &peek() {
    if (!havePeek_) {
      peeked_ = lexer_.next();
      havePeek_ = true;
    }
    return peeked_;
  }
  Token take() {
    peek();
    havePeek_ = false;
    ++tokensTaken_;
    return std::move(peeked_);
  }

  /// Records the first error, at byte `pos` of the current line; returns
  /// false so that callers can `return fail(...)`.
  bool fail(size_t pos, std::string message) {
    if (!failed_) {
      failed_ = true;
      errorPos_ = pos;
      errorMessage_ = std::move(message);
    }
    return false;
  }
  /// Fails at the next token: with the lexer's message when it is malformed,
  /// else with `message`.
  bool failAtNext(std::string message) {
    const Token &t = peek();
    if (t.kind == Tok::Error)
      return fail(t.pos, t.error);
    return fail(t.pos, std::move(message));
  }
  bool expect(Tok kind, const std::string &message) {
    if (peek().kind != kind)
      return failAtNext(message);
    take();
    return true;
  }

  bool parseLine();
  /// `where` completes "expected a type ...": "for the type of vector".
  bool parseType(TypeRef &out, const std::string &where, unsigned depth);
  /// Parses the arguments of a call whose '(' is just before byte
  /// `argsPos`, and builds the type.
  bool parseCall(const Token &name, size_t argsPos,
                 const ConstructorSignature &sig, TypeRef &out, unsigned depth);
  bool parseArgument(TypeArgs &args, const ConstructorArgument &arg,
                     const char *ctor, unsigned depth);
  bool parseInt(int64_t &out, const std::string &what);
  /// `[e, e, ...]`, possibly empty; `element` parses one entry.
  template <class ParseElement>
  bool parseBracketList(const std::string &what, ParseElement element);
  bool parseDistrib(Distribution &out, const std::string &what);
  bool parseDarg(int64_t &out, const std::string &what);
  bool parseOrder(Order &out, const std::string &what);
  /// The top-level commas of a call from byte `argsPos` (just after its
  /// '(') to its ')'. False when the call does not close on the line or its
  /// brackets do not match.
  struct ArgumentScan {
    size_t count = 0; ///< arguments, empty ones included
    std::vector<size_t> commas;
    size_t closePos = 0;
  };
  bool scanArguments(size_t argsPos, ArgumentScan &scan);

  std::string unknownTypeMessage(const std::string &name) const;
  TypeRef primitiveRef(Primitive p);

  std::string_view text_, filename_;
  SpecFile &out_;
  std::unordered_map<std::string, size_t> bindingIndex_;
  std::unordered_map<unsigned, TypeRef> primitiveCache_;

  // The current line.
  std::string_view line_;
  unsigned lineNo_ = 0;
  Lexer lexer_{std::string_view()};
  Token peeked_;
  bool havePeek_ = false;
  size_t tokensTaken_ = 0;

  bool failed_ = false;
  size_t errorPos_ = 0;
  std::string errorMessage_;
};

bool Parser::parse(std::string &error) {
  size_t start = 0;
  while (start <= text_.size()) {
    size_t end = text_.find('\n', start);
    if (end == std::string_view::npos)
      end = text_.size();
    line_ = text_.substr(start, end - start);
    if (!line_.empty() && line_.back() == '\r')
      line_.remove_suffix(1);
    ++lineNo_;
    lexer_ = Lexer(line_);
    havePeek_ = false;
    if (!parseLine()) {
      // Column and caret line: tabs before the column are kept so that the
      // caret lines up however the terminal expands them.
      std::string caret;
      for (size_t i = 0; i < errorPos_ && i < line_.size(); ++i)
        caret += line_[i] == '\t' ? '\t' : ' ';
      caret += '^';
      error = std::string(filename_) + ":" + std::to_string(lineNo_) + ":" +
              std::to_string(errorPos_ + 1) + ": error: " + errorMessage_ +
              "\n" + std::string(line_) + "\n" + caret;
      return false;
    }
    if (end == text_.size())
      break;
    start = end + 1;
  }
  return true;
}

bool Parser::parseLine() {
  if (peek().kind == Tok::End)
    return true; // blank or comment-only
  if (peek().kind != Tok::Ident)
    return failAtNext("expected a binding 'NAME = TYPE' at the start of the "
                      "line");
  Token name = take();
  std::string nameStr(name.text);
  if (std::optional<Kind> k = lookupKind(nameStr); k && *k != Kind::Primitive)
    return fail(name.pos, "'" + nameStr +
                              "' is a constructor name and cannot be a "
                              "binding name");
  if (lookupPrimitive(nameStr))
    return fail(name.pos, "'" + nameStr +
                              "' is a primitive type name and cannot be a "
                              "binding name");
  auto prev = bindingIndex_.find(nameStr);
  if (prev != bindingIndex_.end())
    return fail(name.pos,
                "redefinition of '" + nameStr + "' (first defined at line " +
                    std::to_string(out_.bindings[prev->second].line) + ")");
  if (!expect(Tok::Equals,
              "expected '=' after the binding name '" + nameStr + "'"))
    return false;
  TypeRef type;
  if (!parseType(type, "for the binding '" + nameStr + "'", 0))
    return false;
  if (peek().kind != Tok::End)
    return failAtNext("expected end of line after the type of '" + nameStr +
                      "' (one binding per line)");
  SpecBinding b;
  b.name = nameStr;
  b.type = std::move(type);
  b.line = lineNo_;
  b.column = unsigned(name.pos + 1);
  bindingIndex_.emplace(nameStr, out_.bindings.size());
  out_.bindings.push_back(std::move(b));
  return true;
}

std::string Parser::unknownTypeMessage(const std::string &name) const {
  std::string msg = "unknown type '" + name +
                    "' (expected a primitive type name, a constructor call, "
                    "or an earlier binding)";
  // A close binding name is the likeliest typo; primitive spellings are many
  // and short, so they are not guessed at.
  std::string best;
  size_t bestDist = 3;
  for (const SpecBinding &b : out_.bindings) {
    size_t d = editDistance(name, b.name);
    if (d < bestDist && d < std::max<size_t>(name.size(), 2)) {
      bestDist = d;
      best = b.name;
    }
  }
  if (!best.empty())
    msg += "; did you mean '" + best + "'?";
  return msg;
}

TypeRef Parser::primitiveRef(Primitive p) {
  TypeRef &ref = primitiveCache_[unsigned(p)];
  if (!ref)
    ref = Datatype::primitive(p);
  return ref;
}

bool Parser::parseType(TypeRef &out, const std::string &where, unsigned depth) {
  if (depth >= kMaxNesting)
    return failAtNext("type expression nested more than " +
                      std::to_string(kMaxNesting) + " levels deep");
  if (peek().kind != Tok::Ident)
    return failAtNext("expected a type (a primitive type name, a constructor "
                      "call, or an earlier binding) " +
                      where);
  Token first = take();

  // A constructor call: one word and '('.
  if (peek().kind == Tok::LParen) {
    std::string word(first.text);
    if (std::optional<Kind> k = lookupKind(word); k && *k != Kind::Primitive) {
      size_t argsPos = take().pos + 1;
      return parseCall(first, argsPos, *getConstructor(*k), out, depth);
    }
    if (lookupPrimitive(word) || bindingIndex_.count(word))
      return fail(peek().pos, "unexpected '(' after '" + word +
                                  "', which is a type, not a constructor");
    std::string msg = "unknown constructor '" + word + "'";
    const char *best = nullptr;
    size_t bestDist = 3;
    for (const ConstructorSignature &sig : allConstructors()) {
      const char *c = sig.name;
      size_t d = editDistance(word, c);
      if (d < bestDist) {
        bestDist = d;
        best = c;
      }
    }
    if (best)
      msg += std::string("; did you mean '") + best + "'?";
    return fail(first.pos, msg);
  }

  // A type name: consecutive words joined by single spaces, so that
  // `unsigned long long` and `long double _Complex` are one name.
  std::string name(first.text);
  bool multiWord = false;
  while (peek().kind == Tok::Ident) {
    name += ' ';
    name += take().text;
    multiWord = true;
  }
  if (std::optional<Primitive> p = lookupPrimitive(name)) {
    out = primitiveRef(*p);
    return true;
  }
  if (!multiWord) {
    auto b = bindingIndex_.find(name);
    if (b != bindingIndex_.end()) {
      out = out_.bindings[b->second].type;
      return true;
    }
    if (std::optional<Kind> k = lookupKind(name); k && *k != Kind::Primitive)
      return failAtNext("expected '(' after the constructor name '" + name +
                        "'");
  }
  return fail(first.pos, unknownTypeMessage(name));
}

bool Parser::parseCall(const Token &name, size_t argsPos,
                       const ConstructorSignature &sig, TypeRef &out,
                       unsigned depth) {
  const char *ctor = sig.name;
  size_t n = sig.arguments.size();
  auto arityMessage = [&](const std::string &got) {
    return std::string(ctor) + " takes " + std::to_string(n) +
           (n == 1 ? " argument " : " arguments ") + formatArgumentList(sig) +
           ", got " + got;
  };

  TypeArgs args;
  args.kind = sig.kind;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) {
      if (peek().kind == Tok::RParen)
        return fail(peek().pos, arityMessage(std::to_string(i)));
      if (!expect(Tok::Comma, std::string("expected ',' after the ") +
                                  sig.arguments[i - 1].name + " of " + ctor))
        return false;
    } else if (peek().kind == Tok::RParen) {
      return fail(peek().pos, arityMessage("0"));
    }
    size_t taken = tokensTaken_;
    if (!parseArgument(args, sig.arguments[i], ctor, depth)) {
      // An argument rejected at its first token is most often one written
      // in the wrong place because an argument is missing or extra, as in
      // `vector(3, 2, double)`: then the count is what to report.
      ArgumentScan scan;
      if (tokensTaken_ == taken && scanArguments(argsPos, scan) &&
          scan.count != n) {
        errorPos_ = scan.count < n ? scan.closePos : scan.commas[n - 1];
        errorMessage_ = arityMessage(std::to_string(scan.count));
      }
      return false;
    }
  }
  if (peek().kind == Tok::Comma) {
    size_t commaPos = peek().pos;
    ArgumentScan scan;
    return fail(commaPos, arityMessage(scanArguments(argsPos, scan)
                                           ? std::to_string(scan.count)
                                           : "more than " + std::to_string(n)));
  }
  if (!expect(Tok::RParen, std::string("expected ')' after the ") +
                               sig.arguments[n - 1].name + " of " + ctor))
    return false;

  std::string error;
  out = Datatype::create(std::move(args), error);
  if (!out)
    return fail(name.pos, std::string(ctor) + ": " +
                              (error.empty() ? "invalid arguments" : error));
  return true;
}

bool Parser::scanArguments(size_t argsPos, ArgumentScan &scan) {
  Lexer lexer(line_, argsPos);
  std::vector<Tok> open; // brackets opened inside the call
  bool empty = true;
  for (;;) {
    Token t = lexer.next();
    switch (t.kind) {
    case Tok::End:
    case Tok::Error:
      return false;
    case Tok::LParen:
    case Tok::LBracket:
      open.push_back(t.kind);
      break;
    case Tok::RBracket:
      if (open.empty() || open.back() != Tok::LBracket)
        return false;
      open.pop_back();
      break;
    case Tok::RParen:
      if (open.empty()) {
        scan.closePos = t.pos;
        scan.count = empty ? 0 : scan.commas.size() + 1;
        return true;
      }
      if (open.back() != Tok::LParen)
        return false;
      open.pop_back();
      break;
    case Tok::Comma:
      if (open.empty())
        scan.commas.push_back(t.pos);
      break;
    default:
      break;
    }
    empty = false;
  }
}

bool Parser::parseArgument(TypeArgs &args, const ConstructorArgument &arg,
                           const char *ctor, unsigned depth) {
  std::string what = std::string("the ") + arg.name + " of " + ctor;
  switch (arg.syntax) {
  case ArgSyntax::Int:
    return parseInt(args.*getIntMember(arg.field), what);
  case ArgSyntax::IntList: {
    std::vector<int64_t> &list = args.*getIntListMember(arg.field);
    return parseBracketList(what, [&] {
      if (peek().kind != Tok::Int)
        return failAtNext("expected an integer in " + what);
      list.push_back(take().value);
      return true;
    });
  }
  case ArgSyntax::DistribList:
    return parseBracketList(
        what, [&] { return parseDistrib(args.distribs.emplace_back(), what); });
  case ArgSyntax::DargList:
    return parseBracketList(
        what, [&] { return parseDarg(args.dargs.emplace_back(), what); });
  case ArgSyntax::Order:
    return parseOrder(args.order, what);
  case ArgSyntax::Type:
    return parseType(args.children.emplace_back(), "for " + what, depth + 1);
  case ArgSyntax::TypeList:
    return parseBracketList(what, [&] {
      return parseType(args.children.emplace_back(), "in " + what, depth + 1);
    });
  }
  return false; // unreachable: every syntax is handled above
}

bool Parser::parseInt(int64_t &out, const std::string &what) {
  if (peek().kind != Tok::Int)
    return failAtNext("expected an integer for " + what);
  out = take().value;
  return true;
}

template <class ParseElement>
bool Parser::parseBracketList(const std::string &what, ParseElement element) {
  if (!expect(Tok::LBracket, "expected '[' to start " + what))
    return false;
  if (peek().kind == Tok::RBracket) {
    take();
    return true;
  }
  for (;;) {
    if (!element())
      return false;
    if (peek().kind == Tok::RBracket) {
      take();
      return true;
    }
    if (!expect(Tok::Comma, "expected ',' or ']' in " + what))
      return false;
  }
}

bool Parser::parseDistrib(Distribution &out, const std::string &what) {
  const Token &t = peek();
  if (t.kind == Tok::Ident && t.text == "block")
    out = Distribution::Block;
  else if (t.kind == Tok::Ident && t.text == "cyclic")
    out = Distribution::Cyclic;
  else if (t.kind == Tok::Ident && t.text == "none")
    out = Distribution::None;
  else
    return failAtNext("expected 'block', 'cyclic' or 'none' in " + what);
  take();
  return true;
}

bool Parser::parseDarg(int64_t &out, const std::string &what) {
  const Token &t = peek();
  if (t.kind == Tok::Int)
    out = t.value;
  else if (t.kind == Tok::Ident && t.text == "default")
    out = kDefaultDarg;
  else
    return failAtNext("expected an integer or 'default' in " + what);
  take();
  return true;
}

bool Parser::parseOrder(Order &out, const std::string &what) {
  const Token &t = peek();
  if (t.kind == Tok::Ident && t.text == "C")
    out = Order::C;
  else if (t.kind == Tok::Ident && t.text == "Fortran")
    out = Order::Fortran;
  else
    return failAtNext("expected 'C' or 'Fortran' for " + what);
  take();
  return true;
}

} // namespace

bool ddtc::parseSpec(std::string_view text, std::string_view filename,
                     SpecFile &out, std::string &error) {
  out.bindings.clear();
  Parser parser(text, filename, out);
  return parser.parse(error);
}
