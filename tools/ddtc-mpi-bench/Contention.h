//===- Contention.h - A kernel that holds part of the GPU while timing ----===//
//
// ddtc-mpi-bench --contend F: an application kernel keeps F of a GPU's SMs
// busy while a sample is timed. The kernel ends by itself: when the host
// sets a flag in mapped memory, or at the latest after a time limit read
// from the GPU's global timer, so that a transfer that waits for it (a
// cudaFree, a device-wide synchronization) is slowed down, visibly, but
// never hangs. Everything it needs is allocated before the first launch and
// freed after the last one ended.
//===----------------------------------------------------------------------===//

#ifndef DDTC_MPI_BENCH_CONTENTION_H
#define DDTC_MPI_BENCH_CONTENTION_H

namespace bench {

class Contention {
public:
  /// Prepares a busy kernel of max(1, round(fraction * SMs)) blocks, one
  /// per SM, on `device`. launches: whether this rank launches it (one rank
  /// per GPU, so that ranks sharing a GPU do not busy it twice).
  void setUp(double fraction, int device, bool launches);
  /// Launches the kernel, ending after at most limitUs, and returns once
  /// all its blocks run (dies when they do not within 10 s).
  void begin(double limitUs);
  /// Stops the kernel and waits for it. False when it had ended by its time
  /// limit first: the sample was not contended all along.
  bool end();
  /// Frees what setUp allocated (no kernel runs then).
  void tearDown();

  bool launches() const { return launching; }
  int blocks() const { return nBlocks; }
  int sms() const { return nSms; }

private:
  void *host = nullptr;         // flags in mapped host memory
  void *hostOnDevice = nullptr; // their address on the device
  void *device = nullptr;       // counters in device memory
  void *stream = nullptr;       // cudaStream_t, non-blocking
  bool launching = false, running = false;
  int nBlocks = 0, nSms = 0;
  unsigned sharedBytes = 0;
};

} // namespace bench

#endif
