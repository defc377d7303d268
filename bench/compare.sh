#!/bin/sh
# compare.sh -- offloaded latency next to MPICH's own, in one run: for each
# collective, bench/lat runs three ways on the same machine, one after the
# other: through acis with the embedded emulated switch (LD_PRELOAD), plain
# MPICH over shared memory, and plain MPICH over TCP (UCX_TLS=self,tcp).
# Prints a Markdown table per collective: median latency (us) over REPS
# repetitions of ITERS calls, and the ratios.
#
# usage: bench/compare.sh [BUILD_DIR] [NP] [COLLS] [SIZES]
#   COLLS  comma-separated, default allreduce,reduce,bcast,barrier
#   SIZES  comma-separated bytes, default 4 B to 1 MiB in powers of 4
# bench/suite.sh is the fuller form (acis over UDP and shared memory, each
# next to its MPICH baseline, fallback marked, CSV and plot); this script
# stays for scripts/quickstart and the older figures in docs/performance.md.
set -eu
build=$(cd "${1:-build}" && pwd)
np=${2:-2}
colls=${3:-allreduce,reduce,bcast,barrier}
sizes=${4:-4,16,64,256,1024,4096,16384,65536,262144,1048576}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
lat="$build/bench/lat"
lib="$build/.libs/libacis.so"
[ -x "$lat" ] && [ -f "$lib" ] || { echo "build first (scripts/build)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {      # run NAME COLL SIZE ITERS [env...]
    name=$1 coll=$2 size=$3 iters=$4
    shift 4
    env "$@" "$MPIEXEC" -n "$np" "$lat" -t "$coll" -s "$size" -i "$iters" \
        -x $((iters / 10 + 1)) -r 5 | awk '{print $2}' >"$tmp/$name"
}

echo "# acis vs MPICH, $np ranks, $(date -u +%Y-%m-%d), $(nproc) cores"
echo "# command: bench/compare.sh $* (MPICH $(mpichversion 2>/dev/null | sed -n 's/MPICH Version: *//p'))"
for coll in $(echo "$colls" | tr , ' '); do
    echo
    echo "### $coll"
    echo
    echo "| bytes | acis (us) | MPICH shm (us) | MPICH tcp (us) | acis / shm | acis / tcp |"
    echo "|---:|---:|---:|---:|---:|---:|"
    for s in $(echo "$sizes" | tr , ' '); do
        [ "$coll" = barrier ] && [ "$s" != "$(echo "$sizes" | cut -d, -f1)" ] && break
        iters=$(( s >= 262144 ? 50 : s >= 16384 ? 300 : 2000 ))
        [ "$np" -gt "$(nproc)" ] && iters=$(( iters / 20 + 5 ))   # MPICH crawls oversubscribed
        run acis "$coll" "$s" "$iters" LD_PRELOAD="$lib"
        run shm "$coll" "$s" "$iters" MPIR_CVAR_OFFLOAD=off
        run tcp "$coll" "$s" "$iters" UCX_TLS=self,tcp
        a=$(cat "$tmp/acis") m=$(cat "$tmp/shm") t=$(cat "$tmp/tcp")
        label=$s
        [ "$coll" = barrier ] && label=-
        awk -v s="$label" -v a="$a" -v m="$m" -v t="$t" \
            'BEGIN { printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", s, a, m, t, a / m, a / t }'
    done
done
