#!/bin/sh
# cluster.sh -- acis with the switch where a switch is: two hosts, one rank
# each, and acis-switchd on a third, in the network namespaces of
# test/cluster/net.sh (MTU 1500 veth links on a bridge; needs root).  For
# each collective and size, bench/lat runs through acis over UDP to
# acis-switchd on sw1 and as plain MPICH over TCP between the hosts
# (UCX_TLS=self,tcp, UCX_NET_DEVICES=eth0, for acis's own MPICH calls
# too), alternated, ROUNDS times; the table gives the median of the rounds
# (each round: bench/lat's median of 5 repetitions) and acis / MPICH.  A
# row whose calls were not all offloaded (MPIR_CVAR_OFFLOAD_STATS) says
# so instead of a time.
#
# usage: bench/cluster.sh [BUILD_DIR] [COLLS] [SIZES] [ROUNDS]
#   defaults: build, allreduce,bcast,reduce,barrier,allgather,gather,
#   scatter,reduce_scatter; 4,64,1024,16384,65536,1048576; 3
# or:    bench/cluster.sh --payloads [BUILD_DIR]
#   the table of docs/protocol.md, "Datagrams and the MTU": 2 hosts x 2
#   ranks on acis-switchd --payload 1392, 16384 and 65000, coll_check's
#   allreduce, bcast and allgather at 100 000 elements; per payload the
#   IP fragments the switch's kernel cut, the reassemblies that failed on
#   the hosts and the switch host, and the time.
# or:    bench/cluster.sh --rtt [BUILD_DIR]
#   the network's floor: bench/udprtt, a UDP echo from h1 to a server on
#   sw1 that sleeps in recvfrom, alone and beside a second process that
#   spins on h2 (so both cores are busy polling, as with two ranks).
set -eu
payloads= rtt=
[ "${1:-}" = --payloads ] && { payloads="1392 16384 65000"; shift; }
[ "${1:-}" = --rtt ] && { rtt=1; shift; }
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
colls=${2:-allreduce,bcast,reduce,barrier,allgather,gather,scatter,reduce_scatter}
sizes=${3:-4,64,1024,16384,65536,1048576}
rounds=${4:-3}
lat=$build/bench/lat
lib=$build/.libs/libacis.so
[ -x "$lat" ] && [ -f "$lib" ] && [ -x "$build/test/mpi/coll_check" ] ||
    { echo "bench/cluster.sh: build first (and make check TESTS=)" >&2; exit 1; }
top_srcdir=$top
. "$top/test/cluster/net.sh"
why=$(cluster_usable) || { echo "bench/cluster.sh: no cluster here: $why" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'cluster_down; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
cluster_up h1 h2 sw1
printf 'h1:1\nh2:1\n' >"$tmp/hosts"
switch_on_sw1() {   # switch_on_sw1 ARGS...: (re)start acis-switchd there; sets sw
    # (by namespace: a pid namespace is shared, pkill would reach others)
    ip netns pids "${CLUSTER}sw1" | xargs -r kill 2>/dev/null || true
    sleep 0.2
    : >"$tmp/sw.out"
    sw=$(switchd_on sw1 "$tmp/sw.out" "$build/src/switch/acis-switchd" \
        --listen "$(addr sw1):0" "$@") || exit 1
}

if [ -n "$rtt" ]; then
    (exec >/dev/null 2>&1 </dev/null; on sw1 "$build/bench/udprtt" server "$(addr sw1)" 7100) &
    sleep 0.5
    echo "# bench/udprtt, h1 -> sw1 -> h1, 96-byte datagrams, 5000 round trips; $(date -u +%Y-%m-%d)"
    echo "# command: bench/cluster.sh --rtt $*"
    echo
    echo "| beside the client | median (us) | p10 (us) |"
    echo "|---|---:|---:|"
    set -- $(on h1 timeout 60 "$build/bench/udprtt" client "$(addr sw1)" 7100)
    echo "| nothing | $1 | $2 |"
    (on h2 timeout 30 sh -c 'while :; do :; done' &)
    sleep 0.3
    set -- $(on h1 timeout 60 "$build/bench/udprtt" client "$(addr sw1)" 7100)
    echo "| a process spinning on h2 | $1 | $2 |"
    exit 0
fi

if [ -n "$payloads" ]; then
    printf 'h1:2\nh2:2\n' >"$tmp/hosts"
    echo "# acis-switchd on sw1, 2 hosts x 2 ranks, MTU 1500; $(date -u +%Y-%m-%d)"
    echo "# command: bench/cluster.sh --payloads $*"
    echo
    echo "| max_payload | fragments cut at the switch | reassembly failures | time |"
    echo "|---:|---:|---:|---:|"
    for pl in $payloads; do
        switch_on_sw1 --payload "$pl"
        f0=$(snmp sw1 Ip FragCreates)
        x0=$(( $(snmp h1 Ip ReasmFails) + $(snmp h2 Ip ReasmFails) + $(snmp sw1 Ip ReasmFails) ))
        t0=$(date +%s.%N)
        cluster_mpiexec -f "$tmp/hosts" -n 4 env MPIR_CVAR_OFFLOAD=on \
            MPIR_CVAR_OFFLOAD_SWITCH="$sw" "$build/test/mpi/coll_check" \
            --offload=allreduce,bcast,allgather --colls=allreduce,bcast,allgather \
            --matrix=quick --counts=100000 >"$tmp/cc" 2>&1 ||
            { cat "$tmp/cc" >&2; exit 1; }
        t1=$(date +%s.%N)
        f1=$(snmp sw1 Ip FragCreates)
        x1=$(( $(snmp h1 Ip ReasmFails) + $(snmp h2 Ip ReasmFails) + $(snmp sw1 Ip ReasmFails) ))
        secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f s", b - a }')
        echo "| $pl | $((f1 - f0)) | $((x1 - x0)) | $secs |"
    done
    exit 0
fi

switch_on_sw1

mpi_name() {   # mpi_name COLL: its row of acis's statistics (lat's reduce_scatter is _block)
    case $1 in
    reduce_scatter) echo MPI_Reduce_scatter_block ;;
    *) echo "$1" | awk '{ print "MPI_" toupper(substr($1, 1, 1)) substr($1, 2) }' ;;
    esac
}

# run CONFIG COLL ROUND: lat at every size; $tmp/CONFIG-COLL-ROUND holds
# "size median" lines, or "size partial" when acis ran some calls in MPICH.
run() {
    case $1 in
    mpich) set -- "$@" ;;
    acis) set -- "$@" -genv LD_PRELOAD "$lib" -genv MPIR_CVAR_OFFLOAD on \
        -genv MPIR_CVAR_OFFLOAD_SWITCH "$sw" -genv MPIR_CVAR_OFFLOAD_STATS 1 ;;
    esac
    cfg=$1 coll=$2 round=$3
    shift 3
    out=$tmp/$cfg-$coll-$round
    cluster_mpiexec -f "$tmp/hosts" -genv UCX_TLS self,tcp -genv UCX_NET_DEVICES eth0 "$@" \
        -n 2 "$lat" -t "$coll" -s "$sizes" -i 2000 -x 100 -r 5 -b 0.3 \
        >"$out.raw" 2>"$out.err" </dev/null
    awk '{ print $1, $2 }' "$out.raw" >"$out"
    if [ "$cfg" = acis ]; then
        row=$(awk -v n="$(mpi_name "$coll")" '$1 == "acis:" && $2 == n' "$out.err")
        set -- $row
        if [ -z "$row" ] || [ "$5" != 0 ]; then
            awk '{ print $1, "partial" }' "$out.raw" >"$out"
        fi
    fi
}

echo "# acis-udp through acis-switchd on sw1 vs MPICH over TCP, 2 hosts x 1 rank"
echo "# $(date -u +%Y-%m-%d), $(nproc) cores, MTU 1500 veth links," \
    "median of $rounds alternated rounds (us)"
echo "# command: bench/cluster.sh $*"
for round in $(seq "$rounds"); do
    for coll in $(echo "$colls" | tr , ' '); do
        echo "round $round: $coll" >&2
        run mpich "$coll" "$round"
        run acis "$coll" "$round"
    done
done
med() {   # med CONFIG COLL SIZE: median over the rounds
    for r in $(seq "$rounds"); do
        awk -v s="$3" '$1 == s { print $2 }' "$tmp/$1-$2-$r"
    done | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
echo
echo "| collective | bytes | MPICH tcp (us) | acis udp (us) | acis / MPICH |"
echo "|---|---:|---:|---:|---:|"
for coll in $(echo "$colls" | tr , ' '); do
    for s in $(echo "$sizes" | tr , ' '); do
        m=$(med mpich "$coll" "$s")
        a=$(med acis "$coll" "$s")
        case $a in
        *[!0-9.]* | '') r=- ;;
        *) r=$(awk -v a="$a" -v m="$m" 'BEGIN { printf "%.2f", a / m }') ;;
        esac
        label=$s
        [ "$coll" = barrier ] && label=0
        echo "| $coll | $label | $m | $a | $r |"
        [ "$coll" = barrier ] && break
    done
done
