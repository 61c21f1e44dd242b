//===- TableAllocator.h - Large tables on transparent huge pages -*- C++ -*-===//
//
// Work-unit tables run to megabytes (64 Ki units of 32 bytes for a
// lower-triangular matrix of order 4000). Written once right after they are
// allocated, each 4 KiB page of a fresh table costs a page fault: on a
// virtual machine about 2 us, 1.1 ms for 2 MiB, most of what reading a plan
// from the disk cache costs. Tables of at least kHugeTableBytes are placed
// on 2 MiB boundaries and offered to the kernel as transparent huge pages
// (madvise), which the same machine maps in 0.1-0.4 ms per 2 MiB; where the
// kernel declines, they fault as before.
//===----------------------------------------------------------------------===//

#ifndef DDTC_CORE_TABLEALLOCATOR_H
#define DDTC_CORE_TABLEALLOCATOR_H

#include <cstddef>
#include <vector>

namespace ddtc {

/// The size from which tables are allocated for huge pages.
constexpr size_t kHugeTableBytes = size_t(1) << 20;

/// Room for `n` items of `size` bytes: on huge pages from kHugeTableBytes,
/// else from operator new. Throws std::bad_alloc (out of line: code built
/// without exceptions includes this header).
void *allocateTable(size_t n, size_t size);
/// Frees what allocateTable(n, size) returned.
void freeTable(void *p, size_t n, size_t size);

template <class T> struct TableAllocator {
  using value_type = T;
  TableAllocator() = default;
  template <class U> TableAllocator(const TableAllocator<U> &) {}
  T *allocate(size_t n) {
    return static_cast<T *>(allocateTable(n, sizeof(T)));
  }
  void deallocate(T *p, size_t n) { freeTable(p, n, sizeof(T)); }
  template <class U> bool operator==(const TableAllocator<U> &) const {
    return true;
  }
  template <class U> bool operator!=(const TableAllocator<U> &) const {
    return false;
  }
};

/// A vector whose large buffers lie on huge pages.
template <class T> using TableVector = std::vector<T, TableAllocator<T>>;

} // namespace ddtc

#endif // DDTC_CORE_TABLEALLOCATOR_H
