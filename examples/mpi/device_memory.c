/* Device memory for the MPI examples: the CUDA driver API, loaded with
 * dlopen so that the examples build without the CUDA toolkit and run
 * against the real driver or against ddtc's fake one. See device_memory.h. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "device_memory.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few driver types used here (cuda.h, 64-bit). */
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;

#define DM_SKIP 77

static struct {
  CUresult (*init)(unsigned);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetCount)(int *); /* optional */
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*getErrorName)(CUresult, const char **); /* optional */
  CUcontext context;
} dm;

static const char *errorName(CUresult rc) {
  const char *name = NULL;
  if (dm.getErrorName && dm.getErrorName(rc, &name) == 0 && name)
    return name;
  return "unknown error";
}

static void check(CUresult rc, const char *what) {
  if (rc == 0)
    return;
  fprintf(stderr, "device_memory: %s failed: %s (%d)\n", what, errorName(rc),
          rc);
  exit(1);
}

static void *symbol(void *lib, const char *libName, const char *name,
                    int required) {
  void *p = dlsym(lib, name);
  if (!p && required) {
    fprintf(stderr, "device_memory: %s has no %s\n", libName, name);
    exit(1);
  }
  return p;
}

/* The rank of this process among those of its node, from the launcher. */
static int localRank(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK",
                                     "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                                     "SLURM_LOCALID"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i) {
    const char *v = getenv(vars[i]);
    if (v && *v)
      return atoi(v);
  }
  return 0;
}

void dm_init(void) {
  if (dm.context)
    return;
  const char *name = getenv("DDTC_CUDA_DRIVER");
  if (!name || !*name)
    name = "libcuda.so.1";
  void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr,
            "device_memory: cannot load the CUDA driver (%s): %s\n"
            "device_memory: no GPU here; set DDTC_CUDA_DRIVER to the path of "
            "libddtc-fake-cuda.so to run without one. Skipped.\n",
            name, dlerror());
    exit(DM_SKIP);
  }
  *(void **)&dm.init = symbol(lib, name, "cuInit", 1);
  *(void **)&dm.deviceGet = symbol(lib, name, "cuDeviceGet", 1);
  *(void **)&dm.deviceGetCount = symbol(lib, name, "cuDeviceGetCount", 0);
  *(void **)&dm.primaryCtxRetain =
      symbol(lib, name, "cuDevicePrimaryCtxRetain", 1);
  *(void **)&dm.ctxSetCurrent = symbol(lib, name, "cuCtxSetCurrent", 1);
  *(void **)&dm.memAlloc = symbol(lib, name, "cuMemAlloc_v2", 1);
  *(void **)&dm.memFree = symbol(lib, name, "cuMemFree_v2", 1);
  *(void **)&dm.memcpyHtoD = symbol(lib, name, "cuMemcpyHtoD_v2", 1);
  *(void **)&dm.memcpyDtoH = symbol(lib, name, "cuMemcpyDtoH_v2", 1);
  *(void **)&dm.getErrorName = symbol(lib, name, "cuGetErrorName", 0);

  CUresult rc = dm.init(0);
  int count = 1;
  if (rc == 0 && dm.deviceGetCount)
    rc = dm.deviceGetCount(&count);
  if (rc != 0 || count < 1) {
    fprintf(stderr, "device_memory: no CUDA device (%s). Skipped.\n",
            rc != 0 ? errorName(rc) : "the driver reports none");
    exit(DM_SKIP);
  }
  CUdevice device;
  check(dm.deviceGet(&device, localRank() % count), "cuDeviceGet");
  check(dm.primaryCtxRetain(&dm.context, device), "cuDevicePrimaryCtxRetain");
  check(dm.ctxSetCurrent(dm.context), "cuCtxSetCurrent");
}

void *dm_alloc(size_t bytes) {
  dm_init();
  CUdeviceptr p = 0;
  check(dm.memAlloc(&p, bytes ? bytes : 1), "cuMemAlloc");
  return (void *)(uintptr_t)p;
}

void dm_free(void *p) {
  if (p)
    check(dm.memFree((CUdeviceptr)(uintptr_t)p), "cuMemFree");
}

void dm_to_device(void *dst, const void *src, size_t bytes) {
  check(dm.memcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, bytes),
        "cuMemcpyHtoD");
}

void dm_to_host(void *dst, const void *src, size_t bytes) {
  check(dm.memcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, bytes),
        "cuMemcpyDtoH");
}

void dm_require_ddtc(void) {
  const char *v = getenv("DDTC_EXAMPLE_REQUIRE_DDTC");
  if (!v || strcmp(v, "1") != 0)
    return;
  int (*active)(void);
  *(void **)&active = dlsym(RTLD_DEFAULT, "ddtc_mpi_active");
  if (!active) {
    fprintf(stderr, "DDTC_EXAMPLE_REQUIRE_DDTC=1 but libddtc-mpi is not "
                    "loaded (no ddtc_mpi_active): preload it or link it "
                    "before the MPI library\n");
    exit(1);
  }
  if (active() != 1) {
    fprintf(stderr, "DDTC_EXAMPLE_REQUIRE_DDTC=1 but ddtc_mpi_active() "
                    "returns %d\n",
            active());
    exit(1);
  }
}
