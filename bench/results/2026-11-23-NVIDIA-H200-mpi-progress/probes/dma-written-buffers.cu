// Host ping-pong of one message: buffers last written by the CPU (cached)
// against buffers last written by the GPU's DMA (as a staged pipeline's are).
#include <mpi.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <vector>
#include <algorithm>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long sizes[] = {1l << 20, 4l << 20, 16l << 20, 64l << 20};
  int reps = 15;
  char *buf; cudaHostAlloc((void **)&buf, 64l << 20, cudaHostAllocMapped | cudaHostAllocPortable);
  char *dev; cudaMalloc((void **)&dev, 64l << 20);
  cudaMemset(dev, rank + 1, 64l << 20);
  memset(buf, rank, 64l << 20);
  for (int mode = 0; mode < 2; ++mode)
    for (long bytes : sizes) {
      std::vector<double> t;
      for (int r = 0; r < reps; ++r) {
        // before each message: the CPU (mode 0) or the GPU (mode 1) writes
        // the whole buffer on both ranks
        if (mode == 0) memset(buf, r, bytes);
        else { cudaMemcpy(buf, dev, bytes, cudaMemcpyDeviceToHost); }
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == 0) MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        else MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double dt = (MPI_Wtime() - t0) * 1e6;
        double mx; MPI_Reduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        t.push_back(mx);
      }
      std::sort(t.begin(), t.end());
      if (rank == 0)
        printf("%-22s %9ld B  one message %8.1f us  %6.2f GB/s\n",
               mode ? "written by GPU DMA" : "written by the CPU", bytes, t[reps / 2], bytes / t[reps / 2] / 1e3);
    }
  MPI_Finalize();
}
