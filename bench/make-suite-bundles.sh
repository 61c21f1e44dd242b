#!/usr/bin/env bash
# Makes the two source bundles that bench/mpi-suites.sh builds and runs on a
# GPU machine (which has no network and no autotools), from source trees
# fetched elsewhere. Nothing here is committed: the bundles go to OUT_DIR
# (default .external/, which git ignores).
#
#   bench/make-suite-bundles.sh MPICH_SRC OSU_SRC [OUT_DIR]
#
# MPICH_SRC  a checkout or snapshot of MPICH (github.com/pmodels/mpich): its
#            test/mpi, confdb and maint/version.m4 become
#            mpich-testsuite.tar.xz, with test/mpi's configure generated here
#            (autogen.sh needs autoconf, automake, libtool and python3).
# OSU_SRC    an OSU micro-benchmarks 7.x tree whose configure is generated
#            (a release tarball's tree): it becomes osu.tar.xz, holding
#            osu-micro-benchmarks-7.4/ (the folder name mpi-suites.sh
#            expects). A call of cudaMemPrefetchAsync in the form CUDA 13
#            removed is given the CUDA 13 form as well, under CUDART_VERSION.
set -euo pipefail

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  usage >&2
  exit 2
fi
for d in "$1" "$2"; do
  [ -d "$d" ] || { echo "make-suite-bundles: $d is not a folder" >&2; exit 2; }
done
mpich=$(cd "$1" && pwd) osu=$(cd "$2" && pwd)
out=${3:-.external}
mkdir -p "$out"
out=$(cd "$out" && pwd)
for f in test/mpi/autogen.sh confdb maint/version.m4; do
  [ -e "$mpich/$f" ] || { echo "make-suite-bundles: $mpich has no $f (not an MPICH tree)" >&2; exit 2; }
done
for f in configure c/util/osu_util_mpi.c; do
  [ -e "$osu/$f" ] || { echo "make-suite-bundles: $osu has no $f (not an OSU tree with configure generated)" >&2; exit 2; }
done
for t in autoconf automake libtoolize python3; do
  command -v "$t" >/dev/null || { echo "make-suite-bundles: $t is missing (needed by MPICH's autogen.sh)" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== MPICH test suite: copying test/mpi and confdb"
ts=$work/mpich-testsuite
cp -r "$mpich/test/mpi" "$ts"
cp -r "$mpich/confdb" "$ts/confdb"
cp -r "$mpich/confdb" "$ts/dtpools/confdb"
cp "$mpich/maint/version.m4" "$ts/version.m4"
echo "== MPICH test suite: autogen.sh (log: $out/mpich-autogen.log)"
(cd "$ts" && ./autogen.sh) >"$out/mpich-autogen.log" 2>&1 ||
  { echo "make-suite-bundles: autogen.sh failed, see $out/mpich-autogen.log" >&2; exit 1; }
[ -x "$ts/configure" ] || { echo "make-suite-bundles: autogen.sh made no configure" >&2; exit 1; }
tar -cJf "$out/mpich-testsuite.tar.xz" -C "$work" mpich-testsuite

echo "== OSU micro-benchmarks"
cp -r "$osu" "$work/osu-micro-benchmarks-7.4"
util=$work/osu-micro-benchmarks-7.4/c/util/osu_util_mpi.c
python3 - "$util" <<'EOF'
import sys
path = sys.argv[1]
text = open(path).read()
old = "    CUDA_CHECK(cudaMemPrefetchAsync(buf, length, devid, um_stream));"
new = """#if CUDART_VERSION >= 13000
    {
        struct cudaMemLocation loc = {cudaMemLocationTypeDevice, devid};
        CUDA_CHECK(cudaMemPrefetchAsync(buf, length, loc, 0, um_stream));
    }
#else
    CUDA_CHECK(cudaMemPrefetchAsync(buf, length, devid, um_stream));
#endif"""
if old in text and "CUDART_VERSION >= 13000" not in text:
    open(path, "w").write(text.replace(old, new))
    print("   cudaMemPrefetchAsync given its CUDA 13 form")
EOF
tar -cJf "$out/osu.tar.xz" -C "$work" osu-micro-benchmarks-7.4
ls -l "$out/mpich-testsuite.tar.xz" "$out/osu.tar.xz"
