#!/usr/bin/env bash
# Builds MPICH's datatype engine (Yaksa, github.com/pmodels/yaksa) outside the
# repository, for the Yaksa columns of ddtc-bench (docs/Performance.md).
#
#   bench/build-yaksa.sh SRC_DIR PREFIX
#
# SRC_DIR is a Yaksa source tree: a plain snapshot (its autogen.sh is run;
# that needs python3, autoconf, automake and libtool) or one already
# autogen'ed (it has `configure`: only a C compiler, make and nvcc needed, as
# on a GPU machine without autotools or network). The build goes to
# SRC_DIR/build-ddtc (YAKSA_BUILD_DIR), the library to PREFIX/lib/libyaksa.so;
# bench/run-gpu.sh finds it as .external/yaksa/lib/libyaksa.so or through
# DDTC_YAKSA_LIB.
#
# Environment:
#   YAKSA_CUDA=PATH   the CUDA toolkit (default /usr/local/cuda); "no" builds
#                     the CPU (seq) backend alone, enough for ddtc-yaksa-check
#   YAKSA_CUDA_SM=90  the GPU architectures (Yaksa's --with-cuda-sm)
#   YAKSA_JOBS=N      make -j (default: the number of cores)
#   YAKSA_NICE=N      run the build under nice -n N (default 0)
# Yaksa's generated kernels keep their default depth (two constructors over
# a builtin type; the transpose layout nests three deep). A type its kernels
# do not cover (deeper nesting, structs) Yaksa splits into one GPU operation
# per piece: slow (the particles layout), and what MPICH would run, so the
# comparison keeps it.
set -euo pipefail

if [ $# -ne 2 ]; then
  sed -n '2,26p' "$0" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
mkdir -p "$2"
prefix=$(cd "$2" && pwd)
build=${YAKSA_BUILD_DIR:-$src/build-ddtc}
cuda=${YAKSA_CUDA:-/usr/local/cuda}
jobs=${YAKSA_JOBS:-$(nproc)}
nice=(nice -n "${YAKSA_NICE:-0}")

if [ ! -x "$src/configure" ]; then
  [ -x "$src/autogen.sh" ] || {
    echo "build-yaksa.sh: $src has neither configure nor autogen.sh" >&2
    exit 2
  }
  for tool in python3 autoconf automake libtoolize; do
    command -v "$tool" >/dev/null || {
      echo "build-yaksa.sh: $src needs autogen.sh, which needs $tool" \
        "(or give an already autogen'ed tree)" >&2
      exit 2
    }
  done
  echo "== autogen ($src)"
  (cd "$src" && "${nice[@]}" ./autogen.sh >autogen.log 2>&1) || {
    tail -20 "$src/autogen.log" >&2
    exit 1
  }
fi

backends=(--without-ze --without-hip)
if [ "$cuda" = no ]; then
  backends+=(--without-cuda)
else
  [ -x "$cuda/bin/nvcc" ] || {
    echo "build-yaksa.sh: no nvcc in $cuda/bin (YAKSA_CUDA=no builds the" \
      "CPU backend alone)" >&2
    exit 2
  }
  backends+=(--with-cuda="$cuda" --with-cuda-sm="${YAKSA_CUDA_SM:-90}")
fi

mkdir -p "$build"
cd "$build"
t0=$SECONDS
echo "== configure into $build (${backends[*]})"
"${nice[@]}" "$src/configure" --prefix="$prefix" --enable-fast=O2 \
  "${backends[@]}" >configure.log 2>&1 || {
  tail -30 configure.log >&2
  exit 1
}
grep "Backends supported" configure.log || true
echo "== make -j$jobs"
"${nice[@]}" make -j"$jobs" >make.log 2>&1 || {
  grep -B2 -A10 -m3 "error" make.log >&2 || tail -30 make.log >&2
  exit 1
}
make install >install.log 2>&1 || {
  tail -20 install.log >&2
  exit 1
}
echo "== $prefix/lib/libyaksa.so built in $((SECONDS - t0)) s"
