/* Halo exchange of a 3-d array with the ddtc C API (ddtc.h, libddtc): the
 * types are described by a spec written at run time, committed (their
 * kernels are compiled by NVRTC, or found in ddtc's kernel cache) and used
 * with ddtc_pack and ddtc_unpack. See README.md.
 *
 *   ddtc-example-halo-capi      prints one line per check, then
 *                               "P passed, F failed"; exit status 0 when
 *                               all passed, 77 without a GPU */

#include "halo_common.h"

#include <ddtc/ddtc.h>

/* Face f is packed with faces[f] and unpacked with ghosts[f], the ghost
   layer on the opposite side. */
static ddtc_type faces[6], ghosts[6];

static int report(ddtc_status s, const char *what) {
  if (s == DDTC_SUCCESS)
    return 0;
  fprintf(stderr, "%s: %s: %s\n", what, ddtc_status_name(s),
          ddtc_last_error());
  return 1;
}

static int pack_face(int face, const void *array, long long lo, long long hi,
                     void *packed, cudaStream_t stream, int max_ctas) {
  /* One instance of the type: its extent is the whole array. */
  return report(ddtc_pack(faces[face], array, 1, lo, hi, packed, stream,
                          max_ctas),
                "ddtc_pack");
}

static int unpack_ghost(int face, void *array, long long lo, long long hi,
                        const void *packed, cudaStream_t stream,
                        int max_ctas) {
  return report(ddtc_unpack(ghosts[face], array, 1, lo, hi, packed, stream,
                            max_ctas),
                "ddtc_unpack");
}

/* Appends the binding `name = subarray(...)` of the layer `layer` along
   `axis` (interior cells in the other two dimensions): what halo.ddt says
   for HALO_N = 256. */
static size_t add_layer(char *spec, size_t at, size_t size, const char *name,
                        int axis, int layer) {
  int sizes[3] = {HALO_N, HALO_N, HALO_N}, starts[3] = {1, 1, 1};
  sizes[axis] = 1;
  starts[axis] = layer;
  return at + (size_t)snprintf(
                  spec + at, size - at,
                  "%s = subarray([%d, %d, %d], [%d, %d, %d], [%d, %d, %d], C, "
                  "double)\n",
                  name, HALO_M, HALO_M, HALO_M, sizes[0], sizes[1], sizes[2],
                  starts[0], starts[1], starts[2]);
}

int main(void) {
  char spec[2048], name[32];
  size_t at = 0;
  int f, status;
  ddtc_kernel_info info;
  halo_ops ops;

  if (!halo_gpu_init())
    return 77;
  printf("packing with libddtc %s\n", ddtc_version());
  for (f = 0; f < 6; ++f) {
    snprintf(name, sizeof name, "face_%s", halo_face_names[f]);
    at = add_layer(spec, at, sizeof spec, name, f / 2,
                   (int)halo_face_layer(f));
    /* The ghost layer that receives face f is on the opposite side. */
    snprintf(name, sizeof name, "ghost_%s", halo_face_names[f ^ 1]);
    at = add_layer(spec, at, sizeof spec, name, f / 2,
                   (int)halo_ghost_layer(f));
  }
  for (f = 0; f < 6; ++f) {
    int64_t size = 0;
    snprintf(name, sizeof name, "face_%s", halo_face_names[f]);
    if (report(ddtc_type_from_spec(spec, name, &faces[f]), name) ||
        report(ddtc_type_commit(faces[f]), name))
      return 1;
    snprintf(name, sizeof name, "ghost_%s", halo_face_names[f ^ 1]);
    if (report(ddtc_type_from_spec(spec, name, &ghosts[f]), name) ||
        report(ddtc_type_commit(ghosts[f]), name) ||
        report(ddtc_type_size(ghosts[f], &size), name))
      return 1;
    if (size != (int64_t)HALO_FACE_BYTES) {
      fprintf(stderr, "%s packs %lld bytes, not %zu\n", name,
              (long long)size, HALO_FACE_BYTES);
      return 1;
    }
  }
  /* Commit returns at once, a generic kernel serving the calls while the
     specialized ones compile; waiting here makes the checks use them. When
     they cannot be compiled (no NVRTC), the generic kernel goes on serving. */
  for (f = 0; f < 6; ++f) {
    ddtc_status s = ddtc_type_wait(faces[f]);
    if (s == DDTC_SUCCESS)
      s = ddtc_type_wait(ghosts[f]);
    if (s != DDTC_SUCCESS)
      printf("note: %s: %s; the generic kernel serves the calls\n",
             ddtc_status_name(s), ddtc_last_error());
  }
  if (report(ddtc_type_kernel_info(faces[4], &info), "ddtc_type_kernel_info"))
    return 1;
  printf("face_zlo: kernel shape %s, width %d, sm_%d, origin %d\n",
         info.shape, info.width, info.arch, (int)info.origin);

  ops.pack_face = pack_face;
  ops.unpack_ghost = unpack_ghost;
  status = halo_run(&ops);
  for (f = 0; f < 6; ++f) {
    ddtc_type_free(&faces[f]);
    ddtc_type_free(&ghosts[f]);
  }
  ddtc_finalize();
  return status;
}
