// Host-memory ping-pong of one message against the same bytes in fragments,
// with and without GPU traffic to host memory running meanwhile.
#include <mpi.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <algorithm>
__global__ void spin_copy(const int4 *src, int4 *dst, long n, volatile int *stop) {
  long i0 = blockIdx.x * (long)blockDim.x + threadIdx.x;
  long step = (long)gridDim.x * blockDim.x;
  for (int it = 0; it < 100000 && !*stop; ++it)
    for (long i = i0; i < n; i += step) dst[i] = src[i];
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long bytes = 4l << 20; int reps = 30;
  char *buf; cudaHostAlloc((void **)&buf, bytes, cudaHostAllocMapped);
  memset(buf, rank, bytes);
  // background traffic: device buffer -> mapped host (write) or host->device (read)
  int4 *dev; cudaMalloc((void **)&dev, 64 << 20);
  int4 *hostbg; cudaHostAlloc((void **)&hostbg, 64 << 20, cudaHostAllocMapped);
  int *stop; cudaHostAlloc((void **)&stop, 4, cudaHostAllocMapped);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  const char *modes[] = {"none", "gpu-writes-host", "gpu-reads-host"};
  int frags[] = {1, 2, 4, 8, 16};
  for (int m = 0; m < 3; ++m) {
    if (m > 0) {
      *stop = 0;
      if (m == 1) spin_copy<<<8, 256, 0, s>>>(dev, hostbg, (64 << 20) / 16, stop);
      else spin_copy<<<8, 256, 0, s>>>(hostbg, dev, (64 << 20) / 16, stop);
    }
    for (int fi = 0; fi < 5; ++fi) {
      int nf = frags[fi]; long fb = bytes / nf;
      std::vector<double> t;
      for (int r = 0; r < reps; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        std::vector<MPI_Request> q(nf);
        for (int dir = 0; dir < 2; ++dir) {
          bool sender = (rank == dir);
          for (int k = 0; k < nf; ++k)
            if (sender) MPI_Isend(buf + k * fb, fb, MPI_BYTE, 1 - rank, k, MPI_COMM_WORLD, &q[k]);
            else MPI_Irecv(buf + k * fb, fb, MPI_BYTE, 1 - rank, k, MPI_COMM_WORLD, &q[k]);
          MPI_Waitall(nf, q.data(), MPI_STATUSES_IGNORE);
        }
        t.push_back((MPI_Wtime() - t0) / 2 * 1e6);
      }
      std::sort(t.begin(), t.end());
      if (rank == 0)
        printf("%-16s fragments %2d  one-way %8.1f us  %6.2f GB/s\n", modes[m], nf,
               t[reps / 2], bytes / t[reps / 2] / 1e3);
    }
    if (m > 0) { *stop = 1; cudaStreamSynchronize(s); }
  }
  MPI_Finalize();
}
