#!/bin/sh
# callcost.sh -- a call's instructions on the host, by callgrind: bench/lat
# at 2 ranks on the shared-memory switch with libacis preloaded, every rank
# under valgrind; the inclusive instructions of the MPI entry point divided
# by its calls (the first call's communicator set-up spread over them).
# What docs/performance.md's "A call's work on the host" reports.
#
#   bench/callcost.sh [BUILD_DIR] [COLL] [BYTES]   default: build bcast 8
# Prints one line per rank (rank 0 is the root).  Needs valgrind and
# mpiexec.mpich (MPIEXEC overrides).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" 2>/dev/null && pwd) || { echo "$0: no build directory ${1:-$top/build}" >&2; exit 1; }
coll=${2:-bcast}
bytes=${3:-8}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
lib=$build/.libs/libacis.so
[ -x "$build/bench/lat" ] && [ -f "$lib" ] ||
    { echo "bench/callcost.sh: no $build/bench/lat or $lib: build first" >&2; exit 1; }
command -v valgrind >/dev/null 2>&1 ||
    { echo "bench/callcost.sh: valgrind not found (Debian: apt-get install valgrind)" >&2; exit 1; }
case $coll in          # bench/lat's names for the two reduce_scatters
reduce_scatter) entry=MPI_Reduce_scatter_block ;;
reduce_scatterv) entry=MPI_Reduce_scatter ;;
*) entry=MPI_$(echo "$coll" | cut -c1 | tr '[:lower:]' '[:upper:]')$(echo "$coll" | cut -c2-) ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD=on \
    "$MPIEXEC" -n 2 -genv LD_PRELOAD "$lib" \
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.%q{PMI_RANK}" \
    "$build/bench/lat" -t "$coll" -s "$bytes" -i 2000 -x 100 -r 1 >/dev/null 2>&1)
printf '%-6s %-18s %8s %14s\n' rank entry calls 'instr/call'
for r in 0 1; do
    [ -f "$tmp/cg.$r" ] || { echo "bench/callcost.sh: no profile of rank $r" >&2; exit 1; }
    set -- $(callgrind_annotate --tree=caller --inclusive=yes "$tmp/cg.$r" 2>/dev/null |
        awk -v fn="$entry" -f "$top/bench/callers.awk")
    awk -v r="$r" -v fn="$entry" -v tot="$1" -v calls="$2" \
        'BEGIN { printf "%-6s %-18s %8d %14.0f\n", r, fn, calls, calls ? tot / calls : 0 }'
done
