//===- TableAllocatorTest.cpp - Tables on huge pages ----------------------===//

#include "ddtc/Core/KernelPlan.h"

#include <gtest/gtest.h>

#include <cstdint>

using namespace ddtc;

namespace {

TEST(TableAllocator, LargeTablesStartOnHugePageBoundaries) {
  UnitTable units(kHugeTableBytes / sizeof(WorkUnit) + 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(units.data()) % (2u << 20), 0u);
  UnitTable small(8);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % alignof(WorkUnit),
            0u);
}

TEST(TableAllocator, GrowingKeepsEveryUnit) {
  // Grows from operator new's buffers to huge-page ones and between those.
  UnitTable units;
  const int64_t n = 3 * int64_t(kHugeTableBytes / sizeof(WorkUnit));
  for (int64_t i = 0; i < n; ++i)
    units.push_back({i, 2 * i, i % 7 + 1, i & 1});
  ASSERT_EQ(static_cast<int64_t>(units.size()), n);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(units[i], (WorkUnit{i, 2 * i, i % 7 + 1, i & 1})) << i;
  UnitTable copy = units;
  EXPECT_EQ(copy, units);
  units.clear();
  units.shrink_to_fit();
  EXPECT_EQ(copy.size(), static_cast<size_t>(n));
}

} // namespace
