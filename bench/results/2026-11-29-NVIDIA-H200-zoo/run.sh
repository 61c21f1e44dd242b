#!/usr/bin/env bash
# The zoo layouts (bench/zoo.py) through ddtc-bench on one GPU, with the
# traffic calibration of the last full run of this GPU.
#   run.sh BUILD OUT
set -eu
build=$1 out=$2

mkdir -p "$out"
python3 bench/layouts.py --zoo --tsv > "$out/zoo.tsv"
export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export DDTC_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/gpu.txt" || true
timeout 500 "$build/bin/ddtc-bench" --layouts "$out/zoo.tsv" --out "$out/ddtc.json" \
  --traffic-calibration bench/results/2026-11-29-NVIDIA-H200-full-run-3/traffic-calibration.json \
  > "$out/zoo.log" 2>&1 || echo "ddtc-bench exit $?" >> "$out/zoo.log"
python3 bench/summarize.py --dir "$out" > "$out/summarize.log" 2>&1 || true
