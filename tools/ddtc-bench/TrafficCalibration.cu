//===- TrafficCalibration.cu - The traffic model's assumptions, measured --===//
//
// Each pattern touches every k-th 32-byte sector of a buffer, all of the
// sector or a part of it, with 16- or 4-byte accesses of consecutive lanes.
// Reads fold what they load into one word per block (checked against the
// host's fold of the fill); writes go to a poisoned buffer, and every word is
// checked afterwards (written where the pattern says, poison elsewhere).
//===----------------------------------------------------------------------===//

#include "BenchCuda.h"
#include "TrafficCalibration.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ddtc {

namespace {

constexpr long long kSector = 32;
constexpr unsigned kPoisonWord = 0xA5A5A5A5u;
constexpr unsigned kSeed = 0x2545F491u;

enum class Target { DeviceRead, DeviceWrite, HostWrite };

const char *targetName(Target t) {
  switch (t) {
  case Target::DeviceRead:
    return "device read";
  case Target::DeviceWrite:
    return "device write";
  case Target::HostWrite:
    return "mapped host write";
  }
  return "?";
}

struct Pattern {
  const char *name;
  Target target;
  int everyK;         // every k-th sector (a power of 2)
  int bytesPerSector; // accessed at the start of each chosen sector
  int accessBytes;    // 16 or 4, per lane
  // Sparse partial sectors (writes): of the chosen sectors, every
  // partialEveryK-th (a power of 2) gets only its first partialBytes, as
  // the edges of runs amid whole sectors; 0 for none.
  int partialEveryK = 0;
  int partialBytes = 0;
};

/// The value of 4-byte word `w` (of the fill, and of what writes store).
__host__ __device__ unsigned wordValue(long long w) {
  unsigned long long x = (unsigned long long)w * 0x9E3779B97F4A7C15ull + kSeed;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  return (unsigned)(x >> 32) | 1u;
}

/// Whether the pattern (k, bytes per sector, sparse partial sectors) covers
/// 4-byte word `w`.
__host__ __device__ bool coversWord(long long w, int everyK, int bytesPerSector,
                                    int partialEveryK, int partialBytes) {
  long long sector = w / (kSector / 4);
  if (sector % everyK != 0)
    return false;
  const bool partial =
      partialEveryK > 0 && (sector / everyK) % partialEveryK == 0;
  return (w % (kSector / 4)) * 4 < (partial ? partialBytes : bytesPerSector);
}

__device__ unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }
__device__ unsigned fold(unsigned v) { return v; }

template <typename T> __device__ T valueAt(long long word);
template <> __device__ uint4 valueAt<uint4>(long long w) {
  return make_uint4(wordValue(w), wordValue(w + 1), wordValue(w + 2),
                    wordValue(w + 3));
}
template <> __device__ unsigned valueAt<unsigned>(long long w) {
  return wordValue(w);
}

/// Index (in T) of access i: item i of its sector, sectors k apart. Shifts,
/// not divisions, so the address math stays off the critical path.
template <typename T>
__device__ long long accessIndex(long long i, int kShift, int perShift) {
  constexpr long long perSectorT = kSector / sizeof(T);
  long long sector = (i >> perShift) << kShift;
  return sector * perSectorT + (i & ((1ll << perShift) - 1));
}

__global__ void fillWords(unsigned *p, long long words) {
  for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
       w < words; w += (long long)gridDim.x * blockDim.x)
    p[w] = wordValue(w);
}

template <typename T>
__global__ void readPattern(const T *buf, long long accesses, int kShift,
                            int perShift, unsigned *blockFolds) {
  __shared__ unsigned blockFold;
  if (threadIdx.x == 0)
    blockFold = 0;
  __syncthreads();
  unsigned acc = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
       i < accesses; i += (long long)gridDim.x * blockDim.x)
    acc ^= fold(buf[accessIndex<T>(i, kShift, perShift)]);
  atomicXor(&blockFold, acc);
  __syncthreads();
  if (threadIdx.x == 0)
    blockFolds[blockIdx.x] = blockFold;
}

template <typename T>
__global__ void writePattern(T *buf, long long accesses, int kShift,
                             int perShift, long long partialMask,
                             int partialBytes) {
  constexpr long long wordsPerT = sizeof(T) / 4;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
       i < accesses; i += (long long)gridDim.x * blockDim.x) {
    // Sparse partial sectors: past their first partialBytes, nothing.
    if (partialMask >= 0 && ((i >> perShift) & partialMask) == 0 &&
        (i & ((1ll << perShift) - 1)) * (long long)sizeof(T) >= partialBytes)
      continue;
    long long at = accessIndex<T>(i, kShift, perShift);
    buf[at] = valueAt<T>(at * wordsPerT);
  }
}

/// Counts the words of a written buffer that differ from what the pattern
/// left there: its values where it wrote, the poison elsewhere.
__global__ void countWrongWords(const unsigned *p, long long words, int everyK,
                                int bytesPerSector, int partialEveryK,
                                int partialBytes, unsigned long long *wrong) {
  for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
       w < words; w += (long long)gridDim.x * blockDim.x) {
    unsigned want =
        coversWord(w, everyK, bytesPerSector, partialEveryK, partialBytes)
            ? wordValue(w)
            : kPoisonWord;
    if (p[w] != want)
      atomicAdd(wrong, 1ull);
  }
}

int log2Exact(long long v) {
  int s = 0;
  while ((1ll << s) < v)
    ++s;
  return s;
}

/// Blocks of 256 threads that fill the GPU once (the loops stride the grid).
template <typename Kernel> int fullGrid(Kernel kernel) {
  int device = 0, sms = 0, perSm = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK_CUDA(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, 256, 0));
  return sms * std::max(perSm, 1);
}

struct Measured {
  Pattern pattern;
  long long usefulBytes = 0, sectorBytes = 0;
  double us = 0;
  bool ok = false;
};

/// Runs `p` once on a poisoned or filled buffer and checks it, then times it.
template <typename T>
Measured measure(const Pattern &p, unsigned char *buf, long long bytes,
                 int reps) {
  Measured m;
  m.pattern = p;
  const long long sectors = bytes / kSector / p.everyK;
  const long long perSector = p.bytesPerSector / p.accessBytes;
  const long long accesses = sectors * perSector;
  const int kShift = log2Exact(p.everyK), perShift = log2Exact(perSector);
  m.usefulBytes = sectors * p.bytesPerSector;
  if (p.partialEveryK > 0)
    m.usefulBytes -=
        sectors / p.partialEveryK * (p.bytesPerSector - p.partialBytes);
  m.sectorBytes = sectors * kSector;
  const long long words = bytes / 4;
  if (p.target == Target::DeviceRead) {
    const int grid = fullGrid(readPattern<T>);
    unsigned *folds = nullptr;
    CHECK_CUDA(cudaMalloc(&folds, grid * sizeof(unsigned)));
    CHECK_CUDA(cudaMemset(folds, 0xA5, grid * sizeof(unsigned)));
    fillWords<<<1024, 256>>>((unsigned *)buf, words);
    auto run = [&] {
      readPattern<T>
          <<<grid, 256>>>((const T *)buf, accesses, kShift, perShift, folds);
    };
    run();
    CHECK_CUDA(cudaGetLastError());
    std::vector<unsigned> got(grid);
    CHECK_CUDA(cudaMemcpy(got.data(), folds, grid * sizeof(unsigned),
                          cudaMemcpyDeviceToHost));
    unsigned gotFold = 0, wantFold = 0;
    for (unsigned f : got)
      gotFold ^= f;
    for (long long s = 0; s < words / (kSector / 4); s += p.everyK)
      for (long long w = 0; w < p.bytesPerSector / 4; ++w)
        wantFold ^= wordValue(s * (kSector / 4) + w);
    m.ok = gotFold == wantFold;
    m.us = timeUs(run, reps);
    CHECK_CUDA(cudaFree(folds));
    return m;
  }
  const int grid = fullGrid(writePattern<T>);
  const long long partialMask = p.partialEveryK > 0 ? p.partialEveryK - 1 : -1;
  auto run = [&] {
    writePattern<T><<<grid, 256>>>((T *)buf, accesses, kShift, perShift,
                                   partialMask, p.partialBytes);
  };
  if (p.target == Target::DeviceWrite) {
    CHECK_CUDA(cudaMemset(buf, 0xA5, bytes));
  } else {
    std::memset(buf, 0xA5, bytes);
  }
  run();
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  if (p.target == Target::DeviceWrite) {
    unsigned long long *wrong = nullptr, count = 1;
    CHECK_CUDA(cudaMalloc(&wrong, sizeof *wrong));
    CHECK_CUDA(cudaMemset(wrong, 0, sizeof *wrong));
    countWrongWords<<<1024, 256>>>((const unsigned *)buf, words, p.everyK,
                                   p.bytesPerSector, p.partialEveryK,
                                   p.partialBytes, wrong);
    CHECK_CUDA(cudaMemcpy(&count, wrong, sizeof count, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaFree(wrong));
    m.ok = count == 0;
  } else {
    const unsigned *host = (const unsigned *)buf;
    m.ok = true;
    for (long long w = 0; w < words && m.ok; ++w)
      m.ok =
          host[w] == (coversWord(w, p.everyK, p.bytesPerSector,
                                 p.partialEveryK, p.partialBytes)
                          ? wordValue(w)
                          : kPoisonWord);
  }
  m.us = timeUs(run, reps);
  return m;
}

const std::vector<Pattern> &patterns() {
  static const std::vector<Pattern> all = {
      {"read every sector", Target::DeviceRead, 1, 32, 16},
      {"read every 2nd sector", Target::DeviceRead, 2, 32, 16},
      {"read every 4th sector", Target::DeviceRead, 4, 32, 16},
      {"read every 8th sector", Target::DeviceRead, 8, 32, 16},
      {"read every 16th sector", Target::DeviceRead, 16, 32, 16},
      {"read every 32nd sector", Target::DeviceRead, 32, 32, 16},
      {"read 4 B of every sector", Target::DeviceRead, 1, 4, 4},
      {"read 4 B of every 4th", Target::DeviceRead, 4, 4, 4},
      {"write every sector", Target::DeviceWrite, 1, 32, 16},
      {"write every sector, 4 B", Target::DeviceWrite, 1, 32, 4},
      {"write every 2nd sector", Target::DeviceWrite, 2, 32, 16},
      {"write every 4th sector", Target::DeviceWrite, 4, 32, 16},
      {"write every 8th sector", Target::DeviceWrite, 8, 32, 16},
      {"write 16 B of every sector", Target::DeviceWrite, 1, 16, 16},
      {"write 4 B of every sector", Target::DeviceWrite, 1, 4, 4},
      {"write 4 B of every 4th", Target::DeviceWrite, 4, 4, 4},
      // Whole sectors with one in 8 or 32 written 16 bytes in part, as the
      // edges of runs of a few hundred bytes: what one partial sector costs
      // amid whole ones (reported, not used by the traffic model).
      {"write all, 1 in 8 half", Target::DeviceWrite, 1, 32, 16, 8, 16},
      {"write all, 1 in 32 half", Target::DeviceWrite, 1, 32, 16, 32, 16},
      {"write every sector", Target::HostWrite, 1, 32, 16},
      {"write every sector, 4 B", Target::HostWrite, 1, 32, 4},
      {"write every 2nd sector", Target::HostWrite, 2, 32, 16},
      {"write every 4th sector", Target::HostWrite, 4, 32, 16},
      {"write 16 B of every sector", Target::HostWrite, 1, 16, 16},
      {"write 4 B of every sector", Target::HostWrite, 1, 4, 4},
  };
  return all;
}

std::string json(const std::string &device, double memcpyTrafficGBps,
                 double d2hGBps, long long deviceBytes, long long hostBytes,
                 const std::vector<Measured> &ms,
                 const std::vector<double> &vsBase,
                 const std::vector<double> &vsModel) {
  std::ostringstream os;
  os << "{\n \"device\": \"" << device << "\",\n"
     << " \"device_bytes\": " << deviceBytes << ",\n"
     << " \"host_bytes\": " << hostBytes << ",\n"
     << " \"memcpy_d2d_traffic_GBps\": " << memcpyTrafficGBps << ",\n"
     << " \"memcpy_d2h_GBps\": " << d2hGBps << ",\n"
     << " \"patterns\": [\n";
  for (size_t i = 0; i < ms.size(); ++i) {
    const Measured &m = ms[i];
    os << "  {\"name\": \"" << m.pattern.name << "\", \"target\": \""
       << targetName(m.pattern.target)
       << "\", \"every_k\": " << m.pattern.everyK
       << ", \"bytes_per_sector\": " << m.pattern.bytesPerSector
       << ", \"access_bytes\": " << m.pattern.accessBytes
       << ", \"partial_every_k\": " << m.pattern.partialEveryK
       << ", \"partial_bytes\": " << m.pattern.partialBytes
       << ", \"useful_bytes\": " << m.usefulBytes
       << ", \"sector_bytes\": " << m.sectorBytes << ", \"us\": " << m.us
       << ", \"useful_GBps\": " << m.usefulBytes / m.us / 1e3
       << ", \"sector_GBps\": " << m.sectorBytes / m.us / 1e3
       << ", \"vs_base\": " << vsBase[i] << ", \"vs_model\": " << vsModel[i]
       << ", \"check\": \"" << (m.ok ? "passed" : "FAILED") << "\"}"
       << (i + 1 < ms.size() ? "," : "") << "\n";
  }
  os << " ]\n}\n";
  return os.str();
}

} // namespace

int runTrafficCalibration(const std::string &outPath, int reps,
                          long long deviceMiB, long long hostMiB) {
  // Whole MiB: every pattern's k (at most 32 sectors, 1 KiB) divides them.
  const long long deviceBytes = deviceMiB << 20, hostBytes = hostMiB << 20;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  unsigned char *dev = nullptr, *devCopy = nullptr, *host = nullptr;
  CHECK_CUDA(cudaMalloc(&dev, deviceBytes));
  CHECK_CUDA(cudaMalloc(&devCopy, deviceBytes / 2));
  CHECK_CUDA(cudaHostAlloc(&host, hostBytes, cudaHostAllocMapped));

  // The references: a D2D copy moving deviceBytes of traffic (half read,
  // half written), as the traffic ratio assumes; a pinned D2H copy.
  const double memcpyUs = timeUs(
      [&] {
        cudaMemcpyAsync(devCopy, dev, deviceBytes / 2,
                        cudaMemcpyDeviceToDevice);
      },
      reps);
  const double memcpyTrafficGBps = deviceBytes / memcpyUs / 1e3;
  const double d2hUs = timeUs(
      [&] { cudaMemcpyAsync(host, dev, hostBytes, cudaMemcpyDeviceToHost); },
      std::max(3, reps / 2));
  const double d2hGBps = hostBytes / d2hUs / 1e3;
  CHECK_CUDA(cudaFree(devCopy));

  std::printf("device: %s; %lld MiB of device memory, %lld MiB of mapped "
              "pinned host memory\n",
              prop.name, deviceMiB, hostMiB);
  std::printf("cudaMemcpy D2D: %.1f GB/s of traffic (read + write); pinned "
              "D2H: %.1f GB/s\n",
              memcpyTrafficGBps, d2hGBps);
  std::printf("%-18s %-27s %9s %9s %9s %9s %9s %7s %7s\n", "target", "pattern",
              "MiB", "sect MiB", "us", "GB/s", "sect GB/s", "vs base",
              "vs mdl");
  std::vector<Measured> ms;
  std::vector<double> vsBase, vsModel;
  int failures = 0;
  double base = 0;
  Target baseTarget = Target::DeviceRead;
  for (const Pattern &p : patterns()) {
    const bool onHost = p.target == Target::HostWrite;
    unsigned char *buf = onHost ? host : dev;
    const long long bytes = onHost ? hostBytes : deviceBytes;
    Measured m = p.accessBytes == 16 ? measure<uint4>(p, buf, bytes, reps)
                                     : measure<unsigned>(p, buf, bytes, reps);
    const double sectorGBps = m.sectorBytes / m.us / 1e3;
    // The first pattern of each target (every sector, whole) is its base.
    if (ms.empty() || p.target != baseTarget) {
      base = sectorGBps;
      baseTarget = p.target;
    }
    // What the model predicts: device patterns move their sectors at the
    // memcpy traffic rate, host writes their useful bytes at the D2H rate.
    const double modelUs = onHost ? m.usefulBytes / d2hGBps / 1e3
                                  : m.sectorBytes / memcpyTrafficGBps / 1e3;
    vsBase.push_back(sectorGBps / base);
    vsModel.push_back(modelUs / m.us);
    failures += !m.ok;
    std::printf("%-18s %-27s %9.1f %9.1f %9.1f %9.1f %9.1f %7.3f %7.3f%s\n",
                targetName(p.target), p.name, m.usefulBytes / 1048576.0,
                m.sectorBytes / 1048576.0, m.us, m.usefulBytes / m.us / 1e3,
                sectorGBps, vsBase.back(), vsModel.back(),
                m.ok ? "" : "  CHECK FAILED");
    std::fflush(stdout);
    ms.push_back(m);
  }
  // One partial sector amid whole ones: the pattern's time over the base's,
  // spread over its partial sectors (1 in k of them), in whole sectors.
  for (size_t i = 0; i < ms.size(); ++i)
    if (ms[i].pattern.partialEveryK > 0 && vsBase[i] > 0)
      std::printf("%s: a sector written %d bytes in part amid whole ones "
                  "costs %.2f whole sector writes\n",
                  ms[i].pattern.name, ms[i].pattern.partialBytes,
                  1 + ms[i].pattern.partialEveryK * (1 / vsBase[i] - 1));
  CHECK_CUDA(cudaFree(dev));
  CHECK_CUDA(cudaFreeHost(host));
  std::ofstream(outPath) << json(prop.name, memcpyTrafficGBps, d2hGBps,
                                 deviceBytes, hostBytes, ms, vsBase, vsModel);
  std::printf("%d patterns checked, %d failed\n", (int)ms.size(), failures);
  return failures ? 1 : 0;
}

} // namespace ddtc
