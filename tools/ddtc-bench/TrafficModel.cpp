//===- TrafficModel.cpp - The DRAM traffic a layout forces ----------------===//

#include "TrafficModel.h"

#include "ddtc/Target/CUDA/Explain.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ddtc {

namespace {
constexpr int64_t kSector = 32;

int64_t floorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }

int64_t roundUp(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

/// Sectors that the union of `runs` covers entirely. Runs are merged first:
/// a sector filled by several runs (the columns of a transpose) is full.
int64_t countFullSectors(std::vector<Run> runs) {
  std::sort(runs.begin(), runs.end(),
            [](const Run &a, const Run &b) { return a.offset < b.offset; });
  int64_t full = 0;
  auto addPiece = [&](int64_t begin, int64_t end) {
    full += std::max<int64_t>(0, floorDiv(end, kSector) -
                                     floorDiv(begin + kSector - 1, kSector));
  };
  size_t i = 0;
  while (i < runs.size()) {
    int64_t begin = runs[i].offset, end = begin + runs[i].length;
    for (++i; i < runs.size() && runs[i].offset <= end; ++i)
      end = std::max(end, runs[i].offset + runs[i].length);
    addPiece(begin, end);
  }
  return full;
}
} // namespace

bool isValidReadGranule(int64_t bytes) {
  return bytes == 32 || bytes == 64 || bytes == 128;
}

int64_t countGranules(const std::vector<Run> &runs, int64_t granuleBytes) {
  // First and last granule of each run; sorted, each granule is counted the
  // first time a run reaches it.
  std::vector<std::pair<int64_t, int64_t>> spans;
  spans.reserve(runs.size());
  for (const Run &r : runs)
    if (r.length > 0)
      spans.push_back({floorDiv(r.offset, granuleBytes),
                       floorDiv(r.offset + r.length - 1, granuleBytes)});
  std::sort(spans.begin(), spans.end());
  int64_t count = 0;
  bool any = false;
  int64_t end = 0; // granules counted up to `end`, once `any`
  for (auto [first, last] : spans) {
    if (any && last <= end)
      continue;
    count += last - (any ? std::max(first, end + 1) : first) + 1;
    end = last;
    any = true;
  }
  return count;
}

bool countSectorFootprint(const CanonicalLayout &layout, int64_t count,
                          int64_t originOffset, int64_t granuleBytes,
                          int64_t maxRuns, SectorFootprint &out,
                          std::string &error) {
  if (!isValidReadGranule(granuleBytes)) {
    error = "the read granule must be 32, 64 or 128 bytes, not " +
            std::to_string(granuleBytes);
    return false;
  }
  int64_t runs = 0;
  if (__builtin_mul_overflow(countRuns(layout), count, &runs) ||
      runs > maxRuns) {
    error = "the sector count lists every run: " + std::to_string(count) +
            " instance(s) have more than " + std::to_string(maxRuns);
    return false;
  }
  std::vector<Run> list = flattenLayout(layout, count);
  out.packedBytes = 0;
  for (Run &r : list) {
    r.offset += originOffset;
    out.packedBytes += r.length;
  }
  out.granuleBytes = granuleBytes;
  out.granules = countGranules(list, granuleBytes);
  // The same count as ddtc --emit=explain, shifted to the real alignment.
  out.sectors = countSectors(list);
  out.partialSectors = out.sectors - countFullSectors(std::move(list));
  return true;
}

Traffic packTraffic(const SectorFootprint &f) {
  return {f.granules * f.granuleBytes, f.packedBytes};
}

Traffic unpackTraffic(const SectorFootprint &f, double partialWriteCost) {
  const int64_t fullSectors = f.sectors - f.partialSectors;
  const double partialBytes =
      partialWriteCost * static_cast<double>(f.partialSectors * kSector);
  return {roundUp(f.packedBytes, f.granuleBytes),
          fullSectors * kSector + std::llround(partialBytes)};
}

Traffic packToHostDeviceTraffic(const SectorFootprint &f) {
  return {f.granules * f.granuleBytes, 0};
}

//===----------------------------------------------------------------------===//
// The calibration file
//===----------------------------------------------------------------------===//

namespace {

/// A JSON value: enough of JSON for the file ddtc-bench --calibrate-traffic
/// writes (objects, arrays, numbers, strings, true, false, null).
struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  double number = 0;
  std::string text;
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> fields;

  const Json *get(const std::string &key) const {
    for (const auto &[k, v] : fields)
      if (k == key)
        return &v;
    return nullptr;
  }
};

/// A recursive-descent reader that stops at the first error.
class JsonReader {
public:
  explicit JsonReader(const std::string &text) : s(text) {}

  bool parse(Json &out, std::string &error) {
    if (!value(out, 0) || (skipSpace(), pos != s.size())) {
      if (why.empty())
        why = "unexpected text";
      error = "not JSON at byte " + std::to_string(pos) + ": " + why;
      return false;
    }
    return true;
  }

private:
  // Deeper than any calibration file; keeps a hostile file off the stack.
  static constexpr int kMaxDepth = 64;
  const std::string &s;
  size_t pos = 0;
  std::string why;

  void skipSpace() {
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos])))
      ++pos;
  }

  bool fail(const char *message) {
    why = message;
    return false;
  }

  bool literal(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (s.compare(pos, n, word) != 0)
      return fail("unknown word");
    pos += n;
    return true;
  }

  bool string(std::string &out) {
    ++pos; // the opening quote
    while (pos < s.size() && s[pos] != '"') {
      char c = s[pos++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= s.size())
        break;
      char e = s[pos++];
      switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'u':
        // Names in the file are ASCII; keep other characters as '?'.
        if (pos + 4 > s.size())
          return fail("short \\u escape");
        pos += 4;
        out += '?';
        break;
      default:
        out += e; // \" \\ \/ and the rest taken as the character
      }
    }
    if (pos >= s.size())
      return fail("unterminated string");
    ++pos;
    return true;
  }

  bool value(Json &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nested too deeply");
    skipSpace();
    if (pos >= s.size())
      return fail("unexpected end");
    char c = s[pos];
    if (c == '{' || c == '[')
      return container(out, depth, c == '{');
    if (c == '"') {
      out.kind = Json::String;
      return string(out.text);
    }
    if (c == 't' || c == 'f') {
      out.kind = Json::Bool;
      out.number = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n')
      return literal("null");
    const char *begin = s.c_str() + pos;
    char *end = nullptr;
    out.number = std::strtod(begin, &end);
    if (end == begin)
      return fail("expected a value");
    out.kind = Json::Number;
    pos += end - begin;
    return true;
  }

  bool container(Json &out, int depth, bool object) {
    out.kind = object ? Json::Object : Json::Array;
    const char close = object ? '}' : ']';
    ++pos;
    skipSpace();
    if (pos < s.size() && s[pos] == close) {
      ++pos;
      return true;
    }
    while (true) {
      std::string key;
      if (object) {
        skipSpace();
        if (pos >= s.size() || s[pos] != '"')
          return fail("expected a key");
        if (!string(key))
          return false;
        skipSpace();
        if (pos >= s.size() || s[pos++] != ':')
          return fail("expected ':'");
      }
      Json item;
      if (!value(item, depth + 1))
        return false;
      if (object)
        out.fields.push_back({key, std::move(item)});
      else
        out.items.push_back(std::move(item));
      skipSpace();
      if (pos < s.size() && s[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < s.size() && s[pos] == close) {
        ++pos;
        return true;
      }
      return fail(object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }
};

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// The calibration's patterns, with what deriving a parameter needs.
struct Pattern {
  std::string name, target;
  int64_t everyK = 0, bytesPerSector = 0;
  const Json *vsBase = nullptr, *vsModel = nullptr;
  bool checked = true;
};

std::vector<Pattern> readPatterns(const Json &list) {
  std::vector<Pattern> out;
  for (const Json &p : list.items) {
    Pattern q;
    auto text = [&](const char *key) {
      const Json *v = p.get(key);
      return v && v->kind == Json::String ? v->text : std::string();
    };
    auto whole = [&](const char *key) -> int64_t {
      const Json *v = p.get(key);
      return v && v->kind == Json::Number ? std::llround(v->number) : 0;
    };
    auto number = [&](const char *key) -> const Json * {
      const Json *v = p.get(key);
      return v && v->kind == Json::Number ? v : nullptr;
    };
    // Sparse partial sectors amid whole ones are reported only: their
    // every_k and bytes_per_sector are those of the whole-sector base.
    if (whole("partial_every_k") > 0)
      continue;
    q.name = text("name");
    q.target = text("target");
    q.everyK = whole("every_k");
    q.bytesPerSector = whole("bytes_per_sector");
    q.vsBase = number("vs_base");
    q.vsModel = number("vs_model");
    // A pattern that read or wrote the wrong bytes was not timed doing
    // what it says.
    q.checked = !p.get("check") || text("check") == "passed";
    out.push_back(q);
  }
  return out;
}

/// The pattern of `target` touching `bytesPerSector` of every k-th sector
/// whose vs_base can be used, or null with a note saying why not.
const Pattern *findPattern(const std::vector<Pattern> &ps,
                           const std::string &target, int64_t everyK,
                           int64_t bytesPerSector, std::string &why) {
  const std::string what = "no '" + target + "' pattern with every_k " +
                           std::to_string(everyK) + " and bytes_per_sector " +
                           std::to_string(bytesPerSector);
  for (const Pattern &p : ps) {
    if (p.target != target || p.everyK != everyK ||
        p.bytesPerSector != bytesPerSector)
      continue;
    if (!p.vsBase) {
      why = "pattern '" + p.name + "' has no vs_base";
      return nullptr;
    }
    if (!p.checked) {
      why = "pattern '" + p.name + "' failed its check";
      return nullptr;
    }
    if (p.vsBase->number <= 0) {
      why =
          "pattern '" + p.name + "' has vs_base " + fixed(p.vsBase->number, 3);
      return nullptr;
    }
    return &p;
  }
  why = what;
  return nullptr;
}

/// The read granule: a granule of g sectors makes reading every k-th sector
/// as slow as reading all of them for k <= g, and k = 2g take half the time;
/// the first k clearly cheaper is 2g.
void deriveReadGranule(const std::vector<Pattern> &ps, CalibratedTraffic &c) {
  std::vector<std::string> &notes = c.notes;
  int64_t &granule = c.params.readGranule;
  std::string seen;
  for (int64_t k = 2; k <= 8; k *= 2) {
    std::string why;
    const Pattern *p = findPattern(ps, "device read", k, kSector, why);
    if (!p) {
      notes.push_back("read granule: " + why + "; keeping " +
                      std::to_string(granule) + " B (the default)");
      return;
    }
    // vs_base compares sector rates; every k-th sector is 1/k of them.
    const double time = 1.0 / (static_cast<double>(k) * p->vsBase->number);
    seen += (seen.empty() ? "" : ", ") + std::string("every ") +
            std::to_string(k) + ": " + fixed(time, 3);
    if (time <= kClearlyCheaper) {
      granule = kSector * k / 2;
      c.readGranuleDerived = true;
      notes.push_back(
          "read granule " + std::to_string(granule) +
          " B: reading every k-th sector takes (" + seen +
          ") of the time of reading every sector; the first at most " +
          fixed(kClearlyCheaper, 2) + " is k = " + std::to_string(k) +
          ", so 16 x k bytes");
      return;
    }
  }
  granule = kMaxReadGranule;
  c.readGranuleDerived = true;
  notes.push_back(
      "read granule 128 B, the model's largest: reading every "
      "k-th sector takes (" +
      seen + ") of the time of reading every sector, never at most " +
      fixed(kClearlyCheaper, 2) + ", so the reads may be coarser still");
}

/// The partial write cost: the sector rate of writing part of every sector
/// against writing every sector whole, inverted.
void derivePartialWriteCost(const std::vector<Pattern> &ps,
                            CalibratedTraffic &c) {
  std::vector<std::string> &notes = c.notes;
  double &partialWriteCost = c.params.partialWriteCost;
  double sum = 0;
  std::string used, why = "no 'device write' pattern with every_k 1 and "
                          "bytes_per_sector below 32 (with vs_base)";
  int n = 0;
  for (const Pattern &p : ps) {
    if (p.target != "device write" || p.everyK != 1 || p.bytesPerSector <= 0 ||
        p.bytesPerSector >= kSector)
      continue;
    if (!p.vsBase || p.vsBase->number <= 0 || !p.checked) {
      why = "pattern '" + p.name + "' " +
            (!p.checked  ? "failed its check"
             : !p.vsBase ? "has no vs_base"
                         : "has vs_base " + fixed(p.vsBase->number, 3));
      continue;
    }
    sum += p.vsBase->number;
    used += (used.empty() ? "'" : ", '") + p.name + "' " +
            fixed(p.vsBase->number, 3);
    ++n;
  }
  if (n == 0) {
    notes.push_back("partial write cost: " + why + "; keeping " +
                    fixed(partialWriteCost, 2) + " (the default)");
    return;
  }
  const double cost = n / sum; // 1 / the mean vs_base
  partialWriteCost = std::max(cost, kMinPartialWriteCost);
  c.partialWriteCostDerived = true;
  notes.push_back("partial write cost " + fixed(partialWriteCost, 3) +
                  ": 1 / the mean vs_base of " + used +
                  (cost < kMinPartialWriteCost
                       ? " (" + fixed(cost, 3) +
                             ", raised to 1: no cheaper than a full sector)"
                       : ""));
}

/// The mapped-host rule (the D2H rate for consecutive whole sectors) is not
/// a parameter; say when the calibration does not bear it out.
void checkHostRule(const std::vector<Pattern> &ps,
                   std::vector<std::string> &notes) {
  for (const Pattern &p : ps)
    if (p.target == "mapped host write" && p.everyK == 1 &&
        p.bytesPerSector == kSector && p.vsModel && p.checked &&
        p.vsModel->number < 0.8)
      notes.push_back("mapped host: '" + p.name + "' reaches only " +
                      fixed(p.vsModel->number, 3) +
                      " of the pinned D2H rate; the host traffic ratio "
                      "still assumes that rate");
}

} // namespace

bool deriveTrafficParams(const std::string &text, CalibratedTraffic &out,
                         std::string &error) {
  Json root;
  if (!JsonReader(text).parse(root, error))
    return false;
  const Json *list = root.kind == Json::Object ? root.get("patterns") : nullptr;
  if (!list || list->kind != Json::Array) {
    error = "no \"patterns\" array (not a file of ddtc-bench "
            "--calibrate-traffic)";
    return false;
  }
  const std::vector<Pattern> patterns = readPatterns(*list);
  out = CalibratedTraffic();
  deriveReadGranule(patterns, out);
  derivePartialWriteCost(patterns, out);
  checkHostRule(patterns, out.notes);
  return true;
}

bool loadTrafficCalibration(const std::string &path, CalibratedTraffic &out,
                            std::string &error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read " + path;
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (!deriveTrafficParams(text.str(), out, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

} // namespace ddtc
