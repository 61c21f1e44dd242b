/* Uses one type of a header made by `ddtc --emit=header`, compiled with
 * -include HEADER -DPREFIX=<the type's prefix>.
 *
 *   header-use cubin | ptx   writes the embedded cubin or PTX to stdout
 *   header-use info          prints the type's figures and the launch of
 *                            3 instances, whole range
 *
 * With -DCALL_DRIVER it also calls the functions that need the CUDA driver
 * (to check that they link against libcuda; never run without a GPU). */
#include <stdio.h>
#include <string.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "cubin") == 0) {
    fwrite(CAT(PREFIX, _cubin), 1, sizeof CAT(PREFIX, _cubin), stdout);
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "ptx") == 0) {
    fputs((const char *)CAT(PREFIX, _ptx), stdout);
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "info") == 0) {
    CAT(PREFIX, _params) p;
    unsigned int grid, block;
    CUresult r = CAT(PREFIX, _launch_config)(3, 0, 3 * CAT(PREFIX, _size)(),
                                             0, &grid, &block, &p);
    printf("size %lld extent %lld lb %lld true_lb %lld true_extent %lld\n",
           CAT(PREFIX, _size)(), CAT(PREFIX, _extent)(), CAT(PREFIX, _lb)(),
           CAT(PREFIX, _true_lb)(), CAT(PREFIX, _true_extent)());
    printf("launch %d grid %u block %u lo %lld hi %lld\n", (int)r, grid, block,
           p.lo, p.hi);
    r = CAT(PREFIX, _launch_config)(3, 0, 3 * CAT(PREFIX, _size)() + 1, 0,
                                    &grid, &block, &p);
    printf("past the end: %d\n", (int)r);
    return 0;
  }
#ifdef CALL_DRIVER
  {
    char *buffer = 0;
    CUresult r = CAT(PREFIX, _load)();
    if (r == CUDA_SUCCESS)
      r = CAT(PREFIX, _pack)(buffer, 1, 0, CAT(PREFIX, _size)(), buffer, 0, 0);
    if (r == CUDA_SUCCESS)
      r = CAT(PREFIX, _unpack)(buffer, 1, 0, CAT(PREFIX, _size)(), buffer, 0,
                               0);
    if (r == CUDA_SUCCESS)
      r = CAT(PREFIX, _unload)();
    return (int)r;
  }
#else
  return 2;
#endif
}
