#!/usr/bin/env bash
# Builds and runs two external MPI test suites through libddtc-mpi, on a GPU
# machine without network access and without autoconf, automake or libtool:
#   - the MPICH test suite (test/mpi), configured against the MPI whose mpicc
#     is on PATH, with CUDA: the GPU test lists (pt2pt, coll, rma
#     testlist.gpu), whose DTPools-based tests (sendrecv1, bcast, getfence1,
#     ...) send derived datatypes from device, host, pinned-host and managed
#     memory;
#   - the OSU micro-benchmarks 7.4: osu_latency and osu_bw with device
#     buffers (-d cuda D D), contiguous with validation (-c), and with derived
#     datatypes (-D cont, -D vect:STRIDE:BLOCK, -D indx:FILE).
#
#   bench/mpi-suites.sh [options] BUNDLE_DIR BUILD_DIR OUT_DIR
#
# BUNDLE_DIR holds mpich-testsuite.tar.xz and osu.tar.xz (configure scripts
# already generated; bench/make-suite-bundles.sh makes them from source trees
# on a machine with autotools); BUILD_DIR is the ddtc build folder, whose
# lib/libddtc-mpi.so is preloaded into every MPI process
# (mpirun -x LD_PRELOAD=...); OUT_DIR receives suites-summary.txt, the build
# logs, one log per test and the raw benchmark outputs.
#
# Options:
#   --quick        MPICH: only pt2pt and coll testlist.gpu, without the lines
#                  that use pinned-host (reg_host) or managed (shared) memory,
#                  without the Level Zero affinity variants of allred2 and
#                  without the sendrecv1 repeat that only sets MPICH OFI knobs
#                  (20 tests instead of 53); OSU is the same in both modes
#   --dtp          also run pt2pt/testlist.dtp (pingping, sendrecv1, sendself
#                  over DTPools types) with -sendmem=device -recvmem=device
#   --dtp-only     run pt2pt/testlist.dtp alone (implies --dtp, --no-osu)
#   --from N       MPICH: start at the N-th test of the list (1-based; the
#                  ones before are left out of the results), to split a long
#                  list over several runs
#   --build-only   configure and build, run nothing
#   --no-mpich, --no-osu   leave one suite out
#   --jobs N       MPICH tests run at once (default: cores / 4)
#   -h, --help     this text
#
# Environment:
#   SUITES_CUDA_HOME      CUDA installation (default /usr/local/cuda)
#   SUITES_MEMKIND=host   no GPU needed: both suites are built without CUDA and
#                         every device/reg_host/shared/random/all memory kind in
#                         the test arguments becomes host (pipeline and allred,
#                         which use device memory anyway, are skipped); OSU
#                         runs without -d
#   SUITES_MPIRUN_ARGS    extra mpirun arguments (default: --bind-to none
#                         --mca pml ob1 --mca btl self,vader --mca op ^avx;
#                         Open MPI 4.1's AVX reduction component saturates
#                         8-bit MPI_SUM instead of wrapping, which fails
#                         coll/allred on plain host buffers without ddtc)
#   SUITES_TEST_TIMEOUT   seconds per MPICH test without a timeLimit in its list
#                         (default 180; a list's timeLimit is capped at 300)
#   SUITES_OSU_TIMEOUT    seconds per OSU run at most (default 60)
#   SUITES_TIME_LIMIT     seconds the whole script may take (default 470): the
#                         MPICH tests run first and get everything but the last
#                         SUITES_OSU_RESERVE seconds (default 150, 0 with
#                         --no-osu); a test is only started while its phase
#                         has 20 s left and its timeout never outlasts the
#                         phase; tests not started are recorded as skipped
#   SUITES_MPS=0          with one GPU (and device memory) the ranks share it
#                         through an MPS daemon started here, as they would
#                         take turns on the GPU otherwise (a context switch,
#                         about 70 us, at every turn: small messages then take
#                         150 us one-way instead of 20-30 us); 0 turns it off
#   SUITES_SCRATCH        scratch folder (default: a new one under /tmp, removed
#                         at the end unless SUITES_KEEP_SCRATCH=1)
#
# A test passes when its mpirun exits 0 and (MPICH) prints "No Errors" or
# (OSU with -c) reports no failed validation. Exit status: 0 when everything
# that ran passed, 1 otherwise, 2 for a usage or build error.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

quick=0 dtp=0 dtp_only=0 build_only=0 do_mpich=1 do_osu=1 jobs= from=1
args=()
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --quick) quick=1 ;;
    --dtp) dtp=1 ;;
    --dtp-only) dtp=1 dtp_only=1 do_osu=0 ;;
    --from) from=${2:?--from needs a number}; shift ;;
    --from=*) from=${1#--from=} ;;
    --build-only) build_only=1 ;;
    --no-mpich) do_mpich=0 ;;
    --no-osu) do_osu=0 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift ;;
    --jobs=*) jobs=${1#--jobs=} ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) args+=("$1") ;;
  esac
  shift
done
if [ ${#args[@]} -ne 3 ]; then usage >&2; exit 2; fi
case $from in ''|*[!0-9]*|0) echo "--from takes a test number from 1, not '$from'" >&2; exit 2 ;; esac

t_start=$SECONDS
ncores=$(nproc 2>/dev/null || echo 4)
bundle_dir=$(cd "${args[0]}" && pwd)
mkdir -p "${args[1]}" "${args[2]}"
build_dir=$(cd "${args[1]}" && pwd)
out=$(cd "${args[2]}" && pwd)
cuda=${SUITES_CUDA_HOME:-/usr/local/cuda}
memkind=${SUITES_MEMKIND:-device}
jobs=${jobs:-${SUITES_JOBS:-$(( ncores / 4 > 0 ? ncores / 4 : 1 ))}}
test_timeout=${SUITES_TEST_TIMEOUT:-180}
osu_timeout=${SUITES_OSU_TIMEOUT:-60}
t_end=$(( t_start + ${SUITES_TIME_LIMIT:-470} ))
read -r -a mpirun_extra <<<"${SUITES_MPIRUN_ARGS:---bind-to none --mca pml ob1 --mca btl self,vader --mca op ^avx}"
case $memkind in device|host) ;; *) echo "SUITES_MEMKIND must be device or host" >&2; exit 2 ;; esac

log() { printf '[%4ds] %s\n' $(( SECONDS - t_start )) "$*"; }
die() { log "ERROR: $*"; exit 2; }

# Runs one build step under timeout, output to OUT_DIR/build-logs/NAME.log.
step() {
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS rc=0
  log "$name ..."
  timeout -k 10 "$limit" "$@" >"$out/build-logs/$name.log" 2>&1 || rc=$?
  if [ $rc -ne 0 ]; then
    tail -n 25 "$out/build-logs/$name.log"
    die "$name failed (exit $rc after $(( SECONDS - t0 )) s), see $out/build-logs/$name.log"
  fi
  log "$name done ($(( SECONDS - t0 )) s)"
}

mpicc=$(command -v mpicc) || die "no mpicc on PATH"
mpirun=$(command -v mpirun) || die "no mpirun on PATH"
mpi_prefix=$(dirname "$(dirname "$mpicc")")
for f in mpich-testsuite.tar.xz osu.tar.xz; do
  [ -f "$bundle_dir/$f" ] || die "missing $bundle_dir/$f"
done
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

lib=$build_dir/lib/libddtc-mpi.so
preload=()
if [ -f "$lib" ]; then
  preload=(-x "LD_PRELOAD=$lib")
  lib_note="LD_PRELOAD=$lib"
else
  lib_note="NONE: $lib does not exist, plain MPI without libddtc-mpi"
  for _ in 1 2 3; do
    echo "!!!!!! WARNING: $lib not found: the suites run WITHOUT libddtc-mpi !!!!!!"
  done
fi
if [ "$memkind" = host ]; then
  for _ in 1 2 3; do
    echo "!!!!!! SUITES_MEMKIND=host: built without CUDA, all buffers are host memory !!!!!!"
  done
  use_cuda=0
else
  use_cuda=1
  [ -x "$cuda/bin/nvcc" ] || die "no nvcc in $cuda/bin (set SUITES_CUDA_HOME)"
fi
export LD_LIBRARY_PATH="$build_dir/lib:$cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DDTC_CACHE_DIR=${DDTC_CACHE_DIR:-}

scratch=${SUITES_SCRATCH:-$(mktemp -d /tmp/ddtc-suites.XXXXXX)}
mkdir -p "$scratch" "$out/build-logs"
[ -n "$DDTC_CACHE_DIR" ] || { DDTC_CACHE_DIR=$scratch/ddtc-cache; mkdir -p "$DDTC_CACHE_DIR"; }
mps_dirs=
cleanup() {
  if [ -n "$mps_dirs" ]; then
    echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 || true
    rm -rf $mps_dirs
  fi
  if [ "${SUITES_KEEP_SCRATCH:-0}" != 1 ] && [ -z "${SUITES_SCRATCH:-}" ]; then rm -rf "$scratch"; fi
}
trap cleanup EXIT

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "host: $(hostname) cores: $ncores"
  echo "mpicc: $mpicc ($("$mpicc" --showme:version 2>/dev/null || "$mpicc" --version | head -1))"
  echo "mpirun: $mpirun ($("$mpirun" --version 2>/dev/null | head -1))"
  echo "cuda: $cuda ($("$cuda/bin/nvcc" --version 2>/dev/null | tail -1))"
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "library: $lib_note"
  echo "memkind: $memkind quick: $quick dtp: $dtp$([ $dtp_only = 1 ] && echo ' (alone)') from: $from jobs: $jobs"
  echo "mpirun arguments: --oversubscribe ${mpirun_extra[*]} ${preload[*]}"
} >"$out/env.txt"
cat "$out/env.txt"

# Gives the outputs of autoconf/automake increasing mtimes newer than their
# inputs, so that make never tries to run autoconf or automake.
fix_stamps() {
  local d=$1 now
  now=$(date +%s)
  find "$d" -name aclocal.m4 -exec touch -d "@$(( now - 3 ))" {} +
  find "$d" -name configure -exec touch -d "@$(( now - 2 ))" {} +
  find "$d" \( -name Makefile.in -o -name '*.h.in' \) -exec touch -d "@$(( now - 1 ))" {} +
}

mpich_src=$scratch/src/mpich-testsuite
osu_src=$scratch/src/osu-micro-benchmarks-7.4
mpich_bld=$scratch/build/mpich
osu_bld=$scratch/build/osu
mkdir -p "$scratch/src" "$mpich_bld" "$osu_bld"

# ---------------------------------------------------------------- build
if [ $do_mpich = 1 ]; then
  step mpich-extract 120 tar -xJf "$bundle_dir/mpich-testsuite.tar.xz" -C "$scratch/src"
  fix_stamps "$mpich_src"
fi
if [ $do_osu = 1 ]; then
  step osu-extract 120 tar -xJf "$bundle_dir/osu.tar.xz" -C "$scratch/src"
  fix_stamps "$osu_src"
fi

# Configure commands (run with the build folder as working directory).
mpich_cfg=("$mpich_src/configure" --with-mpi="$mpi_prefix" --enable-strictmpi
  --disable-fortran --disable-cxx --disable-spawn --disable-ft-tests --disable-perftest)
osu_cfg=("$osu_src/configure" CC=mpicc CXX=mpicxx)
if [ $use_cuda = 1 ]; then
  mpich_cfg+=(--with-cuda="$cuda" --enable-gpu-tests-only "LDFLAGS=-Wl,-rpath,$cuda/lib64")
  # libcuda is linked from the CUDA stubs folder (no rpath): the driver's
  # libcuda.so.1 is found at run time.
  osu_cfg+=(--enable-cuda --with-cuda-include="$cuda/include" --with-cuda-libpath="$cuda/lib64"
    "LDFLAGS=-L$cuda/lib64/stubs"
    "NVCCFLAGS=${SUITES_NVCCFLAGS:--gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=compute_75}")
else
  mpich_cfg+=(--without-cuda)
fi

# The two configure scripts run side by side.
pids=()
if [ $do_mpich = 1 ]; then (step mpich-configure 400 env -C "$mpich_bld" "${mpich_cfg[@]}") & pids+=($!); fi
if [ $do_osu = 1 ]; then (step osu-configure 300 env -C "$osu_bld" "${osu_cfg[@]}") & pids+=($!); fi
for p in "${pids[@]}"; do wait "$p" || die "a configure step failed"; done

# MPICH test list: one line per test, "DIR<TAB>list line".
mem_to_host() {
  sed -E 's/-(sendmem|recvmem|memtype|evenmemtype|oddmemtype)=(device|reg_host|shared|random|all)/-\1=host/g'
}
mpich_list=$out/mpich/tests.tsv
if [ $do_mpich = 1 ]; then
  mkdir -p "$out/mpich/logs"
  : >"$mpich_list"
  dirs="pt2pt coll rma"
  [ $quick = 1 ] && dirs="pt2pt coll"
  [ $dtp_only = 1 ] && dirs=
  for d in $dirs; do
    grep -v '^[[:space:]]*#' "$mpich_src/$d/testlist.gpu" | grep -v '^[[:space:]]*$' |
      while IFS= read -r line; do
        if [ $quick = 1 ]; then
          case $line in *reg_host*|*=shared*|*MTEST_GPU_VISIBILITY_AFFINITY*) continue ;; esac
          case $line in sendrecv1*MPIR_CVAR_CH4_OFI*) continue ;; esac
        fi
        printf '%s\t%s\n' "$d" "$line"
      done >>"$mpich_list"
  done
  if [ $dtp = 1 ]; then
    grep -v '^[[:space:]]*#' "$mpich_bld/pt2pt/testlist.dtp" | grep -v '^[[:space:]]*$' |
      sed -E 's/[[:space:]]*$/ arg=-sendmem=device arg=-recvmem=device/; s/^/pt2pt\t/' >>"$mpich_list"
  fi
  if [ "$memkind" = host ]; then
    mem_to_host <"$mpich_list" >"$mpich_list.tmp" && mv "$mpich_list.tmp" "$mpich_list"
  fi
  step mpich-make-util 300 make -j"$ncores" -C "$mpich_bld/util"
  step mpich-make-dtpools 300 make -j"$ncores" -C "$mpich_bld/dtpools"
  for d in $(cut -f1 "$mpich_list" | sort -u); do
    # shellcheck disable=SC2046
    step "mpich-make-$d" 300 make -j"$ncores" -C "$mpich_bld/$d" \
      $(awk -F'\t' -v d="$d" '$1 == d { split($2, w, " "); print w[1] }' "$mpich_list" | sort -u)
  done
  log "MPICH: $(wc -l <"$mpich_list") tests listed in $mpich_list"
fi
if [ $do_osu = 1 ]; then
  step osu-make 400 make -j"$ncores" -C "$osu_bld/c/mpi/pt2pt/standard" osu_latency osu_bw
fi

if [ $build_only = 1 ]; then
  log "build only: done in $(( SECONDS - t_start )) s"
  exit 0
fi

mps_note=off
if [ "$memkind" = device ] && [ "${SUITES_MPS:-1}" != 0 ]; then
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  if [ "$ngpu" = 1 ] && command -v nvidia-cuda-mps-control >/dev/null; then
    export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
    mps_dirs="$CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY"
    if nvidia-cuda-mps-control -d; then
      mps_note="on (one GPU, shared by the ranks through an MPS daemon)"
      preload+=(-x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY)
    else
      mps_note="off (the MPS daemon did not start)"
      unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    fi
  else
    mps_note="off ($ngpu GPUs, or no nvidia-cuda-mps-control)"
  fi
fi
echo "mps: $mps_note" >>"$out/env.txt"
log "MPS: $mps_note"
mpirun_base=("$mpirun" --oversubscribe "${mpirun_extra[@]}" "${preload[@]}")
mpich_end=$t_end
[ $do_osu = 1 ] && mpich_end=$(( t_end - ${SUITES_OSU_RESERVE:-150} ))
log "MPICH tests until $(( mpich_end - t_start )) s, OSU until $(( t_end - t_start )) s"

# ---------------------------------------------------------------- MPICH
mpich_status=0
if [ $do_mpich = 1 ]; then
  resdir=$scratch/mpich-results
  mkdir -p "$resdir"
  run_mpich_test() {
    local idx=$1 dir=$2 line=$3
    local words prog np i key val limit=$test_timeout
    read -r -a words <<<"$line"
    prog=${words[0]} np=2 i=1
    if [[ ${words[1]:-} =~ ^[0-9]+$ ]]; then np=${words[1]}; i=2; fi
    local targs=() envs=()
    for (( ; i < ${#words[@]}; i++ )); do
      key=${words[i]%%=*} val=${words[i]#*=}
      case $key in
        arg) targs+=("$val") ;;
        env) envs+=(-x "$val") ;;
        timeLimit) limit=$(( val < 300 ? val : 300 )) ;;
        *) ;;   # mem=, xfail=, strict=, ... are runtests hints
      esac
    done
    local left=$(( mpich_end - SECONDS ))
    [ "$left" -lt "$limit" ] && limit=$(( left > 20 ? left : 20 ))
    local logf; logf=$out/mpich/logs/$(printf '%03d' "$idx")-$dir-$prog.log
    local t0=$SECONDS rc=0 st
    echo "# cd $dir && ${mpirun_base[*]} ${envs[*]} -np $np ./$prog ${targs[*]}  (timeout $limit s)" >"$logf"
    if [ "$memkind" = host ] && { [ "$prog" = pipeline ] || [ "$prog" = allred ]; }; then
      # pipeline always allocates device memory; allred with -counts always
      # puts the odd ranks' buffers on the device.
      st=SKIP; echo "$prog uses device memory whatever its arguments; not run with SUITES_MEMKIND=host" >>"$logf"
    else
      (cd "$mpich_bld/$dir" && timeout -k 15 "$limit" "${mpirun_base[@]}" "${envs[@]}" -np "$np" \
        "./$prog" "${targs[@]}") >>"$logf" 2>&1 || rc=$?
      if [ $rc = 124 ] || [ $rc = 137 ]; then st=TIMEOUT
      elif [ $rc = 0 ] && grep -q 'No Errors' "$logf"; then st=PASS
      else st=FAIL; fi
    fi
    printf '%03d\t%s\t%d\t%s\t%s\n' "$idx" "$st" $(( SECONDS - t0 )) "$dir" "$line" >"$resdir/$idx"
    log "MPICH $(printf '%03d' "$idx") $dir/$prog np=$np: $st ($(( SECONDS - t0 )) s)"
  }
  idx=0
  while IFS=$'\t' read -r dir line; do
    idx=$(( idx + 1 ))
    [ "$idx" -lt "$from" ] && continue
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    if [ $(( mpich_end - SECONDS )) -lt 20 ]; then
      printf '%03d\tSKIP\t0\t%s\t%s\n' "$idx" "$dir" "$line" >"$resdir/$idx"
      continue
    fi
    run_mpich_test "$idx" "$dir" "$line" </dev/null &
  done <"$mpich_list"
  wait || true
  for f in $(ls "$resdir" | sort -n); do cat "$resdir/$f"; done >"$out/mpich/results.tsv"
  grep -qv -P '^\d+\tPASS\t' "$out/mpich/results.tsv" && mpich_status=1
fi

# ---------------------------------------------------------------- OSU
osu_status=0
if [ $do_osu = 1 ]; then
  mkdir -p "$out/osu"
  osu_res=$out/osu/results.tsv
  : >"$osu_res"
  ddt_file=$out/osu/ddt-indexed.txt
  # OSU counts one line fewer than the file holds, hence the last dummy line.
  cat >"$ddt_file" <<'EOF'
# displacement, block length (in MPI_CHAR elements)
0, 64
100, 28
256, 1000
4096, 4096
16384, 1
20000, 30000
0, 0
EOF
  if [ "$memkind" = device ]; then dev=(-d cuda); bufs=(D D); else dev=(); bufs=(); fi
  osu_bin=$osu_bld/c/mpi/pt2pt/standard
  n=0
  run_osu() {
    local name=$1 validate=$2; shift 2
    n=$(( n + 1 ))
    local logf; logf=$out/osu/$(printf '%02d' $n)-$name.log
    local left=$(( t_end - SECONDS )) limit=$osu_timeout
    if [ $left -lt 20 ]; then
      printf '%s\tSKIP\t0\t%s\tno time left\n' "$name" "$*" >>"$osu_res"; log "OSU $name: SKIP (no time left)"
      osu_status=1; return
    fi
    [ "$left" -lt "$limit" ] && limit=$left
    local t0=$SECONDS rc=0 st
    echo "# ${mpirun_base[*]} -np 2 $*  (timeout $limit s)" >"$logf"
    timeout -k 10 "$limit" "${mpirun_base[@]}" -np 2 "$@" >>"$logf" 2>&1 || rc=$?
    if [ $rc = 124 ] || [ $rc = 137 ]; then st=TIMEOUT
    elif [ $rc != 0 ]; then st=FAIL
    elif [ "$validate" = 1 ] && grep -Eq '[[:space:]]Fail[[:space:]]*$|VALIDATION ERROR' "$logf"; then st=FAIL
    else st=PASS; fi
    [ $st = PASS ] || osu_status=1
    local last; last=$(grep -E '^[0-9]+[[:space:]]' "$logf" | tail -1 | tr -s ' \t' ' ')
    printf '%s\t%s\t%d\t%s\t%s\n' "$name" "$st" $(( SECONDS - t0 )) "$*" "${last:-no data}" >>"$osu_res"
    log "OSU $name: $st ($(( SECONDS - t0 )) s) largest size: ${last:-no data}"
  }
  lat=("$osu_bin/osu_latency" "${dev[@]}" -m 1:1048576 -i 200 -x 20)
  bw=("$osu_bin/osu_bw" "${dev[@]}" -m 1:1048576 -i 20 -x 5)
  # Contiguous: validated (OSU refuses -c together with -D), then timed.
  run_osu latency-contig-validate 1 "$osu_bin/osu_latency" "${dev[@]}" -c -m 1:4194304 -i 50 -x 5 "${bufs[@]}"
  run_osu bw-contig-validate 1 "$osu_bin/osu_bw" "${dev[@]}" -c -m 1:4194304 -i 10 -x 2 "${bufs[@]}"
  run_osu latency-contig 0 "$osu_bin/osu_latency" "${dev[@]}" -m 1:4194304 -i 1000 -x 100 "${bufs[@]}"
  run_osu bw-contig 0 "$osu_bin/osu_bw" "${dev[@]}" -m 1:4194304 -i 100 -x 10 "${bufs[@]}"
  # Derived datatypes of MPI_CHAR, up to 1 MiB: contiguous type, vectors of
  # 2-byte blocks every 4 bytes and 512-byte blocks every 1024 bytes, and the
  # indexed type of ddt-indexed.txt (same type for every size).
  run_osu latency-ddt-cont 0 "${lat[@]}" -D cont "${bufs[@]}"
  run_osu bw-ddt-cont 0 "${bw[@]}" -D cont "${bufs[@]}"
  run_osu latency-ddt-vect-4-2 0 "${lat[@]}" -D vect:4:2 "${bufs[@]}"
  run_osu bw-ddt-vect-4-2 0 "${bw[@]}" -D vect:4:2 "${bufs[@]}"
  run_osu latency-ddt-vect-1024-512 0 "${lat[@]}" -D vect:1024:512 "${bufs[@]}"
  run_osu bw-ddt-vect-1024-512 0 "${bw[@]}" -D vect:1024:512 "${bufs[@]}"
  run_osu latency-ddt-indx 0 "${lat[@]}" -D "indx:$ddt_file" "${bufs[@]}"
  run_osu bw-ddt-indx 0 "${bw[@]}" -D "indx:$ddt_file" "${bufs[@]}"
fi

# ---------------------------------------------------------------- summary
count() { awk -F'\t' -v s="$2" '$2 == s' "$1" | wc -l; }
{
  echo "ddtc external MPI suites ($(date -u '+%Y-%m-%d %H:%M UTC'), $(( SECONDS - t_start )) s)"
  sed 's/^/  /' "$out/env.txt"
  if [ $do_mpich = 1 ]; then
    r=$out/mpich/results.tsv
    echo
    if [ $dtp_only = 1 ]; then
      echo "MPICH test suite, pt2pt/testlist.dtp on $memkind memory$([ "$from" -gt 1 ] && echo ", from test $from"):"
    else
      echo "MPICH test suite, GPU lists$([ $quick = 1 ] && echo ' (--quick subset)')$([ $dtp = 1 ] && echo ' + pt2pt/testlist.dtp on device memory')$([ "$from" -gt 1 ] && echo ", from test $from"):"
    fi
    for d in $(cut -f4 "$r" | sort -u); do
      awk -F'\t' -v d="$d" '$4 == d { n[$2]++; t++ } END {
        printf "  %-6s %3d tests: %d pass, %d fail, %d timeout, %d skipped\n", d, t, n["PASS"], n["FAIL"], n["TIMEOUT"], n["SKIP"] }' "$r"
    done
    echo "  total  $(wc -l <"$r") tests: $(count "$r" PASS) pass, $(count "$r" FAIL) fail, $(count "$r" TIMEOUT) timeout, $(count "$r" SKIP) skipped"
    if grep -qv -P '^\d+\tPASS\t' "$r"; then
      echo "  not passed (index, status, seconds, dir, list line; logs in mpich/logs/):"
      grep -v -P '^\d+\tPASS\t' "$r" | sed 's/^/    /'
    fi
  fi
  if [ $do_osu = 1 ]; then
    r=$out/osu/results.tsv
    echo
    echo "OSU micro-benchmarks 7.4 ($( [ "$memkind" = device ] && echo '-d cuda D D' || echo 'host buffers')): $(count "$r" PASS) of $(wc -l <"$r") runs pass"
    awk -F'\t' '{ printf "  %-28s %-7s %4ds  last line: %s\n", $1, $2, $3, $5 }' "$r"
    echo "  raw outputs: osu/NN-NAME.log"
  fi
} >"$out/suites-summary.txt"
echo
cat "$out/suites-summary.txt"
log "done; results in $out"
[ $osu_status = 0 ] && [ $mpich_status = 0 ]
