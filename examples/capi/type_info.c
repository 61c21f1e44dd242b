/* type_info: the layout of a datatype through the ddtc C API.
 *
 *   ddtc-type-info ['NAME = SPEC' [COUNT]]
 *
 * Builds the type from a one-line spec (default: a 3-d halo face), prints
 * the library's version and the type's size, bounds and packed size. Needs
 * no GPU: a type is described before it is committed. See README.md for how
 * this folder is built against an installed ddtc. */

#include <ddtc/ddtc.h>

#include <stdio.h>
#include <stdlib.h>

static int check(ddtc_status status, const char *what) {
  if (status == DDTC_SUCCESS)
    return 1;
  fprintf(stderr, "ddtc-type-info: %s: %s: %s\n", what,
          ddtc_status_name(status), ddtc_last_error());
  return 0;
}

int main(int argc, char **argv) {
  const char *spec =
      argc > 1 ? argv[1]
               : "face = subarray([64, 64, 64], [1, 62, 62], [0, 1, 1], C, "
                 "double)";
  int64_t count = argc > 2 ? strtoll(argv[2], NULL, 10) : 1;
  ddtc_type type = NULL;
  int64_t size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  int64_t packed = 0;

  printf("ddtc %s\n", ddtc_version());
  if (!check(ddtc_type_from_spec(spec, NULL, &type), "the spec"))
    return 1;
  if (!check(ddtc_type_size(type, &size), "ddtc_type_size") ||
      !check(ddtc_type_lb(type, &lb), "ddtc_type_lb") ||
      !check(ddtc_type_extent(type, &extent), "ddtc_type_extent") ||
      !check(ddtc_type_true_extent(type, &true_lb, &true_extent),
             "ddtc_type_true_extent") ||
      !check(ddtc_type_packed_size(type, count, &packed),
             "ddtc_type_packed_size")) {
    ddtc_type_free(&type);
    return 1;
  }
  printf("%s\n", spec);
  printf("size %lld, lb %lld, extent %lld, true lb %lld, true extent %lld\n",
         (long long)size, (long long)lb, (long long)extent, (long long)true_lb,
         (long long)true_extent);
  printf("%lld instance(s) pack into %lld bytes\n", (long long)count,
         (long long)packed);
  ddtc_type_free(&type);
  return 0;
}
