#!/usr/bin/env bash
# Runs every GPU test and benchmark of ddtc from a build folder and writes the
# results. Meant for a machine with an NVIDIA GPU and the CUDA driver; the
# build folder can come from another machine (the binaries need only libc,
# libstdc++ and, at run time, the driver and NVRTC).
#
#   bench/run-gpu.sh [BUILD_DIR] [OUT_DIR]
#
# BUILD_DIR defaults to build/, OUT_DIR to bench/results/<date>-<gpu>/.
# Steps (each logged to OUT_DIR/<step>.log; a failed check fails the script):
#   1. the GPU test of the runtime: random types packed and unpacked on the
#      GPU (device and mapped host buffers, random byte ranges, counts > 1,
#      CTA caps) against the CPU reference, with poisoned outputs;
#   2. compute-sanitizer memcheck and racecheck on a subset of it;
#   3. the C API and generated-header examples;
#   4. ddtc-bench: correctness, then timings against cudaMemcpy/2D/3D,
#      pinned D2H and the memory limit (cudaMemcpy moving the DRAM traffic
#      the layout forces), the empty-kernel launch, and the JIT figures
#      (cold, cache hit, and a fresh process loading from the disk cache);
#      with a built Yaksa named by DDTC_YAKSA_LIB (e.g.
#      .external/yaksa/lib/libyaksa.so from bench/build-yaksa.sh), MPICH's datatype engine on the same
#      layouts in the same process, checked against ddtc's bytes and timed
#      (a Yaksa call that does not return within DDTC_YAKSA_TIMEOUT seconds,
#      default 60, marks its layout "timed out"; the layouts left run in a
#      new process);
#      the traffic calibration runs first (the model's assumptions,
#      measured), and the traffic ratios use the read granule and
#      partial-write cost it found;
#      the transpose once more with DDTC_TILES=0 (the strided kernels
#      instead of the shared-memory tile kernels: ddtc-notiles.json);
#      the layouts of bench/zoo.py, which no kernel was tuned for (zoo.json);
#   5. the torch baseline on the same layouts;
#   6. the summary table (summary.txt), merged JSON and plots.
#   7. the MPI layer (libddtc-mpi): its test suite on device memory (2 and 4
#      ranks sharing the GPUs; every protocol, threads) and the MPI examples
#      under mpirun, then ddtc-mpi-bench (ping-pong against host-staged
#      references; the 3-d halo exchange of a 512^3 cube) and its summary;
#   8. between the GPUs of one host (CUDA IPC; two ranks on one GPU where
#      there is one): the libddtc-mpi suite with IPC forced and checked to
#      be used (rings, staged and direct reads, pulls, threads, wildcards,
#      one GPU),
#      compute-sanitizer on both ranks for a subset, then ddtc-mpi-bench
#      --refs device (against a contiguous device buffer, the extent copy
#      and the host-memory protocols; then the layer's path and the
#      contiguous one alone), its read-mode, read-stream and fragment
#      sweeps, the ping-pong with a kernel holding half of each GPU
#      (--contend) and the 3-d halo exchange (--halo); with two GPUs and
#      CuPy, the peer's memory read and written by SMs and copy engines
#      (bench/peer-reads.py, bench/peer-fragments.py), rows of a strided
#      layout moved by a copy engine from a peer and from an IPC mapping
#      (bench/peer-rows.py, bench/peer-rows-ipc.py) and a pack or unpack
#      call's host cost (bench/launch-cost.py);
#   9. with the source bundles of the external suites in .external/ (see
#      bench/mpi-suites.sh), the MPICH GPU tests and the OSU benchmarks
#      through libddtc-mpi.
# DDTC_GPU_STEPS=tests, =bench, =mpi, =mpi-tests, =ipc or =suites (or several,
# separated by spaces: "tests suites") runs only
# the tests (1-3 and the MPI tests), the benchmarks (4-6 and the MPI
# benchmark), the MPI steps (7), the MPI tests alone, the IPC steps (8), or
# the external suites (9); the default runs all. DDTC_MPI_BENCH=0 leaves the
# MPI ping-pong and halo benchmarks (7) out of the bench group.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 |
      tr ' ' '-' | tr -cd 'A-Za-z0-9_-')
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
out=${2:-$root/bench/results/$(date +%Y-%m-%d)-${gpu:-unknown-gpu}}
mkdir -p "$out"
export DDTC_CACHE_DIR=$(mktemp -d)
export PATH="$build/bin:$PATH"
export LD_LIBRARY_PATH="$build/lib:${LD_LIBRARY_PATH:-}"
status=0

step() {
  local name=$1
  shift
  echo "== $name: $*"
  local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  tail -n 5 "$out/$name.log"
  echo "== $name: exit $rc after $((SECONDS - t0)) s"
  # ok_rc: an exit code the caller handles (the bench's Yaksa time-out).
  if [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ $rc -ne "${ok_rc:-0}" ]; then
    status=1
  fi
  return $rc
}

# Waits (up to 60 s) until no process holds a context on the GPU: a bench
# part that follows a process stopped by a Yaksa time-out would otherwise
# start while the driver still tears down that process's stuck kernel.
# (The slow first compiles once blamed on this, 345-542 ms, were cold
# compiles: the faster ones were hits of the driver's compute cache.)
wait_gpu_idle() {
  command -v nvidia-smi >/dev/null || return 0
  local t0=$SECONDS apps
  while [ $((SECONDS - t0)) -lt 60 ]; do
    apps=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null)
    [ -z "$apps" ] && break
    sleep 0.5
  done
  echo "== GPU idle after $((SECONDS - t0)) s${apps:+ (still busy: $apps)}"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"

steps=${DDTC_GPU_STEPS:-all}
want() { # want STEP-GROUP...: whether DDTC_GPU_STEPS selects one of them
  local s
  for s in "$@"; do [[ " $steps " == *" $s "* ]] && return 0; done
  [ "$steps" = all ]
}
if want tests; then
step gpu-test timeout 300 "$build/bin/ddtc-gpu-tests" --types 300 --mode all
if command -v compute-sanitizer >/dev/null; then
  # The test checks on purpose that pageable memory is refused; that one
  # driver error is expected, so only kernel errors count here.
  step memcheck timeout 300 compute-sanitizer --tool memcheck --error-exitcode 3 \
    --check-api-memory-access no --report-api-errors no \
    "$build/bin/ddtc-gpu-tests" --types 20 --seed 11 --mode sync
  step racecheck timeout 300 compute-sanitizer --tool racecheck --error-exitcode 3 \
    --report-api-errors no \
    "$build/bin/ddtc-gpu-tests" --types 8 --seed 12 --mode sync
fi
for ex in "$build"/bin/ddtc-example-*; do
  case "$ex" in *-mpi-*) continue ;; esac # run under mpirun below
  [ -x "$ex" ] && step "$(basename "$ex")" timeout 120 "$ex"
done
fi

# ---- MPI: the libddtc-mpi suite and examples on device memory -----------------
mpilib="$build/lib/libddtc-mpi.so"
mpirun_x=(mpirun --oversubscribe --bind-to none --mca pml ob1
          --mca btl self,vader -x LD_PRELOAD="$mpilib" -x LD_LIBRARY_PATH
          -x DDTC_CACHE_DIR)
if want tests mpi mpi-tests && [ -f "$mpilib" ] && command -v mpirun >/dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  layer="$build/bin/ddtc-mpi-layer-test"
  # Eager sends packed by kernels here; small ones packed on the host
  # (DDTC_MPI_HOST_PACK's default) under auto.
  step mpi-layer-eager timeout 300 "${mpirun_x[@]}" -np 2     -x DDTC_MPI_PROTOCOL=eager -x DDTC_MPI_HOST_PACK=0 "$layer" --cases 300
  step mpi-layer-auto timeout 300 "${mpirun_x[@]}" -np 2 "$layer" --cases 300
  step mpi-layer-pipeline timeout 300 "${mpirun_x[@]}" -np 2     -x DDTC_MPI_PROTOCOL=pipeline -x DDTC_MPI_FRAGMENT=3000 "$layer" --cases 300
  step mpi-layer-staged timeout 300 "${mpirun_x[@]}" -np 2     -x DDTC_MPI_PROTOCOL=staged "$layer" --cases 100
  step mpi-layer-pipeline-host-stage timeout 300 "${mpirun_x[@]}" -np 2     -x DDTC_MPI_PROTOCOL=pipeline -x DDTC_MPI_IPC=0 -x DDTC_MPI_HOST_READ=stage -x DDTC_MPI_FRAGMENT=3000 "$layer" --cases 200
  step mpi-layer-wildcard timeout 300 "${mpirun_x[@]}" -np 4     -x DDTC_MPI_PROTOCOL=pipeline "$layer" --suite wildcard
  step mpi-layer-threads timeout 300 "${mpirun_x[@]}" -np 2     -x DDTC_MPI_EAGER_LIMIT=1024 "$layer" --cases 200 --threads 4 --suite p2p
  for ex in "$build"/bin/ddtc-example-mpi-*; do
    [ -x "$ex" ] && step "$(basename "$ex")" timeout 120 "${mpirun_x[@]}"       -np 2 -x DDTC_EXAMPLE_REQUIRE_DDTC=1 "$ex"
  done
  # An mpi4py program sending strided CuPy views (where both are installed).
  if python3 -c "import mpi4py, cupy" 2>/dev/null; then
    step mpi-example-cupy timeout 180 "${mpirun_x[@]}" -np 2 \
      python3 "$root/examples/mpi/cupy_vector.py"
  else
    echo "== mpi-example-cupy: skipped (python3 lacks mpi4py or cupy)"
  fi
  # Cold kernel caches: the generic kernels serve the first calls while the
  # specialized ones compile.
  for i in 1 2 3 4 5; do
    step "mpi-example-cold-$i" env DDTC_CACHE_DIR="$(mktemp -d)"       timeout 120 "${mpirun_x[@]}" -np 2 -x DDTC_EXAMPLE_REQUIRE_DDTC=1       "$build/bin/ddtc-example-mpi-vector-exchange"
  done
fi

if want bench; then

# The layouts' specs (1.5 MB) stay out of the results: bench/layouts.py of
# the commit in use prints them again (layouts.tsv.cmd says how).
layouts=$(mktemp)
python3 "$root/bench/layouts.py" --tsv >"$layouts"
if commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null); then
  regen="git show $commit:bench/layouts.py | python3 - --tsv > layouts.tsv"
else # a copy of the tree without its history: the README names the commit
  regen="python3 bench/layouts.py --tsv > layouts.tsv   # at the run's commit"
fi
printf '%s\n' "layouts.tsv of this run is not kept; it is what this prints, from the" \
  "repository root:" "" "    $regen" >"$out/layouts.tsv.cmd"
# A cache of its own, so the JIT figures are cold (the tests above filled
# theirs); the disk-cache step then reads what the benchmark wrote.
rm -rf "$DDTC_CACHE_DIR"
export DDTC_CACHE_DIR=$(mktemp -d)
yaksa_lib=${DDTC_YAKSA_LIB:-}
yaksa=()
if [ -n "$yaksa_lib" ] && [ -f "$yaksa_lib" ]; then
  yaksa=(--yaksa "$yaksa_lib" --yaksa-timeout "${DDTC_YAKSA_TIMEOUT:-60}")
  echo "== Yaksa: $yaksa_lib"
else
  echo "== Yaksa: not run (set DDTC_YAKSA_LIB to a libyaksa.so that" \
    "bench/build-yaksa.sh built): its columns say not run"
fi
# The traffic calibration first, so that the traffic ratios use this GPU's
# own read granule and partial-write cost (a failed calibration leaves the
# defaults, and the benchmark says so).
step traffic-calibration timeout 300 "$build/bin/ddtc-bench" --calibrate-traffic \
  --out "$out/traffic-calibration.json"
# What one pack or unpack call costs its thread, beside the driver calls it
# is made of; and the same without the pointer checks.
step launch-cost timeout 120 "$build/bin/ddtc-bench" --launch-cost \
  --out "$out/launch-cost.json"
step launch-cost-unchecked timeout 120 env DDTC_CHECK_POINTERS=0 \
  "$build/bin/ddtc-bench" --launch-cost --out "$out/launch-cost-unchecked.json"
calibration=()
[ -s "$out/traffic-calibration.json" ] &&
  calibration=(--traffic-calibration "$out/traffic-calibration.json")
ok_rc=85 step bench timeout 500 "$build/bin/ddtc-bench" --layouts "$layouts" \
  --out "$out/ddtc.json" "${calibration[@]}" "${yaksa[@]}"
rc=$?
# 85: a Yaksa call did not return; ddtc.json holds the layouts done. The
# others run in new processes (each may stop the same way), merged in; once
# Yaksa's pack into mapped host memory has not returned, the parts leave it
# out (--yaksa-no-host) rather than wait for it on every layout.
part=0
while [ $rc -eq 85 ] && [ $part -lt 50 ]; do
  part=$((part + 1))
  if [ ${#yaksa[@]} -gt 0 ] && [[ " ${yaksa[*]} " != *" --yaksa-no-host "* ]] &&
     python3 "$root/bench/bench-parts.py" host-stuck "$out/ddtc.json"; then
    echo "== Yaksa's pack into mapped host memory did not return: the" \
      "layouts left run without it"
    yaksa+=(--yaksa-no-host)
  fi
  only=()
  for name in $(python3 "$root/bench/bench-parts.py" left "$layouts" \
                  "$out/ddtc.json"); do
    only+=(--only "$name")
  done
  [ ${#only[@]} -eq 0 ] && break
  wait_gpu_idle
  ok_rc=85 step "bench-part-$part" timeout 500 "$build/bin/ddtc-bench" \
    --layouts "$layouts" --out "$out/ddtc-part-$part.json" \
    "${calibration[@]}" "${yaksa[@]}" "${only[@]}"
  rc=$?
  python3 "$root/bench/bench-parts.py" merge "$out/ddtc.json" \
    "$out/ddtc-part-$part.json"
done
# The transposing layouts once more with the strided kernels instead of the
# shared-memory tile kernels, to compare the two (ddtc-notiles.json).
step bench-notiles timeout 120 env DDTC_TILES=0 DDTC_CACHE_DIR="$(mktemp -d)" \
  "$build/bin/ddtc-bench" --layouts "$layouts" --only transpose-4096 \
  --out "$out/ddtc-notiles.json"
# The layouts no kernel was tuned for (bench/zoo.py), checked and timed
# the same way (zoo.json; the table is in zoo.log).
zoo_layouts=$(mktemp)
python3 "$root/bench/layouts.py" --zoo --tsv > "$zoo_layouts"
step zoo timeout 300 env DDTC_CACHE_DIR="$(mktemp -d)" "$build/bin/ddtc-bench" \
  --layouts "$zoo_layouts" --out "$out/zoo.json" "${calibration[@]}"
# The vectors, faces and particles find their kernels built into the
# library (origin 2 in the log); the period layouts' kernels come from disk
# (origin 4).
step disk-cache timeout 120 "$build/bin/ddtc-bench" --layouts "$layouts" --disk-child \
  --only vector-16B-aligned --only cube512-z-lo --only lower-4000 --only particles \
  --only double-char --only rows-of-records
(cd "$root/bench" && step torch timeout 300 python3 torch_baseline.py --out "$out/torch.json")
(cd "$root/bench" && step summary python3 summarize.py --dir "$out")
cat "$out/summary.txt" 2>/dev/null
fi

# ---- MPI: ddtc-mpi-bench through libddtc-mpi ---------------------------------
# Two ranks ping-pong device buffers with derived datatypes through
# libddtc-mpi (LD_PRELOAD), against host-staged references: first over shared
# memory (btl vader), then over TCP loopback (up to 16 MiB). Writes
# mpi-bench{,-tcp}.{json,txt,err} and, through mpi-summarize.py,
# mpi-bench{,-tcp}-summary.txt and -bandwidth.png; then the halo exchange
# (mpi-halo.{json,txt,err}, mpi-halo-summary.txt). Needs
# build/lib/libddtc-mpi.so, build/bin/ddtc-mpi-bench and mpirun; skipped
# (visibly) otherwise, and with DDTC_GPU_STEPS=tests.
# With one GPU both ranks share it; two processes taking turns on a GPU pay a
# context switch (about 70 us) at every switch, so the ranks run under an MPS
# daemon of their own when nvidia-cuda-mps-control is there and a probe run
# works (DDTC_BENCH_MPS=0 turns that off). Ranks are not bound to cores
# (--bind-to none): a rank's background threads would share its one core.
mpi_bench() {
  local name=$1
  shift
  echo "== $name: $*"
  local t0=$SECONDS
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    timeout 600 mpirun -np 2 --oversubscribe --bind-to none --mca pml ob1 \
    "$@" 2>"$out/$name.err" | tee "$out/$name.txt"
  local rc=${PIPESTATUS[0]}
  tail -n 5 "$out/$name.err"
  echo "== $name: exit $rc after $((SECONDS - t0)) s"
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then status=1; fi
  return $rc
}
if want bench mpi && [ "${DDTC_MPI_BENCH:-1}" != 0 ]; then
  mpibench="$build/bin/ddtc-mpi-bench"
  if [ -f "$mpilib" ] && [ -x "$mpibench" ] && command -v mpirun >/dev/null; then
    mpi_x=(-x LD_PRELOAD="$mpilib" -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR)
    mps_started=0
    if [ "${DDTC_BENCH_MPS:-1}" != 0 ] && [ "$ngpu" = 1 ] &&
       command -v nvidia-cuda-mps-control >/dev/null; then
      export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
      if nvidia-cuda-mps-control -d &&
         OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
         timeout 120 mpirun -np 2 --oversubscribe --bind-to none --mca pml ob1 \
           --mca btl self,vader "${mpi_x[@]}" -x CUDA_MPS_PIPE_DIRECTORY \
           -x CUDA_MPS_LOG_DIRECTORY "$mpibench" --layouts cube-z-face \
           --sizes 8 --reps 1 --host-iters 10 --host-reps 1 \
           >"$out/mpi-mps-probe.log" 2>&1; then
        mps_started=1
        mpi_x+=(-x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY)
        echo "== mpi-bench: one GPU, the ranks share it through MPS"
      else
        echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
        echo "== mpi-bench: one GPU, MPS did not work (mpi-mps-probe.log);" \
             "the ranks take turns on the GPU"
      fi
    fi
    mpi_bench mpi-bench --mca btl self,vader "${mpi_x[@]}" \
      "$mpibench" --json "$out/mpi-bench.json"
    # The same paths with fragments growing from 128 KiB (the default is
    # fixed fragments): what a short first pack and last unpack change.
    mpi_bench mpi-bench-growing-fragments --mca btl self,vader "${mpi_x[@]}" \
      -x DDTC_MPI_FRAGMENT_MIN=128K "$mpibench" --sizes 1M,4M,16M \
      --json "$out/mpi-bench-growing-fragments.json"
    mpi_bench mpi-bench-tcp --mca btl self,tcp "${mpi_x[@]}" \
      "$mpibench" --max-bytes 16M --json "$out/mpi-bench-tcp.json"
    # The 3-d halo exchange of a 512^3 cube against the same bytes as
    # contiguous device buffers (target: within 1.3x).
    mpi_bench mpi-halo --mca btl self,vader "${mpi_x[@]}" "$mpibench" \
      --halo 512 --json "$out/mpi-halo.json"
    if [ $mps_started = 1 ]; then
      echo quit | nvidia-cuda-mps-control
      cp "$CUDA_MPS_LOG_DIRECTORY/control.log" "$out/mpi-mps-control.log" 2>/dev/null
    fi
    if [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ]; then
      rm -rf "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
      unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    fi
    mpi_jsons=()
    for j in "$out/mpi-bench.json" "$out/mpi-bench-tcp.json" \
             "$out/mpi-halo.json"; do
      [ -f "$j" ] && mpi_jsons+=("$j")
    done
    if [ ${#mpi_jsons[@]} -gt 0 ]; then
      step mpi-summary python3 "$root/bench/mpi-summarize.py" --out "$out" \
        "${mpi_jsons[@]}"
      cat "$out"/mpi-bench*-summary.txt 2>/dev/null
    fi
  else
    echo "== mpi-bench: skipped (needs $mpilib, $mpibench and mpirun)"
  fi
fi

# ---- MPI between processes of one host: CUDA IPC ------------------------------
# One rank per GPU where there are two (ranks take GPU local-rank mod count).
if want ipc && [ -f "$mpilib" ] && command -v mpirun >/dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  layer="$build/bin/ddtc-mpi-layer-test"
  ipc_x=("${mpirun_x[@]}" -x DDTC_MPI_PROTOCOL=ipc)
  # DDTC_IPC_PARTS picks parts of this step (each fits one 10-minute run):
  # tests (the layer suite and memcheck), bench (calibration and the main
  # benchmark), sweeps (read mode, read streams, fragment sizes, contention,
  # the halo exchange; it calibrates again when bench did not run), probes
  # (with two GPUs and CuPy: the SMs' and the copy engine's rates on the
  # peer's memory, whole and in fragments, and a pack or unpack call's host
  # cost by where its packed buffer lives).
  ipc_parts=" ${DDTC_IPC_PARTS:-tests bench sweeps probes} "
  ipc_part() { [[ $ipc_parts == *" $1 "* ]]; }
  if ipc_part tests; then
  step ipc-layer-auto timeout 300 "${mpirun_x[@]}" -np 2 "$layer" --cases 300 \
    --expect-ipc used
  step ipc-layer-ring timeout 300 "${ipc_x[@]}" -np 2 -x DDTC_MPI_FRAGMENT=3000 \
    -x DDTC_MPI_DEPTH=3 -x DDTC_MPI_IPC_CACHE=3 "$layer" --cases 300 \
    --expect-ipc used
  step ipc-layer-staged timeout 300 "${ipc_x[@]}" -np 2 \
    -x DDTC_MPI_IPC_READ=stage -x DDTC_MPI_FRAGMENT=65536 -x DDTC_MPI_DEPTH=2 \
    "$layer" --cases 200 --expect-ipc used
  # Pulled fragments moved by one copy kernel where both types allow it,
  # then with that kernel off (packed into staging, unpacked from it).
  step ipc-layer-pull timeout 300 "${ipc_x[@]}" -np 2 \
    -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=65536 -x DDTC_MPI_DEPTH=2 \
    "$layer" --cases 200 --expect-ipc fused
  step ipc-layer-pull-unfused timeout 300 "${ipc_x[@]}" -np 2 \
    -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_IPC_FUSE=0 -x DDTC_MPI_FRAGMENT=65536 \
    "$layer" --cases 120 --expect-ipc unfused
  # A receiver keeping two peers' types: messages naming a type it dropped
  # go through host memory (a persistent receive takes both kinds in turn).
  step ipc-layer-pull-few-types timeout 300 "${ipc_x[@]}" -np 2 \
    -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_PEER_TYPES=2 "$layer" --cases 100 \
    --suite p2p --expect-ipc resent
  # auto pulls within one GPU; across two where the model says so.
  auto_expect=used
  [ "$ngpu" -lt 2 ] && auto_expect=pulled
  step ipc-layer-read-auto timeout 300 "${ipc_x[@]}" -np 2 \
    -x DDTC_MPI_IPC_READ=auto -x DDTC_MPI_FRAGMENT=65536 "$layer" --cases 200 \
    --expect-ipc $auto_expect
  step ipc-layer-threads timeout 300 "${ipc_x[@]}" -np 2 \
    -x DDTC_MPI_FRAGMENT=5000 "$layer" --cases 200 --threads 4 --suite p2p \
    --expect-ipc used
  step ipc-layer-wildcard timeout 300 "${ipc_x[@]}" -np 4 \
    -x DDTC_MPI_FRAGMENT=999 "$layer" --suite wildcard --expect-ipc used
  step ipc-layer-one-gpu timeout 300 "${ipc_x[@]}" -np 2 \
    -x CUDA_VISIBLE_DEVICES=0 -x DDTC_MPI_FRAGMENT=7000 "$layer" --cases 200 \
    --expect-ipc used
  step ipc-layer-off timeout 300 "${mpirun_x[@]}" -np 2 -x DDTC_MPI_IPC=0 \
    "$layer" --cases 100 --suite p2p --expect-ipc unused
  if command -v compute-sanitizer >/dev/null; then
    step ipc-memcheck timeout 400 "${ipc_x[@]}" -np 2 \
      -x DDTC_MPI_FRAGMENT=4096 compute-sanitizer --tool memcheck \
      --error-exitcode 3 --report-api-errors no "$layer" --cases 30 \
      --suite p2p --expect-ipc used
  fi
  fi
  mpibench="$build/bin/ddtc-mpi-bench"
  if [ -x "$mpibench" ]; then
    ipcb_x=(--mca btl self,vader -x LD_PRELOAD="$mpilib" -x LD_LIBRARY_PATH
            -x DDTC_CACHE_DIR)
    # The model's figures for this GPU pair (into DDTC_CACHE_DIR, where the
    # benchmarks below find them).
    if ipc_part bench || ipc_part sweeps; then
      [ -x "$build/bin/ddtc-mpi-calibrate" ] &&
        mpi_bench mpi-calibrate "${ipcb_x[@]}" "$build/bin/ddtc-mpi-calibrate" \
          --json "$out/mpi-calibrate.json"
    fi
    if ipc_part bench; then
    mpi_bench mpi-ipc-bench "${ipcb_x[@]}" "$mpibench" --refs device \
      --max-bytes 256M --reps ${DDTC_IPC_BENCH_REPS:-10} \
      --json "$out/mpi-ipc-bench.json"
    # ddtc and (a) alone, from 1 MiB: interleaved with (b) and (c), the
    # first IPC message after their host traffic is slower.
    mpi_bench mpi-ipc-bench-alone "${ipcb_x[@]}" "$mpibench" --refs device \
      --sizes 1M,4M,16M,64M,256M --max-bytes 256M --time ddtc,a \
      --reps ${DDTC_IPC_BENCH_REPS:-10} --json "$out/mpi-ipc-bench-alone.json"
    fi
    if ipc_part sweeps; then
    # The receiver's other way to read a fragment, and fixed fragment sizes
    # against the model's choice.
    sweep_layouts=vector-16B,lower-triangular,particles,cube-x-face
    mpi_bench mpi-ipc-read-stage "${ipcb_x[@]}" -x DDTC_MPI_IPC_READ=stage \
      "$mpibench" --refs device --layouts $sweep_layouts --sizes 1M,4M,64M \
      --reps 7 --json "$out/mpi-ipc-read-stage.json"
    # The receiver's direct reads on one stream (the default spreads them
    # over two), ddtc and (a) alone.
    mpi_bench mpi-ipc-read-streams-1 "${ipcb_x[@]}" -x DDTC_MPI_READ_STREAMS=1 \
      "$mpibench" --refs device --sizes 4M,16M,64M --time ddtc,a \
      --reps 7 --json "$out/mpi-ipc-read-streams-1.json"
    # The receiver packing from the sender's buffer (no pack, no signal per
    # fragment on the sender), ddtc and (a) alone.
    mpi_bench mpi-ipc-read-pull "${ipcb_x[@]}" -x DDTC_MPI_IPC_READ=pull \
      "$mpibench" --refs device --sizes 1M,4M,16M,64M --time ddtc,a \
      --reps 7 --json "$out/mpi-ipc-read-pull.json"
    # The same without the copy kernel: each pulled fragment packed into
    # staging and unpacked from it.
    mpi_bench mpi-ipc-read-pull-unfused "${ipcb_x[@]}" -x DDTC_MPI_IPC_READ=pull \
      -x DDTC_MPI_IPC_FUSE=0 "$mpibench" --refs device --sizes 1M,4M,16M,64M \
      --time ddtc,a --reps 7 --json "$out/mpi-ipc-read-pull-unfused.json"
    # Fixed fragments (the first as large as the others) against 4 MiB
    # fragments growing from 256 KiB.
    for f in 1M 4M 4M-ramp; do
      first=${f%-ramp}
      [ "$f" = 4M-ramp ] && first=256K
      mpi_bench mpi-ipc-fragment-$f "${ipcb_x[@]}" \
        -x DDTC_MPI_FRAGMENT=${f%-ramp} -x DDTC_MPI_FRAGMENT_MIN=$first \
        "$mpibench" --refs device --layouts $sweep_layouts --sizes 1M,4M,64M \
        --reps 7 --json "$out/mpi-ipc-fragment-$f.json"
    done
    # An application kernel holding half of each GPU's SMs, without and with
    # a cap on the transfers' CTAs: each run times every repetition with and
    # without it and prints the loss.
    for c in half half-capped; do
      cap=()
      [ $c = half-capped ] && cap+=(-x DDTC_MPI_CTAS=16)
      mpi_bench mpi-ipc-contend-$c "${ipcb_x[@]}" "${cap[@]}" "$mpibench" \
        --refs device --layouts $sweep_layouts --sizes 4M,64M --reps 7 \
        --contend 0.5 --json "$out/mpi-ipc-contend-$c.json"
    done
    # The 3-d halo exchange through IPC: a small odd block first (a quick
    # check), then the 512^3 cube against contiguous device buffers.
    mpi_bench mpi-ipc-halo-small "${ipcb_x[@]}" "$mpibench" \
      --halo-layout 5x12x20 --reps 5 --json "$out/mpi-ipc-halo-small.json"
    mpi_bench mpi-ipc-halo "${ipcb_x[@]}" "$mpibench" --halo 512 \
      --json "$out/mpi-ipc-halo.json"
    mpi_bench mpi-ipc-halo-pull "${ipcb_x[@]}" -x DDTC_MPI_IPC_READ=pull \
      "$mpibench" --halo 512 --json "$out/mpi-ipc-halo-pull.json"
    mpi_bench mpi-ipc-halo-pull-unfused "${ipcb_x[@]}" -x DDTC_MPI_IPC_READ=pull \
      -x DDTC_MPI_IPC_FUSE=0 "$mpibench" --halo 512 \
      --json "$out/mpi-ipc-halo-pull-unfused.json"
    ipc_jsons=()
    for j in "$out"/mpi-ipc-contend-half*.json "$out/mpi-ipc-halo.json"; do
      [ -f "$j" ] && ipc_jsons+=("$j")
    done
    if [ ${#ipc_jsons[@]} -gt 0 ]; then
      step mpi-ipc-summary python3 "$root/bench/mpi-summarize.py" \
        --out "$out" "${ipc_jsons[@]}"
      cat "$out"/mpi-ipc-contend-half*-summary.txt \
          "$out"/mpi-ipc-halo-summary.txt 2>/dev/null
    fi
    fi
  fi
  if ipc_part probes; then
    if [ "$ngpu" -ge 2 ] && python3 -c "import cupy" 2>/dev/null; then
      step ipc-peer-reads timeout 200 python3 "$root/bench/peer-reads.py" \
        --devices 0,1 --json "$out/ipc-peer-reads.json"
      for m in 64 16; do
        step ipc-peer-fragments-$m timeout 150 python3 \
          "$root/bench/peer-fragments.py" --devices 0,1 --mib $m \
          --json "$out/ipc-peer-fragments-$m.json"
      done
      for m in 4 64; do
        step ipc-peer-rows-$m timeout 150 python3 "$root/bench/peer-rows.py" \
          --devices 0,1 --mib $m --json "$out/ipc-peer-rows-$m.json"
      done
      step ipc-peer-rows-ipc timeout 150 python3 \
        "$root/bench/peer-rows-ipc.py" --devices 0,1 --mib 16 \
        --json "$out/ipc-peer-rows-ipc.json"
      step ipc-launch-cost timeout 200 python3 "$root/bench/launch-cost.py" \
        "$build/lib/libddtc.so" --devices 0,1 --json "$out/ipc-launch-cost.json"
    else
      echo "== ipc probes: skipped (need two GPUs and CuPy)"
    fi
  fi
fi
# ---- end of the MPI section --------------------------------------------------

# ---- External suites: MPICH's GPU tests and the OSU benchmarks -----------------
if want suites && [ -d "$root/.external" ]; then
  step mpi-suites timeout 560 "$root/bench/mpi-suites.sh" --quick \
    "$root/.external" "$build" "$out/suites"
  cat "$out/suites/suites-summary.txt" 2>/dev/null
elif want suites; then
  echo "== mpi-suites: skipped (no source bundles in $root/.external)"
fi

rm -rf "$DDTC_CACHE_DIR"
[ -n "${layouts:-}" ] && rm -f "$layouts"
echo "results in $out"
exit $status
