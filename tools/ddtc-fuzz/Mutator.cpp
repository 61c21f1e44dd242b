//===- Mutator.cpp - Random edits of spec, IR and C API inputs ------------===//

#include "Mutator.h"

#include <cctype>
#include <climits>
#include <cstdlib>

namespace ddtc::fuzz {

namespace {

/// Boundary values of 32- and 64-bit counts, displacements and sizes.
const char *const kNumbers[] = {"0",
                                "1",
                                "-1",
                                "2",
                                "3",
                                "7",
                                "8",
                                "16",
                                "255",
                                "1024",
                                "65536",
                                "2147483647",
                                "2147483648",
                                "-2147483648",
                                "4294967295",
                                "4294967296",
                                "142147483647",
                                "1152921504606846975",
                                "9223372036854775807",
                                "-9223372036854775808",
                                "9223372036854775808",
                                "99999999999999999999"};

/// Where the numbers (an optional '-' and digits) of `s` are.
std::vector<std::pair<size_t, size_t>> findNumbers(const std::string &s) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < s.size();) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    size_t b = i;
    if (b > 0 && s[b - 1] == '-')
      --b;
    // Not part of a name (t3, %12, sm_90).
    if (b > 0 && (std::isalnum(static_cast<unsigned char>(s[b - 1])) ||
                  s[b - 1] == '_' || s[b - 1] == '%')) {
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
        ++i;
      continue;
    }
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
      ++i;
    out.push_back({b, i - b});
  }
  return out;
}

/// Where the names (letters, digits, '_', after an optional '%' or '@') are.
std::vector<std::pair<size_t, size_t>> findWords(const std::string &s) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (!(std::isalpha(c) || c == '_' || c == '%' || c == '@')) {
      ++i;
      continue;
    }
    size_t b = i++;
    while (i < s.size() &&
           (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_'))
      ++i;
    out.push_back({b, i - b});
  }
  return out;
}

std::vector<std::pair<size_t, size_t>> findLines(const std::string &s) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t b = 0;
  while (b < s.size()) {
    size_t e = s.find('\n', b);
    if (e == std::string::npos)
      e = s.size();
    out.push_back({b, e - b});
    b = e + 1;
  }
  return out;
}

} // namespace

int64_t Mutator::interestingInt(int64_t near) {
  switch (below(6)) {
  case 0:
    return static_cast<int64_t>(below(8));
  case 1:
    return near + static_cast<int64_t>(below(5)) - 2;
  case 2:
    return -static_cast<int64_t>(below(3)) - 1;
  case 3:
    return below(2) ? INT64_MAX - static_cast<int64_t>(below(3))
                    : INT64_MIN + static_cast<int64_t>(below(3));
  case 4:
    return int64_t(1) << below(63);
  default:
    return near > 0
               ? static_cast<int64_t>(below(static_cast<uint64_t>(near) + 1))
               : 0;
  }
}

void Mutator::replaceNumber(std::string &s) {
  auto nums = findNumbers(s);
  if (nums.empty())
    return insertPunctuation(s);
  auto [at, len] = nums[below(nums.size())];
  std::string by;
  if (below(3) == 0) {
    // Near the old value: off by one, doubled, negated.
    // Wrapping arithmetic: the edit may overflow, the tool must not.
    auto v = static_cast<unsigned long long>(
        std::strtoll(s.substr(at, len).c_str(), nullptr, 10));
    const unsigned long long choices[] = {v + 1, v - 1, v * 2, 0 - v,
                                          v * 1000003};
    by = std::to_string(static_cast<long long>(choices[below(5)]));
  } else {
    by = kNumbers[below(sizeof kNumbers / sizeof kNumbers[0])];
  }
  s.replace(at, len, by);
}

void Mutator::deleteSpan(std::string &s) {
  if (s.empty())
    return;
  size_t at = below(s.size());
  s.erase(at, 1 + below(std::min<size_t>(20, s.size() - at)));
}

void Mutator::duplicateSpan(std::string &s) {
  if (s.empty())
    return;
  size_t at = below(s.size());
  std::string span = s.substr(at, 1 + below(40));
  s.insert(below(s.size() + 1), span);
}

void Mutator::insertPunctuation(std::string &s) {
  static const char kChars[] = "()[],=%@{}:<>#\n -0123456789x;.\"";
  s.insert(s.begin() + below(s.size() + 1), kChars[below(sizeof kChars - 1)]);
}

void Mutator::swapLines(std::string &s) {
  auto lines = findLines(s);
  if (lines.size() < 2)
    return duplicateSpan(s);
  size_t a = below(lines.size()), b = below(lines.size());
  if (a == b)
    return;
  if (a > b)
    std::swap(a, b);
  std::string la = s.substr(lines[a].first, lines[a].second);
  std::string lb = s.substr(lines[b].first, lines[b].second);
  s.replace(lines[b].first, lines[b].second, la);
  s.replace(lines[a].first, lines[a].second, lb);
}

void Mutator::duplicateLine(std::string &s) {
  auto lines = findLines(s);
  if (lines.empty())
    return insertPunctuation(s);
  auto [at, len] = lines[below(lines.size())];
  s.insert(at, s.substr(at, len) + "\n");
}

void Mutator::renameWord(std::string &s) {
  auto words = findWords(s);
  if (words.size() < 2)
    return replaceNumber(s);
  auto [at, len] = words[below(words.size())];
  auto [from, flen] = words[below(words.size())];
  s.replace(at, len, s.substr(from, flen));
}

void Mutator::repointOperand(std::string &s) {
  // IR values (%name): an operand, after the '=' of its line, is pointed at
  // any value of the input, its own op's result and later ones included.
  std::vector<std::pair<size_t, size_t>> values, operands;
  for (auto [at, len] : findWords(s)) {
    if (s[at] != '%')
      continue;
    values.push_back({at, len});
    size_t lineStart = s.rfind('\n', at);
    size_t eq = s.find('=', lineStart == std::string::npos ? 0 : lineStart);
    if (eq != std::string::npos && eq < at)
      operands.push_back({at, len});
  }
  if (operands.empty())
    return renameWord(s);
  auto [at, len] = operands[below(operands.size())];
  auto [from, flen] = values[below(values.size())];
  s.replace(at, len, s.substr(from, flen));
}

void Mutator::spliceLine(std::string &s,
                         const std::vector<const std::string *> &donors) {
  if (donors.empty())
    return duplicateLine(s);
  const std::string &d = *donors[below(donors.size())];
  auto lines = findLines(d);
  if (lines.empty())
    return;
  auto [at, len] = lines[below(lines.size())];
  auto here = findLines(s);
  size_t where = here.empty() ? 0 : here[below(here.size())].first;
  s.insert(where, d.substr(at, len) + "\n");
}

std::string Mutator::mutate(const std::string &input,
                            const std::vector<const std::string *> &donors) {
  std::string s = input;
  for (uint64_t n = 1 + below(4); n-- > 0;) {
    switch (below(10)) {
    case 0:
    case 1:
    case 2:
      replaceNumber(s);
      break;
    case 3:
      deleteSpan(s);
      break;
    case 4:
      duplicateSpan(s);
      break;
    case 5:
      insertPunctuation(s);
      break;
    case 6:
      swapLines(s);
      break;
    case 7:
      duplicateLine(s);
      break;
    case 8:
      if (below(2) && s.find('%') != std::string::npos)
        repointOperand(s);
      else
        renameWord(s);
      break;
    default:
      spliceLine(s, donors);
      break;
    }
  }
  // Inputs stay small: a long file tests the parser's speed, not its logic.
  if (s.size() > 64 * 1024)
    s.resize(64 * 1024);
  return s;
}

} // namespace ddtc::fuzz
