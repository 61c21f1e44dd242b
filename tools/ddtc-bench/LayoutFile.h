//===- LayoutFile.h - The benchmark's layout file --------------*- C++ -*-===//
//
// `bench/layouts.py --tsv` writes the benchmark's layouts one a line, in
// seven tab-separated fields: name, group, count, origin offset, the
// cudaMemcpy2D reference (w,h,pitch,offset or -), the cudaMemcpy3D one
// (sizes,sub,start,elem or -) and the spec, its newlines written as \n.
// ddtc-bench measures these layouts; ddtc-yaksa-check checks Yaksa on them.
// Plain C++, header only: both programs read the file the same way.
//===----------------------------------------------------------------------===//

#ifndef DDTC_TOOLS_DDTC_BENCH_LAYOUTFILE_H
#define DDTC_TOOLS_DDTC_BENCH_LAYOUTFILE_H

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ddtc {

/// The fields of one line, as text, but for the spec's restored newlines.
struct LayoutLine {
  std::string name, group, count, offset, memcpy2d, memcpy3d, spec;
};

/// `s` with each two-character "\n" turned into a newline.
inline std::string unescapeNewlines(const std::string &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == 'n') {
      out += '\n';
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

/// Appends the lines of `path` that have the seven fields (the others are
/// skipped) to `out`; false when the file cannot be read.
inline bool readLayoutFile(const std::string &path,
                           std::vector<LayoutLine> &out) {
  std::ifstream in(path);
  if (!in)
    return false;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, '\t'))
      f.push_back(field);
    if (f.size() != 7)
      continue;
    out.push_back({f[0], f[1], f[2], f[3], f[4], f[5], unescapeNewlines(f[6])});
  }
  return true;
}

} // namespace ddtc

#endif // DDTC_TOOLS_DDTC_BENCH_LAYOUTFILE_H
