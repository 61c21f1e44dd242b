/*===- ddtc.h - The ddtc C API: GPU pack/unpack of MPI datatypes ----------===*
 *
 * Describe a datatype (a .ddt spec, or an MPI handle through ddtc_mpi.h),
 * commit it (its pack and unpack kernels are compiled by NVRTC or found in
 * the kernel cache) and pack or unpack any byte range of its packed stream
 * on a CUDA stream. See docs/Runtime.md.
 *
 * Plain C (C89 with <stdint.h>), usable from C++. Every function is thread
 * safe, returns a status and never aborts the process.
 *===----------------------------------------------------------------------===*/

#ifndef DDTC_DDTC_H
#define DDTC_DDTC_H

#include <stddef.h>
#include <stdint.h>

#if defined(DDTC_BUILDING_LIBRARY)
#define DDTC_API __attribute__((visibility("default")))
#else
#define DDTC_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What every function returns. */
typedef enum ddtc_status {
  DDTC_SUCCESS = 0,
  /* A null handle or pointer, a negative count, a range outside the packed
     stream. */
  DDTC_ERROR_INVALID_ARGUMENT = 1,
  /* The spec text does not parse or breaks an MPI rule; or the named binding
     is missing. */
  DDTC_ERROR_INVALID_SPEC = 2,
  /* A datatype ddtc cannot represent (ddtc_type_from_mpi) or plan (a
     ddtc_type_commit whose work-unit table would be too large). */
  DDTC_ERROR_UNSUPPORTED_TYPE = 3,
  /* ddtc_pack or ddtc_unpack of a type that was not committed. */
  DDTC_ERROR_NOT_COMMITTED = 4,
  /* No CUDA driver (libcuda.so.1) or no GPU: the call needs to run a
     kernel. */
  DDTC_ERROR_NO_DEVICE = 5,
  /* NVRTC cannot be loaded, so a kernel that is needed cannot be compiled. */
  DDTC_ERROR_NO_COMPILER = 6,
  /* NVRTC rejected a kernel: the message holds its log and options. */
  DDTC_ERROR_COMPILE = 7,
  /* A CUDA driver call failed: the message names it and its error. */
  DDTC_ERROR_CUDA = 8,
  /* A buffer that the GPU cannot access (pageable host memory, a freed or
     foreign pointer). */
  DDTC_ERROR_INVALID_POINTER = 9,
  /* Host or device memory ran out. */
  DDTC_ERROR_OUT_OF_MEMORY = 10,
  /* A bug in ddtc; the message says where. */
  DDTC_ERROR_INTERNAL = 11
} ddtc_status;

/* A datatype: created from a spec or an MPI handle, committed, used by any
   number of threads, freed once. */
typedef struct ddtc_type_s *ddtc_type;

/* The name of a status ("DDTC_ERROR_NO_DEVICE"). */
DDTC_API const char *ddtc_status_name(ddtc_status status);

/* The message of the last call on this thread that failed (never null; ""
   before any failure). Valid until this thread's next ddtc call. */
DDTC_API const char *ddtc_last_error(void);

/* For libraries layered on ddtc (libddtc-mpi-import): makes `message` what
   ddtc_last_error returns on this thread, and returns `status`. */
DDTC_API ddtc_status ddtc_report_error(ddtc_status status, const char *message);

/* The library's version, e.g. "0.1.0". */
DDTC_API const char *ddtc_version(void);

/* Optional: reads the environment (DDTC_* variables, see docs/Runtime.md),
   loads NVRTC and starts the CUDA driver. Every other function initializes
   what it needs on first use; calling this first only moves that cost.
   Succeeds without NVRTC or a GPU (calls that need them fail later). */
DDTC_API ddtc_status ddtc_init(void);

/* Optional: waits for the kernels being compiled in the background and stops
   the compiler threads. The library stays usable (a later call starts them
   again); compiled kernels and loaded modules are kept. */
DDTC_API ddtc_status ddtc_finalize(void);

/*--- Types ---------------------------------------------------------------*/

/* Parses `spec_text` (the .ddt language: one `name = constructor(...)` per
   line) and returns the binding called `name`, or the last binding when
   `name` is null. */
DDTC_API ddtc_status ddtc_type_from_spec(const char *spec_text,
                                         const char *name, ddtc_type *out);

/* Plans the type's kernels and makes them ready: a specialized kernel found
   in the memory or disk cache is ready at once. Otherwise it is compiled by
   NVRTC for the GPU of the current CUDA context (without a GPU: for
   DDTC_DEFAULT_ARCH, sm_90 unless set), in the background when a generic
   kernel can serve the calls meanwhile (the default; DDTC_JIT=sync waits).
   Committing a committed type does nothing. Planning costs time and memory
   in proportion to the type's description (or its blocks, for irregular
   constructors), never its bytes; a type whose work-unit table would list
   more than 2^22 runs per instance fails with DDTC_ERROR_UNSUPPORTED_TYPE
   (the caller keeps its own path for it). */
DDTC_API ddtc_status ddtc_type_commit(ddtc_type type);

/* Waits until the specialized kernels of a committed type are compiled (or
   their compile failed: then returns the error; calls keep using the generic
   kernel). Returns at once when they are ready or need no compile, and with
   DDTC_JIT=generic when the generic kernel serves the type. */
DDTC_API ddtc_status ddtc_type_wait(ddtc_type type);

/* Frees the type and sets *type to null (null is allowed). Call it once no
   operation issued with the type is still running on a stream. */
DDTC_API ddtc_status ddtc_type_free(ddtc_type *type);

/* MPI_Type_size: packed bytes of one instance. */
DDTC_API ddtc_status ddtc_type_size(ddtc_type type, int64_t *size);
/* MPI_Type_get_extent: the distance between consecutive instances. */
DDTC_API ddtc_status ddtc_type_extent(ddtc_type type, int64_t *extent);
/* MPI_Type_get_extent: the lower bound. */
DDTC_API ddtc_status ddtc_type_lb(ddtc_type type, int64_t *lb);
/* MPI_Type_get_true_extent: the bytes one instance touches are
   [true_lb, true_lb + true_extent) from the origin. */
DDTC_API ddtc_status ddtc_type_true_extent(ddtc_type type, int64_t *true_lb,
                                           int64_t *true_extent);
/* The packed bytes of `count` instances (count * size, checked for
   overflow). */
DDTC_API ddtc_status ddtc_type_packed_size(ddtc_type type, int64_t count,
                                           int64_t *bytes);

/* Where a type's kernel came from. */
typedef enum ddtc_kernel_origin {
  DDTC_KERNEL_NONE = 0,     /* not committed, or pending */
  DDTC_KERNEL_EMPTY = 1,    /* the type holds no data: no kernel needed */
  DDTC_KERNEL_BUILTIN = 2,  /* precompiled into the library */
  DDTC_KERNEL_MEMORY = 3,   /* compiled earlier in this process */
  DDTC_KERNEL_DISK = 4,     /* loaded from the disk cache */
  DDTC_KERNEL_COMPILED = 5, /* compiled by NVRTC for this commit */
  DDTC_KERNEL_FAILED = 6    /* the compile failed; the generic kernel runs */
} ddtc_kernel_origin;

/* What ddtc_type_kernel_info reports about a committed type's specialized
   kernels (for the architecture it was committed for). */
typedef struct ddtc_kernel_info {
  ddtc_kernel_origin origin;
  /* 1 when the work-unit kernel family serves the type (irregular layouts),
     0 for the strided family. */
  int uses_work_units;
  /* Bytes per access of the kernels' bulk (1, 2, 4, 8 or 16). */
  int width;
  /* 1 when a precompiled generic kernel can serve calls until the
     specialized one is ready. */
  int generic_available;
  /* The GPU architecture compiled for, e.g. 90 for sm_90. */
  int arch;
  /* Milliseconds NVRTC took (0 unless origin is DDTC_KERNEL_COMPILED), and
     milliseconds to read the kernel from disk (origin DDTC_KERNEL_DISK). */
  double compile_ms;
  double disk_load_ms;
  /* The kernel shape, e.g. "strided.w8.wide.d2": types of one shape share
     one compiled kernel. */
  char shape[64];
  /* 1 when unpacks of whole instances read the work units in the order of
     their origin offsets (short units whose stores scatter in packed
     order), 0 otherwise. */
  int unpack_in_origin_order;
} ddtc_kernel_info;

DDTC_API ddtc_status ddtc_type_kernel_info(ddtc_type type,
                                           ddtc_kernel_info *info);

/*--- Pack and unpack ------------------------------------------------------*/

/* Packs bytes [lo, hi) of the packed stream of `count` consecutive instances
   of `type` (instance i starts i * extent bytes after `origin`, the address
   of displacement 0 as in MPI; it may be null for absolute displacements as
   with MPI_BOTTOM) into `packed`: packed[0] receives packed byte lo.
   The kernel is enqueued on `stream` (a cudaStream_t or CUstream; null is the
   legacy default stream) and the call returns without waiting.

   Both buffers must be accessible by the GPU of the current CUDA context:
   device memory, managed memory, or mapped pinned host memory (cudaHostAlloc
   with cudaHostAllocMapped, or registered with cudaHostRegisterMapped):
   pass the device pointer from cudaHostGetDevicePointer, which is the host
   pointer itself on every system with unified addressing (all 64-bit
   systems). Pageable host memory is refused with
   DDTC_ERROR_INVALID_POINTER.

   A pack of DDTC_HOST_STAGING_MIN packed bytes or more (16 MiB by default)
   into host memory goes through device memory instead: the kernel packs a
   chunk at a time into device memory of the context while a copy engine
   moves the chunk before to `packed` (docs/Runtime.md); `stream` then waits
   for the last copy, so what is queued on it after the call sees the bytes.

   `max_ctas` caps the CUDA blocks of the launch (0: as many as the work
   needs), to leave SMs to kernels running beside it.

   Without a current CUDA context, the primary context of the device holding
   `packed` (else device 0) is made current on the calling thread, as the
   CUDA runtime does. lo == hi does nothing and succeeds. */
DDTC_API ddtc_status ddtc_pack(ddtc_type type, const void *origin,
                               int64_t count, int64_t lo, int64_t hi,
                               void *packed, void *stream, int max_ctas);

/* The reverse: scatters `packed` (holding packed bytes [lo, hi)) into the
   instances at `origin`. Same rules as ddtc_pack. Only the bytes of the
   range are written. */
DDTC_API ddtc_status ddtc_unpack(ddtc_type type, void *origin, int64_t count,
                                 int64_t lo, int64_t hi, const void *packed,
                                 void *stream, int max_ctas);

/* Moves packed bytes [lo, hi) of `src_count` instances of `src_type` at
   `src` straight to where `dst_count` instances of `dst_type` at `dst` hold
   them, in one kernel and without a packed buffer between: the bytes
   ddtc_pack of the source and ddtc_unpack into the destination would give.
   The range must lie in both packed streams; the two types need not have
   the same signature. `src` may be memory of another GPU that the current
   context can read (peer access, a CUDA IPC mapping). Where both types'
   blocks are rows of one length of at least DDTC_COPY_ENGINE_ROWS bytes
   (256 by default), in at most two levels with the same rows per plane, a
   copy engine moves them (cuMemcpy2DAsync or cuMemcpy3DAsync; they take no
   SMs, so `max_ctas` caps the kernel alone) and the kernel only the rows
   the range cuts. Two handles of one type map that is no such nest (an
   indexed type, records of several runs) are served by one kernel that
   gives a warp each work unit of the type, read and written at the same
   offsets of the two buffers, where its work units average 256 bytes or
   more. Same rules as ddtc_pack otherwise. Serves the pairs
   ddtc_copy_supported accepts, else fails with DDTC_ERROR_UNSUPPORTED_TYPE. */
DDTC_API ddtc_status ddtc_copy(ddtc_type src_type, const void *src,
                               int64_t src_count, ddtc_type dst_type, void *dst,
                               int64_t dst_count, int64_t lo, int64_t hi,
                               void *stream, int max_ctas);

/* DDTC_SUCCESS when ddtc_copy serves the two committed types: each one
   strided nest whose blocks follow each other in the packed stream
   (vectors, subarrays, contiguous arrays and records without inner gaps, of
   any depth), or both one type map (equal trees) whose work units average
   256 bytes or more; else DDTC_ERROR_UNSUPPORTED_TYPE, or
   DDTC_ERROR_NOT_COMMITTED, with ddtc_last_error naming the type. */
DDTC_API ddtc_status ddtc_copy_supported(ddtc_type src_type,
                                         ddtc_type dst_type);

/*--- Statistics -------------------------------------------------------------*/

/* Process-wide counters since the library was loaded. */
typedef struct ddtc_stats {
  int64_t nvrtc_compiles;   /* kernels compiled by NVRTC */
  int64_t compile_failures; /* compiles NVRTC rejected */
  int64_t memory_hits;      /* commits served by the in-memory cache */
  int64_t disk_hits;        /* kernels read from the disk cache */
  int64_t disk_writes;      /* kernels written to the disk cache */
  int64_t disk_rejected;    /* entries refused: corrupt, truncated, foreign */
  int64_t builtin_hits;     /* specialized kernels found precompiled */
  int64_t generic_launches; /* launches of a generic kernel */
  int64_t specialized_launches; /* launches of a specialized kernel */
  int64_t module_loads;         /* cuModuleLoadData calls */
  int64_t table_uploads;        /* work-unit tables copied to a GPU */
  double compile_ms_total;      /* time NVRTC took, all compiles */
  int64_t copy_engine_copies;   /* ddtc_copy's blocks of rows moved by a
                                   copy engine */
} ddtc_stats;

DDTC_API ddtc_status ddtc_get_stats(ddtc_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* DDTC_DDTC_H */
