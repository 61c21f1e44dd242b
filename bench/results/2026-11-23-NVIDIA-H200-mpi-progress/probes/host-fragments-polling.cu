// 4 MiB host ping-pong in fragments: how the waiting pattern changes the rate.
#include <mpi.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <vector>
#include <algorithm>
static double now() { return MPI_Wtime() * 1e6; }
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long bytes = 4l << 20; int reps = 30;
  char *buf; cudaHostAlloc((void **)&buf, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
  memset(buf, rank, bytes);
  cudaEvent_t ev; cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  cudaEventRecord(ev, 0); cudaDeviceSynchronize();
  // cost of one event query
  double q0 = now(); for (int i = 0; i < 10000; ++i) cudaEventQuery(ev); double qc = (now() - q0) / 10000;
  if (rank == 0) printf("cudaEventQuery %.3f us\n", qc);
  const char *modes[] = {"waitall", "test-each", "test-each+4query", "stagger25us", "stagger25us+test-each+4query"};
  int frags[] = {1, 4, 16};
  for (int m = 0; m < 5; ++m)
    for (int fi = 0; fi < 3; ++fi) {
      int nf = frags[fi]; long fb = bytes / nf;
      std::vector<double> t;
      for (int r = 0; r < reps; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        for (int dir = 0; dir < 2; ++dir) {
          bool sender = (rank == dir);
          std::vector<MPI_Request> q(nf, MPI_REQUEST_NULL);
          bool stagger = m >= 3 && sender;
          double ts = now();
          int posted = 0;
          if (!stagger) {
            for (int k = 0; k < nf; ++k)
              if (sender) MPI_Isend(buf + k * fb, fb, MPI_BYTE, 1 - rank, k, MPI_COMM_WORLD, &q[k]);
              else MPI_Irecv(buf + k * fb, fb, MPI_BYTE, 1 - rank, k, MPI_COMM_WORLD, &q[k]);
            posted = nf;
          }
          if (m == 0) { MPI_Waitall(nf, q.data(), MPI_STATUSES_IGNORE); continue; }
          bool pollEach = m != 3;
          int queries = (m == 2 || m == 4) ? 4 : 0;
          for (;;) {
            if (posted < nf && now() - ts >= 25.0 * (posted + 1)) {
              MPI_Isend(buf + posted * fb, fb, MPI_BYTE, 1 - rank, posted, MPI_COMM_WORLD, &q[posted]);
              ++posted;
            }
            int done = 0;
            if (pollEach) {
              for (int k = 0; k < nf; ++k) { int f; MPI_Test(&q[k], &f, MPI_STATUS_IGNORE); done += f; }
            } else {
              int f; MPI_Testall(nf, q.data(), &f, MPI_STATUSES_IGNORE); done = f ? nf : 0;
            }
            for (int i = 0; i < queries; ++i) cudaEventQuery(ev);
            if (done == nf && posted == nf) break;
          }
        }
        t.push_back((now() - t0) / 2);
      }
      std::sort(t.begin(), t.end());
      if (rank == 0) printf("%-30s fragments %2d  one-way %8.1f us  %6.2f GB/s\n", modes[m], nf, t[reps / 2], bytes / t[reps / 2] / 1e3);
    }
  MPI_Finalize();
}
