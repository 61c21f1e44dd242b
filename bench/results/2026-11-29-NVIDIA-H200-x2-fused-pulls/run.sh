#!/bin/bash
# PARTS: tests bench halo memcheck bench2
set -u
cd "$(dirname "$0")/.."
B=$PWD/build-gpu
O=$OUT/r; mkdir -p $O
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
export DDTC_CACHE_DIR=$O/cache
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for f in $B/lib/*.gz $B/bin/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
nvidia-smi -L > $O/gpus.txt; nvidia-smi topo -m >> $O/gpus.txt 2>&1; nproc >> $O/gpus.txt
MR=(mpirun -np 2 --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader -x LD_PRELOAD=$B/lib/libddtc-mpi.so -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR)
run() { local name=$1 t=$2; shift 2; echo "== $name: $*"; local t0=$SECONDS; timeout $t "$@" > $O/$name.txt 2> $O/$name.err; echo "== $name exit $? after $((SECONDS-t0)) s"; tail -n 4 $O/$name.txt; tail -n 2 $O/$name.err; }
has() { [[ " $PARTS " == *" $1 "* ]]; }
L=$B/bin/ddtc-mpi-layer-test; M=$B/bin/ddtc-mpi-bench
IPC=(-x DDTC_MPI_PROTOCOL=ipc)
if has tests; then
run layer-pull 200 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=65536 -x DDTC_MPI_DEPTH=2 $L --cases 200 --expect-ipc fused
run layer-pull-small 200 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=3000 -x DDTC_MPI_FRAGMENT_MIN=700 $L --cases 150 --expect-ipc fused
run layer-pull-unfused 200 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_IPC_FUSE=0 -x DDTC_MPI_FRAGMENT=65536 $L --cases 120 --expect-ipc unfused
run layer-pull-one-gpu 200 "${MR[@]}" "${IPC[@]}" -x CUDA_VISIBLE_DEVICES=0 -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=7000 $L --cases 150 --expect-ipc fused
fi
if has bench || has halo || has bench2 || has auto || has final || has rows4k || has rows2d; then
  [ -f $O/calibrate.json ] || run calibrate 200 "${MR[@]}" $B/bin/ddtc-mpi-calibrate --json $O/calibrate.json
fi
for r in 1 2; do
  has bench$([ $r = 1 ] || echo 2) || continue
  for mode in direct pull pull-unfused; do
    X=(); [ $mode != direct ] && X+=(-x DDTC_MPI_IPC_READ=pull); [ $mode = pull-unfused ] && X+=(-x DDTC_MPI_IPC_FUSE=0)
    run bench-$mode-$r 200 "${MR[@]}" "${X[@]}" $M --refs device --sizes 1M,4M,16M,64M --time ddtc,a --reps 10 --json $O/bench-$mode-$r.json
  done
done
if has halo; then
  for mode in direct pull pull-unfused direct pull pull-unfused; do
    X=(); [ $mode != direct ] && X+=(-x DDTC_MPI_IPC_READ=pull); [ $mode = pull-unfused ] && X+=(-x DDTC_MPI_IPC_FUSE=0)
    n=halo-$mode; [ -f $O/$n.json ] && n=$n-again; [ -f $O/$n.json ] && n=$n-2
    run $n 200 "${MR[@]}" "${X[@]}" $M --halo 512 --json $O/$n.json
  done
fi
if has auto; then
  run layer-auto 200 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=auto -x DDTC_MPI_FRAGMENT=65536 $L --cases 200 --expect-ipc used
  run layer-auto-threads 200 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=auto $L --cases 120 --threads 4 --suite p2p --expect-ipc used
  for r in 1 2; do
    for mode in direct auto; do
      run bench-$mode-a$r 200 "${MR[@]}" -x DDTC_MPI_IPC_READ=$mode $M --refs device --sizes 1M,4M,16M,64M --time ddtc,a --reps 10 --json $O/bench-$mode-a$r.json
    done
  done
  for r in 1 2 3; do
    for mode in direct auto; do
      run halo-$mode-a$r 100 "${MR[@]}" -x DDTC_MPI_IPC_READ=$mode $M --halo 512 --json $O/halo-$mode-a$r.json
    done
  done
fi
if has final; then
  run layer-pull 200 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=65536 -x DDTC_MPI_DEPTH=2 $L --cases 200 --expect-ipc fused
  run layer-pull-small 200 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=3000 -x DDTC_MPI_FRAGMENT_MIN=700 $L --cases 150 --expect-ipc fused
  run layer-auto 200 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=auto -x DDTC_MPI_FRAGMENT=65536 $L --cases 200 --expect-ipc used
  run layer-pull-one-gpu 200 "${MR[@]}" "${IPC[@]}" -x CUDA_VISIBLE_DEVICES=0 -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=7000 $L --cases 150 --expect-ipc fused
  for r in 1 2; do
    for mode in direct pull auto; do
      run bench-$mode-f$r 200 "${MR[@]}" -x DDTC_MPI_IPC_READ=$mode $M --refs device --sizes 1M,4M,16M,64M --time ddtc,a --reps 10 --json $O/bench-$mode-f$r.json
    done
  done
  for r in 1 2; do
    for mode in direct pull auto; do
      run halo-$mode-f$r 100 "${MR[@]}" -x DDTC_MPI_IPC_READ=$mode $M --halo 512 --json $O/halo-$mode-f$r.json
    done
  done
  run memcheck-pull 150 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=65536 compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no $L --cases 20 --suite p2p --expect-ipc fused
fi
if has rows4k; then
  for rows in 256 0; do
    run bench-rows$rows 200 "${MR[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_COPY_ENGINE_ROWS=$rows $M --refs device --layouts vector-4KiB,vector-256B,cube-slab --sizes 4M,16M,64M --time ddtc,a --reps 10 --json $O/bench-rows$rows.json
  done
  run peer-rows-16 100 python3 bench/peer-rows.py --mib 16 --reps 15 --json $O/peer-rows-16.json
fi
if has rows2d; then
  for r in 1 2; do
    for rows in 256 0; do
      run bench-2d-rows$rows-$r 100 "${MR[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_COPY_ENGINE_ROWS=$rows $M --refs device --layouts vector-4KiB,vector-256B,cube-slab --sizes 4M,16M,64M --time ddtc,a --reps 10 --json $O/bench-2d-rows$rows-$r.json
    done
  done
  run layer-pull 200 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=65536 -x DDTC_MPI_DEPTH=2 $L --cases 200 --expect-ipc fused
  for mode in direct auto; do
    run bench-$mode-2d 200 "${MR[@]}" -x DDTC_MPI_IPC_READ=$mode $M --refs device --sizes 1M,4M,16M,64M --time ddtc,a --reps 10 --json $O/bench-$mode-2d.json
  done
fi
if has suite; then
  DDTC_GPU_STEPS=ipc DDTC_IPC_PARTS=tests timeout 400 bash bench/run-gpu.sh build-gpu $O/suite > $O/suite.log 2>&1
  echo "== suite exit $?"; grep -E "^== |passed|failed|ERROR SUMMARY" $O/suite.log | tail -40
fi
if has trace; then
  for mode in pull direct; do
    X=(); [ $mode != direct ] && X+=(-x DDTC_MPI_IPC_READ=pull)
    run trace-$mode 120 "${MR[@]}" "${X[@]}" -x DDTC_MPI_TRACE=$O/trace-$mode -x DDTC_MPI_PROFILE=1 $M --refs device --layouts vector-4KiB --sizes 4M --time ddtc,a --reps 5 --json $O/trace-$mode.json
  done
fi
if has memcheck && command -v compute-sanitizer >/dev/null; then
  run memcheck-pull 240 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=4096 compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no $L --cases 20 --suite p2p --expect-ipc fused
fi
rm -rf $O/cache
tar czf $OUT/r.tgz -C $OUT r
