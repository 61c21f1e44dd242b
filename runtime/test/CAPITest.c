/*===- CAPITest.c - ddtc.h from C89, against the shared libddtc ------------===*
 *
 * Compiled as C89 with -pedantic-errors: the header is plain C. Linked with
 * libddtc.so only, so it also shows that the C API is exported.
 *===----------------------------------------------------------------------===*/

#include "ddtc/ddtc.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, \
              __LINE__, #cond, ddtc_last_error());                             \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

int main(void) {
  ddtc_type t = NULL;
  int64_t size = 0, extent = 0, lb = 0, tlb = 0, text = 0, bytes = 0;
  ddtc_stats stats;
  ddtc_kernel_info info;
  char buffer[64];
  ddtc_status s;

  EXPECT(ddtc_init() == DDTC_SUCCESS);
  EXPECT(strcmp(ddtc_version(), "") != 0);
  EXPECT(ddtc_type_from_spec("rec = struct([1,2,1], [0,8,16], [double, int, "
                             "char])\nr = resized(0, 24, rec)\n",
                             "r", &t) == DDTC_SUCCESS);
  EXPECT(ddtc_type_size(t, &size) == DDTC_SUCCESS && size == 17);
  EXPECT(ddtc_type_extent(t, &extent) == DDTC_SUCCESS && extent == 24);
  EXPECT(ddtc_type_lb(t, &lb) == DDTC_SUCCESS && lb == 0);
  EXPECT(ddtc_type_true_extent(t, &tlb, &text) == DDTC_SUCCESS && tlb == 0 &&
         text == 17);
  EXPECT(ddtc_type_packed_size(t, 4, &bytes) == DDTC_SUCCESS && bytes == 68);
  EXPECT(ddtc_pack(t, buffer, 1, 0, 17, buffer, NULL, 0) ==
         DDTC_ERROR_NOT_COMMITTED);
  EXPECT(strstr(ddtc_last_error(), "not committed") != NULL);
  EXPECT(ddtc_report_error(DDTC_ERROR_INTERNAL, "from C") ==
         DDTC_ERROR_INTERNAL);
  EXPECT(strcmp(ddtc_last_error(), "from C") == 0);
  s = ddtc_type_commit(t);
  EXPECT(s == DDTC_SUCCESS);
  EXPECT(ddtc_type_kernel_info(t, &info) == DDTC_SUCCESS);
  printf("kernel shape %s, width %d, arch sm_%d, origin %d\n", info.shape,
         info.width, info.arch, (int)info.origin);
  EXPECT(ddtc_get_stats(&stats) == DDTC_SUCCESS);
  EXPECT(ddtc_finalize() == DDTC_SUCCESS);
  EXPECT(ddtc_type_free(&t) == DDTC_SUCCESS && t == NULL);
  printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
