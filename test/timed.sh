#!/bin/sh
# timed.sh -- make check runs every test through this: the test, then its
# wall time as the last line of its log ("time: S s TEST"), which
# scripts/test collects into one table.
start=$(date +%s%N)
"$@"
rc=$?
end=$(date +%s%N)
awk -v a="$start" -v b="$end" -v t="$1" 'BEGIN { printf "time: %.1f s %s\n", (b - a) / 1e9, t }'
exit $rc
