#!/bin/bash
set -u
bash exp/ab7.sh 2>&1 | tail -5
DDTC_GPU_STEPS="tests" bench/run-gpu.sh build /tmp/res > /tmp/res.log 2>&1; rc=$?
grep -E "passed|failed|SUMMARY|served|exit" /tmp/res.log | head -40
cd /tmp && tar czf $OUT/res.tgz res res.log
exit $rc
