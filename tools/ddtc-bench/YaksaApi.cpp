//===- YaksaApi.cpp - Loading Yaksa with dlopen ---------------------------===//

#include "YaksaApi.h"

#include <dlfcn.h>

#include <cstdlib>

namespace ddtc::yaksa {

namespace {

/// Looks up `name` into `fn`; a missing required symbol is an error.
template <typename Fn>
bool bind(void *lib, const char *name, Fn &fn, bool required,
          std::string &error) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn && required) {
    error = std::string("the Yaksa library has no ") + name;
    return false;
  }
  return true;
}

} // namespace

bool loadApi(const std::string &path, Api &api, std::string &error) {
  // RTLD_LOCAL: Yaksa's symbols stay out of the process's namespace; the
  // benchmark reaches them only through the table.
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    error = "cannot load Yaksa from " + path + ": " + (why ? why : "?");
    return false;
  }
  Api a;
  bool ok =
      bind(lib, "yaksa_init", a.init, true, error) &&
      bind(lib, "yaksa_finalize", a.finalize, true, error) &&
      bind(lib, "yaksa_type_create_contig", a.type_create_contig, true,
           error) &&
      bind(lib, "yaksa_type_create_vector", a.type_create_vector, true,
           error) &&
      bind(lib, "yaksa_type_create_hvector", a.type_create_hvector, true,
           error) &&
      bind(lib, "yaksa_type_create_indexed", a.type_create_indexed, true,
           error) &&
      bind(lib, "yaksa_type_create_hindexed", a.type_create_hindexed, true,
           error) &&
      bind(lib, "yaksa_type_create_indexed_block", a.type_create_indexed_block,
           true, error) &&
      bind(lib, "yaksa_type_create_hindexed_block",
           a.type_create_hindexed_block, true, error) &&
      bind(lib, "yaksa_type_create_struct", a.type_create_struct, true,
           error) &&
      bind(lib, "yaksa_type_create_subarray", a.type_create_subarray, true,
           error) &&
      bind(lib, "yaksa_type_create_resized", a.type_create_resized, true,
           error) &&
      bind(lib, "yaksa_type_create_dup", a.type_create_dup, true, error) &&
      bind(lib, "yaksa_type_get_size", a.type_get_size, true, error) &&
      bind(lib, "yaksa_type_get_extent", a.type_get_extent, true, error) &&
      bind(lib, "yaksa_type_free", a.type_free, true, error) &&
      bind(lib, "yaksa_ipack", a.ipack, true, error) &&
      bind(lib, "yaksa_iunpack", a.iunpack, true, error) &&
      bind(lib, "yaksa_request_wait", a.request_wait, true, error) &&
      bind(lib, "yaksa_pack_stream", a.pack_stream, false, error) &&
      bind(lib, "yaksa_unpack_stream", a.unpack_stream, false, error);
  if (!ok)
    return false;
  // dlsym on the handle searches the library and what it loaded.
  a.hasCuda = dlsym(lib, "cudaPointerGetAttributes") != nullptr;
  api = a;
  return true;
}

std::string libraryPath(const std::string &option) {
  if (!option.empty())
    return option;
  const char *env = std::getenv("DDTC_YAKSA_LIB");
  return env ? env : "";
}

} // namespace ddtc::yaksa
