#!/bin/sh
# swcore.sh -- the switch core's instructions per packet, by callgrind:
# bench/swcore (simulated hosts, no sockets, no MPI) under valgrind, then
# acis_sw_input's inclusive instructions minus the harness's delivery
# callback (io_send), divided by the packets the switch took in (the
# set-up's HELLOs and CT_JOINs included), at 200 collectives; and
# "steady", what 200 more collectives add per packet they add (a run of
# 400 less the run of 200: the set-up drops out).  What
# docs/performance.md's "The switch's work per packet" reports.
#
#   bench/swcore.sh [BUILD_DIR] [MEMBERS...]     default: build, 16 and 256
# Prints one line per collective and member count.  Needs valgrind.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" 2>/dev/null && pwd) || { echo "$0: no build directory ${1:-$top/build}" >&2; exit 1; }
[ $# -gt 0 ] && shift
members=${*:-16 256}
[ -x "$build/bench/swcore" ] || { echo "bench/swcore.sh: no $build/bench/swcore: build first" >&2; exit 1; }
command -v valgrind >/dev/null 2>&1 ||
    { echo "bench/swcore.sh: valgrind not found (Debian: apt-get install valgrind)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# callers FILE FUNCTION: "instructions calls" summed over FUNCTION's callers
callers() {
    callgrind_annotate --tree=caller --inclusive=yes "$1" 2>/dev/null |
        awk -v fn="$2" -f "$top/bench/callers.awk"
}

# run P COLL N: "instructions packets" of the switch core, N collectives
run() {
    out=$tmp/cg.$2.$1.$3
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$build/bench/swcore" -p "$1" -t "$2" -s 8 -i "$3" >/dev/null 2>&1
    set -- $(callers "$out" acis_sw_input) $(callers "$out" io_send)
    echo $(($1 - $3)) "$2"
}

printf '%-10s %8s %14s %8s\n' collective members 'instr/packet' steady
for p in $members; do
    for t in allreduce barrier; do
        set -- $(run "$p" "$t" 200) $(run "$p" "$t" 400)
        awk -v t="$t" -v p="$p" -v a="$1" -v n="$2" -v b="$3" -v m="$4" \
            'BEGIN { printf "%-10s %8d %14.0f %8.0f\n", t, p, (n ? a / n : 0), (m > n ? (b - a) / (m - n) : 0) }'
    done
done
