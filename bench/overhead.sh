#!/bin/sh
# overhead.sh -- what libacis costs when offload is off: an 8-byte
# MPI_Allreduce at 2 ranks, the same binary plain and with
# LD_PRELOAD=libacis.so MPIR_CVAR_OFFLOAD=off, alternated ROUNDS times in
# one run so both see the same machine.  Prints the median latency of each
# and the overhead in percent.
#
# usage: bench/overhead.sh [BUILD_DIR] [ROUNDS] [ITERS]
set -eu
build=$(cd "${1:-build}" && pwd)
rounds=${2:-10}
iters=${3:-200000}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
lat="$build/bench/lat"
lib="$build/.libs/libacis.so"
[ -x "$lat" ] && [ -f "$lib" ] || { echo "build first: make -C $build bench/lat" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for i in $(seq "$rounds"); do
    p=$("$MPIEXEC" -n 2 "$lat" -s 8 -i "$iters" -r 5 | awk '{print $2}')
    a=$(LD_PRELOAD="$lib" MPIR_CVAR_OFFLOAD=off "$MPIEXEC" -n 2 "$lat" -s 8 -i "$iters" -r 5 |
        awk '{print $2}')
    echo "$p $a" >>"$out"
    echo "round $i: plain $p us, acis (off) $a us"
done
sort -n -k1 "$out" | awk '{print $1}' >"$out.p"
sort -n -k2 "$out" | awk '{print $2}' >"$out.a"
mp=$(awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}' "$out.p")
ma=$(awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}' "$out.a")
rm -f "$out.p" "$out.a"
awk -v p="$mp" -v a="$ma" -v r="$rounds" -v i="$iters" 'BEGIN{
    printf "8-byte MPI_Allreduce, 2 ranks, %d rounds of %d calls x 5:\n", r, i;
    printf "  plain MPICH        median %.4f us\n", p;
    printf "  acis, offload off  median %.4f us\n", a;
    printf "  overhead           %+.2f %%\n", (a - p) / p * 100 }'
