//===- FragmentScheduleTest.cpp - The fragments of a pipelined message ----===//
//
// Every schedule covers its message exactly once and in order, with no
// fragment above the largest; ramps grow and shrink as documented, the
// fixed schedule comes back when the first fragment is the largest, and
// sizes near INT64_MAX compute without overflow.
//===----------------------------------------------------------------------===//

#include "FragmentSchedule.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

using ddtc::mpi::FragmentSchedule;

namespace {

/// Checks the whole schedule fragment by fragment (small counts only).
void expectCovers(const FragmentSchedule &s, int64_t total, int64_t largest) {
  SCOPED_TRACE(::testing::Message()
               << "total " << total << " largest " << largest << " first "
               << s.firstFragment());
  int64_t at = 0, longest = 0;
  for (int64_t k = 0; k < s.count(); ++k) {
    ASSERT_EQ(s.begin(k), at) << "fragment " << k;
    ASSERT_GE(s.length(k), 1) << "fragment " << k;
    ASSERT_LE(s.length(k), largest) << "fragment " << k;
    at += s.length(k);
    longest = std::max(longest, s.length(k));
  }
  EXPECT_EQ(at, total);
  EXPECT_EQ(s.longest(), longest);
}

std::vector<int64_t> lengths(const FragmentSchedule &s) {
  std::vector<int64_t> v;
  for (int64_t k = 0; k < s.count(); ++k)
    v.push_back(s.length(k));
  return v;
}

/// The boundaries of a schedule too long to walk: each fragment ends where
/// the next begins around the ramps, and the last ends at the total.
void expectBoundaries(const FragmentSchedule &s, int64_t total,
                      int64_t largest) {
  int64_t n = s.count();
  ASSERT_GT(n, 0);
  EXPECT_EQ(s.begin(0), 0);
  EXPECT_EQ(s.end(n - 1), total);
  for (int64_t k : {int64_t(0), int64_t(1), n / 2, n - 3, n - 2}) {
    if (k < 0 || k + 1 >= n)
      continue;
    for (int64_t i = k; i < n - 1 && i - k < 80; ++i) {
      ASSERT_EQ(s.end(i), s.begin(i + 1)) << "fragment " << i;
      ASSERT_GE(s.length(i), 1);
      ASSERT_LE(s.length(i), largest);
    }
  }
  for (int64_t i = std::max<int64_t>(0, n - 80); i + 1 < n; ++i)
    ASSERT_EQ(s.end(i), s.begin(i + 1)) << "fragment " << i;
}

} // namespace

TEST(FragmentSchedule, EmptyAndTinyMessages) {
  EXPECT_EQ(FragmentSchedule(0, 1000, 100).count(), 0);
  EXPECT_EQ(FragmentSchedule(0, 1000, 100).longest(), 0);
  FragmentSchedule one(1, 1000, 100);
  ASSERT_EQ(one.count(), 1);
  EXPECT_EQ(one.begin(0), 0);
  EXPECT_EQ(one.length(0), 1);
  FragmentSchedule unit(5, 1, 1);
  EXPECT_EQ(lengths(unit), (std::vector<int64_t>{1, 1, 1, 1, 1}));
  FragmentSchedule negative(-5, 1000, 100);
  EXPECT_EQ(negative.count(), 0);
}

TEST(FragmentSchedule, FixedWhenTheFirstIsTheLargest) {
  // What the pipelines did before ramps: fragments of `largest`, the last
  // one the rest. A first of 0 or above the largest means the same.
  for (int64_t first :
       {int64_t(0), int64_t(-1), int64_t(1000), int64_t(5000)}) {
    FragmentSchedule s(4500, 1000, first);
    EXPECT_EQ(lengths(s), (std::vector<int64_t>{1000, 1000, 1000, 1000, 500}))
        << "first " << first;
    EXPECT_EQ(s.firstFragment(), 1000);
  }
  EXPECT_EQ(lengths(FragmentSchedule(3000, 1000, 1000)),
            (std::vector<int64_t>{1000, 1000, 1000}));
}

TEST(FragmentSchedule, RampsGrowAndShrink) {
  // 700, 1400, 2800 (below 3000), then 3000s, and back.
  FragmentSchedule s(30000, 3000, 700);
  std::vector<int64_t> v = lengths(s);
  ASSERT_GE(v.size(), 7u);
  EXPECT_EQ(std::vector<int64_t>(v.begin(), v.begin() + 3),
            (std::vector<int64_t>{700, 1400, 2800}));
  EXPECT_EQ(std::vector<int64_t>(v.end() - 3, v.end()),
            (std::vector<int64_t>{2800, 1400, 700}));
  // 30000 - 2 * 4900 = 20200 between: 7 fragments of 2885 or 2886.
  EXPECT_EQ(s.count(), 13);
  EXPECT_EQ(s.rampFragments(), 3);
  EXPECT_EQ(s.middleFragments(), 7);
  for (size_t i = 3; i + 3 < v.size(); ++i)
    EXPECT_TRUE(v[i] == 2885 || v[i] == 2886) << v[i];
  expectCovers(s, 30000, 3000);
  // Powers of two: 64 KiB doubling to 1 MiB in 4 MiB.
  FragmentSchedule m(4 << 20, 1 << 20, 64 << 10);
  EXPECT_EQ(m.length(0), 64 << 10);
  EXPECT_EQ(m.length(3), 512 << 10);
  EXPECT_EQ(m.length(m.count() - 1), 64 << 10);
  // 4 MiB - 2 x 960 KiB between the ramps: 3 fragments, evenly in
  // multiples of 256 bytes (the settings are): 742912, 742912, 742400.
  EXPECT_EQ(m.count(), 11);
  EXPECT_EQ(m.rampFragments(), 4);
  EXPECT_EQ(m.middleFragments(), 3);
  EXPECT_EQ(m.longest(), 742912);
  EXPECT_EQ(m.length(5), 742912);
  EXPECT_EQ(m.length(6), 742400);
  expectCovers(m, 4 << 20, 1 << 20);
}

TEST(FragmentSchedule, RampsShortenToFitTheMessage) {
  // Exactly both first fragments; one byte more goes between them.
  EXPECT_EQ(lengths(FragmentSchedule(1400, 3000, 700)),
            (std::vector<int64_t>{700, 700}));
  EXPECT_EQ(lengths(FragmentSchedule(1401, 3000, 700)),
            (std::vector<int64_t>{700, 1, 700}));
  // Below two first fragments: no ramp, one fragment.
  EXPECT_EQ(lengths(FragmentSchedule(1399, 3000, 700)),
            (std::vector<int64_t>{1399}));
  // 700 + 1400 fit on both sides of 4200 exactly.
  EXPECT_EQ(lengths(FragmentSchedule(4200, 3000, 700)),
            (std::vector<int64_t>{700, 1400, 1400, 700}));
  EXPECT_EQ(lengths(FragmentSchedule(4199, 3000, 700)),
            (std::vector<int64_t>{700, 2799, 700}));
  EXPECT_EQ(lengths(FragmentSchedule(4201, 3000, 700)),
            (std::vector<int64_t>{700, 1400, 1, 1400, 700}));
}

TEST(FragmentSchedule, CoversEveryMessageOnce) {
  for (int64_t total = 0; total <= 300; ++total)
    for (int64_t largest : {1, 2, 3, 7, 64, 100, 1000})
      for (int64_t first : {0, 1, 2, 5, 13, 64, 99, 100, 2000})
        expectCovers(FragmentSchedule(total, largest, first), total, largest);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 3000; ++i) {
    int64_t largest = 1 + static_cast<int64_t>(rng() % 5000);
    int64_t first = static_cast<int64_t>(rng() % 6000);
    int64_t total = static_cast<int64_t>(rng() % 200000);
    expectCovers(FragmentSchedule(total, largest, first), total, largest);
  }
}

TEST(FragmentSchedule, HugeSizesDoNotOverflow) {
  const int64_t max = INT64_MAX;
  for (int64_t largest : {max, max / 3, int64_t(1) << 40, int64_t(4) << 20})
    for (int64_t first : {int64_t(1), int64_t(64) << 10, max})
      for (int64_t total :
           {max, max - 1, max / 2 + 1, (int64_t(1) << 62) + 3}) {
        SCOPED_TRACE(::testing::Message()
                     << total << " " << largest << " " << first);
        FragmentSchedule s(total, largest, first);
        expectBoundaries(s, total, largest);
        EXPECT_LE(s.longest(), largest);
      }
  // A count near INT64_MAX itself.
  FragmentSchedule ones(max, 1, 1);
  EXPECT_EQ(ones.count(), max);
  expectBoundaries(ones, max, 1);
}

TEST(FragmentSchedule, AlignedSettingsStartEveryFragmentAligned) {
  // The growing schedule that packed 1 MB fragments at 0.5 GB/s: 128 KiB
  // doubling to 1 MiB in 16 MiB put the middle fragments at 996148 bytes.
  FragmentSchedule grow(16 << 20, 1 << 20, 128 << 10);
  for (int64_t k = 0; k < grow.count(); ++k)
    EXPECT_EQ(grow.begin(k) % FragmentSchedule::kAlign, 0) << "fragment " << k;
  expectCovers(grow, 16 << 20, 1 << 20);
  EXPECT_EQ(grow.longest() % FragmentSchedule::kAlign, 0);
  std::mt19937_64 rng(11);
  for (int i = 0; i < 3000; ++i) {
    int64_t largest = FragmentSchedule::kAlign * (1 + rng() % 64);
    int64_t first = FragmentSchedule::kAlign * (1 + rng() % 64);
    int64_t total = static_cast<int64_t>(rng() % 400000);
    FragmentSchedule s(total, largest, first);
    expectCovers(s, total, largest);
    for (int64_t k = 0; k < s.count(); ++k)
      ASSERT_EQ(s.begin(k) % FragmentSchedule::kAlign, 0)
          << "total " << total << " largest " << largest << " first "
          << first << " fragment " << k;
  }
}
