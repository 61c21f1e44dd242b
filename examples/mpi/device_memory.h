/* Device memory for the MPI examples, through the CUDA driver API.
 *
 * The driver is loaded at run time: the library named by the environment
 * variable DDTC_CUDA_DRIVER if it is set (in the tests: ddtc's fake driver,
 * which runs without a GPU), libcuda.so.1 otherwise. The functions print a
 * message and end the program when the driver fails: with status 77 ("no
 * GPU", which the tests report as skipped) when there is no driver or no
 * device, with status 1 for any other error.
 *
 * Every function can be called from Fortran through a bind(C) interface:
 * the arguments are passed by value.
 */
#ifndef DDTC_EXAMPLE_DEVICE_MEMORY_H
#define DDTC_EXAMPLE_DEVICE_MEMORY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Loads the driver and makes the primary context of a device current on
 * the calling thread: device (local rank % device count), where the local
 * rank comes from the launcher's environment (Open MPI, MPICH, Slurm), 0
 * without one. Call it once, before MPI_Init, as CUDA-aware MPI programs
 * select their device. */
void dm_init(void);

/* Device memory: allocate (never returns NULL), free. */
void *dm_alloc(size_t bytes);
void dm_free(void *p);

/* Synchronous copies between host and device memory. */
void dm_to_device(void *dst, const void *src, size_t bytes);
void dm_to_host(void *dst, const void *src, size_t bytes);

/* When the environment variable DDTC_EXAMPLE_REQUIRE_DDTC is 1: ends the
 * program with status 1 unless libddtc-mpi is loaded (it exports
 * ddtc_mpi_active(), which must return 1). The tests set it, so that a run
 * that plain MPI served by itself cannot pass: the fake driver's device
 * memory is host memory, which any MPI can read. */
void dm_require_ddtc(void);

#ifdef __cplusplus
}
#endif

#endif
