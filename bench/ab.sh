#!/bin/sh
# ab.sh -- two builds of libacis side by side in one run: bench/lat of
# build A, preloaded with A's libacis and then with B's, alternated ROUNDS
# times so that drift on a shared machine hits both alike.  Prints the
# median latency of each and B's change relative to A, per size; used to
# measure what a change costs (e.g. A = the commit before it).
#
# usage: bench/ab.sh BUILD_A BUILD_B [COLL] [SIZES] [ROUNDS]
#   COLL default allreduce; SIZES comma-separated bytes, default
#   8,65536,262144; ROUNDS default 7.  Offload is on, embedded switch.
set -eu
a=$(cd "$1" && pwd)
b=$(cd "$2" && pwd)
coll=${3:-allreduce}
sizes=${4:-8,65536,262144}
rounds=${5:-7}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
for d in "$a" "$b"; do
    [ -f "$d/.libs/libacis.so" ] || { echo "no $d/.libs/libacis.so: build it first" >&2; exit 1; }
done
[ -x "$a/bench/lat" ] || { echo "no $a/bench/lat" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# $coll, 2 ranks, A=$a B=$b, $rounds alternated rounds, $(date -u +%Y-%m-%d)"
echo "| bytes | A median (us) | B median (us) | B vs A |"
echo "|---:|---:|---:|---:|"
for s in $(echo "$sizes" | tr , ' '); do
    iters=$(( s >= 262144 ? 100 : s >= 16384 ? 500 : 5000 ))
    : >"$tmp/A"
    : >"$tmp/B"
    r=0
    while [ $r -lt "$rounds" ]; do
        for side in A B; do
            lib=$a
            [ $side = B ] && lib=$b
            env MPIR_CVAR_OFFLOAD=on LD_PRELOAD="$lib/.libs/libacis.so" \
                "$MPIEXEC" -n 2 "$a/bench/lat" -t "$coll" -s "$s" -i "$iters" \
                -x $((iters / 10 + 1)) -r 3 >"$tmp/run" ||
                { echo "bench/lat failed with build $side" >&2; exit 1; }
            awk '{print $2}' "$tmp/run" >>"$tmp/$side"
        done
        r=$((r + 1))
    done
    med() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
    ma=$(med "$tmp/A") mb=$(med "$tmp/B")
    awk -v s="$s" -v a="$ma" -v b="$mb" \
        'BEGIN { printf "| %s | %.2f | %.2f | %+.1f %% |\n", s, a, b, (b - a) / a * 100 }'
done
