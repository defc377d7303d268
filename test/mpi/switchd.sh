#!/bin/sh
# switchd.sh -- a job using a standalone acis-switchd (MPIR_CVAR_OFFLOAD_SWITCH
# =HOST:PORT): results right, acis-info --switch shows the segments it
# aggregated, and after the job the switch holds no job, port or row; the
# same on a switch of two workers, whose kernel steering must bring every
# data packet to its row's worker (counter crossed 0).  Then
# the ways offload cannot start: switch unreachable, no shared-memory
# switch -- each says why in one line and runs in MPICH (no RDMA device:
# verbs.sh).
. "${top_srcdir:-.}/test/mpi/common.sh"

addr=$(start_switchd 1 --payload 4096) || fail "acis-switchd did not start"
note "switch at $addr"

MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH=$addr run_mpi 2 "$TESTS_DIR/coll_check" \
    --offload=$ALL --offload-nb=$ALL --matrix=quick || fail "job on acis-switchd"
"$top_builddir/tools/acis-info" --switch "$addr" >"$TMPD/stats" || fail "acis-info --switch"
cat "$TMPD/stats"
val() { awk -v k="$1" '$1 == k { print $2 }' "$TMPD/stats"; }
[ "$(val seg_allreduce)" -gt 0 ] || fail "no allreduce segments in the switch"
[ "$(val seg_bcast)" -gt 0 ] || fail "no bcast segments in the switch"
[ "$(val jobs)" = 0 ] && [ "$(val ports_in_use)" = 0 ] && [ "$(val tables_in_use)" = 0 ] ||
    fail "the switch still holds the finished job"
[ "$(val drop_malformed)" = 0 ] || fail "the switch dropped malformed packets"

note "the same on a switch of two workers (--threads 2)"
addr2=$(start_switchd 2 --threads 2 --payload 4096) || fail "acis-switchd --threads 2 did not start"
MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH=$addr2 run_mpi 2 "$TESTS_DIR/coll_check" \
    --offload=$ALL --offload-nb=$ALL --matrix=quick || fail "job on acis-switchd --threads 2"
"$top_builddir/tools/acis-info" --switch "$addr2" >"$TMPD/stats" || fail "acis-info --switch"
[ "$(val seg_allreduce)" -gt 0 ] && [ "$(val seg_bcast)" -gt 0 ] ||
    fail "no allreduce or bcast segments in the switch of two workers"
[ "$(val tables_created)" -ge 2 ] || fail "one row: the second worker served nothing"
[ "$(val crossed)" = 0 ] || fail "$(val crossed) packets reached a worker not their row's"
[ "$(val jobs)" = 0 ] && [ "$(val ports_in_use)" = 0 ] && [ "$(val tables_in_use)" = 0 ] ||
    fail "the switch of two workers still holds the finished job"
echo "ok: two workers, $(val tables_created) rows, $(val segments) segments, none crossed"

check_fallback() {     # check_fallback "expected line" env...
    want=$1; shift
    env "$@" MPIR_CVAR_OFFLOAD_VERBOSE=1 timeout 120 "$MPIEXEC" -n 2 "$TESTS_DIR/coll_check" \
        --matrix=quick --counts=3 >"$TMPD/out" 2>"$TMPD/err" ||
        { cat "$TMPD/err"; fail "$*: the job failed"; }
    grep -F "$want" "$TMPD/err" >/dev/null || { cat "$TMPD/err"; fail "$*: no '$want'"; }
    [ "$(grep -c 'collectives run in MPICH' "$TMPD/err")" = 1 ] || fail "$*: not one line"
    echo "ok: $* -> $(grep 'collectives run in MPICH' "$TMPD/err")"
}
check_fallback "did not answer" MPIR_CVAR_OFFLOAD_SWITCH=127.0.0.1:9 MPIR_CVAR_OFFLOAD_CONNECT_MS=300
check_fallback "shm channel needs MPIR_CVAR_OFFLOAD_SWITCH=auto" \
    MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD_SWITCH=127.0.0.1:9
