/* Two ranks exchange parts of 2-d arrays that live in device memory, with
 * derived datatypes: plain MPI code, as an application would write it. With
 * libddtc-mpi preloaded (or linked before the MPI library) the device
 * buffers are packed and unpacked on the GPU by ddtc's kernels; without it
 * this program needs a CUDA-aware MPI.
 *
 * Every received byte is copied back to the host and compared with what
 * must have arrived, guard elements around it included. Rank 0 prints
 * "vector_exchange: N checks passed" when every check of both ranks passed;
 * the status is 1 on any mismatch, 77 when there is no GPU.
 *
 * Run: mpirun -n 2 -x LD_PRELOAD=libddtc-mpi.so ./ddtc-example-mpi-vector-exchange
 */
#include "device_memory.h"

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  ROWS = 48,  /* the array each rank holds: ROWS x COLS doubles, row-major */
  COLS = 64,
  WIDTH = 3,  /* columns in the block that is sent */
  SEND_COL = 5,  /* first column of the block sent */
  RECV_COL = 40, /* first column where the other rank's block arrives */
  GUARD = 8,  /* elements after each received buffer that must stay as they are */
  TN = 16,    /* the square block that is transposed */
  PARTICLES = 100
};

/* What the sender holds, and the two fields of it the receiver keeps. */
typedef struct {
  double x;
  double v[3];
  int id;
  int flags;
} particle;

typedef struct {
  double x;
  int id; /* followed by 4 bytes of padding, which no receive may write */
} sample;

static int rank, passed, failed;

static double value(int r, int i, int j) {
  return r * 100000.0 + i * 100.0 + j + 0.25;
}

static void report(int ok, const char *what) {
  printf("%s rank %d: %s\n", ok ? "PASS" : "FAIL", rank, what);
  if (ok)
    ++passed;
  else
    ++failed;
}

/* Compares `bytes` bytes of device memory with what is expected there. */
static void expect(const char *what, const void *device, const void *expected,
                   size_t bytes) {
  unsigned char *got = malloc(bytes);
  dm_to_host(got, device, bytes);
  const unsigned char *want = expected;
  size_t bad = 0, first = 0;
  for (size_t k = 0; k < bytes; ++k)
    if (got[k] != want[k] && bad++ == 0)
      first = k;
  if (bad == 0) {
    printf("PASS rank %d: %s (%zu bytes)\n", rank, what, bytes);
    ++passed;
  } else {
    printf("FAIL rank %d: %s: %zu of %zu bytes differ, the first at byte %zu "
           "(0x%02x, expected 0x%02x)\n",
           rank, what, bad, bytes, first, got[first], want[first]);
    ++failed;
  }
  free(got);
}

static void fill(double *a, size_t n, double v) {
  for (size_t k = 0; k < n; ++k)
    a[k] = v;
}

int main(int argc, char **argv) {
  dm_init();
  MPI_Init(&argc, &argv);
  dm_require_ddtc();
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0)
      fprintf(stderr, "vector_exchange: run it on 2 ranks (not %d)\n", size);
    MPI_Finalize();
    return 1;
  }
  const int other = 1 - rank;

  /* This rank's array, on the device. */
  const size_t arrayBytes = sizeof(double) * ROWS * COLS;
  double *host = malloc(arrayBytes);
  for (int i = 0; i < ROWS; ++i)
    for (int j = 0; j < COLS; ++j)
      host[i * COLS + j] = value(rank, i, j);
  double *a = dm_alloc(arrayBytes);
  dm_to_device(a, host, arrayBytes);

  /* A block of WIDTH columns, and a contiguous type of the same signature. */
  MPI_Datatype columns, flat;
  MPI_Type_vector(ROWS, WIDTH, COLS, MPI_DOUBLE, &columns);
  MPI_Type_contiguous(ROWS * WIDTH, MPI_DOUBLE, &flat);
  MPI_Type_commit(&columns);
  MPI_Type_commit(&flat);

  /* 1. Sendrecv: the column block arrives as ROWS x WIDTH contiguous rows. */
  {
    const size_t n = ROWS * WIDTH + GUARD;
    double *want = malloc(n * sizeof(double));
    fill(want, n, -1.0);
    double *r = dm_alloc(n * sizeof(double));
    dm_to_device(r, want, n * sizeof(double));
    MPI_Status st;
    MPI_Sendrecv(a + SEND_COL, 1, columns, other, 1, r, 1, flat, other, 1,
                 MPI_COMM_WORLD, &st);
    for (int i = 0; i < ROWS; ++i)
      for (int j = 0; j < WIDTH; ++j)
        want[i * WIDTH + j] = value(other, i, SEND_COL + j);
    expect("MPI_Sendrecv column block (vector) into a contiguous type", r,
           want, n * sizeof(double));
    int count = -1;
    MPI_Get_count(&st, flat, &count);
    report(st.MPI_SOURCE == other && st.MPI_TAG == 1 && count == 1,
           "MPI_Sendrecv status: source, tag, MPI_Get_count");
    dm_free(r);
    free(want);
  }

  /* 2. Isend/Irecv + Waitall: the block lands in the columns RECV_COL... of
   * the receiver's own array; every other element stays. */
  {
    double *want = malloc(arrayBytes);
    fill(want, (size_t)ROWS * COLS, -2.0);
    double *b = dm_alloc(arrayBytes);
    dm_to_device(b, want, arrayBytes);
    MPI_Request req[2];
    MPI_Status st[2];
    MPI_Irecv(b + RECV_COL, 1, columns, other, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(a + SEND_COL, 1, columns, other, 2, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, st);
    for (int i = 0; i < ROWS; ++i)
      for (int j = 0; j < WIDTH; ++j)
        want[i * COLS + RECV_COL + j] = value(other, i, SEND_COL + j);
    expect("MPI_Isend/MPI_Irecv/MPI_Waitall column block into a column block",
           b, want, arrayBytes);
    int elements = -1;
    MPI_Get_elements(&st[0], MPI_DOUBLE, &elements);
    report(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL &&
               st[0].MPI_SOURCE == other && st[0].MPI_TAG == 2 &&
               elements == ROWS * WIDTH,
           "MPI_Waitall requests and status: source, tag, MPI_Get_elements");
    dm_free(b);
    free(want);
  }

  /* 3. A struct type: two fields of each particle, into a smaller struct. */
  {
    particle *ps = malloc(sizeof(particle) * PARTICLES);
    for (int k = 0; k < PARTICLES; ++k) {
      ps[k].x = value(rank, k, 0);
      ps[k].v[0] = ps[k].v[1] = ps[k].v[2] = -3.0;
      ps[k].id = rank * 1000 + k;
      ps[k].flags = -4;
    }
    particle *dps = dm_alloc(sizeof(particle) * PARTICLES);
    dm_to_device(dps, ps, sizeof(particle) * PARTICLES);

    int lengths[2] = {1, 1};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
    MPI_Aint from[2] = {offsetof(particle, x), offsetof(particle, id)};
    MPI_Aint to[2] = {offsetof(sample, x), offsetof(sample, id)};
    MPI_Datatype s1, r1, sendType, recvType;
    MPI_Type_create_struct(2, lengths, from, types, &s1);
    MPI_Type_create_resized(s1, 0, sizeof(particle), &sendType);
    MPI_Type_create_struct(2, lengths, to, types, &r1);
    MPI_Type_create_resized(r1, 0, sizeof(sample), &recvType);
    MPI_Type_commit(&sendType);
    MPI_Type_commit(&recvType);

    const size_t bytes = sizeof(sample) * (PARTICLES + 1);
    unsigned char *want = malloc(bytes);
    memset(want, 0xEE, bytes);
    sample *ds = dm_alloc(bytes);
    dm_to_device(ds, want, bytes);
    MPI_Sendrecv(dps, PARTICLES, sendType, other, 3, ds, PARTICLES, recvType,
                 other, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < PARTICLES; ++k) {
      double x = value(other, k, 0);
      int id = other * 1000 + k;
      memcpy(want + k * sizeof(sample) + offsetof(sample, x), &x, sizeof x);
      memcpy(want + k * sizeof(sample) + offsetof(sample, id), &id, sizeof id);
    }
    expect("MPI_Sendrecv struct (2 fields of 40-byte particles) into a struct "
           "of another layout",
           ds, want, bytes);
    MPI_Type_free(&s1);
    MPI_Type_free(&r1);
    MPI_Type_free(&sendType);
    MPI_Type_free(&recvType);
    dm_free(ds);
    dm_free(dps);
    free(want);
    free(ps);
  }

  /* 4. Transpose: a TN x TN block sent column by column, received as
   * contiguous rows. */
  {
    MPI_Datatype column, column1, byColumns, square;
    MPI_Type_vector(TN, 1, COLS, MPI_DOUBLE, &column);
    MPI_Type_create_resized(column, 0, sizeof(double), &column1);
    MPI_Type_contiguous(TN, column1, &byColumns);
    MPI_Type_contiguous(TN * TN, MPI_DOUBLE, &square);
    MPI_Type_commit(&byColumns);
    MPI_Type_commit(&square);
    const int r0 = 7, c0 = 11;
    const size_t n = TN * TN + GUARD;
    double *want = malloc(n * sizeof(double));
    fill(want, n, -5.0);
    double *t = dm_alloc(n * sizeof(double));
    dm_to_device(t, want, n * sizeof(double));
    MPI_Request req[2];
    MPI_Irecv(t, 1, square, other, 4, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(a + r0 * COLS + c0, 1, byColumns, other, 4, MPI_COMM_WORLD,
              &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < TN; ++i)
      for (int j = 0; j < TN; ++j)
        want[i * TN + j] = value(other, r0 + j, c0 + i);
    expect("MPI_Isend/MPI_Irecv transpose of a 16 x 16 block", t, want,
           n * sizeof(double));
    MPI_Type_free(&column);
    MPI_Type_free(&column1);
    MPI_Type_free(&byColumns);
    MPI_Type_free(&square);
    dm_free(t);
    free(want);
  }

  /* The sender's array must be as it was. */
  expect("the sent array is unchanged", a, host, arrayBytes);

  MPI_Type_free(&columns);
  MPI_Type_free(&flat);
  dm_free(a);
  free(host);

  int counts[2] = {passed, failed}, total[2];
  MPI_Allreduce(counts, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total[1] == 0)
      printf("vector_exchange: %d checks passed\n", total[0]);
    else
      printf("vector_exchange: %d of %d checks FAILED\n", total[1],
             total[0] + total[1]);
  }
  MPI_Finalize();
  return total[1] == 0 ? 0 : 1;
}
