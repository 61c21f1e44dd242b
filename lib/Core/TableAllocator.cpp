//===- TableAllocator.cpp - Large tables on transparent huge pages --------===//

#include "ddtc/Core/TableAllocator.h"

#include <cstdlib>
#include <new>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ddtc {

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
} // namespace

void *allocateTable(size_t n, size_t size) {
  if (size != 0 && n > size_t(-1) / size)
    throw std::bad_alloc();
  const size_t bytes = n * size;
  if (bytes < kHugeTableBytes)
    return ::operator new(bytes);
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  if (rounded < bytes)
    throw std::bad_alloc();
  void *p = std::aligned_alloc(kHugePage, rounded);
  if (!p)
    throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only: where huge pages are off or none is free, the table faults
  // in 4 KiB pages as any other allocation.
  (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

void freeTable(void *p, size_t n, size_t size) {
  if (n * size < kHugeTableBytes)
    ::operator delete(p);
  else
    std::free(p);
}

} // namespace ddtc
