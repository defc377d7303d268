#!/bin/sh
# swpps.sh -- packets per second of the switch core's workers at 1 and 2
# threads (acis-switchd --threads), by bench/swpps's in-process load
# generator: a small allreduce (8 B, int32 sum) and a barrier, at 16 and
# 256 members, each the median of three runs of -d SECONDS, the thread
# counts alternated.  What docs/performance.md's "Packets per second of
# a switch's workers" reports.  Timings: run it on a quiet machine.
#
#   bench/swpps.sh [BUILD_DIR] [SECONDS]      default: build, 1
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" 2>/dev/null && pwd) || { echo "$0: no build directory ${1:-$top/build}" >&2; exit 1; }
secs=${2:-1}
[ -x "$build/bench/swpps" ] || { echo "bench/swpps.sh: no $build/bench/swpps: build first" >&2; exit 1; }

# mpps T P COLL: the total Mpps in of one run
mpps() {
    "$build/bench/swpps" -T "$1" -p "$2" -t "$3" -s 8 -d "$secs" |
        sed -n 's/.*worker[s]*: \([0-9.]*\) Mpps in.*/\1/p'
}
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }

printf '%-10s %8s %14s %14s %8s\n' collective members '1 thread Mpps' '2 threads Mpps' ratio
for p in 16 256; do
    for t in allreduce barrier; do
        a1=$(mpps 1 "$p" "$t"); a2=$(mpps 2 "$p" "$t")
        b1=$(mpps 1 "$p" "$t"); b2=$(mpps 2 "$p" "$t")
        c1=$(mpps 1 "$p" "$t"); c2=$(mpps 2 "$p" "$t")
        one=$(median "$a1" "$b1" "$c1"); two=$(median "$a2" "$b2" "$c2")
        awk -v t="$t" -v p="$p" -v a="$one" -v b="$two" \
            'BEGIN { printf "%-10s %8d %14.1f %14.1f %8.2f\n", t, p, a, b, (a ? b / a : 0) }'
    done
done
