//===- Typemap.h - Reference meaning of a datatype --------------*- C++ -*-===//
//
// The reference semantics every generated kernel is checked against: the
// bytes of `count` instances of a type, in pack order, as maximal contiguous
// runs, and host pack/unpack built on them. Proven equal to MPI_Pack.
//===----------------------------------------------------------------------===//

#ifndef DDTC_CORE_TYPEMAP_H
#define DDTC_CORE_TYPEMAP_H

#include "ddtc/Core/Datatype.h"

#include <functional>

namespace ddtc {

/// A contiguous run of bytes at `offset` from the buffer origin.
struct Run {
  int64_t offset;
  int64_t length;
  bool operator==(const Run &o) const {
    return offset == o.offset && length == o.length;
  }
};

/// Merges touching runs before handing them on: a run that starts where the
/// pending one ends extends it. Flushes on destruction.
class RunMerger {
public:
  explicit RunMerger(const std::function<void(const Run &)> &fn) : fn(fn) {}
  ~RunMerger() { flush(); }
  RunMerger(const RunMerger &) = delete;
  RunMerger &operator=(const RunMerger &) = delete;

  void add(int64_t offset, int64_t length) {
    if (length <= 0)
      return;
    if (pending.length > 0 && pending.offset + pending.length == offset) {
      pending.length += length;
      return;
    }
    flush();
    pending = {offset, length};
  }
  void flush() {
    if (pending.length > 0)
      fn(pending);
    pending = {0, 0};
  }

private:
  const std::function<void(const Run &)> &fn;
  Run pending{0, 0};
};

/// Calls `fn` with each maximal contiguous run of `count` instances, in pack
/// order (instance i starts at i * extent). Runs that touch are merged.
void forEachRun(const Datatype &type, int64_t count,
                const std::function<void(const Run &)> &fn);

/// The runs of forEachRun, collected.
std::vector<Run> flatten(const Datatype &type, int64_t count);

/// The bytes [lo, hi) of the buffer origin that `count` instances touch
/// (lo == hi when they touch none). Sets `error` on 64-bit overflow of lo,
/// hi or hi - lo.
bool touchedSpan(const Datatype &type, int64_t count, int64_t &lo, int64_t &hi,
                 std::string &error);

/// The packed size of `count` instances, or -1 on 64-bit overflow.
int64_t packedSize(const Datatype &type, int64_t count);

/// Copies the data of `count` instances from `origin` (the address of
/// displacement 0) into `packed`, in pack order, as MPI_Pack does.
void referencePack(const Datatype &type, int64_t count, const void *origin,
                   void *packed);
/// The inverse: scatters `packed` into the instances at `origin`.
void referenceUnpack(const Datatype &type, int64_t count, const void *packed,
                     void *origin);
/// Unpacks only the packed bytes [lo, hi) of `stream` (the whole packed
/// stream of `count` instances): what ddtc_unpack of that range must write.
void referenceUnpackRange(const Datatype &type, int64_t count,
                          const void *stream, int64_t lo, int64_t hi,
                          void *origin);

} // namespace ddtc

#endif // DDTC_CORE_TYPEMAP_H
