//===- UnitsChunkKernel.h - Work units of short runs, a chunk a thread -*- C++ -*-//
//
// The units family's kernels give each (instance, unit) item one warp, whose
// lanes take the unit's 16-byte chunks: a unit of one or two doubles keeps
// one lane of 32 busy. For plans whose units are short on average, the
// chunk kernels instead give each thread one 16-byte chunk of the packed
// stream, whatever units it crosses: a block copies the starts and origin
// offsets of a group of kChunkUnitsGroup consecutive items into shared
// memory with a table of each chunk's first item, and each thread reads
// its chunk's first unit there, then gathers (pack) or scatters (unpack)
// the chunk's pieces. See docs/Compiler.md, "Units of short runs".
//===----------------------------------------------------------------------===//

#ifndef DDTC_TARGET_CUDA_UNITSCHUNKKERNEL_H
#define DDTC_TARGET_CUDA_UNITSCHUNKKERNEL_H

#include "ddtc/Core/KernelPlan.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace ddtc {

/// The most items (instance, unit) one block takes per step of its
/// grid-stride loop: their starts and origin offsets fill 16 KiB of shared
/// memory.
constexpr int64_t kChunkUnitsGroup = 1024;

/// The chunks of a group whose first item the block lists in shared memory
/// (the rest are found by binary search): twice the chunks of a group of
/// average units.
constexpr int64_t kChunkUnitsSlots = 2048;

/// The 16-byte chunks a thread takes per group, on average: a group holds
/// about threadsPerBlock x this many chunks.
constexpr int64_t kChunkUnitsPerThread = 4;

/// A units plan whose units hold fewer packed bytes than this on average
/// takes the chunk kernels (unitsByChunks).
constexpr int64_t kChunkUnitsMaxMean = 256;

/// Whether the kernels of a units plan take a 16-byte chunk a thread: its
/// units hold fewer than kChunkUnitsMaxMean packed bytes on average.
bool unitsByChunks(const KernelPlan &plan);

/// The items a block of the chunk kernels takes per step (the parameter
/// `group`): a power of two from 32 to kChunkUnitsGroup whose units hold
/// about kChunkUnitsPerThread chunks per thread, so that long units do not
/// leave a call of few items to few blocks.
int64_t getChunkUnitsGroup(const KernelPlan &plan);

/// Units shorter than this on average (and whole aligned words) unpack a
/// word a thread (unitsWordUnpack); longer ones a 16-byte chunk a thread.
constexpr int64_t kWordUnpackMaxMean = 32;

/// Whether the unpack kernel of a units plan that unitsByChunks takes a
/// word a thread (the parameter `word_unpack`): its units average under
/// kWordUnpackMaxMean bytes, its width is 4 or 8 and
/// every unit is a wide body whose packed offset, length and origin offset
/// are multiples of it, as are the instance's size and extent, so that each
/// word of the packed stream lies in one unit and lands aligned.
bool unitsWordUnpack(const KernelPlan &plan);

/// Fills plan.unpackUnits, the word unpack's units in the order of their
/// origin offsets, where that order stores much closer together than packed
/// order: a gather of single words or pairs in a shuffled order, or columns
/// of a row-major array, whose stores in packed order each land in their
/// own sector, partly written and out of order, which DRAM pays for with a
/// read (on an H200 a permutation of doubles unpacked 2.7x slower than the
/// same doubles in order). The unpack kernel takes that table for calls of
/// whole instances (the parameter `dest_order`). Only plans whose units
/// are whole aligned words as for unitsWordUnpack, of 4, 8 or 16 bytes;
/// returns whether it filled the table. Costs a scan of
/// the units, and a sort of them where they are out of order.
bool orderUnpackUnits(KernelPlan &plan);

/// Appends the pack (`pack`) or unpack kernel `<prefix>_pack` /
/// `<prefix>_unpack` of a units plan that unitsByChunks, after the helpers
/// and the parameter struct.
void emitUnitsChunkKernel(const KernelPlan &plan, const std::string &prefix,
                          bool pack, std::ostream &os);

} // namespace ddtc

#endif // DDTC_TARGET_CUDA_UNITSCHUNKKERNEL_H
