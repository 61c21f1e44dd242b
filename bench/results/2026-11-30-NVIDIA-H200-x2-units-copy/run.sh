#!/bin/bash
# PARTS: tests bench streams memcheck halo bench2 longspec devtype suite records onegpu
set -u
cd "$(dirname "$0")/.."
B=$PWD/build-gpu
O=$OUT/r; mkdir -p $O
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
export DDTC_CACHE_DIR=$O/cache
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for f in $B/lib/*.gz $B/lib-devtype/*.gz $B/bin/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
nvidia-smi -L > $O/gpus.txt; nvidia-smi topo -m >> $O/gpus.txt 2>&1; nproc >> $O/gpus.txt
MR0=(mpirun -np 2 --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader -x LD_LIBRARY_PATH -x DDTC_CACHE_DIR)
MR=("${MR0[@]}" -x LD_PRELOAD=$B/lib/libddtc-mpi.so)
run() { local name=$1 t=$2; shift 2; echo "== $name: $*"; local t0=$SECONDS; timeout $t "$@" > $O/$name.txt 2> $O/$name.err; echo "== $name exit $? after $((SECONDS-t0)) s"; tail -n 4 $O/$name.txt; tail -n 2 $O/$name.err; }
has() { [[ " $PARTS " == *" $1 "* ]]; }
L=$B/bin/ddtc-mpi-layer-test; M=$B/bin/ddtc-mpi-bench
IPC=(-x DDTC_MPI_PROTOCOL=ipc)
if has tests; then
  run layer-pull 200 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=65536 -x DDTC_MPI_DEPTH=2 $L --cases 200 --expect-ipc fused
  run layer-pull-small 200 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=3000 -x DDTC_MPI_FRAGMENT_MIN=700 $L --cases 150 --expect-ipc fused
  run layer-auto 200 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=auto -x DDTC_MPI_FRAGMENT=65536 $L --cases 200 --expect-ipc used
  run layer-pull-one-gpu 200 "${MR[@]}" "${IPC[@]}" -x CUDA_VISIBLE_DEVICES=0 -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=7000 $L --cases 150 --expect-ipc fused
fi
if has longspec; then
  run layer-long-spec-one-gpu 100 "${MR[@]}" "${IPC[@]}" -x CUDA_VISIBLE_DEVICES=0 -x DDTC_MPI_IPC_READ=auto $L --suite long-spec
fi
if has bench || has bench2 || has streams || has halo || has records; then
  [ -f $O/calibrate.json ] || run calibrate 200 "${MR[@]}" $B/bin/ddtc-mpi-calibrate --json $O/calibrate.json
fi
for r in 1 2; do
  has bench$([ $r = 1 ] || echo 2) || continue
  for mode in direct pull auto; do
    run bench-$mode-$r 200 "${MR[@]}" -x DDTC_MPI_IPC_READ=$mode $M --refs device --sizes 1M,4M,16M,64M --time ddtc,a --reps 10 --json $O/bench-$mode-$r.json
  done
done
if has streams; then
  # Pulled rows through a copy engine with the reads on one stream and on two.
  for s in 1 2; do
    run bench-streams$s 200 "${MR[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_READ_STREAMS=$s $M --refs device --layouts vector-4KiB,vector-256B,cube-slab,lower-triangular --sizes 4M,16M,64M --time ddtc,a --reps 10 --json $O/bench-streams$s.json
  done
fi
if has devtype; then
  # The copy engine's rows with the memory types said to be device memory
  # (lib-devtype/libddtc-mpi.so: the same commit with that one change)
  # against unified.
  for r in 1 2; do
    for v in unified devtype; do
      PL=$B/lib/libddtc-mpi.so; [ $v = devtype ] && PL=$B/lib-devtype/libddtc-mpi.so
      run bench-$v-$r 100 "${MR0[@]}" -x LD_PRELOAD=$PL -x DDTC_MPI_IPC_READ=pull $M --refs device --layouts vector-4KiB,vector-256B,cube-slab,lower-triangular --sizes 4M,16M,64M --time ddtc,a --reps 10 --json $O/bench-$v-$r.json
    done
  done
fi
if has records; then
  # Records copied a block a thread (the same type both sides), pulled,
  # beside direct reads and auto, twice.
  for r in 1 2; do
    for mode in direct pull auto; do
      run bench-rec-$mode-$r 100 "${MR[@]}" -x DDTC_MPI_IPC_READ=$mode $M --refs device --layouts particles,vector-256B,cube-slab,vector-to-contig --sizes 1M,4M,16M,64M --time ddtc,a --reps 10 --json $O/bench-rec-$mode-$r.json
    done
  done
fi
if has onegpu; then
  # Both ranks on one GPU: direct against auto (which pulls every type
  # there), and the halo exchange.
  G=(-x CUDA_VISIBLE_DEVICES=0)
  run calibrate-one-gpu 200 "${MR[@]}" "${G[@]}" $B/bin/ddtc-mpi-calibrate --json $O/calibrate-one-gpu.json
  for mode in direct auto; do
    run bench-one-gpu-$mode 200 "${MR[@]}" "${G[@]}" -x DDTC_MPI_IPC_READ=$mode $M --refs device --sizes 1M,4M,16M,64M --time ddtc,a --reps 10 --json $O/bench-one-gpu-$mode.json
  done
  for mode in direct auto direct auto; do
    n=halo-one-gpu-$mode; [ -f $O/$n.json ] && n=$n-again
    run $n 100 "${MR[@]}" "${G[@]}" -x DDTC_MPI_IPC_READ=$mode $M --halo 512 --json $O/$n.json
  done
fi
if has suite; then
  DDTC_GPU_STEPS=ipc DDTC_IPC_PARTS=tests timeout 300 bash bench/run-gpu.sh build-gpu $O/suite > $O/suite.log 2>&1
  echo "== suite exit $?"; grep -E "^== |passed|failed|ERROR SUMMARY" $O/suite.log | tail -40
fi
if has halo; then
  for r in 1 2; do
    for mode in direct auto; do
      run halo-$mode-$r 100 "${MR[@]}" -x DDTC_MPI_IPC_READ=$mode $M --halo 512 --json $O/halo-$mode-$r.json
    done
  done
fi
if has memcheck && command -v compute-sanitizer >/dev/null; then
  run memcheck-pull 240 "${MR[@]}" "${IPC[@]}" -x DDTC_MPI_IPC_READ=pull -x DDTC_MPI_FRAGMENT=65536 compute-sanitizer --tool memcheck --error-exitcode 3 --report-api-errors no $L --cases 24 --suite p2p --expect-ipc fused
fi
rm -rf $O/cache
tar czf $OUT/r.tgz -C $OUT r
