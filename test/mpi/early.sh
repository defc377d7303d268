#!/bin/sh
# early.sh -- roots of small broadcasts and scatters that return once
# their packet is posted (test/mpi/early.c: late leaves, roots that
# overwrite their buffers at once, leaves that unpack, other collectives
# right after, a communicator freed at once).  On shm at 2 and 4 ranks the
# counters must show early returns; with MPIR_CVAR_OFFLOAD_EARLY_RETURN=0,
# and on udp, none.  Then leaves without memory for their result
# (MPIR_CVAR_OFFLOAD_FAULT_NOMEM on every rank but the root): they must not
# abstain, since nobody would redo the call with a root that has returned;
# they borrow the call's own bytes.  Before, such a leaf abstained and the
# job hung.
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-120}

for np in 2 4; do
    note "shm, $np ranks: roots return early"
    MPIR_CVAR_OFFLOAD_DEVICE=shm run_mpi $np "$TESTS_DIR/early" --expect-early ||
        fail "shm, $np ranks"
done
note "shm, 2 ranks, MPIR_CVAR_OFFLOAD_EARLY_RETURN=0: no root returns early"
MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD_EARLY_RETURN=0 \
    run_mpi 2 "$TESTS_DIR/early" --expect-none || fail "shm, early returns off"
note "udp, 2 ranks: no root returns early"
MPIR_CVAR_OFFLOAD_DEVICE=udp run_mpi 2 "$TESTS_DIR/early" --expect-none || fail "udp"

for np in 2 4; do
    note "shm, $np ranks: leaves without memory for half their results"
    MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD_VERBOSE=2 \
        timeout -k 10 "$ACIS_TEST_TIMEOUT" "$MPIEXEC" \
        -n 1 "$TESTS_DIR/early" --expect-early : \
        -n $((np - 1)) env MPIR_CVAR_OFFLOAD_FAULT_NOMEM=0.5 "$TESTS_DIR/early" \
        >"$TMPD/out" 2>"$TMPD/err"
    rc=$?
    cat "$TMPD/out"
    [ $rc = 0 ] || { grep -v 'lands in' "$TMPD/err" | tail -20; fail "leaves without memory, $np ranks"; }
    grep -q "no memory for this rank's result; it lands in" "$TMPD/err" ||
        fail "leaves without memory, $np ranks: no leaf borrowed"
done
exit 0
