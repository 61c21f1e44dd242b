#!/usr/bin/env bash
# Installs what ddtc needs and is missing, builds it, then runs the demo or the
# tests. Safe to run again: it installs and configures only what is missing.
#
#   utils/build.sh demo    build, then compile examples/example.ddt and print
#                          its IR, its optimized IR and a typemap
#   utils/build.sh test    build, then run every test (ctest: lit, unit, MPI)
#   utils/build.sh build   only install and build
#
# DDTC_BUILD_DIR picks the build folder (default: build/ in the checkout).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DDTC_BUILD_DIR:-$root/build}
mode=${1:-build}
llvm=/usr/lib/llvm-22

case "$mode" in
  demo|test|build) ;;
  -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
  *) echo "utils/build.sh: unknown mode '$mode' (expected demo, test or build)" >&2; exit 2 ;;
esac

packages=(cmake ninja-build g++ python3 llvm-22-dev llvm-22-tools libmlir-22-dev
          mlir-22-tools libzstd-dev openmpi-bin libopenmpi-dev libgtest-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "== installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

if [ ! -f "$build/build.ninja" ]; then
  echo "== configuring $build"
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$llvm/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$llvm/bin/lit" >/dev/null
fi
echo "== building"
cmake --build "$build"

case "$mode" in
  demo)
    example="$root/examples/example.ddt"
    echo "== ddtc $example --emit=mlir"
    "$build/bin/ddtc" "$example" --emit=mlir
    echo "== ddtc $example --emit=mlir --stop-after=stair-balancing"
    "$build/bin/ddtc" "$example" --emit=mlir --stop-after=stair-balancing
    echo "== ddtc $example -t rrec --count 2 --emit=typemap"
    "$build/bin/ddtc" "$example" -t rrec --count 2 --emit=typemap
    ;;
  test)
    echo "== running the tests"
    # A test without a TIMEOUT of its own gets 10 minutes: a hang fails it
    # instead of stalling the whole run.
    ctest --test-dir "$build" --output-on-failure --timeout 600
    ;;
esac
