#!/bin/sh
# rogue.sh -- job isolation: while a job runs every collective through a
# standalone acis-switchd, a rogue process joined as another job forges
# packets at every context id the switch can hand out (own key, guessed
# keys, spoofed ranks, bad checksums, the service address, CT_FREE of other
# jobs' rows).  The job's results must equal MPICH's and still be offloaded;
# the switch must have counted and dropped every forged packet.
. "${top_srcdir:-.}/test/mpi/common.sh"

addr=$(start_switchd 1 --tables 8) || fail "acis-switchd did not start"
note "switch at $addr; job and rogue side by side"

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
# every forged packet counted (loopback UDP may lose a few under load)
atleast() { [ "$1" -ge $(( $2 * 99 / 100 )) ] || fail "$3: counted $1 of $2"; }
atleast "$(val drop_foreign "$TMPD/stats")" "$foreign" "forged contexts and keys"
atleast "$(val drop_spoofed "$TMPD/stats")" "$(sent spoofed)" "spoofed ranks"
atleast "$(val drop_malformed "$TMPD/stats")" "$(sent bad_crc)" "bad checksums"
[ "$(sent own_key)" -gt 1000 ] || fail "the rogue sent too little to mean anything"
[ "$(val jobs "$TMPD/stats")" = 0 ] || fail "a job is still registered"
