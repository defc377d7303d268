#!/bin/sh
# fabric.sh -- latency of collectives on fabrics of linked emulated
# switches beside plain MPICH, in one run: each collective and size through
# MPICH (no acis; shared memory, and over TCP as between hosts with
# UCX_TLS=self,tcp), one acis-switchd (star), a fat tree of two leaves under
# a spine (three acis-switchd linked with --uplink, the ranks split between
# the leaves), and a torus of one switch per rank (acis-switchd --fabric
# torus:NPx1x1).  bench/lat's median of REPS repetitions, slowest rank, us
# per call; ratios are acis / MPICH over TCP.  On one machine every switch hop is a
# trip through the kernel's loopback and a switch thread, so this measures
# what the tree costs here, not what switch hardware would (acis-model).
#
# usage: bench/fabric.sh [BUILD_DIR] [NP] [COLLS] [SIZES] [REPS]
#   defaults: build 4 allreduce,bcast,allgather,barrier 8,65536 5
set -eu
build=$(cd "${1:-build}" && pwd)
np=${2:-4}
colls=${3:-allreduce,bcast,allgather,barrier}
sizes=${4:-8,65536}
reps=${5:-5}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
lat="$build/bench/lat"
lib="$build/.libs/libacis.so"
sd="$build/src/switch/acis-switchd"
[ -x "$lat" ] && [ -f "$lib" ] && [ -x "$sd" ] || { echo "build first (scripts/build)" >&2; exit 1; }
[ "$np" -ge 2 ] && [ $((np % 2)) = 0 ] || { echo "NP must be even" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'kill $(cat "$tmp"/*.pid 2>/dev/null) 2>/dev/null; rm -rf "$tmp"' EXIT
geom="--payload 16384 --tables 16 --slots 256"

start() {   # start NAME ARGS...: an acis-switchd; prints its address
    name=$1; shift
    "$sd" "$@" >"$tmp/$name.out" 2>&1 &
    echo $! >"$tmp/$name.pid"
    for i in $(seq 50); do
        a=$(sed -n 's/^acis-switchd: listening on //p' "$tmp/$name.out")
        [ -n "$a" ] && { echo "$a"; return 0; }
        sleep 0.1
    done
    echo "acis-switchd $name did not start" >&2
    exit 1
}
star=$(start star $geom)
spine=$(start spine $geom --links 2)
leaf0=$(start leaf0 $geom --uplink "$spine")
leaf1=$(start leaf1 $geom --uplink "$spine")
"$sd" --fabric "torus:${np}x1x1" $geom >"$tmp/torus.out" 2>&1 &
echo $! >"$tmp/torus.pid"
for i in $(seq 50); do
    grep -q ready "$tmp/torus.out" && break
    sleep 0.1
done
torus=$(sed -n 's/^acis-switchd: switch [0-9]* listening on \([^ ]*\).*/\1/p' "$tmp/torus.out")

# run CONFIG COLL: lat's lines for every size
run() {
    args="-t $2 -s $sizes -r $reps -b 0.3"
    acis="LD_PRELOAD=$lib MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_DEVICE=udp"
    spec=""
    for r in $(seq 0 $((np - 1))); do
        case $1 in
        mpich*) sw="" ;;
        star) sw=$star ;;
        fattree) [ "$r" -lt $((np / 2)) ] && sw=$leaf0 || sw=$leaf1 ;;
        torus) sw=$(echo "$torus" | sed -n "$((r + 1))p") ;;
        esac
        if [ -z "$sw" ]; then
            spec="$spec${spec:+ : }-n 1 $lat $args"
        else
            spec="$spec${spec:+ : }-n 1 env $acis MPIR_CVAR_OFFLOAD_SWITCH=$sw $lat $args"
        fi
    done
    tls=${UCX_TLS:-}
    [ "$1" = mpich-tcp ] && tls=self,tcp
    # shellcheck disable=SC2086
    env ${tls:+UCX_TLS=$tls} "$MPIEXEC" $spec
}

echo "# bench/fabric.sh $*: $np ranks, $(date -u '+%F %H:%M') UTC, $(nproc) cores," \
     "acis $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo ?)"
echo "| collective | bytes | MPICH shm us | MPICH TCP us | star us | fat tree us | torus us | star / TCP | fat tree / TCP | torus / TCP |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for c in $(echo "$colls" | tr , ' '); do
    for cfg in mpich mpich-tcp star fattree torus; do
        echo "$c on $cfg" >&2
        run "$cfg" "$c" >"$tmp/$c.$cfg"
    done
    for s in $(echo "$sizes" | tr , ' '); do
        v() { awk -v s="$s" '$1 == s { print $2 }' "$tmp/$c.$1"; }
        awk -v c="$c" -v s="$s" -v m="$(v mpich)" -v p="$(v mpich-tcp)" -v a="$(v star)" \
            -v f="$(v fattree)" -v t="$(v torus)" \
            'BEGIN { printf "| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f |\n",
                     c, s, m, p, a, f, t, a / p, f / p, t / p }'
    done
done
seg() { "$build/tools/acis-info" --switch "$1" | awk -v k="$2" '$1 == k { print $2 }'; }
echo "# offloaded, by the switches' counters: star $(seg "$star" segments) segments;" \
     "spine $(seg "$spine" segments), leaves sent up $(seg "$leaf0" link_up) and" \
     "$(seg "$leaf1" link_up); torus switches sent up" \
     "$(for a in $torus; do printf '%s ' "$(seg "$a" link_up)"; done)"
model() {   # model ADDR: the timing model's in-network time per segment at a top switch
    awk -v m="$(seg "$1" model_ns)" -v s="$(seg "$1" segments)" 'BEGIN { printf "%.0f", m / s }'
}
echo "# modeled in-network time per segment (switch counters model_ns / segments, all" \
     "sizes together): star $(model "$star") ns, fat tree $(model "$spine") ns"
