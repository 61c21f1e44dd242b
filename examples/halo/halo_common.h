/* The part of the two halo examples that does not depend on how the faces
 * are packed: the array, the CPU reference, the checks and the GPU set-up.
 *
 * A 258^3 array of doubles in C order (x slowest, z fastest) holds a 256^3
 * interior and a halo of one cell. Face f (0..5: x low, x high, y low, y high,
 * z low, z high) is the interior layer next to that side. In an exchange the
 * face sent towards the x-low neighbour arrives in that neighbour's x-high
 * ghost layer, and so on: here the process is its own neighbour on every
 * side, so face f of array A is unpacked into the ghost layer on the
 * opposite side of array B.
 *
 * Each example supplies two functions (halo_ops) and calls halo_run, which
 * packs every face into device memory, one face into mapped pinned host
 * memory and one face in four fragments, unpacks every face into B, and
 * checks every byte against loops on the CPU. Plain C99 and the CUDA runtime
 * API (linked statically), so the programs start without the CUDA driver and
 * say "no GPU" (exit status 77) when there is none. */

#ifndef HALO_COMMON_H
#define HALO_COMMON_H

#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Interior cells per dimension; halo.ddt must say the same (HALO_N + 2 cells
   per dimension in its subarrays). */
#define HALO_N 256
#define HALO_M (HALO_N + 2)
#define HALO_FACE_BYTES ((size_t)HALO_N * HALO_N * sizeof(double))
#define HALO_ARRAY_BYTES ((size_t)HALO_M * HALO_M * HALO_M * sizeof(double))
/* What a byte nothing wrote holds. */
#define HALO_POISON 0xA5

static const char *const halo_face_names[6] = {"xlo", "xhi", "ylo",
                                               "yhi", "zlo", "zhi"};

/* How an example packs face f of `array` and unpacks it into the ghost layer
   opposite face f: bytes [lo, hi) of the face's packed stream, packed[0]
   holding byte lo, enqueued on `stream`. Return 0 on success; on failure
   they print why. */
typedef struct halo_ops {
  int (*pack_face)(int face, const void *array, long long lo, long long hi,
                   void *packed, cudaStream_t stream, int max_ctas);
  int (*unpack_ghost)(int face, void *array, long long lo, long long hi,
                      const void *packed, cudaStream_t stream, int max_ctas);
} halo_ops;

static inline size_t halo_index(size_t i, size_t j, size_t k) {
  return (i * HALO_M + j) * HALO_M + k;
}

/* The layer (index along face / 2) that face f packs, and the ghost layer on
   the opposite side where it is unpacked. */
static inline size_t halo_face_layer(int face) {
  return face % 2 == 0 ? 1 : HALO_N;
}
static inline size_t halo_ghost_layer(int face) {
  return face % 2 == 0 ? HALO_N + 1 : 0;
}

/* The reference: copies the N x N cells of `layer` along `axis` (the other
   two indices running over the interior, 1..N) from `array` to `packed` in
   C order, as MPI_Pack of the subarray does; with `unpack`, the other way. */
static inline void halo_layer(double *array, int axis, size_t layer,
                              double *packed, int unpack) {
  size_t lo[3] = {1, 1, 1}, hi[3] = {HALO_N, HALO_N, HALO_N};
  size_t i, j, k, n = 0;
  lo[axis] = hi[axis] = layer;
  for (i = lo[0]; i <= hi[0]; ++i)
    for (j = lo[1]; j <= hi[1]; ++j)
      for (k = lo[2]; k <= hi[2]; ++k, ++n) {
        if (unpack)
          array[halo_index(i, j, k)] = packed[n];
        else
          packed[n] = array[halo_index(i, j, k)];
      }
}

typedef struct halo_tally {
  int passed, failed;
} halo_tally;

/* Counts one check: passed when the calls succeeded (`ok`) and the bytes
   are the expected ones. */
static inline void halo_check(halo_tally *t, const char *what, int ok,
                              const void *got, const void *want,
                              size_t bytes) {
  const unsigned char *g = (const unsigned char *)got;
  const unsigned char *w = (const unsigned char *)want;
  size_t i;
  if (!ok) {
    ++t->failed;
    printf("FAIL %s: the call failed\n", what);
    return;
  }
  for (i = 0; i < bytes && g[i] == w[i]; ++i)
    ;
  if (i == bytes) {
    ++t->passed;
    printf("PASS %s\n", what);
  } else {
    ++t->failed;
    printf("FAIL %s: byte %zu of %zu is 0x%02x, expected 0x%02x\n", what, i,
           bytes, g[i], w[i]);
  }
}

#define HALO_CUDA(call)                                                       \
  do {                                                                        \
    cudaError_t halo_e = (call);                                              \
    if (halo_e != cudaSuccess) {                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,           \
              cudaGetErrorString(halo_e));                                    \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

static inline void *halo_host_alloc(size_t bytes) {
  void *p = malloc(bytes);
  if (!p) {
    fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

/* 1 when there is a GPU, whose primary context is then current (as the
   header's functions and ddtc_pack want); else prints "no GPU" and returns
   0. */
static inline int halo_gpu_init(void) {
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  struct cudaDeviceProp prop;
  if (e != cudaSuccess || devices == 0) {
    printf("no GPU (%s)\n", e != cudaSuccess ? cudaGetErrorString(e)
                                             : "no CUDA device");
    return 0;
  }
  HALO_CUDA(cudaSetDevice(0));
  HALO_CUDA(cudaFree(0));
  HALO_CUDA(cudaGetDeviceProperties(&prop, 0));
  printf("GPU: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  return 1;
}

/* Runs every check with `ops`; returns the exit status (0: all passed). */
static inline int halo_run(const halo_ops *ops) {
  double *a = (double *)halo_host_alloc(HALO_ARRAY_BYTES);
  double *b_got = (double *)halo_host_alloc(HALO_ARRAY_BYTES);
  double *b_want = (double *)halo_host_alloc(HALO_ARRAY_BYTES);
  double *want = (double *)halo_host_alloc(HALO_FACE_BYTES);
  double *got = (double *)halo_host_alloc(HALO_FACE_BYTES);
  unsigned char *d_a, *d_b, *d_face[6], *d_frag, *mapped, *d_mapped;
  cudaStream_t stream;
  halo_tally tally = {0, 0};
  char what[128];
  size_t i;
  int f, ok;

  /* A holds a distinct value in every cell, halo included (which must not
     be packed); B holds the poison byte everywhere. */
  for (i = 0; i < (size_t)HALO_M * HALO_M * HALO_M; ++i)
    a[i] = (double)i + 0.25;
  memset(b_want, HALO_POISON, HALO_ARRAY_BYTES);
  HALO_CUDA(cudaStreamCreate(&stream));
  HALO_CUDA(cudaMalloc((void **)&d_a, HALO_ARRAY_BYTES));
  HALO_CUDA(cudaMalloc((void **)&d_b, HALO_ARRAY_BYTES));
  HALO_CUDA(cudaMemcpy(d_a, a, HALO_ARRAY_BYTES, cudaMemcpyHostToDevice));
  HALO_CUDA(cudaMemcpy(d_b, b_want, HALO_ARRAY_BYTES, cudaMemcpyHostToDevice));

  /* Every face into a buffer of device memory. */
  for (f = 0; f < 6; ++f) {
    HALO_CUDA(cudaMalloc((void **)&d_face[f], HALO_FACE_BYTES));
    HALO_CUDA(cudaMemset(d_face[f], HALO_POISON, HALO_FACE_BYTES));
    halo_layer(a, f / 2, halo_face_layer(f), want, 0);
    ok = ops->pack_face(f, d_a, 0, (long long)HALO_FACE_BYTES, d_face[f],
                        stream, 0) == 0;
    HALO_CUDA(cudaStreamSynchronize(stream));
    HALO_CUDA(cudaMemcpy(got, d_face[f], HALO_FACE_BYTES,
                         cudaMemcpyDeviceToHost));
    snprintf(what, sizeof what, "pack face %s into device memory",
             halo_face_names[f]);
    halo_check(&tally, what, ok, got, want, HALO_FACE_BYTES);
  }

  /* The z-low face (8-byte runs 2 KiB apart) straight into mapped pinned
     host memory: the kernel writes over PCIe, no copy afterwards. */
  HALO_CUDA(cudaHostAlloc((void **)&mapped, HALO_FACE_BYTES,
                          cudaHostAllocMapped));
  HALO_CUDA(cudaHostGetDevicePointer((void **)&d_mapped, mapped, 0));
  memset(mapped, HALO_POISON, HALO_FACE_BYTES);
  halo_layer(a, 2, halo_face_layer(4), want, 0);
  ok = ops->pack_face(4, d_a, 0, (long long)HALO_FACE_BYTES, d_mapped, stream,
                      0) == 0;
  HALO_CUDA(cudaStreamSynchronize(stream));
  halo_check(&tally, "pack face zlo into mapped pinned host memory", ok,
             mapped, want, HALO_FACE_BYTES);

  /* The y-low face in four fragments, cut at bytes that are not multiples
     of 8, each launch capped at 2 blocks: a pipeline would send each
     fragment as soon as it is packed. */
  {
    const long long cuts[5] = {0, 131075, 262147, 393209,
                               (long long)HALO_FACE_BYTES};
    int k;
    HALO_CUDA(cudaMalloc((void **)&d_frag, HALO_FACE_BYTES));
    HALO_CUDA(cudaMemset(d_frag, HALO_POISON, HALO_FACE_BYTES));
    halo_layer(a, 1, halo_face_layer(2), want, 0);
    ok = 1;
    for (k = 0; k < 4 && ok; ++k)
      ok = ops->pack_face(2, d_a, cuts[k], cuts[k + 1], d_frag + cuts[k],
                          stream, 2) == 0;
    HALO_CUDA(cudaStreamSynchronize(stream));
    HALO_CUDA(cudaMemcpy(got, d_frag, HALO_FACE_BYTES,
                         cudaMemcpyDeviceToHost));
    halo_check(&tally, "pack face ylo in 4 fragments of 2 blocks", ok, got,
               want, HALO_FACE_BYTES);
  }

  /* Every face into B's ghost layer on the opposite side. */
  ok = 1;
  for (f = 0; f < 6 && ok; ++f)
    ok = ops->unpack_ghost(f, d_b, 0, (long long)HALO_FACE_BYTES, d_face[f],
                           stream, 0) == 0;
  HALO_CUDA(cudaStreamSynchronize(stream));
  HALO_CUDA(cudaMemcpy(b_got, d_b, HALO_ARRAY_BYTES, cudaMemcpyDeviceToHost));
  for (f = 0; f < 6; ++f) {
    halo_layer(a, f / 2, halo_face_layer(f), want, 0);
    halo_layer(b_want, f / 2, halo_ghost_layer(f), want, 1);
    halo_layer(b_got, f / 2, halo_ghost_layer(f), got, 0);
    snprintf(what, sizeof what,
             "unpack face %s into the ghost layer %c = %d",
             halo_face_names[f], "xyz"[f / 2], (int)halo_ghost_layer(f));
    halo_check(&tally, what, ok, got, want, HALO_FACE_BYTES);
  }
  halo_check(&tally, "unpack wrote no other byte of the receiving array", ok,
             b_got, b_want, HALO_ARRAY_BYTES);

  for (f = 0; f < 6; ++f)
    HALO_CUDA(cudaFree(d_face[f]));
  HALO_CUDA(cudaFree(d_frag));
  HALO_CUDA(cudaFreeHost(mapped));
  HALO_CUDA(cudaFree(d_a));
  HALO_CUDA(cudaFree(d_b));
  HALO_CUDA(cudaStreamDestroy(stream));
  free(a);
  free(b_got);
  free(b_want);
  free(want);
  free(got);
  printf("%d passed, %d failed\n", tally.passed, tally.failed);
  return tally.failed ? 1 : 0;
}

#endif /* HALO_COMMON_H */
