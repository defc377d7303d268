#!/bin/sh
# floor.sh -- how close acis-udp is to the datagrams it sends, and how far
# those datagrams are from MPICH over TCP: for each collective and size, in
# alternated rounds, at 2 ranks on loopback,
#   acis-udp   bench/lat under LD_PRELOAD=libacis.so, UDP channel to the
#              embedded switch (MPIR_CVAR_OFFLOAD_STATS=1: a call that was
#              not offloaded shows "fallback" instead of a time)
#   datagrams  bench/udpfloor: the same datagrams and nothing else
#   mpich-tcp  bench/lat, plain MPICH with UCX_TLS=self,tcp
# Prints a Markdown table of the medians of the rounds' medians (us per
# call) and the ratios acis / datagrams, datagrams / tcp, acis / tcp.
#
# usage: bench/floor.sh [--build DIR] [--colls LIST] [--sizes LIST] [--rounds N]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build colls="allreduce reduce bcast barrier allgather gather scatter reduce_scatter scan exscan"
sizes="4,1024,65536,1048576,4194304" rounds=3
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --colls) colls=$(echo "$2" | tr , ' '); shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "usage: bench/floor.sh [--build DIR] [--colls LIST] [--sizes LIST] [--rounds N]" >&2
       exit 2 ;;
    esac
done
lat=$build/bench/lat floor=$build/bench/udpfloor lib=$build/.libs/libacis.so
for f in "$lat" "$floor" "$lib"; do
    [ -e "$f" ] || { echo "floor.sh: $f is missing: build first (scripts/build)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

iters() {       # calls per repetition: about 0.1-0.2 s each
    if [ "$1" -le 4096 ]; then echo 5000
    elif [ "$1" -le 65536 ]; then echo 1000
    elif [ "$1" -le 1048576 ]; then echo 100
    else echo 30
    fi
}

# one CONFIG COLL SIZE: prints the median us per call, or what went wrong
one() {
    n=$(iters "$3")
    case $1 in
    datagrams)
        timeout 120 "$floor" -t "$2" -s "$3" -i "$n" -r 5 2>"$tmp/err" | awk '{ print $2 }' ;;
    mpich-tcp)
        timeout 120 env -u LD_PRELOAD UCX_TLS=self,tcp "$MPIEXEC" -n 2 "$lat" -t "$2" -s "$3" \
            -i "$n" -x $((n / 10 + 1)) -r 5 2>"$tmp/err" </dev/null | awk '{ print $2 }' ;;
    acis-udp)
        timeout 120 env -u UCX_TLS LD_PRELOAD="$lib" MPIR_CVAR_OFFLOAD=on \
            MPIR_CVAR_OFFLOAD_DEVICE=udp MPIR_CVAR_OFFLOAD_STATS=1 "$MPIEXEC" -n 2 "$lat" \
            -t "$2" -s "$3" -i "$n" -x $((n / 10 + 1)) -r 5 2>"$tmp/err" </dev/null >"$tmp/out" || :
        # the statistics row: "acis: MPI_Xxx calls offloaded software ..."
        if awk '$1 == "acis:" && $2 ~ /^MPI_/ && $5 != 0 { bad = 1 } END { exit !bad }' "$tmp/err"
        then echo fallback
        else awk '{ print $2 }' "$tmp/out"
        fi ;;
    esac
}

median() { sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }

echo "# bench/floor.sh, $(date -u '+%Y-%m-%d %H:%M') UTC, acis $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1 /proc/loadavg), $rounds alternated rounds"
echo
echo "| collective | bytes | acis-udp us | datagrams us | mpich-tcp us | acis / datagrams | datagrams / tcp | acis / tcp |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for c in $colls; do
    for s in $(echo "$sizes" | tr , ' '); do
        [ "$c" = barrier ] && [ "$s" != "$(echo "$sizes" | cut -d, -f1)" ] && continue
        : >"$tmp/acis-udp" && : >"$tmp/datagrams" && : >"$tmp/mpich-tcp"
        r=0
        while [ $r -lt "$rounds" ]; do
            case $((r % 3)) in
            0) order="acis-udp datagrams mpich-tcp" ;;
            1) order="datagrams mpich-tcp acis-udp" ;;
            *) order="mpich-tcp acis-udp datagrams" ;;
            esac
            for k in $order; do one "$k" "$c" "$s" >>"$tmp/$k"; done
            r=$((r + 1))
        done
        a=$(median <"$tmp/acis-udp") d=$(median <"$tmp/datagrams") m=$(median <"$tmp/mpich-tcp")
        grep -q fallback "$tmp/acis-udp" && a=fallback
        [ "$c" = barrier ] && s=0
        echo "| $c | $s | $a | $d | $m | $(ratio "$a" "$d") | $(ratio "$d" "$m") | $(ratio "$a" "$m") |"
    done
done
