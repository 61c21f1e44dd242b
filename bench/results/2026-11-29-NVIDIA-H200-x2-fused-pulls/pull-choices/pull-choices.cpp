// The model's choice between a pull and the ring for four layouts, with
// the calibrations of three runs (README.md, "The pull term with counted
// sectors").
#include "PipelineModel.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
using namespace ddtc::mpi;
FragmentSchedule ring(const ModelFigures &m, int64_t bytes, const KernelTraffic &t) {
  FragmentSchedule best; double bestUs = 1e300;
  for (int64_t largest = 256 << 10;; largest *= 2) {
    for (int64_t f = std::min<int64_t>(64 << 10, largest); f < largest; f *= 2) {
      FragmentSchedule c(bytes, largest, f); double us = pipelineUs(m, c, t);
      if (us < bestUs) { best = c; bestUs = us; }
    }
    FragmentSchedule c(bytes, largest, largest); double us = pipelineUs(m, c, t);
    if (us < bestUs) { best = c; bestUs = us; }
    if (largest >= (int64_t(64) << 20) || largest >= bytes) break;
  }
  return best;
}
FragmentSchedule pull(const ModelFigures &m, int64_t bytes) {
  const int64_t kMost = int64_t(16) << 20;
  double perAlpha = m.localGBps * 1e3 * m.alphaUs;
  int64_t n = std::llround(std::sqrt(double(bytes) / perAlpha));
  n = std::max<int64_t>({n, 1, (bytes + kMost - 1) / kMost});
  n = std::min<int64_t>(n, 64);
  int64_t largest = FragmentSchedule::roundUp((bytes + n - 1) / n);
  largest = std::max<int64_t>(std::min(largest, kMost), 1);
  return FragmentSchedule(bytes, largest, largest);
}
int main() {
  struct Cal { const char *name; double s, a, g, l, k; } cals[] = {
    {"auto-model", 12.6, 8.8, 3.86, 384, 1453},
    {"copy-engine", 11.8, 9.5, 4.69, 377, 1377},
    {"two-d-call", 11.5, 10.8, 4.82, 373, 1337}};
  struct Lay { const char *name; double est, counted, write; } lays[] = {
    {"vector-16B", 2.0, 2.0, 3.5}, {"vector-256B", 1.25, 1.0, 1.0},
    {"vector-4KiB", 1.02, 1.0, 1.0}, {"cube-slab", 1.0, 1.0039, 1.02}};
  for (auto &c : cals) {
    ModelFigures m; m.startUs = c.s; m.alphaUs = c.a; m.gapUs = c.g; m.linkGBps = c.l; m.localGBps = c.k;
    printf("%s\n", c.name);
    for (auto &l : lays) {
      printf("  %-12s", l.name);
      for (int mib : {1, 4, 16, 64}) {
        int64_t b = int64_t(mib) << 20;
        KernelTraffic t{l.est, l.write}, tc{l.counted, l.write};
        double r = pipelineUs(m, ring(m, b, t), t);
        double pe = pullUs(m, pull(m, b), t), pc = pullUs(m, pull(m, b), tc);
        printf("  %2d: ring %6.1f pull(est) %6.1f%s pull(counted) %6.1f%s", mib, r, pe, pe < r ? "*" : " ", pc, pc < r ? "*" : " ");
      }
      printf("\n");
    }
  }
}
