#!/bin/sh
# swcore.sh -- the switch core's instructions per packet, by callgrind:
# bench/swcore (simulated hosts, no sockets, no MPI) under valgrind, then
# acis_sw_input's inclusive instructions minus the harness's delivery
# callback (io_send), divided by the packets the switch took in (the
# set-up's HELLOs and CT_JOINs included).  What docs/performance.md's
# "The switch's work per packet" reports.
#
#   bench/swcore.sh [BUILD_DIR] [MEMBERS...]     default: build, 16 and 256
# Prints one line per collective and member count.  Needs valgrind.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
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

printf '%-10s %8s %14s\n' collective members 'instr/packet'
for p in $members; do
    for t in allreduce barrier; do
        out=$tmp/cg.$t.$p
        valgrind --tool=callgrind --callgrind-out-file="$out" \
            "$build/bench/swcore" -p "$p" -t "$t" -s 8 -i 200 >/dev/null 2>&1
        set -- $(callers "$out" acis_sw_input)
        sw=$1 packets=$2
        set -- $(callers "$out" io_send)
        io=$1
        awk -v t="$t" -v p="$p" -v sw="$sw" -v io="$io" -v n="$packets" \
            'BEGIN { printf "%-10s %8d %14.0f\n", t, p, n ? (sw - io) / n : 0 }'
    done
done
