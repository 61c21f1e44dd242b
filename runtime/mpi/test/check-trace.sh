#!/bin/sh
# Runs a layer test (the arguments after PREFIX) with DDTC_MPI_TRACE=PREFIX
# set by the caller, then checks the timeline each of two ranks wrote:
# the start line, the steps of a pipelined transfer on both sides, and
# times that never go back.
prefix=$1
shift
rm -f "$prefix".0 "$prefix".1
"$@" || exit $?
status=0
for rank in 0 1; do
  f=$prefix.$rank
  if [ ! -s "$f" ]; then
    echo "check-trace: rank $rank wrote no timeline $f"
    exit 1
  fi
  head -n 1 "$f" | grep -q '^# start [0-9.]* us' ||
    { echo "check-trace: $f lacks its start line"; status=1; }
  for step in pipeline-send pack-launched packed fragment-posted \
              fragment-sent note-received fragment-received unpacked; do
    grep -q " $step " "$f" ||
      { echo "check-trace: $f has no step $step"; status=1; }
  done
  awk 'NR > 1 && $1 + 0 < last { bad = 1 } NR > 1 { last = $1 + 0 }
       END { exit bad }' "$f" ||
    { echo "check-trace: the times in $f go back"; status=1; }
done
[ $status = 0 ] && echo "check-trace: both timelines complete"
exit $status
