#!/bin/sh
# rogue.sh -- job isolation: while a job runs every collective through a
# standalone acis-switchd, a rogue process joined as another job forges
# packets at every context id the switch can hand out (own key, guessed
# keys, spoofed ranks, bad checksums, the service address, CT_FREE of other
# jobs' rows).  The job's results must equal MPICH's and still be offloaded;
# the switch must have counted and dropped every forged packet.
# Then a rogue floods the ranks' own sockets with forged answers from
# MPI_Init on (the switch held stopped until every rank's socket has had
# its share, then let answer while the ranks are stopped): the ranks must
# join their switch, not the rogue, send the rogue nothing, count the
# forged datagrams and offload every collective with MPICH's results.
. "${top_srcdir:-.}/test/mpi/common.sh"

addr=$(start_switchd 1 --tables 8) || fail "acis-switchd did not start"
note "switch at $addr; job and rogue side by side"

# datagrams the kernel dropped for a full receive buffer, on any UDP socket
rcvbuf_errors() { awk '/^Udp:/ { n++ } n == 2 && /^Udp:/ { print $6; exit }' /proc/net/snmp; }
lost0=$(rcvbuf_errors)
"$TESTS_DIR/rogue" "$addr" --seconds 600 --stop-file "$TMPD/stop" --tables 8 \
    >"$TMPD/rogue.out" 2>"$TMPD/rogue.err" &
rogue=$!
sleep 0.5
MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH=$addr run_mpi 2 "$TESTS_DIR/coll_check" \
    --offload=$ALL --offload-nb=$ALL --matrix=quick >"$TMPD/job.out" 2>&1
rc=$?
touch "$TMPD/stop"
wait $rogue || { cat "$TMPD/rogue.err"; fail "the rogue failed"; }
tail -2 "$TMPD/job.out"
[ $rc = 0 ] || fail "the job beside the rogue failed"
sed 's/^/rogue sent: /' "$TMPD/rogue.out"

"$top_builddir/tools/acis-info" --switch "$addr" >"$TMPD/stats" || fail "acis-info --switch"
val() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
sent() { val "$1" "$TMPD/rogue.out"; }
foreign=$(( $(sent own_key) + $(sent wrong_key) + $(sent at_service) ))
for c in drop_foreign drop_spoofed drop_malformed; do
    echo "switch $c: $(val $c "$TMPD/stats")"
done
# every forged packet counted, but for those the kernel dropped before
# the switch could read them (a full socket buffer on a loaded host:
# /proc/net/snmp, RcvbufErrors, counted for every UDP socket here)
lost=$(( $(rcvbuf_errors) - lost0 ))
echo "kernel dropped (receive buffers full, any socket): $lost"
atleast() { [ $(( $1 + lost )) -ge "$2" ] || fail "$3: counted $1 of $2 ($lost lost in the kernel)"; }
atleast "$(val drop_foreign "$TMPD/stats")" "$foreign" "forged contexts and keys"
atleast "$(val drop_spoofed "$TMPD/stats")" "$(sent spoofed)" "spoofed ranks"
atleast "$(val drop_malformed "$TMPD/stats")" "$(sent bad_crc)" "bad checksums"
[ "$(sent own_key)" -gt 1000 ] || fail "the rogue sent too little to mean anything"
[ "$(val jobs "$TMPD/stats")" = 0 ] || fail "a job is still registered"

note "a rogue floods the ranks' sockets with forged answers, from MPI_Init on"
# ranks PID: the coll_check processes below PID
ranks() {
    todo=$1 found=
    while [ -n "$todo" ]; do
        set -- $todo
        p=$1; shift
        todo="$* $(cat /proc/"$p"/task/*/children 2>/dev/null)"
        todo=$(echo $todo)
        [ "$(cat /proc/"$p"/comm 2>/dev/null)" = coll_check ] && found="$found $p"
    done
    echo $found
}
addr=$(start_switchd 2 --tables 8) || fail "acis-switchd did not start"
swpid=$(cat "$TMPD/sw2.pid")
kill -STOP "$swpid"                 # HELLOs wait; the ranks' sockets are open meanwhile
MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH=$addr MPIR_CVAR_OFFLOAD_CONNECT_MS=60000 \
    run_mpi 2 "$TESTS_DIR/coll_check" --offload=$ALL --offload-nb=$ALL --matrix=quick \
    --offloaded=world,reversed >"$TMPD/job2.out" 2>&1 &
job=$!
"$TESTS_DIR/rogue" "$addr" --flood-ranks $job --ranks 2 --ready-file "$TMPD/ready" \
    --seconds 600 --stop-file "$TMPD/stop2" >"$TMPD/flood.out" 2>"$TMPD/flood.err" &
flood=$!
for i in $(seq 300); do
    [ -f "$TMPD/ready" ] && break
    sleep 0.1
done
ready=$([ -f "$TMPD/ready" ] && echo yes)
# The switch answers while the ranks are stopped, so each rank finds its
# WELCOME queued among forged answers, as on a loaded host.
rk=$(ranks $job)
[ -n "$rk" ] && kill -STOP $rk
kill -CONT "$swpid"
sleep 0.3
[ -n "$rk" ] && kill -CONT $rk
wait $job
rc=$?
touch "$TMPD/stop2"
wait $flood || { cat "$TMPD/flood.err"; fail "the flooding rogue failed"; }
tail -2 "$TMPD/job2.out"
sed 's/^/rogue: /' "$TMPD/flood.out"
[ -n "$ready" ] || fail "the rogue did not reach both ranks' sockets before the join"
fl() { val "$1" "$TMPD/flood.out"; }
[ "$(fl captured)" = 0 ] || fail "the ranks sent the rogue $(fl captured) packets"
[ $rc = 0 ] || fail "the job under the flood failed"
line=$(grep '^coll_check:' "$TMPD/job2.out")
dropped=$(echo "$line" | sed -n 's/.*, \([0-9]*\) foreign datagrams dropped.*/\1/p')
fewest=$(echo "$line" | sed -n 's/.*fewest on one rank: \([0-9]*\)).*/\1/p')
[ -n "$dropped" ] && [ -n "$fewest" ] || fail "coll_check printed no foreign count"
[ "$fewest" -ge 1 ] || fail "a rank counted no forged datagram"
[ "$dropped" -le "$(fl flood_open)" ] ||
    fail "the ranks counted $dropped foreign datagrams of $(fl flood_open) sent"
