// A commit of a type seen before, right after the parse of its spec (the
// cache hit of ddtc-bench, alone): the spec file of one layout, 30 new
// handles each parsed then committed; prints the median, least and most
// microseconds of the commits.
//   cc -O2 -I runtime/include/ddtc commit-hit.c -L LIB -lddtc -o commit-hit
//   LD_LIBRARY_PATH=LIB ./commit-hit SPEC_FILE
#include <ddtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double nowUs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int byValue(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: commit-hit SPEC_FILE (the type is named t)\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *spec = malloc((size_t)n + 1);
  if (fread(spec, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "%s: short read\n", argv[1]);
    return 1;
  }
  spec[n] = 0;
  fclose(f);
  ddtc_type first;
  if (ddtc_type_from_spec(spec, "t", &first) || ddtc_type_commit(first) ||
      ddtc_type_wait(first)) {
    fprintf(stderr, "%s\n", ddtc_last_error());
    return 1;
  }
  enum { N = 30 };
  double us[N];
  for (int i = 0; i < N; ++i) {
    ddtc_type again;
    ddtc_type_from_spec(spec, "t", &again);
    double t0 = nowUs();
    ddtc_type_commit(again);
    us[i] = nowUs() - t0;
    ddtc_type_free(&again);
  }
  qsort(us, N, sizeof us[0], byValue);
  printf("commit after parse: median %.2f us, least %.2f, most %.2f\n",
         us[N / 2], us[0], us[N - 1]);
  ddtc_type_free(&first);
  free(spec);
  return 0;
}
