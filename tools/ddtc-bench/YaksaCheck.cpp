//===- YaksaCheck.cpp - Yaksa against ddtc's reference, on the CPU --------===//
//
// ddtc-yaksa-check loads Yaksa (--yaksa LIB or DDTC_YAKSA_LIB), builds the
// Yaksa type of every case from its ddtc tree (YaksaType.h) and packs and
// unpacks host memory with it, comparing the bytes with ddtc's reference
// packer (poisoned outputs). A Yaksa built without a GPU backend is enough:
// this proves the type translation and the loader that ddtc-bench uses.
// Without a library it exits 77 (skipped). --layouts FILE.tsv checks the
// benchmark's layouts too (bench/layouts.py --tsv).
//===----------------------------------------------------------------------===//

#include "LayoutFile.h"
#include "YaksaApi.h"
#include "YaksaType.h"

#include "ddtc/Core/SpecParser.h"
#include "ddtc/Core/Typemap.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace ddtc;

struct Case {
  std::string name, spec;
  int64_t count = 1;
  /// False for the cases Yaksa must refuse by name (no darray, no long
  /// double): refusing them is the expected outcome.
  bool expressible = true;
};

/// Every constructor at least once, and small versions of the benchmark's
/// layouts.
std::vector<Case> builtinCases() {
  return {
      {"contiguous", "t = contiguous(7, int)", 3},
      {"vector-unaligned", "t = hvector(100, 16, 36, char)", 1},
      {"vector-extents", "t = vector(10, 2, 5, float)", 2},
      {"indexed-triangle",
       "t = indexed([5, 4, 3, 2, 1], [0, 6, 12, 18, 24], double)", 1},
      {"hindexed", "t = hindexed([8, 24, 16], [0, 40, 200], char)", 2},
      {"indexed-block", "t = indexed_block(2, [0, 5, 9], int)", 2},
      {"hindexed-block", "t = hindexed_block(3, [4, 40, 100], short)", 1},
      {"subarray-face-C",
       "t = subarray([16, 16, 16], [14, 1, 14], [1, 14, 1], C, double)", 1},
      {"subarray-Fortran",
       "t = subarray([8, 6, 5], [2, 3, 4], [1, 2, 0], Fortran, int)", 1},
      {"particles",
       "p = struct([3, 3, 1, 1], [0, 24, 36, 40], [double, float, int, char])\n"
       "t = contiguous(100, resized(0, 48, p))",
       1},
      {"transpose-64",
       "col = resized(0, 8, vector(64, 1, 64, double))\n"
       "t = contiguous(64, col)",
       1},
      {"dup-nested", "t = dup(vector(3, 2, 4, hvector(2, 1, 24, double)))", 2},
      {"darray",
       "t = darray(4, 1, [8, 8], [block, none], [default, default], [4, 1], "
       "C, double)",
       1, false},
      {"long-double", "t = contiguous(4, long double)", 1, false},
  };
}

/// The benchmark's layouts: name, count and spec of each TSV line.
bool readLayouts(const std::string &path, std::vector<Case> &out) {
  std::vector<LayoutLine> lines;
  if (!readLayoutFile(path, lines))
    return false;
  for (const LayoutLine &l : lines)
    out.push_back(Case{l.name, l.spec, std::stoll(l.count)});
  return true;
}

std::string firstDifference(const std::vector<unsigned char> &got,
                            const std::vector<unsigned char> &want) {
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      return "byte " + std::to_string(i) + " of " + std::to_string(got.size());
  return "";
}

/// Packs and unpacks one case with Yaksa; "" when its bytes equal the
/// reference's, else why not. `refused` is set when Yaksa cannot express
/// the type.
std::string checkCase(const yaksa::Api &api, const Case &c, bool &refused) {
  refused = false;
  SpecFile spec;
  std::string error;
  if (!parseSpec(c.spec, c.name, spec, error))
    return error;
  const SpecBinding *b = spec.find("t");
  if (!b)
    return "the spec binds no t";
  const Datatype &type = *b->type;
  yaksa::Built built;
  if (!yaksa::buildType(api, type, built, error)) {
    refused = true;
    return error;
  }
  struct Free {
    const yaksa::Api &api;
    yaksa::Built &b;
    ~Free() { yaksa::freeType(api, b); }
  } freeAtEnd{api, built};
  if (!yaksa::checkLayout(api, type, built.type, error))
    return error;

  int64_t lo = 0, hi = 0;
  if (!touchedSpan(type, c.count, lo, hi, error))
    return error;
  const int64_t n = packedSize(type, c.count);
  std::vector<unsigned char> src(hi - lo + 1);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = (unsigned char)(i * 131 + 7) | 1;
  const unsigned char *origin = src.data() - lo;
  std::vector<unsigned char> want(n), got(n, 0xA5);
  referencePack(type, c.count, origin, want.data());

  uintptr_t actual = 0;
  yaksa::Request req = 0;
  int rc = api.ipack(origin, c.count, built.type, 0, got.data(), n, &actual,
                     nullptr, yaksa::kOpReplace, &req);
  if (rc == yaksa::kSuccess)
    rc = api.request_wait(req);
  if (rc != yaksa::kSuccess)
    return "yaksa_ipack failed (" + std::to_string(rc) + ")";
  if ((int64_t)actual != n)
    return "yaksa_ipack packed " + std::to_string(actual) + " bytes, not " +
           std::to_string(n);
  std::string diff = firstDifference(got, want);
  if (!diff.empty())
    return "pack differs from the reference at " + diff;

  std::vector<unsigned char> back(src.size(), 0x5A), wantBack(src.size(), 0x5A);
  referenceUnpack(type, c.count, want.data(), wantBack.data() - lo);
  rc = api.iunpack(want.data(), n, back.data() - lo, c.count, built.type, 0,
                   &actual, nullptr, yaksa::kOpReplace, &req);
  if (rc == yaksa::kSuccess)
    rc = api.request_wait(req);
  if (rc != yaksa::kSuccess)
    return "yaksa_iunpack failed (" + std::to_string(rc) + ")";
  diff = firstDifference(back, wantBack);
  if (!diff.empty())
    return "unpack differs from the reference at " + diff;
  return "";
}

} // namespace

int main(int argc, char **argv) {
  std::string option, layoutsPath;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--yaksa" && i + 1 < argc) {
      option = argv[++i];
    } else if (a == "--layouts" && i + 1 < argc) {
      layoutsPath = argv[++i];
    } else if (a == "--help" || a == "-h") {
      std::puts("usage: ddtc-yaksa-check [--yaksa LIB] [--layouts FILE.tsv]\n"
                "Packs and unpacks host memory with Yaksa (LIB, default "
                "$DDTC_YAKSA_LIB)\nand compares with ddtc's reference; exits "
                "77 when no library is named.");
      return 0;
    } else {
      std::fprintf(stderr, "ddtc-yaksa-check: unknown argument '%s'\n",
                   a.c_str());
      return 2;
    }
  }
  const std::string path = yaksa::libraryPath(option);
  if (path.empty()) {
    std::puts("ddtc-yaksa-check: SKIPPED: no Yaksa library (set "
              "DDTC_YAKSA_LIB or pass --yaksa)");
    return 77;
  }
  yaksa::Api api;
  std::string error;
  if (!yaksa::loadApi(path, api, error)) {
    std::fprintf(stderr, "ddtc-yaksa-check: %s\n", error.c_str());
    return 1;
  }
  if (api.init(nullptr) != yaksa::kSuccess) {
    std::fprintf(stderr, "ddtc-yaksa-check: yaksa_init failed\n");
    return 1;
  }
  std::printf("%s: %s\n", path.c_str(),
              api.hasCuda ? "with the CUDA backend" : "CPU backend only");
  std::vector<Case> cases = builtinCases();
  if (!layoutsPath.empty() && !readLayouts(layoutsPath, cases)) {
    std::fprintf(stderr, "ddtc-yaksa-check: cannot read %s\n",
                 layoutsPath.c_str());
    return 1;
  }
  int failures = 0;
  for (const Case &c : cases) {
    bool refused = false;
    std::string why = checkCase(api, c, refused);
    bool ok = c.expressible ? why.empty() : refused;
    std::printf("%-22s %-8s %s\n", c.name.c_str(),
                ok ? (refused ? "refused" : "passed") : "FAILED", why.c_str());
    failures += !ok;
  }
  api.finalize();
  std::printf("%zu cases, %d failed\n", cases.size(), failures);
  return failures ? 1 : 0;
}
