/* Halo exchange of a 3-d array with the header `ddtc --emit=header` makes
 * from halo.ddt (halo_faces.h, generated at build time). The header embeds
 * each type's pack and unpack kernels and launches them through the CUDA
 * driver API: at run time the program needs the driver (libcuda) and no
 * part of ddtc. See README.md.
 *
 *   ddtc-example-halo-header      prints one line per check, then
 *                                 "P passed, F failed"; exit status 0 when
 *                                 all passed, 77 without a GPU */

#include "halo_common.h"
#include "halo_faces.h"

typedef CUresult (*pack_fn)(const void *origin, long long count, long long lo,
                            long long hi, void *packed, CUstream stream,
                            int max_ctas);
typedef CUresult (*unpack_fn)(void *origin, long long count, long long lo,
                              long long hi, const void *packed,
                              CUstream stream, int max_ctas);

/* Face f is packed with its face type and unpacked with the ghost layer on
   the opposite side (the x-low face fills the x-high ghost layer). */
static const pack_fn face_pack[6] = {
    ddtc_face_xlo_pack, ddtc_face_xhi_pack, ddtc_face_ylo_pack,
    ddtc_face_yhi_pack, ddtc_face_zlo_pack, ddtc_face_zhi_pack};
static const unpack_fn ghost_unpack[6] = {
    ddtc_ghost_xhi_unpack, ddtc_ghost_xlo_unpack, ddtc_ghost_yhi_unpack,
    ddtc_ghost_ylo_unpack, ddtc_ghost_zhi_unpack, ddtc_ghost_zlo_unpack};

static int report(CUresult r, const char *what, int face) {
  const char *name = "unknown error";
  if (r == CUDA_SUCCESS)
    return 0;
  cuGetErrorName(r, &name);
  fprintf(stderr, "%s of face %s failed: %s\n", what, halo_face_names[face],
          name);
  return 1;
}

static int pack_face(int face, const void *array, long long lo, long long hi,
                     void *packed, cudaStream_t stream, int max_ctas) {
  /* One instance of the type: its extent is the whole array. */
  return report(face_pack[face](array, 1, lo, hi, packed, stream, max_ctas),
                "pack", face);
}

static int unpack_ghost(int face, void *array, long long lo, long long hi,
                        const void *packed, cudaStream_t stream,
                        int max_ctas) {
  return report(
      ghost_unpack[face](array, 1, lo, hi, packed, stream, max_ctas),
      "unpack", face);
}

int main(void) {
  halo_ops ops;
  if (!halo_gpu_init())
    return 77;
  if (ddtc_face_xlo_size() != (long long)HALO_FACE_BYTES ||
      ddtc_face_xlo_extent() != (long long)HALO_ARRAY_BYTES) {
    fprintf(stderr, "halo_faces.h was made for another array size than "
                    "HALO_N = %d\n", HALO_N);
    return 1;
  }
  printf("packing with the kernels of halo_faces.h\n");
  ops.pack_face = pack_face;
  ops.unpack_ghost = unpack_ghost;
  return halo_run(&ops);
}
