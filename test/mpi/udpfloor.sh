#!/bin/sh
# udpfloor.sh -- bench/udpfloor claims to send, per call, the datagrams and
# bytes acis sends over UDP (docs/performance.md measures acis-udp against
# it).  This holds it to that: for every blocking collective at two sizes,
# a 2-rank bench/lat job on a standalone acis-switchd (65000-byte payload,
# as on loopback) runs 4 calls, then another 12; the switch's packet and
# byte counters over the 8 calls the second job adds must be 8 times what
# `udpfloor -c` prints, and this switch on loopback must have taken every
# packet they add unsealed (counter unsealed; docs/protocol.md, *Unsealed
# packets*: only the first call's go sealed, before the first answer).
# Repeats are kept out by a retransmission timer longer than the test.
. "${top_srcdir:-.}/test/mpi/common.sh"

addr=$(start_switchd 1 --payload 65000 --pool 33554432) || fail "acis-switchd did not start"
note "switch at $addr"
floor="$top_builddir/bench/udpfloor" lat="$top_builddir/bench/lat"

counters() {       # packets_in packets_out bytes_in bytes_out repeats unsealed
    "$top_builddir/tools/acis-info" --switch "$addr" >"$TMPD/stats" || fail "acis-info --switch"
    awk '$1 ~ /^(packets_in|packets_out|bytes_in|bytes_out|repeats|unsealed)$/ { v[$1] = $2 }
         END { print v["packets_in"], v["packets_out"], v["bytes_in"], v["bytes_out"],
                     v["repeats"], v["unsealed"] }' "$TMPD/stats"
}
job() {            # job COLL SIZE CALLS: prints the counters' growth over it
    before=$(counters)
    MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH=$addr MPIR_CVAR_OFFLOAD_STATS=1 \
        MPIR_CVAR_OFFLOAD_RETRANSMIT_US=10000000 \
        run_mpi 2 env LD_PRELOAD="$PRELOAD" "$lat" -t "$1" -s "$2" -i "$3" -x 0 -r 1 \
        >"$TMPD/out" 2>"$TMPD/err" || { cat "$TMPD/err"; fail "$1 $2 B: bench/lat failed"; }
    awk '$1 == "acis:" && $2 ~ /^MPI_/ && ($4 == 0 || $5 != 0) { bad = 1 } END { exit bad }' \
        "$TMPD/err" || { cat "$TMPD/err"; fail "$1 $2 B: not offloaded"; }
    echo "$before $(counters)" |
        awk '{ print $7 - $1, $8 - $2, $9 - $3, $10 - $4, $11 - $5, $12 - $6 }'
}

checked=0
for coll in allreduce reduce bcast barrier allgather gather scatter reduce_scatter scan exscan; do
    for size in 8 100000; do
        [ "$coll" = barrier ] && [ "$size" != 8 ] && continue
        set -- $(job "$coll" "$size" 4) $(job "$coll" "$size" 12)
        [ "$5" = 0 ] && [ "${11}" = 0 ] || fail "$coll $size B: the switch counted repeats"
        got="$(( ($7 - $1) / 8 )) $(( ($8 - $2) / 8 )) $(( ($9 - $3) / 8 )) $(( (${10} - $4) / 8 ))"
        [ $(( ${12} - $6 )) = $(( $7 - $1 )) ] ||
            fail "$coll $size B: of $(( $7 - $1 )) more packets, $(( ${12} - $6 )) came unsealed"
        # "SIZE N datagrams U bytes up D bytes down": N split evenly up and down
        want=$("$floor" -t "$coll" -s "$size" -c | awk '{ print $2 / 2, $2 / 2, $4, $7 }')
        echo "$coll $size B: per call, switch in/out packets and bytes: $got; udpfloor: $want"
        [ "$got" = "$want" ] || fail "$coll $size B: acis sent $got per call, udpfloor $want"
        checked=$((checked + 1))
    done
done
[ "$checked" = 19 ] || fail "checked $checked cases, not 19"
echo "ok: udpfloor's datagrams are acis's in $checked cases"
