#!/bin/sh
# hostile.sh -- the hostile mix (issue 31): while a 2-rank job runs every
# collective through a standalone acis-switchd, a hostile process floods
# it with HELLOs claiming jobs of 2^24 ranks from 32 sockets, joins as a
# job of its own and sends gatherv pieces that leave segments empty,
# overlap or leave holes (checking no answer holds a byte it did not
# send), and sprays forged WELCOMEs at the job's ranks' UDP sockets.
# Every second the switch's resident memory must stay under 256 MiB and
# acis-info must read its counters within one second; the job's results
# must equal MPICH's, offloaded.  HOSTILE_SECONDS (default 15) sets how
# long; the closing note's figures are from a 60-second run.
. "${top_srcdir:-.}/test/mpi/common.sh"

secs=${HOSTILE_SECONDS:-15}
addr=$(start_switchd 1) || fail "acis-switchd did not start"
swpid=$(cat "$TMPD/sw1.pid")
note "switch at $addr; a job beside a hostile mix for $secs s"
"$TESTS_DIR/hostile" "$addr" --seconds "$secs" --target coll_check \
    >"$TMPD/hostile.out" 2>"$TMPD/hostile.err" &
hostile=$!
sleep 0.5
(
    while kill -0 $hostile 2>/dev/null; do
        MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH=$addr run_mpi 2 "$TESTS_DIR/coll_check" \
            --offload=$ALL --offload-nb=$ALL --matrix=quick >>"$TMPD/job.out" 2>&1 ||
            { echo "job failed" >>"$TMPD/job.out"; break; }
    done
) &
job=$!
worst_rss=0 worst_ms=0
while kill -0 $hostile 2>/dev/null; do
    rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$swpid/status")
    t0=$(date +%s%N)
    timeout 5 "$top_builddir/tools/acis-info" --switch "$addr" >"$TMPD/stats" 2>&1 ||
        fail "acis-info got no answer from the switch under the mix"
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    [ "$rss" -gt "$worst_rss" ] && worst_rss=$rss
    [ "$ms" -gt "$worst_ms" ] && worst_ms=$ms
    sleep 1
done
wait $hostile || { cat "$TMPD/hostile.err"; fail "the hostile process failed"; }
wait $job
sed 's/^/hostile: /' "$TMPD/hostile.out"
grep 'coll_check:' "$TMPD/job.out" | tail -2
echo "switch: at most $worst_rss KiB resident, acis-info answered within $worst_ms ms"
val() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
for c in drop_malformed drop_foreign drop_range untiled tables_refused ports_in_use buffer_bytes; do
    echo "switch $c: $(val $c "$TMPD/stats")"
done
grep -q 'job failed' "$TMPD/job.out" && { tail -30 "$TMPD/job.out"; fail "the job beside it failed"; }
grep -q 'coll_check:' "$TMPD/job.out" || fail "the job never finished a run"
grep 'coll_check:' "$TMPD/job.out" | grep -qv ' 0 failures' && fail "wrong results beside the mix"
[ "$(val leaked "$TMPD/hostile.out")" = 0 ] || fail "an answer held bytes the hostile job never sent"
[ "$(val rounds "$TMPD/hostile.out")" -gt 100 ] || fail "the mix did too little to mean anything"
[ "$(val untiled "$TMPD/hostile.out")" -gt 0 ] || fail "no hole was refused"
[ "$(val sprayed "$TMPD/hostile.out")" -gt 0 ] || fail "no rank socket was sprayed"
[ "$worst_rss" -lt 262144 ] || fail "the switch grew to $worst_rss KiB"
[ "$worst_ms" -lt 1000 ] || fail "acis-info took $worst_ms ms"
echo "ok: the switch kept its memory and answered; the job was right and offloaded"
